package jira

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakejira"
	"github.com/autopilot-dev/autopilot/internal/reconcile/trackersync"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// createOpen creates n tasks in the fake through the adapter and returns
// them as the state holds them after a sync.
func (e *env) createOpen(tb testing.TB, n int) []state.Task {
	tb.Helper()
	res := e.sync(tb, tasksN(n), nil)
	for _, t := range res.Tasks {
		if t.Sync != state.SyncCreated || t.Done {
			tb.Fatalf("task %s not created open: %+v", t.ID, t)
		}
	}
	return res.Tasks
}

// endpoints lists the endpoints of the logged requests from index from on.
func endpoints(log []fakejira.Request, from int) string {
	var out []string
	for _, q := range log[from:] {
		out = append(out, q.Endpoint)
	}
	return strings.Join(out, ",")
}

func statusOf(fj *fakejira.Server, key string) string {
	for _, is := range fj.Issues() {
		if is.Key == key {
			return is.Status
		}
	}
	return ""
}

func TestCloseIssueTakesTheTransitionToDone(t *testing.T) {
	tests := []struct {
		name       string
		workflow   []fakejira.Transition
		status     string // PROJ-1's status before the call
		wantCalls  string
		wantBody   string // the POST body, when one is sent
		wantStatus string
	}{
		{"from To Do", nil, "To Do", "get,transitions,doTransition", `{"transition":{"id":"31"}}`, "Done"},
		{"from In Progress", nil, "In Progress", "get,transitions,doTransition", `{"transition":{"id":"31"}}`, "Done"},
		{"already done: nothing sent", nil, "Done", "get", "", "Done"},
		{"a linear workflow from In Progress", fakejira.LinearWorkflow(), "In Progress", "get,transitions,doTransition", `{"transition":{"id":"5"}}`, "Done"},
	}
	for _, dep := range deployments {
		for _, tc := range tests {
			t.Run(dep+"/"+tc.name, func(t *testing.T) {
				e := setup(t, dep, func(o *fakejira.Options) { o.Workflow = tc.workflow }, nil)
				e.createOpen(t, 1)
				if err := e.fj.Transition("PROJ-1", tc.status); err != nil {
					t.Fatal(err)
				}
				from := len(e.fj.Requests())
				if err := e.c.CloseIssue(context.Background(), "PROJ-1"); err != nil {
					t.Fatalf("CloseIssue: %v", err)
				}
				log := e.fj.Requests()
				if got := endpoints(log, from); got != tc.wantCalls {
					t.Fatalf("requests %s, want %s", got, tc.wantCalls)
				}
				if q := log[from]; q.Path != "/rest/api/2/issue/PROJ-1" || q.Query != "fields=status" {
					t.Errorf("status read as %s?%s", q.Path, q.Query)
				}
				if tc.wantBody != "" {
					post := log[len(log)-1]
					if post.Status != http.StatusNoContent || strings.TrimSpace(post.Body) != tc.wantBody {
						t.Errorf("POST answered %d with body %s, want 204 for %s", post.Status, post.Body, tc.wantBody)
					}
					if post.Header.Get("Idempotency-Key") != "" {
						t.Error("the transition carried an Idempotency-Key header")
					}
				}
				if got := statusOf(e.fj, "PROJ-1"); got != tc.wantStatus {
					t.Errorf("PROJ-1 is %q, want %q", got, tc.wantStatus)
				}
			})
		}
	}
}

func TestCloseIssueClassifiesFailures(t *testing.T) {
	resolution := fakejira.Fault{Status: 400, Body: `{"errorMessages":[],"errors":{"resolution":"Resolution is required."}}`,
		Header: http.Header{"Content-Type": {"application/json;charset=UTF-8"}}}
	tests := []struct {
		name     string
		workflow []fakejira.Transition
		key      string
		prepare  func(fj *fakejira.Server)
		check    func(t *testing.T, err error)
		wantPost int
	}{
		{name: "no transition to done names the issue and what is offered", workflow: fakejira.LinearWorkflow(), key: "PROJ-1",
			check: func(t *testing.T, err error) {
				var ve *tracker.ValidationError
				if !errors.As(err, &ve) || !strings.Contains(ve.Message, "PROJ-1") || !strings.Contains(ve.Message, `"Start Progress" → In Progress`) || !strings.Contains(ve.Message, `"To Do"`) {
					t.Fatalf("err = %v, want a validation error naming PROJ-1, its status and Start Progress", err)
				}
			}},
		{name: "refused credentials", key: "PROJ-1", prepare: func(fj *fakejira.Server) { fj.SetAuthValid(false) },
			check: func(t *testing.T, err error) {
				var ae *tracker.AuthError
				if !errors.As(err, &ae) || ae.Status != 401 {
					t.Fatalf("err = %v, want AuthError 401", err)
				}
			}},
		{name: "403 on the transitions", key: "PROJ-1", prepare: func(fj *fakejira.Server) { fj.Script(fakejira.EndpointTransitions, fakejira.Fault{Status: 403}) },
			check: func(t *testing.T, err error) {
				var ae *tracker.AuthError
				if !errors.As(err, &ae) || ae.Status != 403 {
					t.Fatalf("err = %v, want AuthError 403", err)
				}
			}},
		{name: "429 on the transition", key: "PROJ-1", wantPost: 1,
			prepare: func(fj *fakejira.Server) {
				fj.Script(fakejira.EndpointDoTransition, fakejira.RateLimited(30*time.Second, "jira-per-issue-on-write"))
			},
			check: func(t *testing.T, err error) {
				var rl *tracker.RateLimitError
				if !errors.As(err, &rl) || rl.RetryAfter != 30*time.Second || rl.Reason != "jira-per-issue-on-write" {
					t.Fatalf("err = %v, want RateLimitError 30s jira-per-issue-on-write", err)
				}
			}},
		{name: "503 on the status read", key: "PROJ-1", prepare: func(fj *fakejira.Server) { fj.Script(fakejira.EndpointGet, fakejira.Fault{Status: 503}) },
			check: func(t *testing.T, err error) {
				var te *tracker.TransientError
				if !errors.As(err, &te) || te.Status != 503 {
					t.Fatalf("err = %v, want TransientError 503", err)
				}
			}},
		{name: "a screen with a required field", key: "PROJ-1", wantPost: 1,
			prepare: func(fj *fakejira.Server) { fj.Script(fakejira.EndpointDoTransition, resolution) },
			check: func(t *testing.T, err error) {
				var ve *tracker.ValidationError
				if !errors.As(err, &ve) || ve.Field != "resolution" {
					t.Fatalf("err = %v, want a validation error on resolution", err)
				}
			}},
		{name: "a deleted issue", key: "PROJ-9",
			check: func(t *testing.T, err error) {
				var ae *tracker.AuthError
				var ve *tracker.ValidationError
				var te *tracker.TransientError
				if err == nil || errors.As(err, &ae) || errors.As(err, &ve) || errors.As(err, &te) || !strings.Contains(err.Error(), "404") {
					t.Fatalf("err = %v, want a plain error naming the 404", err)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, fakejira.Cloud, func(o *fakejira.Options) { o.Workflow = tc.workflow }, nil)
			e.createOpen(t, 1)
			if tc.prepare != nil {
				tc.prepare(e.fj)
			}
			tc.check(t, e.c.CloseIssue(context.Background(), tc.key))
			if n := len(e.fj.RequestsTo(fakejira.EndpointDoTransition)); n != tc.wantPost {
				t.Errorf("%d transition POSTs, want %d", n, tc.wantPost)
			}
			if got := statusOf(e.fj, "PROJ-1"); got != "To Do" {
				t.Errorf("PROJ-1 moved to %q", got)
			}
		})
	}
}

