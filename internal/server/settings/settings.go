// Package settings is the App server's configuration: the PRODUCT §11
// settings read from the environment, overridden by flags of the same name.
package settings

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Defaults for the settings PRODUCT §11 leaves to the server.
const (
	DefaultPort            = 3000
	DefaultWebhookPath     = "/api/github/webhooks"
	DefaultGitHubAPIURL    = "https://api.github.com"
	DefaultQueueSize       = 1000
	DefaultWorkers         = 8
	DefaultSweepInterval   = 15 * time.Minute
	DefaultShutdownTimeout = 25 * time.Second
	DefaultLockTTL         = 60 * time.Second
	// DefaultAdminAddr is where /metrics is served: this host only.
	DefaultAdminAddr = "127.0.0.1:9090"
	// MinDedupeTTL is how long a delivery id is remembered: GitHub lets a
	// delivery be redelivered for three days.
	MinDedupeTTL = 72 * time.Hour
)

// Defaults of the Redis work queue (PRODUCT §11).
const (
	// DefaultQueueMax bounds the deliveries queued in Redis and not yet
	// acknowledged, across all replicas.
	DefaultQueueMax = 10000
	// DefaultQueueClaimIdle is how long an entry may sit pending with a
	// consumer that stopped renewing it before another replica claims it.
	DefaultQueueClaimIdle = 15 * time.Second
	// DefaultRedisPrefix starts every Redis key the server writes; the
	// default REDIS_PREFIX adds the App id (RedisPrefixFor).
	DefaultRedisPrefix = "autopilot:"
)

// RedisPrefixFor is the default REDIS_PREFIX of App appID,
// "autopilot:<APP_ID>:", so Apps sharing one Redis never share a key, a
// stream or a consumer group ("autopilot:" without an App id).
func RedisPrefixFor(appID int64) string {
	if appID <= 0 {
		return DefaultRedisPrefix
	}
	return DefaultRedisPrefix + strconv.FormatInt(appID, 10) + ":"
}

// DefaultRedeliveryInterval is how often the redelivery job looks for
// failed deliveries.
const DefaultRedeliveryInterval = 10 * time.Minute

