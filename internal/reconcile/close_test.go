package reconcile

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/reconcile/route"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// jiraWorld is a world whose reconciler has a sandbox Jira, with the
// config's jira: section body jiraCfg, and captures the log.
type jiraWorld struct {
	*world
	tr  *tracker.Sandbox
	log *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newJiraWorld(t *testing.T, jiraCfg string) *jiraWorld {
	t.Helper()
	jw := &jiraWorld{log: &syncBuffer{}}
	jw.world = newWorld(t, func(o *Options) {
		jw.tr = tracker.NewSandbox(tracker.SandboxOptions{Now: o.Now})
		o.Tracker = jw.tr
		o.Logger = slog.New(slog.NewTextHandler(jw.log, nil))
		// Waits inside a Jira call move the test clock instead of sleeping.
		o.TrackerSleep = func(_ context.Context, d time.Duration) error { jw.tick(d); return nil }
	})
	jw.sb.SetFile(".github/autopilot.yml", []byte("default_flow: greenfield\njira:\n"+jiraCfg))
	return jw
}

// started opens an issue and runs it to the decompose gate, its two tasks
// created in Jira.
func (jw *jiraWorld) started() int {
	jw.t.Helper()
	n := jw.issue("Add CSV export")
	jw.start(n)
	jw.toGate(n)
	st := jw.state(n)
	if len(st.Tasks) != 2 {
		jw.t.Fatalf("%d tasks after decompose, want 2", len(st.Tasks))
	}
	for _, tk := range st.Tasks {
		if tk.Sync != state.SyncCreated || tk.Key == "" || tk.Done {
			jw.t.Fatalf("task %s not created open in Jira: %+v", tk.ID, tk)
		}
	}
	return n
}

// closedEvent is issues.closed as its payload carries it (the issue closed).
func (jw *jiraWorld) closedEvent(n int) *ghevent.Event {
	ev := jw.event("issues", "closed", n, "maria")
	ev.IssueState = "closed"
	return ev
}

// chatOnClosed posts a plain comment on the closed issue and delivers it.
func (jw *jiraWorld) chatOnClosed(n int, who, body string) []route.Outcome {
	jw.t.Helper()
	c := jw.say(n, who, body)
	ev := jw.commentEvent(c)
	ev.IssueState = "closed"
	return jw.mustHandle(ev)
}

func (jw *jiraWorld) closeCalls() []tracker.SandboxCall {
	var out []tracker.SandboxCall
	for _, c := range jw.tr.Calls() {
		if c.Op == tracker.OpClose {
			out = append(out, c)
		}
	}
	return out
}

// doneInJira lists the keys of the sandbox's issues in a done status.
func (jw *jiraWorld) doneInJira() string {
	var out []string
	for _, is := range jw.tr.Issues() {
		if is.Done {
			out = append(out, is.Key)
		}
	}
	return strings.Join(out, ",")
}

func doneInState(s *state.State) string {
	var out []string
	for _, t := range s.Tasks {
		if t.Done {
			out = append(out, t.Key)
		}
	}
	return strings.Join(out, ",")
}

func TestClosingTheIssueTransitionsJiraOnlyWhenConfigured(t *testing.T) {
	tests := []struct {
		name      string
		cfg       string
		wantCalls int
		wantDone  string
	}{
		{"option on: every task done in Jira and in the state", "  transition_on_close: true\n", 2, "PROJ-1,PROJ-2"},
		{"option off: Jira is left alone", "  transition_on_close: false\n", 0, ""},
		{"option missing: Jira is left alone", "  search_lag: 1s\n", 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			jw := newJiraWorld(t, tc.cfg)
			n := jw.started()
			before := len(jw.tr.Calls())
			outs := jw.mustHandle(jw.closedEvent(n))
			if len(outs) != 1 || outs[0].Status != string(state.RunStopped) {
				t.Fatalf("closing did not stop the run: %+v", outs)
			}
			if got := len(jw.closeCalls()); got != tc.wantCalls {
				t.Errorf("%d close calls, want %d", got, tc.wantCalls)
			}
			if tc.wantCalls == 0 && len(jw.tr.Calls()) != before {
				t.Errorf("closing sent Jira %d calls with the option off", len(jw.tr.Calls())-before)
			}
			if got := jw.doneInJira(); got != tc.wantDone {
				t.Errorf("done in Jira: %q, want %q", got, tc.wantDone)
			}
			if got := doneInState(jw.state(n)); got != tc.wantDone {
				t.Errorf("done in the state: %q, want %q", got, tc.wantDone)
			}

			// A redelivered closed event transitions nothing twice.
			calls := len(jw.tr.Calls())
			jw.mustHandle(jw.closedEvent(n))
			if extra := len(jw.tr.Calls()) - calls; extra != 0 {
				t.Errorf("the redelivered closed event sent Jira %d calls", extra)
			}
		})
	}
}