// TestCloseIssueAfterALostAnswerSendsNoSecondTransition: the transition
// commits but its answer is lost (502); calling again finds the issue done
// and sends nothing more.
func TestCloseIssueAfterALostAnswerSendsNoSecondTransition(t *testing.T) {
	e := setup(t, fakejira.Cloud, nil, nil)
	e.createOpen(t, 1)
	e.fj.Script(fakejira.EndpointDoTransition, fakejira.Fault{Status: 502, Commit: true})
	var te *tracker.TransientError
	if err := e.c.CloseIssue(context.Background(), "PROJ-1"); !errors.As(err, &te) {
		t.Fatalf("first call: %v, want a transient error", err)
	}
	if err := e.c.CloseIssue(context.Background(), "PROJ-1"); err != nil {
		t.Fatalf("second call: %v", err)
	}
	if n := len(e.fj.RequestsTo(fakejira.EndpointDoTransition)); n != 1 {
		t.Fatalf("%d transition POSTs, want 1", n)
	}
	if got := statusOf(e.fj, "PROJ-1"); got != "Done" {
		t.Fatalf("PROJ-1 is %q", got)
	}
}

// TestCloseTasksThroughTheAdapterHonoursRetryAfter: a 429 longer than the
// longest wait on the first transition stops the pass; a pass inside the window sends nothing; a pass
// after it closes the rest, and no request lands inside the window.
func TestCloseTasksThroughTheAdapterHonoursRetryAfter(t *testing.T) {
	for _, dep := range deployments {
		t.Run(dep, func(t *testing.T) {
			e := setup(t, dep, nil, nil)
			ts := e.createOpen(t, 3)
			e.fj.Script(fakejira.EndpointDoTransition, fakejira.RateLimited(40*time.Second, "jira-per-issue-on-write"))
			ctx := context.Background()
			opts := trackersync.Options{Now: e.clock.Now, Sleep: e.clock.Sleep, MaxWait: 10 * time.Second}

			first := trackersync.CloseAll(ctx, e.c, ts, opts)
			if first.Closed != 0 || first.Left != 3 || first.RetryAt.IsZero() {
				t.Fatalf("first pass: %+v", first)
			}
			e.clock.Advance(20 * time.Second)
			opts.NotBefore = first.RetryAt
			before := len(e.fj.Requests())
			inside := trackersync.CloseAll(ctx, e.c, first.Tasks, opts)
			if len(e.fj.Requests()) != before || inside.Left != 3 || !inside.RetryAt.Equal(first.RetryAt) {
				t.Fatalf("pass inside the window sent %d requests: %+v", len(e.fj.Requests())-before, inside)
			}
			e.clock.Advance(20 * time.Second)
			last := trackersync.CloseAll(ctx, e.c, inside.Tasks, opts)
			if last.Closed != 3 || last.Left != 0 || len(last.Failures) != 0 {
				t.Fatalf("pass after the window: %+v", last)
			}
			for _, is := range e.fj.Issues() {
				if is.Status != "Done" {
					t.Errorf("%s is %s", is.Key, is.Status)
				}
			}
			if n := len(e.fj.RequestsTo(fakejira.EndpointDoTransition)); n != 4 {
				t.Errorf("%d transition POSTs, want 4 (one refused, three done)", n)
			}
			if w := noRequestInsideRetryAfter(t, e.fj.Requests()); w != 1 {
				t.Errorf("%d Retry-After windows, want 1", w)
			}
		})
	}
}