// Config is the server's configuration, from the environment (PRODUCT §11
// names) overridden by flags of the same name in kebab-case.
type Config struct {
	// WebhookSecret is the HMAC secret of the App's webhook (WEBHOOK_SECRET).
	WebhookSecret string
	// AppID is the GitHub App's id (APP_ID).
	AppID int64
	// PrivateKey is the App's PEM private key, from PRIVATE_KEY inline or read
	// from the file PRIVATE_KEY_PATH names.
	PrivateKey []byte
	// PrivateKeyPath is the file the key was read from ("" when inline).
	PrivateKeyPath string
	// Host narrows the listen address (HOST; empty = all interfaces).
	Host string
	// Port is the listen port (PORT, default 3000).
	Port int
	// AdminAddr is the operators' address, "host:port" (ADMIN_ADDR, default
	// 127.0.0.1:9090): it serves /metrics, /healthz and /readyz. Empty (a
	// Config built in code) means no admin listener, and /metrics stays on
	// the webhook port.
	AdminAddr string
	// DashboardClientID and DashboardClientSecret are the App's OAuth
	// client (DASHBOARD_CLIENT_ID, DASHBOARD_CLIENT_SECRET): with them the
	// dashboard on a non-loopback ADMIN_ADDR signs users in with GitHub;
	// without them it refuses every request there.
	DashboardClientID, DashboardClientSecret string
	// MetricsOnWebhookPort serves /metrics on the webhook port as well
	// (METRICS_ON_WEBHOOK_PORT=true); by default that port serves only the
	// webhook path and the health probes.
	MetricsOnWebhookPort bool
	// WebhookPath is where deliveries are POSTed (WEBHOOK_PATH).
	WebhookPath string
	// GitHubAPIURL is the REST base URL (GITHUB_API_URL), without a
	// trailing slash.
	GitHubAPIURL string
	// RedisURL, when set, puts delivery dedupe and per-issue locks in Redis
	// (REDIS_URL), so several replicas can share the work.
	RedisURL string
	// RedisPrefix starts every key written to Redis (REDIS_PREFIX, default
	// "autopilot:<APP_ID>:", RedisPrefixFor), so several Apps can share one
	// Redis.
	RedisPrefix string
	// QueueSize bounds the deliveries accepted but not yet started in
	// process (QUEUE_SIZE); past it intake answers 503. With Redis it bounds
	// only the sweeps waiting locally.
	QueueSize int
	// QueueMax bounds the deliveries in the Redis work queue not yet
	// acknowledged, across replicas (QUEUE_MAX); past it intake answers 503
	// and /readyz fails.
	QueueMax int
	// QueueClaimIdle is how long a Redis queue entry may stay pending with
	// a replica that stopped renewing it (it died) before another replica
	// claims it (QUEUE_CLAIM_IDLE).
	QueueClaimIdle time.Duration
	// Workers is how many jobs run at once (WORKERS).
	Workers int
	// SweepInterval is how often every installation's open autopilot issues
	// are reconciled (SWEEP_INTERVAL, a Go duration; 0 turns the timer off).
	SweepInterval time.Duration
	// InteractiveReserve is the share of each installation's hourly API
	// budget that background work (the sweep) leaves for interactive work
	// (GITHUB_INTERACTIVE_RESERVE, a percentage; 0 is the default, 20 %).
	InteractiveReserve float64
	// RedeliveryInterval is how often the App's recent webhook deliveries
	// are read and the failed ones redelivered (REDELIVERY_INTERVAL, a Go
	// duration; 0 turns the job off).
	RedeliveryInterval time.Duration
	// ShutdownTimeout is how long in-flight work may run after SIGTERM
	// (SHUTDOWN_TIMEOUT); what is left then is left to the sweep.
	ShutdownTimeout time.Duration
	// LockTTL is the per-issue lease's time to live (LOCK_TTL); it is renewed
	// every third of it while a job runs.
	LockTTL time.Duration
	// DedupeTTL is how long a delivery id is remembered (DEDUPE_TTL, at
	// least 72h).
	DedupeTTL time.Duration
	// Getenv is the environment the config was read from, kept so the caller
	// can read the AUTOPILOT_<INPUT> action inputs the same way.
	Getenv func(string) string
}

// Addr is the listen address, "HOST:PORT".
func (c Config) Addr() string {
	return net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
}

