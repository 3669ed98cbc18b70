package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
)

// TestServeConfigurationErrorsExitTwoNamingTheSetting runs `bot serve` in
// process with settings missing or wrong: each exits 2 before serving, and
// the message names what to fix.
func TestServeConfigurationErrorsExitTwoNamingTheSetting(t *testing.T) {
	g := apptest.New(t)
	good := func() map[string]string {
		return map[string]string{
			"WEBHOOK_SECRET": "s", "APP_ID": strconv.Itoa(apptest.AppID), "PRIVATE_KEY": string(g.KeyPEM),
			"GITHUB_API_URL": g.URL, "HOST": "127.0.0.1", "PORT": "0",
		}
	}
	without := func(keys ...string) map[string]string {
		env := good()
		for _, k := range keys {
			delete(env, k)
		}
		return env
	}
	with := func(k, v string) map[string]string {
		env := good()
		env[k] = v
		return env
	}
	keyFile := func(path string) map[string]string {
		env := without("PRIVATE_KEY")
		env["PRIVATE_KEY_PATH"] = path
		return env
	}
	badClock := filepath.Join(t.TempDir(), "clock")
	if err := os.WriteFile(badClock, []byte("tomorrow\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"no webhook secret", without("WEBHOOK_SECRET"), nil, []string{"WEBHOOK_SECRET"}},
		{"no app id", without("APP_ID"), nil, []string{"APP_ID"}},
		{"no private key", without("PRIVATE_KEY"), nil, []string{"PRIVATE_KEY or PRIVATE_KEY_PATH"}},
		{"nothing at all", map[string]string{}, nil, []string{"WEBHOOK_SECRET", "APP_ID", "PRIVATE_KEY"}},
		{"a flag does not rescue a missing other", without("APP_ID"), []string{"--webhook-secret", "x"}, []string{"APP_ID"}},
		{"app id not a number", with("APP_ID", "abc"), nil, []string{"APP_ID", "--app-id"}},
		{"both key settings", with("PRIVATE_KEY_PATH", "/nonexistent/app.pem"), nil, []string{"set only one"}},
		{"key file missing", keyFile("/nonexistent/app.pem"), nil, []string{"PRIVATE_KEY_PATH", "no such file"}},
		{"key not PEM", with("PRIVATE_KEY", "not a key"), nil, []string{"PEM"}},
		{"bad action input", with("AUTOPILOT_ANSWER_PERMISSION", "read"), nil, []string{"AUTOPILOT_ANSWER_PERMISSION"}},
		{"bad mutation gap", with("AUTOPILOT_MUTATION_GAP", "soon"), nil, []string{"AUTOPILOT_MUTATION_GAP"}},
		{"bad claim settle", with("AUTOPILOT_CLAIM_SETTLE", "-1s"), nil, []string{"AUTOPILOT_CLAIM_SETTLE"}},
		{"GitHub refuses the App", with("APP_ID", "99"), nil, []string{"refused the App's credentials", "APP_ID"}},
		{"stray argument", good(), []string{"extra"}, []string{`unexpected argument "extra"`}},
		{"redis url scheme", with("REDIS_URL", "http://localhost:6379"), nil, []string{"REDIS_URL", "redis://"}},
		{"redis url without scheme", with("REDIS_URL", "localhost:6379"), nil, []string{"REDIS_URL", "redis://"}},
		{"admin address", with("ADMIN_ADDR", "9090"), nil, []string{"ADMIN_ADDR"}},
		{"metrics switch", with("METRICS_ON_WEBHOOK_PORT", "sometimes"), nil, []string{"METRICS_ON_WEBHOOK_PORT"}},
		{"test clock file missing", with("AUTOPILOT_TEST_CLOCK_FILE", "/nonexistent/clock"), nil, []string{"AUTOPILOT_TEST_CLOCK_FILE", "for tests only"}},
		{"test clock not a duration", with("AUTOPILOT_TEST_CLOCK_FILE", badClock), nil, []string{"AUTOPILOT_TEST_CLOCK_FILE", `"tomorrow", not a duration`}},
		{"trace endpoint not a URL", with("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"), nil, []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://"}},
		{"trace protocol grpc", func() map[string]string {
			env := with("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
			env["OTEL_EXPORTER_OTLP_PROTOCOL"] = "grpc"
			return env
		}(), nil, []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			calls := len(g.Requests())
			code, out, errs := runCmd(t, c.env, append([]string{"serve"}, c.args...)...)
			if code != 2 {
				t.Fatalf("exit %d, want 2\n%s%s", code, out, errs)
			}
			text := jsonLines(t, errs)
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
			// Only a refusal by GitHub itself comes after a call to it.
			if n := len(g.Requests()) - calls; n > 0 && !strings.Contains(c.name, "GitHub") {
				t.Errorf("%d calls to GitHub before the settings error", n)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s to refuse", d)
			}
		})
	}
}

func TestServeHelpListsEveryFlag(t *testing.T) {
	code, out, errs := runCmd(t, nil, "serve", "--help")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, f := range []string{"-webhook-secret", "-app-id", "-private-key-path", "-port", "-webhook-path", "-github-api-url", "-redis-url", "-sweep-interval"} {
		if !strings.Contains(out, f) {
			t.Errorf("help lacks %s:\n%s", f, out)
		}
	}
}
