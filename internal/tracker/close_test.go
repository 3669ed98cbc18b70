package tracker

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// scriptedCloser records the keys it is asked to close and answers each
// call with the next scripted error for that key (nil once the script ends).
type scriptedCloser struct {
	calls  []string
	script map[string][]error
	onCall func()
}

func (c *scriptedCloser) CloseIssue(ctx context.Context, key string) error {
	c.calls = append(c.calls, key)
	if c.onCall != nil {
		c.onCall()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if q := c.script[key]; len(q) > 0 {
		c.script[key] = q[1:]
		return q[0]
	}
	return nil
}

// created is a task whose Jira issue exists.
func created(id, key string, done bool) state.Task {
	t := task(id, state.KindTask, "Task "+id, "")
	t.Sync, t.Key, t.Done = state.SyncCreated, key, done
	return t
}

func doneKeys(ts []state.Task) []string {
	var out []string
	for _, t := range ts {
		if t.Done {
			out = append(out, t.Key)
		}
	}
	return out
}

func TestCloseTasksTransitionsOpenIssuesInTaskOrderAndHonoursLimits(t *testing.T) {
	mixed := func() []state.Task {
		pending := task("02", state.KindTask, "not in Jira yet", "")
		failed := task("05", state.KindTask, "rejected by Jira", "")
		failed.Sync = state.SyncFailed
		return []state.Task{created("01", "P-1", false), pending, created("03", "P-3", true), created("04", "P-4", false), failed}
	}
	three := func() []state.Task {
		return []state.Task{created("01", "P-1", false), created("02", "P-2", false), created("03", "P-3", false)}
	}
	tests := []struct {
		name      string
		tasks     func() []state.Task
		script    map[string][]error
		notBefore time.Duration // from the clock's start; 0 = none
		cancel    bool
		wantCalls string
		wantDone  string // keys done afterwards
		wantLeft  int
		wantFail  string // keys in Failures
		wantPause string
		wantRetry time.Duration // RetryAt from the clock's start; 0 = zero time
		wantSleep string
		wantNote  string
	}{
		{name: "only created issues that are not done, in task order", tasks: mixed,
			wantCalls: "P-1,P-4", wantDone: "P-1,P-3,P-4"},
		{name: "a refused issue is recorded and the next one tried", tasks: three,
			script:    map[string][]error{"P-2": {&ValidationError{Message: "issue P-2 offers no transition to a done status"}}},
			wantCalls: "P-1,P-2,P-3", wantDone: "P-1,P-3", wantLeft: 1, wantFail: "P-2", wantNote: "P-2 not moved to done"},
		{name: "an error of another kind is recorded the same way", tasks: three,
			script:    map[string][]error{"P-1": {errors.New("jira get P-1: HTTP 404: Issue does not exist")}},
			wantCalls: "P-1,P-2,P-3", wantDone: "P-2,P-3", wantLeft: 1, wantFail: "P-1", wantNote: "HTTP 404"},
		{name: "refused credentials stop at once", tasks: three,
			script:    map[string][]error{"P-2": {&AuthError{Status: 401}}},
			wantCalls: "P-1,P-2", wantDone: "P-1", wantLeft: 2, wantPause: PausedAuth, wantNote: "authentication failed"},
		{name: "a long Retry-After stops and the rest waits", tasks: three,
			script:    map[string][]error{"P-2": {&RateLimitError{RetryAfter: 2 * time.Minute, Reason: "jira-per-issue-on-write"}}},
			wantCalls: "P-1,P-2", wantDone: "P-1", wantLeft: 2, wantRetry: 2 * time.Minute, wantNote: "jira-per-issue-on-write"},
		{name: "a short Retry-After is waited out", tasks: three,
			script:    map[string][]error{"P-2": {&RateLimitError{RetryAfter: 5 * time.Second}}},
			wantCalls: "P-1,P-2,P-2,P-3", wantDone: "P-1,P-2,P-3", wantSleep: "5s"},
		{name: "a transient error is retried with backoff", tasks: three,
			script:    map[string][]error{"P-1": {&TransientError{Status: 502}, &TransientError{Status: 503}}},
			wantCalls: "P-1,P-1,P-1,P-2,P-3", wantDone: "P-1,P-2,P-3", wantSleep: "1.5s,3s"},
		{name: "a lasting outage stops after the attempts", tasks: three,
			script:    map[string][]error{"P-1": {&TransientError{Status: 502}, &TransientError{Status: 502}, &TransientError{Status: 502}}},
			wantCalls: "P-1,P-1,P-1", wantLeft: 3, wantSleep: "1.5s,3s", wantNote: "unavailable after 3 attempts"},
		{name: "nothing is sent inside a Retry-After window", tasks: three, notBefore: 30 * time.Second,
			wantLeft: 3, wantRetry: 30 * time.Second, wantNote: "wait until"},
		{name: "a window with nothing to close is kept quietly", tasks: func() []state.Task { return []state.Task{created("01", "P-1", true)} },
			notBefore: 30 * time.Second, wantDone: "P-1", wantRetry: 30 * time.Second},
		{name: "a cancelled context stops", tasks: three, cancel: true,
			wantCalls: "P-1", wantLeft: 3, wantNote: "stopped"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			start := c.Now()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cl := &scriptedCloser{script: tc.script}
			if tc.script == nil {
				cl.script = map[string][]error{}
			}
			if tc.cancel {
				cl.onCall = cancel
			}
			in := tc.tasks()
			before := slices.Clone(in)
			opts := SyncOptions{Now: c.Now, Sleep: c.Sleep, Rand: func() float64 { return 0.5 }}
			if tc.notBefore > 0 {
				opts.NotBefore = start.Add(tc.notBefore)
			}
			res := CloseTasks(ctx, cl, in, opts)

			if got := strings.Join(cl.calls, ","); got != tc.wantCalls {
				t.Errorf("calls %q, want %q", got, tc.wantCalls)
			}
			if res.Requests != len(cl.calls) {
				t.Errorf("Requests = %d, closer saw %d", res.Requests, len(cl.calls))
			}
			if got := strings.Join(doneKeys(res.Tasks), ","); got != tc.wantDone {
				t.Errorf("done %q, want %q", got, tc.wantDone)
			}
			if res.Left != tc.wantLeft {
				t.Errorf("Left = %d, want %d", res.Left, tc.wantLeft)
			}
			var failed []string
			for _, f := range res.Failures {
				failed = append(failed, f.Key)
				if !strings.Contains(f.String(), f.Key) {
					t.Errorf("failure %q does not name its key", f)
				}
			}
			if got := strings.Join(failed, ","); got != tc.wantFail {
				t.Errorf("failures %q, want %q", got, tc.wantFail)
			}
			if res.Paused != tc.wantPause {
				t.Errorf("Paused = %q, want %q", res.Paused, tc.wantPause)
			}
			wantRetry := time.Time{}
			if tc.wantRetry > 0 {
				wantRetry = start.Add(tc.wantRetry)
			}
			if !res.RetryAt.Equal(wantRetry) {
				t.Errorf("RetryAt = %v, want %v", res.RetryAt, wantRetry)
			}
			var sleeps []string
			for _, d := range c.sleeps {
				sleeps = append(sleeps, d.String())
			}
			if got := strings.Join(sleeps, ","); got != tc.wantSleep {
				t.Errorf("sleeps %q, want %q", got, tc.wantSleep)
			}
			if (tc.wantNote == "") != (res.Note == "") || !strings.Contains(res.Note, tc.wantNote) {
				t.Errorf("note %q, want it to contain %q", res.Note, tc.wantNote)
			}
			if !slices.EqualFunc(in, before, func(a, b state.Task) bool { return a.Done == b.Done && a.Key == b.Key }) {
				t.Error("CloseTasks modified its input")
			}
		})
	}
}

