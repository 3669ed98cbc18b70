package dashboard

import (
	"net/http"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/dashboard/store"
)

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:9090": true, "[::1]:9090": true, "localhost:9090": true, "127.0.0.2:1": true,
		":9090": false, "0.0.0.0:9090": false, "10.1.2.3:9090": false, "[::]:9090": false, "dash.example:9090": false, "9090": false} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestExposedWithoutSignInRefusesEveryRequest: on a non-loopback admin
// address without GitHub sign-in, every dashboard path answers 403 with
// what to do.
func TestExposedWithoutSignInRefusesEveryRequest(t *testing.T) {
	d := newDash(t, Options{Store: fill(t, samplePass(nil)), Exposed: true})
	for _, p := range []string{"/", "/issues/octo-org/hello-world/12", "/health", "/login", "/?login=octocat"} {
		code, body := get(t, d, p)
		if code != http.StatusForbidden || !strings.Contains(body, "ADMIN_ADDR") || strings.Contains(body, "Add login") {
			t.Errorf("GET %s = %d %.120q", p, code, body)
		}
	}
	if code, _ := get(t, newDash(t, Options{Store: store.NewMemory()}), "/"); code != http.StatusOK {
		t.Errorf("loopback GET / = %d", code)
	}
}
