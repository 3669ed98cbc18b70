package appmode

import (
	"net/http"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/server/appauth"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
	"github.com/autopilot-dev/autopilot/internal/server/tracing"
	"github.com/autopilot-dev/autopilot/internal/server/tracing/tracingtest"
)

// TestADeliveryThroughTheAppIsOneTrace: a labeled delivery through the
// server and the App is one trace: the delivery span at the root, the
// intake steps, queue wait and job under it, and every GitHub call of the
// pass a client span under the job, named by method and route template
// (no owner, repository or number in it), with the status and GitHub's
// rate headers; the token mint of the installation is one of them.
func TestADeliveryThroughTheAppIsOneTrace(t *testing.T) {
	sr := tracingtest.New(t)
	tr := sr.Tracer
	r := newRig(t, nil)
	// As `bot serve` wires it: every GitHub request (token mints too) goes
	// through the traced transport under appauth's clients.
	auth, err := appauth.New(appauth.Config{AppID: apptest.AppID, PrivateKey: r.gh.KeyPEM, BaseURL: r.gh.URL,
		Observe: r.metrics.ObserveResponse, Transport: tr.Transport(nil, tracing.GitHub)})
	if err != nil {
		t.Fatal(err)
	}
	o := r.app.o
	o.Clients, o.Tracer = auth, tr
	if r.app, err = New(o); err != nil {
		t.Fatal(err)
	}
	r.auth = auth
	n := r.gh.Issue(repo, "Add CSV export")
	url := r.start(settings.Config{QueueSize: 16, Workers: 2, LockTTL: time.Second, DedupeTTL: settings.MinDedupeTTL, ShutdownTimeout: 5 * time.Second}, nil)
	if code := r.gh.Labeled(repo, n, apptest.Maintainer, "autopilot").Post(t, url+settings.DefaultWebhookPath, apptest.Secret); code != http.StatusAccepted {
		t.Fatalf("labeled: %d", code)
	}
	var job sdktrace.ReadOnlySpan
	eventually(t, "the job span", func() bool {
		for _, s := range sr.Ended() {
			if s.Name() == tracing.SpanJob {
				job = s
			}
		}
		return job != nil
	})
	if r.gh.State(repo, n) == nil {
		t.Fatal("the pass wrote no state")
	}
	traceID := job.SpanContext().TraceID()
	var root sdktrace.ReadOnlySpan
	calls := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range sr.Ended() {
		if s.SpanContext().TraceID() != traceID {
			t.Errorf("span %q is in another trace", s.Name())
			continue
		}
		switch {
		case s.Name() == tracing.SpanDelivery:
			root = s
		case strings.HasPrefix(s.Name(), "GET ") || strings.HasPrefix(s.Name(), "POST ") || strings.HasPrefix(s.Name(), "PATCH ") ||
			strings.HasPrefix(s.Name(), "PUT ") || strings.HasPrefix(s.Name(), "DELETE "):
			calls[s.Name()] = s
			if s.Parent().SpanID() != job.SpanContext().SpanID() {
				t.Errorf("call %q is not under the job span", s.Name())
			}
			if strings.Contains(s.Name(), repo) || strings.Contains(s.Name(), "other") {
				t.Errorf("call span %q names no route template", s.Name())
			}
		}
	}
	if root == nil || job.Parent().SpanID() != root.SpanContext().SpanID() {
		t.Fatalf("no delivery span over the job")
	}
	for _, want := range []string{
		"POST /app/installations/{installation_id}/access_tokens",
		"POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
		"POST /graphql", // the thread read
		"GET /repos/{owner}/{repo}/contents/{path}",
	} {
		if _, ok := calls[want]; !ok {
			t.Errorf("no %q span; calls: %v", want, keys(calls))
		}
	}
	post := calls["POST /repos/{owner}/{repo}/issues/{issue_number}/comments"]
	if post != nil {
		a := tracingtest.Attrs(post)
		if a["http.response.status_code"] != "201" || a["github.ratelimit.remaining"] == "" || a["github.ratelimit.resource"] != "core" {
			t.Errorf("comment POST attributes %v, want 201 with the rate headers", a)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