// WithDefaults fills in what the configuration left at zero, for a
// Config built in code rather than by Load.
func (cfg Config) WithDefaults() Config {
	if cfg.WebhookPath == "" {
		cfg.WebhookPath = DefaultWebhookPath
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = DefaultQueueSize
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	if cfg.LockTTL <= 0 {
		cfg.LockTTL = DefaultLockTTL
	}
	if cfg.DedupeTTL <= 0 {
		cfg.DedupeTTL = MinDedupeTTL
	}
	if cfg.QueueMax <= 0 {
		cfg.QueueMax = DefaultQueueMax
	}
	if cfg.QueueClaimIdle <= 0 {
		cfg.QueueClaimIdle = DefaultQueueClaimIdle
	}
	if cfg.RedisPrefix == "" {
		cfg.RedisPrefix = RedisPrefixFor(cfg.AppID)
	}
	return cfg
}

// setting is one configuration knob: its env name, flag name and parser.
type setting struct {
	env   string
	usage string
	set   func(c *Config, v string) error
}

// all lists every setting: the App's identity, where it listens and talks,
// then the tuning knobs.
func all() []setting {
	return append(append(identity(), endpoints()...), tuning()...)
}

func identity() []setting {
	return []setting{
		{"WEBHOOK_SECRET", "HMAC secret of the App's webhook (required)", func(c *Config, v string) error {
			c.WebhookSecret = v
			return nil
		}},
		{"APP_ID", "the GitHub App's id (required)", func(c *Config, v string) error {
			id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || id <= 0 {
				return fmt.Errorf("want a positive integer, got %q", v)
			}
			c.AppID = id
			return nil
		}},
		{"PRIVATE_KEY", "the App's PEM private key, inline (this or PRIVATE_KEY_PATH is required)", func(c *Config, v string) error {
			c.PrivateKey = []byte(v)
			return nil
		}},
		{"PRIVATE_KEY_PATH", "file holding the App's PEM private key", func(c *Config, v string) error {
			c.PrivateKeyPath = v
			return nil
		}},
	}
}

func endpoints() []setting {
	return []setting{
		{"PORT", "listen port", func(c *Config, v string) error {
			p, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || p < 0 || p > 65535 {
				return fmt.Errorf("want a port number, got %q", v)
			}
			c.Port = p
			return nil
		}},
		{"HOST", "listen host (empty: all interfaces)", func(c *Config, v string) error {
			c.Host = v
			return nil
		}},
		{"WEBHOOK_PATH", "path deliveries are POSTed to", func(c *Config, v string) error {
			if !strings.HasPrefix(v, "/") {
				return fmt.Errorf("want a path starting with /, got %q", v)
			}
			c.WebhookPath = v
			return nil
		}},
		{"GITHUB_API_URL", "GitHub REST base URL", func(c *Config, v string) error {
			if !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
				return fmt.Errorf("want an http(s) URL, got %q", v)
			}
			c.GitHubAPIURL = strings.TrimRight(v, "/")
			return nil
		}},
		{"ADMIN_ADDR", "host:port serving /metrics (and the health probes) to operators", func(c *Config, v string) error {
			host, port, err := net.SplitHostPort(strings.TrimSpace(v))
			if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
				return fmt.Errorf("want host:port such as 127.0.0.1:9090 or :9090, got %q", v)
			}
			c.AdminAddr = net.JoinHostPort(host, port)
			return nil
		}},
		{"DASHBOARD_CLIENT_ID", "the App's OAuth client id: GitHub sign-in for a dashboard on a non-loopback ADMIN_ADDR", func(c *Config, v string) error {
			c.DashboardClientID = strings.TrimSpace(v)
			return nil
		}},
		{"DASHBOARD_CLIENT_SECRET", "the App's OAuth client secret (with DASHBOARD_CLIENT_ID)", func(c *Config, v string) error {
			c.DashboardClientSecret = strings.TrimSpace(v)
			return nil
		}},
		{"METRICS_ON_WEBHOOK_PORT", "serve /metrics on the webhook port too (true or false)", func(c *Config, v string) error {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("want true or false, got %q", v)
			}
			c.MetricsOnWebhookPort = b
			return nil
		}},
		{"REDIS_URL", "redis://, rediss:// or unix:// URL for dedupe, per-issue locks and the work queue shared by replicas", func(c *Config, v string) error {
			if err := checkRedisURL(v); err != nil {
				return err
			}
			c.RedisURL = v
			return nil
		}},
		{"REDIS_PREFIX", "prefix of every Redis key (default autopilot:<APP_ID>:, so Apps sharing one Redis stay apart)", func(c *Config, v string) error {
			c.RedisPrefix = v
			return nil
		}},
		{"GITHUB_INTERACTIVE_RESERVE", "percentage of each installation's hourly API budget the sweep leaves for answers, commands and PR events (default 20)", func(c *Config, v string) error {
			n, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "%")), 64)
			if err != nil || n <= 0 || n >= 100 {
				return fmt.Errorf("want a percentage above 0 and below 100, such as 20, got %q", v)
			}
			c.InteractiveReserve = n / 100
			return nil
		}},
	}
}

// redisSchemes are the URL schemes go-redis opens.
var redisSchemes = []string{"redis", "rediss", "unix"}

// checkRedisURL refuses a REDIS_URL go-redis would not open, naming only
// its scheme: the URL may carry a password.
func checkRedisURL(v string) error {
	const want = "want a redis://, rediss:// or unix:// URL such as redis://localhost:6379/0"
	scheme, rest, ok := strings.Cut(strings.TrimSpace(v), "://")
	if !ok || rest == "" {
		return errors.New(want + " (the value has no scheme://)")
	}
	for _, s := range redisSchemes {
		if strings.EqualFold(scheme, s) {
			if _, err := url.Parse(v); err != nil {
				return errors.New(want + " (the value is not a valid URL)")
			}
			return nil
		}
	}
	if len(scheme) > 16 || strings.ContainsAny(scheme, ":@/") {
		return errors.New(want)
	}
	return fmt.Errorf("%s, not %s://", want, scheme)
}

