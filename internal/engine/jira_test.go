package engine

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/labels"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// toPlan runs greenfield to the done of research, which enters plan, the
// first Jira step; it returns that result.
func toPlan(t *testing.T, h *harness) Result {
	t.Helper()
	h.start("greenfield")
	h.done("problem")
	return h.done("research")
}

// jiraWanted is a config that asks for Jira (a jira: section) in a
// repository whose Jira inputs are empty.
const jiraWanted = "jira:\n  project: PROJ\n"

func TestJiraNotConfiguredOpensAuthFailedGate(t *testing.T) {
	h := newHarness(t, jiraWanted)
	res := toPlan(t, h)
	s := res.State
	want(t, "slug", s.Slug, "plan")
	want(t, "status", s.Status, state.NotStarted)
	wantGate(t, s, "jira-auth")
	want(t, "auth check", len(queriesOf(res.Queries, events.QTrackerAuth)), 0)
	body := gateBody(t, res.Effects, s.Gate)
	golden(t, "gate-jira-auth", body)
}

func TestJiraConfiguredChecksAuthBeforeFirstJiraStep(t *testing.T) {
	h := newHarness(t, "")
	h.set.TrackerConfigured = true
	res := toPlan(t, h)
	s := res.State
	want(t, "pending check", s.PendingAuthCheck, true)
	want(t, "gate", s.Gate == nil, true)
	want(t, "status", s.Status, state.NotStarted)
	want(t, "auth effects", len(queriesOf(res.Queries, events.QTrackerAuth)), 1)
	want(t, "action", prose.NextAction(s), "checking Jira authentication")

	// Failure opens the gate with the detail.
	res = h.apply(events.TrackerAuth{OK: false, Detail: "HTTP 401: Client must be authenticated"})
	s = res.State
	wantGate(t, s, "jira-auth")
	want(t, "pending check cleared", s.PendingAuthCheck, false)
	if !strings.Contains(gateBody(t, res.Effects, s.Gate), "Detail: HTTP 401: Client must be authenticated") {
		t.Errorf("gate lacks the failure detail")
	}
	// A late duplicate answer of the same check is ignored.
	res = h.apply(events.TrackerAuth{OK: true})
	want(t, "duplicate auth result changes nothing", res.Changed, false)

	// A retries: a new auth check, no gate.
	res = h.say("maria", "A")
	s = res.State
	want(t, "auth effects after A", len(queriesOf(res.Queries, events.QTrackerAuth)), 1)
	want(t, "pending after A", s.PendingAuthCheck, true)
	want(t, "gate after A", s.Gate == nil, true)

	// Success runs the step.
	res = h.apply(events.TrackerAuth{OK: true})
	s = res.State
	want(t, "jira enabled", s.TrackerEnabled != nil && *s.TrackerEnabled, true)
	want(t, "status", s.Status, state.InProgress)
	want(t, "run", s.Run, state.RunInProgress)
	if !hasBody(res.Effects, "▶️ **Step 3 — Plan**", "autopilot-epics") {
		t.Errorf("plan not announced: %q", bodies(res.Effects))
	}
	// Later Jira steps do not ask again.
	res = h.done("plan")
	want(t, "decompose runs", res.State.Slug, "decompose")
	want(t, "decompose status", res.State.Status, state.InProgress)
	want(t, "no second check", len(queriesOf(res.Queries, events.QTrackerAuth)), 0)
}

func TestContinueWithoutJiraKeepsTasksPending(t *testing.T) {
	h := newHarness(t, jiraWanted)
	toPlan(t, h)
	res := h.say("maria", "B")
	s := res.State
	want(t, "jira disabled", s.TrackerEnabled != nil && !*s.TrackerEnabled, true)
	want(t, "plan runs", s.Status, state.InProgress)
	c := h.comment("maria", "write", "/autopilot done plan with epics")
	c.Declared = []state.Task{{Kind: state.KindEpic, Title: "CSV export"}, {Kind: state.KindEpic, Title: "Docs"}}
	res = h.apply(c)
	s = res.State
	want(t, "tasks", len(s.Tasks), 2)
	for _, tk := range s.Tasks {
		want(t, "task "+tk.ID+" jira", tk.Sync, state.SyncPending)
	}
	want(t, "no sync while disabled", len(queriesOf(res.Queries, events.QTrackerSync)), 0)
	want(t, "pending count", tasksync.PendingCount(s), 2)
	shown := strings.Join(labels.Labels(s), " ")
	if !strings.Contains(shown, "autopilot/jira:pending") {
		t.Errorf("labels %q lack autopilot/jira:pending", shown)
	}
	// /autopilot jira sync creates them later, once Jira is configured.
	h.set.TrackerConfigured = true
	res = h.say("maria", "/autopilot jira sync")
	syncs := queriesOf(res.Queries, events.QTrackerSync)
	if len(syncs) != 1 || syncs[0].Jira != events.SyncAsked {
		t.Errorf("jira sync effects = %+v", syncs)
	}
}

