package github

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

const issuePath = "/repos/octocat/Hello-World/issues/1347"

func getIssue(e *env) error {
	_, err := e.client.GetIssue(context.Background(), 1347)
	return err
}

// TestRateLimitWaitsThenRetries covers the three ways GitHub says "not now":
// retry-after, an exhausted primary budget with a reset, and a secondary
// limit without any header (at least 60 s, doubling when it repeats).
func TestRateLimitWaitsThenRetries(t *testing.T) {
	tests := []struct {
		name      string
		steps     func(e *env) []http.HandlerFunc
		maxWait   time.Duration
		wantSleep []time.Duration
	}{
		{
			name: "secondary limit with retry-after 60",
			steps: func(*env) []http.HandlerFunc {
				return []http.HandlerFunc{status(403, secondaryLimitBody, "Retry-After: 60")}
			},
			wantSleep: []time.Duration{60 * time.Second},
		},
		{
			name: "429 with retry-after 30",
			steps: func(*env) []http.HandlerFunc {
				return []http.HandlerFunc{status(429, secondaryLimitBody, "Retry-After: 30")}
			},
			wantSleep: []time.Duration{30 * time.Second},
		},
		{
			name: "primary limit exhausted, reset in 40 s",
			steps: func(e *env) []http.HandlerFunc {
				reset := unix(e.clock.Now().Add(40 * time.Second))
				return []http.HandlerFunc{status(403, primaryLimitBody, "X-RateLimit-Limit: 5000", "X-RateLimit-Remaining: 0", "X-RateLimit-Reset: "+reset)}
			},
			wantSleep: []time.Duration{40 * time.Second},
		},
		{
			name: "secondary limit without header waits 60 s then doubles",
			steps: func(*env) []http.HandlerFunc {
				return []http.HandlerFunc{status(403, secondaryLimitBody), status(403, secondaryLimitBody)}
			},
			maxWait:   10 * time.Minute,
			wantSleep: []time.Duration{60 * time.Second, 120 * time.Second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "", func(o *Options) { o.MaxWait = tt.maxWait })
			steps := append(tt.steps(e), status(200, fixture(t, "issue.json")))
			e.handle("GET "+issuePath, script(steps...))
			if err := getIssue(e); err != nil {
				t.Fatalf("GetIssue: %v", err)
			}
			if got := e.clock.Sleeps(); !reflect.DeepEqual(got, tt.wantSleep) {
				t.Errorf("sleeps = %v, want %v", got, tt.wantSleep)
			}
			// No request inside a window: each re-send comes no earlier than
			// the previous request plus the wait it announced.
			reqs := e.requests()
			if len(reqs) != len(tt.wantSleep)+1 {
				t.Fatalf("%d requests, want %d", len(reqs), len(tt.wantSleep)+1)
			}
			for i, d := range tt.wantSleep {
				if gap := reqs[i+1].At.Sub(reqs[i].At); gap < d {
					t.Errorf("request %d sent %v after the limit, inside its %v window", i+1, gap, d)
				}
			}
			if st := e.client.Stats(); st.RateLimited != len(tt.wantSleep) {
				t.Errorf("RateLimited = %d, want %d", st.RateLimited, len(tt.wantSleep))
			}
		})
	}
}

