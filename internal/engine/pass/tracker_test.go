package pass_test

import (
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/pass"
	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/testkit"
)

// jiraCaps is a Jira-like tracker that moves issues to done.
var jiraCaps = tasksync.Caps{Name: "Jira", CanClose: true}

// toDecompose walks a greenfield run with Jira on to the plan's answer
// and returns a pass over it whose comment declares one epic.
func toDecompose(t *testing.T, closed bool) (*world, *pass.Node, time.Time) {
	t.Helper()
	w := newWorld(t, "jira:\n  project: PROJ\n  transition_on_close: true\n")
	w.set.TrackerConfigured = true
	w.start("greenfield")
	w.say("maria", "/autopilot done problem")
	w.say("maria", "/autopilot done research")
	w.apply(events.TrackerAuth{OK: true})
	now := w.clock.Add(time.Minute)
	n := pass.New(w.set, w.st, pass.Options{Issue: issue, Closed: closed, Tracker: jiraCaps})
	c := w.comment("maria", "/autopilot done plan")
	c.Declared = []state.Task{{Kind: state.KindEpic, Title: "CSV export"}}
	step(t, n, c, now)
	return w, n, now
}

// op is the tracker op a Ready hands out, as a word.
func op(rd pass.Ready) string {
	if rd.Tracker == nil {
		return ""
	}
	switch rd.Tracker.Op.(type) {
	case tasksync.Lookup:
		return "lookup"
	case tasksync.Create:
		return "create"
	case tasksync.ReadStatuses:
		return "statuses"
	case tasksync.CloseIssue:
		return "close"
	case tasksync.Recall:
		return "recall"
	case tasksync.Wait:
		return "wait"
	case tasksync.LinkDep:
		return "link"
	}
	return "?"
}

func answer(t *testing.T, n *pass.Node, rd pass.Ready, out tasksync.Outcome, now time.Time) {
	t.Helper()
	out.At = now
	step(t, n, pass.TrackerOutcome{Op: rd.Tracker.Op, Outcome: out}, now)
	n.Advance(rd)
}

// The tracker work is handed out op by op and its answers come back as
// TrackerOutcome events: the sync looks up, claims its create with a
// write of its own (Ready.Claim) before the create is handed out, ends
// with Recall, and its outcome is written before the close policy's ops.
func TestTrackerWorkIsHandedOutOpByOp(t *testing.T) {
	_, n, now := toDecompose(t, true)
	rd := ready(t, n, now)
	testkit.Want(t, "first the lookup", op(rd), "lookup")
	testkit.Want(t, "no tracker query any more", len(rd.Queries), 0)
	testkit.Want(t, "the settled state is written after the sync, not before", rd.Persist == nil, true)
	testkit.Want(t, "the preview counts the pending task", rd.Tracker.Tasks, 1)
	answer(t, n, rd, tasksync.Outcome{}, now)

	rd = ready(t, n, now)
	if rd.Persist == nil || !rd.Claim || rd.Tracker != nil {
		t.Fatalf("Ready %+v, want the claim's write alone", rd)
	}
	testkit.Want(t, "the claim marks the task sending", rd.Persist.Tasks[0].Sync, state.SyncSending)
	step(t, n, pass.Persisted{Outcome: pass.Stored, Version: rd.Persist.Version}, now)
	n.Advance(rd)

	rd = ready(t, n, now)
	testkit.Want(t, "then the create", op(rd), "create")
	item := rd.Tracker.Op.(tasksync.Create).Items[0]
	answer(t, n, rd, tasksync.Outcome{Results: []tasksync.ItemResult{{IdemKey: item.IdemKey, Issue: tasksync.Issue{Key: "PROJ-1"}}}}, now)

	rd = ready(t, n, now)
	testkit.Want(t, "the sync ends by recalling what the tracker remembers", op(rd), "recall")
	answer(t, n, rd, tasksync.Outcome{}, now)

	rd = ready(t, n, now)
	testkit.Want(t, "the sync's outcome is written before the closes", rd.Persist != nil && rd.Persist.Tasks[0].Key == "PROJ-1", true)
	if rd.TrackerDone == nil || rd.TrackerDone.Sync == nil || rd.TrackerDone.Sync.Created != 1 {
		t.Fatalf("report %+v, want the sync's result", rd.TrackerDone)
	}
	step(t, n, pass.Persisted{Outcome: pass.Stored, Version: rd.Persist.Version}, now)
	n.Advance(rd)

	rd = ready(t, n, now)
	testkit.Want(t, "the issue closed: its task's issue moves to done", op(rd), "close")
	testkit.Want(t, "a close op", rd.Tracker.Close, true)
	answer(t, n, rd, tasksync.Outcome{}, now)
	rd = ready(t, n, now)
	testkit.Want(t, "the close ends by recalling", op(rd), "recall")
	answer(t, n, rd, tasksync.Outcome{}, now)

	log, persisted := rounds(t, n, now)
	for _, l := range log {
		if strings.HasPrefix(l, "tracker:") {
			t.Errorf("tracker work handed out again: %v", log)
		}
	}
	if len(persisted) == 0 || !persisted[0].Tasks[0].Done {
		t.Errorf("the close's outcome is not written: %v", log)
	}
}