func TestSandboxCloseIssue(t *testing.T) {
	ctx := context.Background()
	sb := NewSandbox(SandboxOptions{})
	if _, err := sb.CreateBulk(ctx, []Item{{IdemKey: "autopilot-0000000001", Title: "one"}, {IdemKey: "autopilot-0000000002", Title: "two"}}); err != nil {
		t.Fatal(err)
	}
	if err := sb.Transition("PROJ-2", "Closed"); err != nil {
		t.Fatal(err)
	}
	var ve *ValidationError
	var ae *AuthError
	steps := []struct {
		name   string
		before func()
		key    string
		check  func(error) bool
		status string // of the key afterwards ("" when it does not exist)
	}{
		{"an open issue moves to Done", nil, "PROJ-1", func(err error) bool { return err == nil }, "Done"},
		{"again: nothing changes", nil, "PROJ-1", func(err error) bool { return err == nil }, "Done"},
		{"a done status other than Done is kept", nil, "PROJ-2", func(err error) bool { return err == nil }, "Closed"},
		{"an unknown key is refused", nil, "PROJ-9", func(err error) bool { return errors.As(err, &ve) && strings.Contains(ve.Message, "PROJ-9") }, ""},
		{"revoked credentials", func() { sb.SetAuth(false) }, "PROJ-1", func(err error) bool { return errors.As(err, &ae) && ae.Status == 401 }, "Done"},
		{"an injected fault comes first", func() { sb.SetAuth(true); sb.FailNext(OpClose, &RateLimitError{RetryAfter: time.Second}) }, "PROJ-1",
			func(err error) bool { var rl *RateLimitError; return errors.As(err, &rl) }, "Done"},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		err := sb.CloseIssue(ctx, st.key)
		if !st.check(err) {
			t.Fatalf("%s: err %v", st.name, err)
		}
		status := ""
		for _, is := range sb.Issues() {
			if is.Key == st.key {
				status = is.Status
				if !is.Done {
					t.Errorf("%s: %s not done", st.name, is.Key)
				}
			}
		}
		if status != st.status {
			t.Errorf("%s: %s is %q, want %q", st.name, st.key, status, st.status)
		}
	}
	if n := countOps(sb.Calls(), OpClose); n != len(steps) {
		t.Errorf("%d close calls logged, want %d", n, len(steps))
	}
}