func tuning() []setting {
	return []setting{
		{"QUEUE_SIZE", "deliveries accepted but not yet started in process, before 503 (without Redis)", intSetting(func(c *Config, n int) { c.QueueSize = n })},
		{"QUEUE_MAX", "deliveries in the Redis work queue not yet acknowledged, before 503", intSetting(func(c *Config, n int) { c.QueueMax = n })},
		{"QUEUE_CLAIM_IDLE", "time a Redis queue entry held by a dead replica waits before another claims it", durSetting(false, func(c *Config, d time.Duration) { c.QueueClaimIdle = d })},
		{"WORKERS", "jobs run at once", intSetting(func(c *Config, n int) { c.Workers = n })},
		{"SWEEP_INTERVAL", "period of the catch-up sweep (0 = off)", durSetting(true, func(c *Config, d time.Duration) { c.SweepInterval = d })},
		{"REDELIVERY_INTERVAL", "period of the job redelivering failed webhook deliveries (0 = off)", durSetting(true, func(c *Config, d time.Duration) { c.RedeliveryInterval = d })},
		{"SHUTDOWN_TIMEOUT", "time in-flight work may take after SIGTERM", durSetting(false, func(c *Config, d time.Duration) { c.ShutdownTimeout = d })},
		{"LOCK_TTL", "per-issue lease time to live", durSetting(false, func(c *Config, d time.Duration) { c.LockTTL = d })},
		{"DEDUPE_TTL", "how long delivery ids are remembered (at least 72h)", durSetting(false, func(c *Config, d time.Duration) { c.DedupeTTL = d })},
	}
}

func intSetting(apply func(*Config, int)) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n <= 0 {
			return fmt.Errorf("want a positive integer, got %q", v)
		}
		apply(c, n)
		return nil
	}
}

func durSetting(zeroOK bool, apply func(*Config, time.Duration)) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d < 0 || (d == 0 && !zeroOK) {
			return fmt.Errorf("want a positive duration such as 30s or 15m, got %q", v)
		}
		apply(c, d)
		return nil
	}
}

// flagName turns an env name into its flag: WEBHOOK_SECRET -> webhook-secret.
func flagName(env string) string {
	return strings.ReplaceAll(strings.ToLower(env), "_", "-")
}

