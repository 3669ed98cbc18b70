module github.com/autopilot-dev/autopilot

go 1.26.0

require (
	github.com/andygrunwald/go-jira v1.17.0
	github.com/bradleyfalzon/ghinstallation/v2 v2.10.0
	github.com/golang-jwt/jwt/v4 v4.5.2
	github.com/google/go-github/v60 v60.0.0
	github.com/prometheus/client_golang v1.20.5
	github.com/redis/go-redis/v9 v9.7.0
	go.yaml.in/yaml/v3 v3.0.4
	golang.org/x/oauth2 v0.21.0
	golang.org/x/text v0.21.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/fatih/structs v1.1.0 // indirect
	github.com/google/go-querystring v1.1.0 // indirect
	github.com/klauspost/compress v1.17.9 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/prometheus/client_model v0.6.1 // indirect
	github.com/prometheus/common v0.55.0 // indirect
	github.com/prometheus/procfs v0.15.1 // indirect
	github.com/trivago/tgo v1.0.7 // indirect
	golang.org/x/sys v0.22.0 // indirect
	google.golang.org/protobuf v1.34.2 // indirect
)