func TestJiraDisabledInConfigSkipsTheGate(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.set.TrackerConfigured = true
	res := toPlan(t, h)
	s := res.State
	want(t, "gate", s.Gate == nil, true)
	want(t, "status", s.Status, state.InProgress)
	want(t, "jira enabled recorded false", s.TrackerEnabled != nil && !*s.TrackerEnabled, true)
	want(t, "no auth check", len(queriesOf(res.Queries, events.QTrackerAuth)), 0)
}

func TestJiraRetryCommandAnswersTheAuthGate(t *testing.T) {
	h := newHarness(t, jiraWanted)
	toPlan(t, h)
	res := h.say("maria", "/autopilot jira retry")
	want(t, "decision", res.Decision, "A")
	want(t, "auth check", len(queriesOf(res.Queries, events.QTrackerAuth)), 1)
	want(t, "recorded", res.State.Decisions[len(res.State.Decisions)-1].Reason, "via /autopilot tasks retry")
	// Without the gate, jira retry re-runs the outbox.
	h.set.TrackerConfigured = true
	res = h.apply(events.TrackerAuth{OK: true})
	res = h.say("maria", "/autopilot jira retry")
	if syncs := queriesOf(res.Queries, events.QTrackerSync); len(syncs) != 1 || syncs[0].Jira != events.SyncRetry {
		t.Errorf("sync effects = %+v", syncs)
	}
}

func TestJiraSyncWithNothingToSyncIsRefused(t *testing.T) {
	h := newHarness(t, "")
	h.set.TrackerConfigured = true
	h.start("greenfield")
	h.refused("maria", "/autopilot jira sync", "rejected:nothing-to-sync")
}

func TestDeclaredTasksGetIdsAndStableIdempotencyKeys(t *testing.T) {
	h := newHarness(t, "")
	h.set.TrackerConfigured = true
	toPlan(t, h)
	h.apply(events.TrackerAuth{OK: true})
	c := h.comment("maria", "write", "/autopilot done plan")
	c.Declared = []state.Task{{Kind: state.KindEpic, Title: "CSV export"}}
	res := h.apply(c)
	want(t, "sync emitted when Jira on", len(queriesOf(res.Queries, events.QTrackerSync)), 1)
	c = h.comment("maria", "write", "/autopilot done tasks")
	c.Declared = []state.Task{{Kind: state.KindTask, Title: "writer", Epic: "CSV export", Points: 3}, {Kind: state.KindTask, Title: "button", DependsOn: []string{"02"}, Points: 2, IdemKey: "autopilot-preset0001"}}
	s := h.apply(c).State
	if len(s.Tasks) != 3 {
		t.Fatalf("tasks = %d, want 3", len(s.Tasks))
	}
	for i, tc := range []struct{ id, step string }{{"01", "plan"}, {"02", "decompose"}, {"03", "decompose"}} {
		tk := s.Tasks[i]
		want(t, "id", tk.ID, tc.id)
		want(t, "step of "+tc.id, tk.Step, tc.step)
		want(t, "jira of "+tc.id, tk.Sync, state.SyncPending)
	}
	want(t, "key of 01", s.Tasks[0].IdemKey, IdemKey("acme/widgets", testIssue, "01", 1))
	want(t, "key of 02", s.Tasks[1].IdemKey, IdemKey("acme/widgets", testIssue, "02", 1))
	want(t, "preset key kept", s.Tasks[2].IdemKey, "autopilot-preset0001")
	want(t, "epic note", s.Steps[2].Note, "1 epic")
	want(t, "task note", s.Steps[3].Note, "2 tasks")

	keys := map[string]bool{}
	for _, k := range []string{
		IdemKey("acme/widgets", 12, "01", 1), IdemKey("acme/widgets", 12, "02", 1),
		IdemKey("acme/widgets", 13, "01", 1), IdemKey("acme/gadgets", 12, "01", 1), IdemKey("acme/widgets", 12, "01", 2),
	} {
		if keys[k] {
			t.Errorf("idempotency key %s collides", k)
		}
		keys[k] = true
	}
	want(t, "stable", IdemKey("acme/widgets", 12, "01", 1), IdemKey("acme/widgets", 12, "01", 1))
}

