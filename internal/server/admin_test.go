package server

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/settings"
)

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestMetricsAreServedOnTheAdminAddress: Run serves the webhook port and
// ADMIN_ADDR; /metrics answers on the admin address only, unless
// METRICS_ON_WEBHOOK_PORT asks for it on the webhook port too; the health
// probes answer on both.
func TestMetricsAreServedOnTheAdminAddress(t *testing.T) {
	for _, both := range []bool{false, true} {
		t.Run("metrics on webhook port "+strconv.FormatBool(both), func(t *testing.T) {
			cfg := testConfig()
			host, port, _ := net.SplitHostPort(freeAddr(t))
			cfg.Host, cfg.Port = host, func() int { p, _ := strconv.Atoi(port); return p }()
			cfg.AdminAddr, cfg.MetricsOnWebhookPort = freeAddr(t), both
			s, err := New(cfg, Deps{Processor: newRecorder(), Logger: quietLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- s.Run(ctx) }()
			t.Cleanup(func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Run: %v", err)
				}
			})
			hook, admin := "http://"+cfg.Addr(), "http://"+cfg.AdminAddr
			up := func(base string) bool {
				resp, err := http.Get(base + "/healthz")
				if err != nil {
					return false // not listening yet
				}
				resp.Body.Close()
				return resp.StatusCode == http.StatusOK
			}
			eventually(t, "both listeners", func() bool { return up(hook) && up(admin) })
			if code, body := get(t, admin, "/metrics"); code != http.StatusOK || !strings.Contains(body, "autopilot_") {
				t.Errorf("admin /metrics = %d %.80q", code, body)
			}
			if code, _ := get(t, admin, "/readyz"); code != http.StatusOK {
				t.Errorf("admin /readyz = %d", code)
			}
			want := http.StatusNotFound
			if both {
				want = http.StatusOK
			}
			if code, _ := get(t, hook, "/metrics"); code != want {
				t.Errorf("webhook port /metrics = %d, want %d", code, want)
			}
			if code, _ := get(t, admin, settings.DefaultWebhookPath); code != http.StatusNotFound {
				t.Errorf("admin address answers the webhook path: %d", code)
			}
		})
	}
}

// TestAdminAddressTakenFailsRun: an ADMIN_ADDR another process holds
// fails Run at once, naming ADMIN_ADDR.
func TestAdminAddressTakenFailsRun(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	cfg := testConfig()
	cfg.Host, cfg.Port, cfg.AdminAddr = "127.0.0.1", 0, held.Addr().String()
	s, err := New(cfg, Deps{Processor: newRecorder(), Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Run(ctx); err == nil || !strings.Contains(err.Error(), "ADMIN_ADDR") {
		t.Fatalf("Run = %v, want an error naming ADMIN_ADDR", err)
	}
}

// TestAdminHandlerMountsTheDashboard: Deps.Admin answers every admin path
// the server does not serve itself; /metrics and the probes stay the
// server's, and the webhook port never serves the dashboard.
func TestAdminHandlerMountsTheDashboard(t *testing.T) {
	dash := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("dashboard " + r.URL.Path)) })
	cfg := testConfig()
	cfg.AdminAddr = "127.0.0.1:0"
	s, err := New(cfg, Deps{Processor: newRecorder(), Logger: quietLogger(t), Admin: dash})
	if err != nil {
		t.Fatal(err)
	}
	serve := func(h http.Handler, path string) string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Body.String()
	}
	if got := serve(s.AdminHandler(), "/issues/a/b/1"); got != "dashboard /issues/a/b/1" {
		t.Errorf("admin /issues/a/b/1 = %q", got)
	}
	if got := serve(s.AdminHandler(), "/metrics"); !strings.Contains(got, "autopilot_") {
		t.Errorf("admin /metrics = %.80q", got)
	}
	if got := serve(s.Handler(), "/"); strings.Contains(got, "dashboard") {
		t.Errorf("the webhook port serves the dashboard: %q", got)
	}
}
