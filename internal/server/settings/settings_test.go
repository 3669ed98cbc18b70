package settings

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const testPEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n"

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func requiredEnv() map[string]string {
	return map[string]string{"WEBHOOK_SECRET": "s3cret", "APP_ID": "12345", "PRIVATE_KEY": testPEM}
}

func TestLoadConfigDefaults(t *testing.T) {
	c, err := Load(nil, envOf(requiredEnv()))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"secret", c.WebhookSecret, "s3cret"},
		{"app id", c.AppID, int64(12345)},
		{"key", string(c.PrivateKey), testPEM},
		{"port", c.Port, 3000},
		{"addr", c.Addr(), ":3000"},
		{"path", c.WebhookPath, "/api/github/webhooks"},
		{"api", c.GitHubAPIURL, "https://api.github.com"},
		{"redis", c.RedisURL, ""},
		{"queue", c.QueueSize, DefaultQueueSize},
		{"queue max", c.QueueMax, 10000},
		{"claim idle", c.QueueClaimIdle, 15 * time.Second},
		{"redis prefix", c.RedisPrefix, "autopilot:12345:"},
		{"workers", c.Workers, DefaultWorkers},
		{"sweep", c.SweepInterval, DefaultSweepInterval},
		{"shutdown", c.ShutdownTimeout, DefaultShutdownTimeout},
		{"dedupe", c.DedupeTTL, 72 * time.Hour},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
	if c.Getenv("APP_ID") != "12345" {
		t.Error("Getenv does not pass the environment through")
	}
}

func TestLoadConfigFlagsOverrideEnv(t *testing.T) {
	env := requiredEnv()
	env["PORT"] = "4000"
	env["HOST"] = "0.0.0.0"
	env["GITHUB_API_URL"] = "https://ghe.example.com/api/v3/"
	env["REDIS_URL"] = "redis://env:6379/0"
	c, err := Load([]string{"--port", "8080", "--host=127.0.0.1", "--redis-url", "redis://flag:6379/1",
		"--webhook-path", "/hooks", "--queue-size", "10", "--workers", "2", "--sweep-interval", "0",
		"--shutdown-timeout", "3s", "--app-id", "7", "--queue-max", "50", "--queue-claim-idle", "2s",
		"--redis-prefix", "ap2:"}, envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 8080 || c.Host != "127.0.0.1" || c.Addr() != "127.0.0.1:8080" {
		t.Errorf("listen = %s, want the flags' 127.0.0.1:8080", c.Addr())
	}
	if c.RedisURL != "redis://flag:6379/1" || c.WebhookPath != "/hooks" || c.AppID != 7 {
		t.Errorf("flags did not override: redis %q path %q app %d", c.RedisURL, c.WebhookPath, c.AppID)
	}
	if c.GitHubAPIURL != "https://ghe.example.com/api/v3" {
		t.Errorf("api url = %q, want env value without trailing slash", c.GitHubAPIURL)
	}
	if c.QueueSize != 10 || c.Workers != 2 || c.SweepInterval != 0 || c.ShutdownTimeout != 3*time.Second {
		t.Errorf("tuning = %d %d %s %s", c.QueueSize, c.Workers, c.SweepInterval, c.ShutdownTimeout)
	}
	if c.QueueMax != 50 || c.QueueClaimIdle != 2*time.Second || c.RedisPrefix != "ap2:" {
		t.Errorf("redis queue = max %d claim idle %s prefix %q", c.QueueMax, c.QueueClaimIdle, c.RedisPrefix)
	}
}

func TestLoadConfigNamesWhatIsMissingOrWrong(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(keyFile, []byte(testPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"nothing set", map[string]string{}, nil, "WEBHOOK_SECRET, APP_ID, PRIVATE_KEY or PRIVATE_KEY_PATH"},
		{"no secret", map[string]string{"APP_ID": "1", "PRIVATE_KEY": testPEM}, nil, "missing required setting: WEBHOOK_SECRET"},
		{"no key", map[string]string{"APP_ID": "1", "WEBHOOK_SECRET": "x"}, nil, "PRIVATE_KEY or PRIVATE_KEY_PATH"},
		{"bad app id", map[string]string{"APP_ID": "abc", "WEBHOOK_SECRET": "x", "PRIVATE_KEY": testPEM}, nil, "APP_ID"},
		{"bad port", requiredEnv(), []string{"--port", "99999"}, "PORT"},
		{"bad path", requiredEnv(), []string{"--webhook-path", "hooks"}, "WEBHOOK_PATH"},
		{"bad url", requiredEnv(), []string{"--github-api-url", "api.github.com"}, "GITHUB_API_URL"},
		{"bad duration", requiredEnv(), []string{"--shutdown-timeout", "soon"}, "SHUTDOWN_TIMEOUT"},
		{"short dedupe", requiredEnv(), []string{"--dedupe-ttl", "1h"}, "DEDUPE_TTL"},
		{"short claim idle", requiredEnv(), []string{"--queue-claim-idle", "10ms"}, "QUEUE_CLAIM_IDLE"},
		{"bad queue max", requiredEnv(), []string{"--queue-max", "0"}, "QUEUE_MAX"},
		{"both keys", requiredEnv(), []string{"--private-key-path", keyFile}, "only one"},
		{"missing key file", map[string]string{"APP_ID": "1", "WEBHOOK_SECRET": "x", "PRIVATE_KEY_PATH": "/nonexistent/key.pem"}, nil, "PRIVATE_KEY_PATH"},
		{"not PEM", map[string]string{"APP_ID": "1", "WEBHOOK_SECRET": "x", "PRIVATE_KEY": "hunter2"}, nil, "not PEM"},
		{"unknown flag", requiredEnv(), []string{"--colour"}, "colour"},
		{"stray argument", requiredEnv(), []string{"extra"}, "extra"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.args, envOf(tt.env))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestLoadConfigReadsKeyFileAndUnescapesInlineKey(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(keyFile, []byte(testPEM), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(nil, envOf(map[string]string{"APP_ID": "1", "WEBHOOK_SECRET": "x", "PRIVATE_KEY_PATH": keyFile}))
	if err != nil {
		t.Fatal(err)
	}
	if string(c.PrivateKey) != testPEM || c.PrivateKeyPath != keyFile {
		t.Fatalf("key from file = %q (path %q)", c.PrivateKey, c.PrivateKeyPath)
	}
	oneLine := strings.ReplaceAll(testPEM, "\n", `\n`)
	c, err = Load(nil, envOf(map[string]string{"APP_ID": "1", "WEBHOOK_SECRET": "x", "PRIVATE_KEY": oneLine}))
	if err != nil {
		t.Fatal(err)
	}
	if string(c.PrivateKey) != testPEM {
		t.Fatalf("inline key with literal \\n = %q, want real newlines", c.PrivateKey)
	}
}

func TestLoadConfigHelpListsEveryFlag(t *testing.T) {
	_, err := Load([]string{"-h"}, envOf(nil))
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err = %v, want flag.ErrHelp", err)
	}
	for _, s := range all() {
		if !strings.Contains(err.Error(), "-"+flagName(s.env)) || !strings.Contains(err.Error(), s.env) {
			t.Errorf("usage lacks --%s (env %s)", flagName(s.env), s.env)
		}
	}
}
