package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
)

// collector is a stand-in OTLP/HTTP collector: it keeps the bodies POSTed
// to /v1/traces.
type collector struct {
	srv *httptest.Server

	mu     sync.Mutex
	bodies []string
	other  []string
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		defer c.mu.Unlock()
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			c.other = append(c.other, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
			return
		}
		c.bodies = append(c.bodies, string(b))
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// exported is every span batch received, concatenated.
func (c *collector) exported() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.bodies, "\n")
}

// TestServeExportsATracePerDelivery: `bot serve` with
// OTEL_EXPORTER_OTLP_ENDPOINT exports, by the time it exits on SIGTERM,
// the spans of a delivery — intake, queue wait, job — and of the GitHub
// calls of its pass, named by route template, with OTEL_SERVICE_NAME.
func TestServeExportsATracePerDelivery(t *testing.T) {
	g := apptest.New(t)
	c := newCollector(t)
	env := baseEnv(t, g)
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = c.srv.URL
	env["OTEL_SERVICE_NAME"] = "autopilot-e2e"
	r := startReplica(t, "serve", env)
	n := g.Issue(apptest.Repo, "Add CSV export")
	r.mustAccept(g.Labeled(apptest.Repo, n, apptest.Maintainer, "autopilot"))
	waitFor(t, "the state comment", func() bool { return len(g.States(apptest.Repo, n)) == 1 })
	r.idle()
	if code := r.terminate(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	got := c.exported()
	for _, want := range []string{"autopilot-e2e", "delivery", "intake.verify", "intake.dedupe", "queue.wait", "job",
		"POST /repos/{owner}/{repo}/issues/{issue_number}/comments", "/repos/{owner}/{repo}/issues/{issue_number}/comments",
		"github.ratelimit.remaining", "POST /app/installations/{installation_id}/access_tokens"} {
		if !strings.Contains(got, want) {
			t.Errorf("the collector received no %q", want)
		}
	}
	if strings.Contains(got, apptest.Repo) && strings.Contains(got, "POST /repos/"+apptest.Repo) {
		t.Error("a span is named by its raw URL")
	}
	if len(c.other) != 0 {
		t.Errorf("unexpected requests to the collector: %q", c.other)
	}
}
