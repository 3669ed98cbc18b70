package settings

import (
	"strings"
	"testing"
)

// TestRedisURLSchemeIsCheckedAtLoad: only redis://, rediss:// and unix://
// are Redis URLs; anything else is a settings error naming REDIS_URL and
// the schemes it takes, and never repeating a password the URL carries.
func TestRedisURLSchemeIsCheckedAtLoad(t *testing.T) {
	for _, ok := range []string{"redis://localhost:6379/0", "rediss://:pw@cache.example.com:6380", "unix:///run/redis.sock", "REDIS://host:6379"} {
		env := requiredEnv()
		env["REDIS_URL"] = ok
		if _, err := Load(nil, envOf(env)); err != nil {
			t.Errorf("REDIS_URL %q: %v", ok, err)
		}
	}
	for _, bad := range []string{"http://:hunter2@localhost:6379", "localhost:6379", "redis//localhost", "tcp://hunter2@localhost:6379", "::hunter2"} {
		env := requiredEnv()
		env["REDIS_URL"] = bad
		_, err := Load(nil, envOf(env))
		if err == nil || !strings.Contains(err.Error(), "REDIS_URL") || !strings.Contains(err.Error(), "redis://") {
			t.Errorf("REDIS_URL %q: err = %v, want one naming REDIS_URL and redis://", bad, err)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("REDIS_URL %q: the error repeats the password: %v", bad, err)
		}
	}
}

// TestAdminAddrServesMetrics: ADMIN_ADDR defaults to 127.0.0.1:9090 and
// takes a host:port; METRICS_ON_WEBHOOK_PORT is off unless set true.
func TestAdminAddrServesMetrics(t *testing.T) {
	c, err := Load(nil, envOf(requiredEnv()))
	if err != nil {
		t.Fatal(err)
	}
	if c.AdminAddr != "127.0.0.1:9090" || c.MetricsOnWebhookPort {
		t.Errorf("defaults: ADMIN_ADDR %q, METRICS_ON_WEBHOOK_PORT %v; want 127.0.0.1:9090 and false", c.AdminAddr, c.MetricsOnWebhookPort)
	}
	c, err = Load([]string{"--admin-addr", ":9100", "--metrics-on-webhook-port", "true"}, envOf(requiredEnv()))
	if err != nil {
		t.Fatal(err)
	}
	if c.AdminAddr != ":9100" || !c.MetricsOnWebhookPort {
		t.Errorf("flags: ADMIN_ADDR %q, METRICS_ON_WEBHOOK_PORT %v", c.AdminAddr, c.MetricsOnWebhookPort)
	}
	for _, bad := range []struct{ k, v string }{
		{"ADMIN_ADDR", "9090"}, {"ADMIN_ADDR", "localhost:http-alt:1"}, {"ADMIN_ADDR", "127.0.0.1:99999"},
		{"METRICS_ON_WEBHOOK_PORT", "maybe"},
	} {
		env := requiredEnv()
		env[bad.k] = bad.v
		if _, err := Load(nil, envOf(env)); err == nil || !strings.Contains(err.Error(), bad.k) {
			t.Errorf("%s=%q: err = %v, want one naming %s", bad.k, bad.v, err, bad.k)
		}
	}
	env := requiredEnv()
	env["PORT"], env["ADMIN_ADDR"] = "9090", ":9090"
	if _, err := Load(nil, envOf(env)); err == nil || !strings.Contains(err.Error(), "ADMIN_ADDR") {
		t.Errorf("ADMIN_ADDR on the webhook port: err = %v, want one naming ADMIN_ADDR", err)
	}
}

// TestDashboardSignInNeedsBothClientSettings: the dashboard's GitHub
// sign-in takes the App's OAuth client id and secret, both or neither.
func TestDashboardSignInNeedsBothClientSettings(t *testing.T) {
	env := requiredEnv()
	env["DASHBOARD_CLIENT_ID"], env["DASHBOARD_CLIENT_SECRET"] = "Iv1.abc", "s3cret"
	c, err := Load(nil, envOf(env))
	if err != nil || c.DashboardClientID != "Iv1.abc" || c.DashboardClientSecret != "s3cret" {
		t.Fatalf("both set: %+v %v", c, err)
	}
	delete(env, "DASHBOARD_CLIENT_SECRET")
	if _, err := Load(nil, envOf(env)); err == nil || !strings.Contains(err.Error(), "DASHBOARD_CLIENT_SECRET") {
		t.Errorf("id without secret: err = %v, want one naming DASHBOARD_CLIENT_SECRET", err)
	}
}
