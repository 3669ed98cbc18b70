package tasksync

import (
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

func closable() []state.Task {
	done := created("02", "A-2")
	done.Done = true
	pending := tasks(4)[3]
	return []state.Task{created("01", "A-1"), done, created("03", "A-3"), pending, created("05", "A-5")}
}

func newClose(ts []state.Task, o Options) *Close {
	if o.Now.IsZero() {
		o.Now = t0
	}
	o.Name = "Jira"
	return NewClose(ts, o)
}

func TestCloseMovesOpenIssuesToDoneInTaskOrder(t *testing.T) {
	c := newClose(closable(), Options{})
	play(t, c, []step{{op: "close A-1"}, {op: "close A-3"}, {op: "close A-5"}})
	res := c.Result(Extras{})
	if res.Closed != 3 || res.Left != 0 || res.Requests != 3 || res.Note != "" {
		t.Errorf("result %+v", res)
	}
}

func TestCloseARefusalOrAGoneIssueIsThatIssuesAloneAndTheOthersGoOn(t *testing.T) {
	c := newClose(closable(), Options{})
	play(t, c, []step{
		{op: "close A-1", out: refused(Rejected, "Jira rejected the request: no transition to done")},
		{op: "close A-3", out: Outcome{Err: &Refusal{Class: Gone, Gone: state.IssueDeleted, Msg: "issue deleted (HTTP 410)"}}},
		{op: "close A-5"},
	})
	res := c.Result(Extras{})
	if len(res.Failures) != 1 || res.Failures[0].Key != "A-1" || res.Tasks[2].Gone != state.IssueDeleted || res.Left != 1 || res.Closed != 1 {
		t.Errorf("result %+v", res)
	}
}

func TestCloseStopsOnALongRateLimitOrARefusedTokenAndLeavesTheRest(t *testing.T) {
	t.Run("rate limit", func(t *testing.T) {
		c := newClose(closable(), Options{})
		play(t, c, []step{
			{op: "close A-1"},
			{op: "close A-3", out: Outcome{Err: &Refusal{Class: RateLimited, RetryAfter: time.Hour}}},
		})
		res := c.Result(Extras{})
		if res.Left != 2 || !res.RetryAt.Equal(t0.Add(time.Hour)) || len(res.Failures) != 0 {
			t.Errorf("result %+v", res)
		}
	})
	t.Run("auth", func(t *testing.T) {
		c := newClose(closable(), Options{})
		play(t, c, []step{{op: "close A-1", out: Outcome{Err: &Refusal{Class: Auth, Status: 401}}}})
		if res := c.Result(Extras{}); res.Paused != PausedAuth || res.Left != 3 {
			t.Errorf("result %+v", res)
		}
	})
	t.Run("a transient error is retried: moving to done is safe to repeat", func(t *testing.T) {
		c := newClose(closable()[:1], Options{})
		play(t, c, []step{
			{op: "close A-1", out: Outcome{Err: &Refusal{Class: Transient, Status: 502}}},
			{op: "wait 1s"},
			{op: "close A-1"},
		})
	})
}

func TestCloseSendsNothingInsideTheRetryWindow(t *testing.T) {
	c := newClose(closable(), Options{NotBefore: t0.Add(time.Minute)})
	play(t, c, nil)
	if res := c.Result(Extras{}); res.Left != 3 || !strings.Contains(res.Note, "asked us to wait") || !res.RetryAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("result %+v", res)
	}
}

func TestCloseNotesNameTheTrackerAndWhatIsLeft(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  CloseResult
		want string
	}{
		{"all done", CloseResult{Closed: 2}, ""},
		{"a refusal", CloseResult{Left: 1, Failures: []CloseFailure{{Key: "A-1", Err: "no transition"}}}, "Jira: A-1: no transition"},
		{"paused", CloseResult{Left: 2, Paused: PausedAuth}, "Jira: transition on close paused: authentication failed"},
		{"left for later", CloseResult{Left: 3, Failures: []CloseFailure{{Key: "A-1", Err: "x"}}, Note: "rate limit"},
			"Jira: A-1: x | Jira: 2 issue(s) left to move to done: rate limit"},
	} {
		if got := strings.Join(tc.res.Notes("Jira"), " | "); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestTheWaitingNoteSaysWhy(t *testing.T) {
	testWant := func(res Result, want string) {
		t.Helper()
		if got := res.WaitingNote(); got != want {
			t.Errorf("%+v: %q, want %q", res, got, want)
		}
	}
	testWant(Result{Note: "ignored"}, "")
	testWant(Result{Waiting: 1}, "waiting for the next sync")
	testWant(Result{Waiting: 1, Note: "1 waiting for Jira search lag"}, "1 waiting for Jira search lag")
}