// A dry run previews the tracker work: the first op comes back
// Previewed, the sync ends having sent nothing and nothing is claimed.
func TestAPreviewedSyncEndsHavingSentNothing(t *testing.T) {
	_, n, now := toDecompose(t, false)
	rd := ready(t, n, now)
	testkit.Want(t, "first the lookup", op(rd), "lookup")
	step(t, n, pass.TrackerOutcome{Op: rd.Tracker.Op, Previewed: true}, now)
	n.Advance(rd)
	log, persisted := rounds(t, n, now)
	for _, l := range log {
		if strings.HasPrefix(l, "tracker:") {
			t.Errorf("tracker work after the preview: %v", log)
		}
	}
	for _, s := range persisted {
		if s.Tasks[0].Sync != state.SyncPending {
			t.Errorf("task %s after a preview, want pending", s.Tasks[0].Sync)
		}
	}
}

// A task without a usable idempotency key is bad input: the pass fails
// and names the tracker and the issue.
func TestASyncOfBadInputFailsThePass(t *testing.T) {
	w, _, now := toDecompose(t, false)
	w.st.Tasks = []state.Task{{ID: "01", Kind: state.KindTask, Title: "a", IdemKey: "has space", Sync: state.SyncPending}}
	on := true
	w.st.TrackerEnabled = &on
	n := pass.New(w.set, w.st, pass.Options{Issue: issue, Tracker: jiraCaps})
	step(t, n, w.comment("maria", "/autopilot tasks sync"), now)
	_, err := n.Ready(pass.Input{Now: now, WriteID: "w1"})
	if err == nil || !strings.Contains(err.Error(), "Jira sync of #12") || !strings.Contains(err.Error(), "idempotency key") {
		t.Fatalf("err = %v, want the sync's bad input named", err)
	}
}

// A tracker that cannot move issues to done (Caps.CanClose false) gets
// no close policy however the configuration asks.
func TestNoCloseForATrackerThatCannot(t *testing.T) {
	w := newWorld(t, "jira:\n  project: PROJ\n  transition_on_close: true\n")
	w.set.TrackerConfigured = true
	w.start("greenfield")
	on := true
	w.st.TrackerEnabled = &on
	w.st.Tasks = []state.Task{{ID: "01", Kind: state.KindTask, Title: "a", IdemKey: "autopilot-0000000001", Sync: state.SyncCreated, Key: "PROJ-1"}}
	now := w.clock.Add(time.Minute)
	for _, can := range []bool{true, false} {
		n := pass.New(w.set, w.st, pass.Options{Issue: issue, Closed: true, Tracker: tasksync.Caps{Name: "Jira", CanClose: can}})
		step(t, n, w.comment("erin", "closing"), now)
		log, _ := rounds(t, n, now)
		got := strings.Contains(strings.Join(log, " "), "tracker:close")
		testkit.Want(t, "a close op", got, can)
	}
}

// An outcome must answer the op handed out: one for another op, or with
// none handed out, is the carrier's mistake and fails the step.
func TestATrackerOutcomeAnswersTheOpHandedOut(t *testing.T) {
	_, n, now := toDecompose(t, false)
	if err := n.Step(pass.TrackerOutcome{Op: tasksync.Lookup{}}, now); err == nil {
		t.Error("an outcome with no op handed out was taken")
	}
	rd := ready(t, n, now)
	testkit.Want(t, "first the lookup", op(rd), "lookup")
	if err := n.Step(pass.TrackerOutcome{Op: tasksync.Create{}}, now); err == nil || !strings.Contains(err.Error(), "tasksync.Lookup") {
		t.Errorf("an outcome for another op: err = %v", err)
	}
	answer(t, n, rd, tasksync.Outcome{}, now)
}