func TestClosingWithJiraDisabledSendsJiraNothing(t *testing.T) {
	jw := newJiraWorld(t, "  enabled: false\n  transition_on_close: true\n")
	n := jw.issue("Add CSV export")
	jw.start(n)
	jw.toGate(n)
	jw.mustHandle(jw.closedEvent(n))
	if calls := jw.tr.Calls(); len(calls) != 0 {
		t.Fatalf("Jira disabled, yet %d calls: %+v", len(calls), calls)
	}
}

// TestClosingHonoursRetryAfterAcrossPasses: the second transition answers
// 429 with a window longer than a run may wait; the first task is done, the
// window is kept in the state, a pass inside it sends nothing, and a pass
// after it finishes the rest.
func TestClosingHonoursRetryAfterAcrossPasses(t *testing.T) {
	jw := newJiraWorld(t, "  transition_on_close: true\n")
	n := jw.started()
	const window = 5 * time.Minute
	jw.tr.FailNext(tracker.OpClose, nil, &tracker.RateLimitError{RetryAfter: window, Reason: "jira-per-issue-on-write"})
	outs := jw.mustHandle(jw.closedEvent(n))
	st := jw.state(n)
	if got := doneInState(st); got != "PROJ-1" || jw.doneInJira() != "PROJ-1" {
		t.Fatalf("after the 429: done in state %q, in Jira %q", got, jw.doneInJira())
	}
	limited := jw.closeCalls()[1]
	if want := limited.At.Add(window); !st.TrackerRetryAt.Equal(want) {
		t.Fatalf("retry at %v, want %v", st.TrackerRetryAt, want)
	}
	if outs[0].Status != string(state.RunStopped) || !strings.Contains(strings.Join(outs[0].Notes, "\n"), "left to move to done") {
		t.Errorf("outcome %+v", outs[0])
	}

	jw.tick(time.Minute)
	jw.chatOnClosed(n, "devin", "thanks all")
	if got := len(jw.closeCalls()); got != 2 {
		t.Fatalf("a pass inside the window sent %d more close calls", got-2)
	}
	jw.tick(window)
	jw.chatOnClosed(n, "devin", "closing the loop")
	if got := doneInState(jw.state(n)); got != "PROJ-1,PROJ-2" || jw.doneInJira() != "PROJ-1,PROJ-2" {
		t.Fatalf("after the window: done in state %q, in Jira %q", got, jw.doneInJira())
	}
	for _, c := range jw.tr.Calls() {
		if c.At.After(limited.At) && c.At.Before(limited.At.Add(window)) {
			t.Errorf("%s call at %s, inside the Retry-After window from %s", c.Op, c.At.Format(time.TimeOnly), limited.At.Format(time.TimeOnly))
		}
	}
}

func TestClosingWithoutADoneTransitionLogsAndCarriesOn(t *testing.T) {
	jw := newJiraWorld(t, "  transition_on_close: true\n")
	n := jw.started()
	refusal := &tracker.ValidationError{Field: "transition", Message: `issue PROJ-1 (status "To Do") offers no transition to a status in the done category; offered: "Start Progress" → In Progress (indeterminate)`}
	jw.tr.FailNext(tracker.OpClose, refusal)
	outs, err := jw.handle(jw.closedEvent(n))
	if err != nil {
		t.Fatalf("the run failed: %v", err)
	}
	if outs[0].Status != string(state.RunStopped) {
		t.Errorf("the GitHub side did not go on: %+v", outs[0])
	}
	if got := doneInState(jw.state(n)); got != "PROJ-2" {
		t.Errorf("done in the state: %q, want PROJ-2 only", got)
	}
	if !strings.Contains(strings.Join(outs[0].Notes, "\n"), "PROJ-1") {
		t.Errorf("notes %q do not name PROJ-1", outs[0].Notes)
	}
	if log := jw.log.String(); !strings.Contains(log, "tracker issue not moved to done") || !strings.Contains(log, "Start Progress") {
		t.Errorf("the refusal was not logged:\n%s", log)
	}
	if c := jw.botComments(n, "autopilot:notice jira-close-auth"); len(c) != 0 {
		t.Errorf("a refusal posted the auth notice")
	}
}

