package tracing_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/fake/fakejira"
	"github.com/autopilot-dev/autopilot/internal/jira"
	"github.com/autopilot-dev/autopilot/internal/server/tracing"
	"github.com/autopilot-dev/autopilot/internal/server/tracing/tracingtest"
)

// get sends GET base+path with a token through rt, under ctx.
func get(t *testing.T, ctx context.Context, rt http.RoundTripper, url, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+token)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestGitHubCallIsAChildSpanWithRouteStatusAndRateHeaders: a call to the
// (fake) tracing.GitHub through the transport is a client span under the job's,
// named by its method and route template, with the status and the
// x-ratelimit-* headers tracing.GitHub answered as attributes; a 404 is an error.
func TestGitHubCallIsAChildSpanWithRouteStatusAndRateHeaders(t *testing.T) {
	tr, sr := recorded(t)
	g := fakegithub.New(fakegithub.Options{})
	t.Cleanup(g.Close)
	if err := g.AddRepo("octo/repo"); err != nil {
		t.Fatal(err)
	}
	g.AddToken("tok", fakegithub.Identity{Login: "alice"})
	reset := time.Now().Add(30 * time.Minute).Truncate(time.Second)
	if err := g.SetRateLimit("tok", 5000, 4321, reset); err != nil {
		t.Fatal(err)
	}
	n, err := g.CreateIssue("octo/repo", "alice", "t", "b", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, job := tr.Job(context.Background(), "issues")
	rt := tr.Transport(http.DefaultTransport, tracing.GitHub)
	get(t, ctx, rt, g.URL()+"/repos/octo/repo/issues/"+strconv.Itoa(n), "tok")
	get(t, ctx, rt, g.URL()+"/repos/octo/repo/issues/999999/comments", "tok")
	job.End()

	call := sr.One(t, "GET /repos/{owner}/{repo}/issues/{issue_number}")
	if call.Parent().SpanID() != job.SpanContext().SpanID() || call.SpanKind().String() != "client" {
		t.Errorf("call span parent %s kind %s, want the job's %s, client", call.Parent().SpanID(), call.SpanKind(), job.SpanContext().SpanID())
	}
	got := tracingtest.Attrs(call)
	want := map[string]string{
		"http.request.method": "GET", "url.template": "/repos/{owner}/{repo}/issues/{issue_number}",
		"http.response.status_code": "200", "autopilot.api": "github",
		"github.ratelimit.remaining": "4320", "github.ratelimit.used": "680", "github.ratelimit.limit": "5000",
		"github.ratelimit.reset": strconv.FormatInt(reset.Unix(), 10), "github.ratelimit.resource": "core",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if _, ok := got["url.full"]; ok {
		t.Error("the span carries the raw URL")
	}
	missing := sr.One(t, "GET /repos/{owner}/{repo}/issues/{issue_number}/comments")
	if a := tracingtest.Attrs(missing); a["http.response.status_code"] != "404" || a["error.type"] != "404" || missing.Status().Code != codes.Error {
		t.Errorf("404 span: attrs %v status %v, want status 404 and an error", a, missing.Status())
	}
}

// failing is a RoundTripper whose every request fails before an answer.
type failing struct{}

func (failing) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("connection refused")
}

// TestCallWithoutAnswerIsAnErrorSpan: a request that got no answer ends
// its span as an error, with the failure's kind and no status.
func TestCallWithoutAnswerIsAnErrorSpan(t *testing.T) {
	tr, sr := recorded(t)
	req, _ := http.NewRequest(http.MethodPost, "https://api.github.com/repos/o/r/issues/1/comments", nil)
	if _, err := tr.Transport(failing{}, tracing.GitHub).RoundTrip(req); err == nil {
		t.Fatal("no error")
	}
	s := sr.One(t, "POST /repos/{owner}/{repo}/issues/{issue_number}/comments")
	if a := tracingtest.Attrs(s); s.Status().Code != codes.Error || a["error.type"] == "" || a["http.response.status_code"] != "" {
		t.Errorf("attrs %v status %v, want an error without a status", a, s.Status())
	}
}

// TestJiraCallIsAChildSpan: the go-jira adapter, built with the traced
// transport as its HTTP client's, makes each tracing.Jira call a client span with
// its route and status.
func TestJiraCallIsAChildSpan(t *testing.T) {
	tr, sr := recorded(t)
	fj := fakejira.New(fakejira.Options{})
	t.Cleanup(fj.Close)
	o := fj.Options()
	c, err := jira.New(jira.Config{URL: fj.URL(), User: o.User, Token: o.Token, Project: o.Project,
		HTTPClient: &http.Client{Transport: tr.Transport(http.DefaultTransport, tracing.Jira)}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, job := tr.Job(context.Background(), "issues")
	if err := c.CheckAuth(ctx); err != nil {
		t.Fatal(err)
	}
	job.End()
	s := sr.One(t, "GET /rest/api/2/myself")
	if a := tracingtest.Attrs(s); a["http.response.status_code"] != "200" || a["autopilot.api"] != "jira" || s.Parent().SpanID() != job.SpanContext().SpanID() {
		t.Errorf("jira span attrs %v parent %s, want 200 under the job", a, s.Parent().SpanID())
	}
}