func TestWaitLongerThanMaxWaitFailsAtOnce(t *testing.T) {
	tests := []struct {
		name          string
		handler       func(e *env) http.HandlerFunc
		wantUntil     time.Duration
		wantSecondary bool
	}{
		{"primary reset 40 minutes away", func(e *env) http.HandlerFunc {
			return status(403, primaryLimitBody, "X-RateLimit-Remaining: 0", "X-RateLimit-Reset: "+unix(e.clock.Now().Add(40*time.Minute)))
		}, 40 * time.Minute, false},
		{"retry-after an hour", func(*env) http.HandlerFunc {
			return status(429, secondaryLimitBody, "Retry-After: 3600")
		}, time.Hour, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "", nil)
			e.handle("GET "+issuePath, tt.handler(e))
			err := getIssue(e)
			var rl *forge.RateLimitError
			if !errors.As(err, &rl) {
				t.Fatalf("err = %v, want *forge.RateLimitError", err)
			}
			if want := epoch.Add(tt.wantUntil); !rl.Until.Equal(want) || rl.Secondary != tt.wantSecondary {
				t.Errorf("RateLimitError = %+v, want until %v secondary %v", rl, want, tt.wantSecondary)
			}
			if s := e.clock.Sleeps(); len(s) != 0 {
				t.Errorf("slept %v before giving up", s)
			}
			if n := len(e.requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

func TestNoRequestIsSentWhileAWindowIsOpen(t *testing.T) {
	e := newEnv(t, "", nil)
	e.handle("GET "+issuePath, script(status(403, secondaryLimitBody, "Retry-After: 600"), status(200, fixture(t, "issue.json"))))
	e.handle("GET /repos/octocat/Hello-World/issues/1347/comments", status(200, fixture(t, "comments.json")))

	if err := getIssue(e); err == nil {
		t.Fatal("first call succeeded inside a 600 s limit")
	}
	// Another endpoint, later but still inside the window: refused locally.
	e.clock.Advance(5 * time.Minute)
	_, err := e.client.ListComments(context.Background(), 1347)
	var rl *forge.RateLimitError
	if !errors.As(err, &rl) || !rl.Until.Equal(epoch.Add(600*time.Second)) {
		t.Fatalf("err = %v, want RateLimitError until the window's end", err)
	}
	if n := len(e.requests()); n != 1 {
		t.Fatalf("%d requests sent, want 1 (none inside the window)", n)
	}
	// Within MaxWait of the end: the call waits it out, then goes.
	e.clock.Advance(4*time.Minute + 30*time.Second)
	if err := getIssue(e); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	reqs := e.requests()
	if len(reqs) != 2 || reqs[1].At.Before(epoch.Add(600*time.Second)) {
		t.Errorf("second request at %v, want at or after %v", reqs[len(reqs)-1].At, epoch.Add(600*time.Second))
	}
}

func TestExhaustedBudgetOnSuccessHoldsTheNextRequest(t *testing.T) {
	e := newEnv(t, "", nil)
	reset := unix(epoch.Add(45 * time.Second))
	e.handle("GET "+issuePath, status(200, fixture(t, "issue.json"), "X-RateLimit-Remaining: 0", "X-RateLimit-Reset: "+reset))
	if err := getIssue(e); err != nil {
		t.Fatal(err)
	}
	if err := getIssue(e); err != nil {
		t.Fatal(err)
	}
	if got := e.clock.Sleeps(); !reflect.DeepEqual(got, []time.Duration{45 * time.Second}) {
		t.Errorf("sleeps = %v, want [45s] (the budget was spent until the reset)", got)
	}
	if st := e.client.Stats(); st.RateRemaining != 0 || !st.RateReset.Equal(epoch.Add(45*time.Second)) {
		t.Errorf("stats remaining/reset = %d/%v", st.RateRemaining, st.RateReset)
	}
}

func TestRepeatedRateLimitsGiveUpAfterMaxRetries(t *testing.T) {
	e := newEnv(t, "", func(o *Options) { o.MaxRetries = 2 })
	e.handle("GET "+issuePath, status(403, secondaryLimitBody, "Retry-After: 10"))
	err := getIssue(e)
	var rl *forge.RateLimitError
	if !errors.As(err, &rl) || !rl.Secondary {
		t.Fatalf("err = %v, want secondary RateLimitError", err)
	}
	if n := len(e.requests()); n != 3 {
		t.Errorf("%d requests, want 3 (first + 2 re-sends)", n)
	}
}

func TestForbiddenIsNotRetried(t *testing.T) {
	e := newEnv(t, "", nil)
	e.handle("POST /repos/octocat/Hello-World/issues/1347/comments", status(403, forbiddenBody))
	_, err := e.client.CreateComment(context.Background(), 1347, "<!-- autopilot:x -->\nhello")
	if !errors.Is(err, forge.ErrForbidden) {
		t.Fatalf("err = %v, want ErrForbidden", err)
	}
	if !strings.Contains(err.Error(), "Resource not accessible by integration") {
		t.Errorf("err %q lacks GitHub's message", err)
	}
	if n := len(e.requests()); n != 1 || len(e.clock.Sleeps()) != 0 {
		t.Errorf("%d requests, sleeps %v: a permission 403 must not be retried", n, e.clock.Sleeps())
	}
}

// TestWallClockNearFakeClockDoesNotDoubleBlock runs the limits with the fake
// clock at the real time: go-github's own wall-clock bookkeeping must not
// refuse the request the transport decided to send after its (fake) wait.
func TestWallClockNearFakeClockDoesNotDoubleBlock(t *testing.T) {
	tests := []struct {
		name  string
		first func(now time.Time) http.HandlerFunc
	}{
		{"budget spent on a success", func(now time.Time) http.HandlerFunc {
			return status(200, fixture(t, "issue.json"), "X-RateLimit-Remaining: 0", "X-RateLimit-Reset: "+unix(now.Add(30*time.Second)))
		}},
		{"primary limit 403", func(now time.Time) http.HandlerFunc {
			return status(403, primaryLimitBody, "X-RateLimit-Remaining: 0", "X-RateLimit-Reset: "+unix(now.Add(30*time.Second)))
		}},
		{"secondary limit 403", func(time.Time) http.HandlerFunc {
			return status(403, secondaryLimitBody, "Retry-After: 30")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "", nil)
			now := time.Now().Truncate(time.Second)
			e.clock.Advance(now.Sub(e.clock.Now()))
			e.handle("GET "+issuePath, script(tt.first(now), status(200, fixture(t, "issue.json"))))
			for i := range 2 {
				if err := getIssue(e); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			if n := len(e.requests()); n < 2 {
				t.Errorf("%d requests reached the server, want every call sent", n)
			}
			if got := e.clock.Sleeps(); !reflect.DeepEqual(got, []time.Duration{30 * time.Second}) {
				t.Errorf("sleeps = %v, want [30s]", got)
			}
		})
	}
}