// TestClosingWithARefusedTokenPausesAndSaysSoOnce: a 401 stops at the first
// transition, posts one notice and pauses Jira for the issue (later events
// send nothing); `/autopilot jira retry` with a fixed token finishes.
func TestClosingWithARefusedTokenPausesAndSaysSoOnce(t *testing.T) {
	jw := newJiraWorld(t, "  transition_on_close: true\n")
	n := jw.started()
	jw.tr.SetAuth(false)
	jw.mustHandle(jw.closedEvent(n))
	if got := len(jw.closeCalls()); got != 1 {
		t.Fatalf("%d close calls after a 401, want 1", got)
	}
	st := jw.state(n)
	if st.TrackerNote != outbox.PausedAuth || doneInState(st) != "" {
		t.Fatalf("after the 401: note %q, done %q", st.TrackerNote, doneInState(st))
	}
	calls := len(jw.tr.Calls())
	jw.chatOnClosed(n, "devin", "why is Jira still open?")
	jw.mustHandle(jw.closedEvent(n))
	if extra := len(jw.tr.Calls()) - calls; extra != 0 {
		t.Errorf("paused, yet %d more Jira calls", extra)
	}
	if c := jw.botComments(n, "autopilot:notice jira-close-auth"); len(c) != 1 || !strings.Contains(c[0].Body, "/autopilot tasks retry") {
		t.Fatalf("auth notices: %d %+v", len(c), c)
	}

	jw.tr.SetAuth(true)
	jw.chatOnClosed(n, "maria", "/autopilot jira retry")
	st = jw.state(n)
	if got := doneInState(st); got != "PROJ-1,PROJ-2" || jw.doneInJira() != "PROJ-1,PROJ-2" {
		t.Fatalf("after jira retry: done in state %q, in Jira %q", got, jw.doneInJira())
	}
	if st.TrackerNote == outbox.PausedAuth {
		t.Errorf("still paused after jira retry")
	}
}

// Tasks still waiting for Jira when the issue closes are created and then
// moved to done by the same pass: the engine hands out the close only
// after the sync's answer is back (pass.Node), so the close sees the keys
// the sync created.
func TestClosingWithTasksStillWaitingCreatesThenClosesThem(t *testing.T) {
	jw := newJiraWorld(t, "  transition_on_close: true\n")
	n := jw.issue("Add CSV export")
	jw.start(n)
	const window = 3 * time.Hour // past any wait inside a pass
	jw.tr.FailNext(tracker.OpCreate, &tracker.RateLimitError{RetryAfter: window, Reason: "jira-per-issue-on-write"})
	jw.toGate(n)
	for _, tk := range jw.state(n).Tasks {
		if tk.Sync == state.SyncCreated {
			t.Fatalf("task %s created despite the rate limit: %+v", tk.ID, tk)
		}
	}
	jw.tick(window + time.Minute)
	before := len(jw.tr.Calls())
	outs := jw.mustHandle(jw.closedEvent(n))
	if len(outs) != 1 || outs[0].Status != string(state.RunStopped) {
		t.Fatalf("closing did not stop the run: %+v", outs)
	}
	if got := jw.doneInJira(); got != "PROJ-1,PROJ-2" {
		t.Errorf("done in Jira: %q, want both tasks", got)
	}
	if got := doneInState(jw.state(n)); got != "PROJ-1,PROJ-2" {
		t.Errorf("done in the state: %q, want both tasks", got)
	}
	var ops []string
	for _, c := range jw.tr.Calls()[before:] {
		ops = append(ops, c.Op)
	}
	if got := strings.Join(ops, " "); !strings.Contains(got, tracker.OpCreate) || strings.LastIndex(got, tracker.OpCreate) > strings.Index(got, tracker.OpClose) {
		t.Errorf("the closing pass sent %q: want the creates, then the closes", got)
	}
}