// Load reads the configuration from getenv, then lets args (flags such as
// --port 8080 or --webhook-secret=...) override it. Every error it returns
// is a usage or configuration error; a missing required setting is named.
// args that are --help return an error wrapping flag.ErrHelp with the usage.
func Load(args []string, getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	c := defaults(getenv)
	settings := all()
	values := make(map[string]string, len(settings))
	for _, s := range settings {
		if v := getenv(s.env); v != "" {
			values[s.env] = v
		}
	}
	if err := parseFlags(args, settings, values); err != nil {
		return Config{}, err
	}
	for _, s := range settings {
		v, ok := values[s.env]
		if !ok {
			continue
		}
		if err := s.set(&c, v); err != nil {
			return Config{}, fmt.Errorf("%s (--%s): %w", s.env, flagName(s.env), err)
		}
	}
	if err := c.finish(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// defaults is the configuration before the environment and flags.
func defaults(getenv func(string) string) Config {
	return Config{
		Port:               DefaultPort,
		AdminAddr:          DefaultAdminAddr,
		WebhookPath:        DefaultWebhookPath,
		GitHubAPIURL:       DefaultGitHubAPIURL,
		QueueSize:          DefaultQueueSize,
		QueueMax:           DefaultQueueMax,
		QueueClaimIdle:     DefaultQueueClaimIdle,
		Workers:            DefaultWorkers,
		SweepInterval:      DefaultSweepInterval,
		RedeliveryInterval: DefaultRedeliveryInterval,
		ShutdownTimeout:    DefaultShutdownTimeout,
		LockTTL:            DefaultLockTTL,
		DedupeTTL:          MinDedupeTTL,
		Getenv:             getenv,
	}
}

// parseFlags parses args into values, where a flag given overrides the
// environment's value of its setting.
func parseFlags(args []string, settings []setting, values map[string]string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flagVals := make(map[string]*string, len(settings))
	for _, s := range settings {
		flagVals[s.env] = fs.String(flagName(s.env), "", s.usage+" (env "+s.env+")")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return fmt.Errorf("%w\n%s", flag.ErrHelp, usage(fs))
		}
		return fmt.Errorf("serve: %w", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	fs.Visit(func(f *flag.Flag) {
		for _, s := range settings {
			if flagName(s.env) == f.Name {
				values[s.env] = *flagVals[s.env]
			}
		}
	})
	return nil
}

// finish checks the required settings and loads the key file.
func (c *Config) finish() error {
	var missing []string
	if c.WebhookSecret == "" {
		missing = append(missing, "WEBHOOK_SECRET")
	}
	if c.AppID == 0 {
		missing = append(missing, "APP_ID")
	}
	if len(c.PrivateKey) == 0 && c.PrivateKeyPath == "" {
		missing = append(missing, "PRIVATE_KEY or PRIVATE_KEY_PATH")
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing required setting: %s (set the environment variable or its --flag)", strings.Join(missing, ", "))
	}
	if len(c.PrivateKey) > 0 && c.PrivateKeyPath != "" {
		return errors.New("both PRIVATE_KEY and PRIVATE_KEY_PATH are set: set only one")
	}
	if c.PrivateKeyPath != "" {
		b, err := os.ReadFile(c.PrivateKeyPath)
		if err != nil {
			return fmt.Errorf("PRIVATE_KEY_PATH: %w", err)
		}
		c.PrivateKey = b
	} else if !strings.Contains(string(c.PrivateKey), "\n") {
		// A PEM pasted into a one-line env var often carries literal "\n".
		c.PrivateKey = []byte(strings.ReplaceAll(string(c.PrivateKey), `\n`, "\n"))
	}
	if !strings.Contains(string(c.PrivateKey), "-----BEGIN") {
		return errors.New("private key is not PEM (it must start with -----BEGIN ... PRIVATE KEY-----)")
	}
	if c.RedisPrefix == "" {
		c.RedisPrefix = RedisPrefixFor(c.AppID)
	}
	if c.DedupeTTL < MinDedupeTTL {
		return fmt.Errorf("DEDUPE_TTL %s is below %s: GitHub redelivers for three days", c.DedupeTTL, MinDedupeTTL)
	}
	if c.QueueClaimIdle < 100*time.Millisecond {
		return fmt.Errorf("QUEUE_CLAIM_IDLE %s is too short (at least 100ms)", c.QueueClaimIdle)
	}
	if c.LockTTL < 100*time.Millisecond {
		return fmt.Errorf("LOCK_TTL %s is too short (at least 100ms)", c.LockTTL)
	}
	if (c.DashboardClientID == "") != (c.DashboardClientSecret == "") {
		return errors.New("DASHBOARD_CLIENT_ID and DASHBOARD_CLIENT_SECRET go together (the App's OAuth client id and secret, from its settings page): set both, or neither")
	}
	if c.adminOnWebhookPort() {
		return fmt.Errorf("ADMIN_ADDR %s is the webhook's address (PORT %d): give the admin listener a port of its own", c.AdminAddr, c.Port)
	}
	return nil
}

// adminOnWebhookPort reports an admin address that would take the webhook
// listener's port.
func (c *Config) adminOnWebhookPort() bool {
	host, port, err := net.SplitHostPort(c.AdminAddr)
	if err != nil || port != strconv.Itoa(c.Port) || c.Port == 0 {
		return false
	}
	wildcard := func(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" }
	return wildcard(host) || wildcard(c.Host) || strings.EqualFold(host, c.Host)
}

func usage(fs *flag.FlagSet) string {
	var b strings.Builder
	b.WriteString("usage: bot serve [flags]\n\nEvery flag overrides the environment variable named in its help.\n\n")
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	return b.String()
}