func TestJiraSyncedMergesByIdempotencyKey(t *testing.T) {
	h := newHarness(t, jiraWanted)
	toPlan(t, h)
	h.say("maria", "B") // continue without Jira: tasks wait as pending
	h.runTo("greenfield", "decompose")
	c := h.comment("maria", "write", "/autopilot done tasks")
	c.Declared = []state.Task{{Kind: state.KindTask, Title: "a"}, {Kind: state.KindTask, Title: "b"}}
	s := h.apply(c).State
	k1, k2 := s.Tasks[0].IdemKey, s.Tasks[1].IdemKey
	res := h.apply(events.TrackerSynced{Tasks: []state.Task{
		{IdemKey: k2, Sync: state.SyncCreated, Key: "PROJ-8", URL: "https://jira.example/browse/PROJ-8", Done: true},
		{IdemKey: "autopilot-unknown000", Sync: state.SyncCreated, Key: "PROJ-99"},
	}})
	s = res.State
	want(t, "changed", res.Changed, true)
	want(t, "task 1 untouched", s.Tasks[0].Sync, state.SyncPending)
	want(t, "task 1 key", s.Tasks[0].IdemKey, k1)
	want(t, "task 2 jira", s.Tasks[1].Sync, state.SyncCreated)
	want(t, "task 2 key", s.Tasks[1].Key, "PROJ-8")
	want(t, "task 2 url", s.Tasks[1].URL, "https://jira.example/browse/PROJ-8")
	want(t, "task 2 done", s.Tasks[1].Done, true)
	want(t, "no stranger added", len(s.Tasks), 2)
	want(t, "pending", tasksync.PendingCount(s), 1)
	// The same sync again changes nothing.
	res = h.apply(events.TrackerSynced{Tasks: []state.Task{{IdemKey: k2, Sync: state.SyncCreated, Key: "PROJ-8", URL: "https://jira.example/browse/PROJ-8", Done: true}}})
	want(t, "idempotent", res.Changed, false)
}

func TestJiraAuthPausePostsExactlyOneNotice(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.runTo("greenfield", "decompose")
	c := h.comment("maria", "write", "/autopilot done tasks")
	c.Declared = []state.Task{{Kind: state.KindTask, Title: "a"}}
	h.apply(c)
	var notices int
	for i := 0; i < 3; i++ {
		res := h.apply(events.TrackerSynced{Paused: "auth"})
		if hasBody(res.Effects, "Jira rejected autopilot's credentials (401)") {
			notices++
		}
	}
	want(t, "notices", notices, 1)
	want(t, "note", h.st.TrackerNote, "paused: authentication failed")
	// Another note replaces it; with nothing pending, an empty note clears it.
	h.apply(events.TrackerSynced{Note: "rate limited; retrying"})
	want(t, "note", h.st.TrackerNote, "rate limited; retrying")
	h.apply(events.TrackerSynced{Tasks: []state.Task{{IdemKey: h.st.Tasks[0].IdemKey, Sync: state.SyncCreated, Key: "P-1"}}})
	want(t, "note cleared", h.st.TrackerNote, "")
}

// TestJiraOffWhenNothingConfiguresIt (PRODUCT §4, §10): no Jira inputs and
// no jira: section means Jira is off. Nobody is asked, the tasks stay in the
// issue numbered 01, 02, …, nothing waits as "pending" (so no label), and
// `/autopilot jira sync` says how to configure Jira.
func TestJiraOffWhenNothingConfiguresIt(t *testing.T) {
	h := newHarness(t, "")
	res := toPlan(t, h)
	s := res.State
	want(t, "gate", s.Gate == nil, true)
	want(t, "plan runs", s.Status, state.InProgress)
	want(t, "no auth check", len(queriesOf(res.Queries, events.QTrackerAuth)), 0)
	want(t, "jira off", s.TrackerOff, state.TrackerNotConfigured)
	if hasBody(res.Effects, "Jira authentication failed") {
		t.Errorf("asked about Jira although nothing configures it: %q", bodies(res.Effects))
	}
	c := h.comment("maria", "write", "/autopilot done plan")
	c.Declared = []state.Task{{Kind: state.KindEpic, Title: "CSV export"}, {Kind: state.KindEpic, Title: "Docs"}}
	res = h.apply(c)
	s = res.State
	for i, tk := range s.Tasks {
		want(t, "id", tk.ID, []string{"01", "02"}[i])
		want(t, "task "+tk.ID+" jira", tk.Sync, state.SyncLocal)
	}
	want(t, "pending", tasksync.PendingCount(s), 0)
	want(t, "no sync", len(queriesOf(res.Queries, events.QTrackerSync)), 0)
	if l := strings.Join(labels.Labels(s), " "); strings.Contains(l, "jira:pending") {
		t.Errorf("labels %q carry jira:pending with Jira off", l)
	}

	res = h.refused("maria", "/autopilot jira sync", "rejected:jira-not-configured")
	if !hasBody(res.Effects, "No task tracker is configured", "`tracker: github`", "`jira_url`", "`jira_token`", "`jira_project`") {
		t.Errorf("the reply does not say how to configure Jira: %q", bodies(res.Effects))
	}
	h.refused("devin", "/autopilot jira retry", "rejected:jira-not-configured")

	// Configured later: an explicit sync sends the tasks kept here.
	h.set.TrackerConfigured = true
	res = h.say("maria", "/autopilot jira sync")
	s = res.State
	want(t, "jira off cleared", s.TrackerOff, "")
	want(t, "pending after sync asked", tasksync.PendingCount(s), 2)
	if syncs := queriesOf(res.Queries, events.QTrackerSync); len(syncs) != 1 || syncs[0].Jira != events.SyncAsked {
		t.Errorf("sync effects = %+v", syncs)
	}
}

// TestSyncedKeepsWhatTheTrackerRecordedOnATask: the links a sync made
// (deps_linked) and what happened to a task's issue alone (gone, remark)
// reach the state; dropped, every later pass sent the same links again and
// forgot a deleted issue.
func TestSyncedKeepsWhatTheTrackerRecordedOnATask(t *testing.T) {
	h := newHarness(t, jiraWanted)
	toPlan(t, h)
	h.say("maria", "B")
	h.runTo("greenfield", "decompose")
	c := h.comment("maria", "write", "/autopilot done tasks")
	c.Declared = []state.Task{{Kind: state.KindTask, Title: "a"}, {Kind: state.KindTask, Title: "b", DependsOn: []string{"a"}}}
	s := h.apply(c).State
	k1, k2 := s.Tasks[0].IdemKey, s.Tasks[1].IdemKey
	res := h.apply(events.TrackerSynced{Tasks: []state.Task{
		{IdemKey: k1, Sync: state.SyncCreated, Key: "#20", Gone: state.IssueDeleted, Remark: "issue deleted (410)"},
		{IdemKey: k2, Sync: state.SyncCreated, Key: "#21", DepsLinked: []string{"a"}},
	}})
	s = res.State
	want(t, "changed", res.Changed, true)
	want(t, "task 1 gone", s.Tasks[0].Gone, state.IssueDeleted)
	want(t, "task 1 remark", s.Tasks[0].Remark, "issue deleted (410)")
	want(t, "task 2 links", strings.Join(s.Tasks[1].DepsLinked, ","), "a")
	res = h.apply(events.TrackerSynced{Tasks: []state.Task{
		{IdemKey: k1, Sync: state.SyncCreated, Key: "#20", Gone: state.IssueDeleted, Remark: "issue deleted (410)"},
		{IdemKey: k2, Sync: state.SyncCreated, Key: "#21", DepsLinked: []string{"a"}},
	}})
	want(t, "idempotent", res.Changed, false)
}
