package pass_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/pass"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/marker"
)

// The reads a pass asks for itself: an author's permission when a comment
// needs it, a Jira step's task files when a report declares none. Each is
// a query of a Ready, asked only when an event held needs it, answered by
// a typed event (events.PermsRead, events.FilesRead).

const taskFilesYAML = "jira:\n  enabled: false\n  task_files: _docs/02_tasks\n"

// unlooked is w's comment as the carrier builds it: no permission looked
// up (the node asks).
func (w *world) unlooked(author, body string) events.Comment {
	c := w.comment(author, body)
	c.Perm = ""
	return c
}

// queries steps evs into a node over w's state and returns the queries of
// its first Ready.
func firstQueries(t *testing.T, w *world, evs ...events.Event) (*pass.Node, []events.Query) {
	t.Helper()
	n := pass.New(w.set, w.st, pass.Options{Issue: issue})
	for _, ev := range evs {
		step(t, n, ev, w.clock)
	}
	return n, ready(t, n, w.clock).Queries
}

// TestAnswerAsksItsAuthorsPermissionFirst: an answer whose author's
// permission is not known yet is held; the first Ready asks that one
// permission and nothing else; the answer applies once it is stepped in.
func TestAnswerAsksItsAuthorsPermissionFirst(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\n")
	w.start("greenfield")
	n, qs := firstQueries(t, w, w.unlooked("devin", "/autopilot done problem understood"))
	if len(qs) != 1 || qs[0].Kind != events.QPerms || !reflect.DeepEqual(qs[0].Logins, []string{"devin"}) || qs[0].Then != nil {
		t.Fatalf("first Ready asks %+v, want one QPerms for devin", qs)
	}
	if n.State().Slug != "problem" {
		t.Fatalf("the answer applied before its permission was read: at %s", n.State().Slug)
	}
	step(t, n, events.PermsRead{Perms: map[string]evidence.PermRead{"devin": {Perm: access.Write}}}, w.clock)
	if n.State().Slug != "research" {
		t.Errorf("after the permission: at %s, want research", n.State().Slug)
	}
	if rd := ready(t, n, w.clock); len(rd.Queries) != 0 {
		t.Errorf("asked again after the answer: %+v", rd.Queries)
	}
}

// TestOutsidersChatterAsksNoPermission: words that cannot act ask no
// permission read at all; an outsider's commands ask theirs once, in one
// round for every comment held, and keep their order.
func TestOutsidersChatterAsksNoPermission(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\n")
	w.start("greenfield")
	_, qs := firstQueries(t, w, w.unlooked("eve", "nice work, thanks"), w.unlooked("eve", "looks good to me"))
	if len(qs) != 0 {
		t.Fatalf("chatter asked %+v, want no read", qs)
	}
	n, qs := firstQueries(t, w, w.unlooked("eve", "/autopilot done problem understood"), w.unlooked("EVE", "/autopilot status"),
		w.unlooked("devin", "/autopilot done problem understood"))
	if len(qs) != 1 || !reflect.DeepEqual(qs[0].Logins, []string{"eve", "devin"}) {
		t.Fatalf("asked %+v, want one QPerms for eve and devin", qs)
	}
	step(t, n, events.PermsRead{Perms: map[string]evidence.PermRead{"eve": {Perm: access.Read}, "devin": {Perm: access.Write}}}, w.clock)
	st := n.State()
	if st.Slug != "research" {
		t.Fatalf("at %s, want research (devin's answer, after eve's refused ones)", st.Slug)
	}
	var got []string
	for _, e := range st.Ledger {
		got = append(got, string(e.Outcome))
	}
	if len(got) != 3 || !strings.HasPrefix(got[0], "rejected") || got[2] != string(state.LedgerApplied) {
		t.Errorf("ledger %v, want eve's refused first, devin's applied last", got)
	}
	if rd := ready(t, n, w.clock); len(rd.Queries) != 0 {
		t.Errorf("asked again: %+v", rd.Queries)
	}
}

// TestFailedPermissionReadFailsClosed: a lookup that failed is no
// permission: the answer is not applied.
func TestFailedPermissionReadFailsClosed(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\n")
	w.start("greenfield")
	n, _ := firstQueries(t, w, w.unlooked("devin", "/autopilot done problem understood"))
	step(t, n, events.PermsRead{Perms: map[string]evidence.PermRead{"devin": {Err: true}}}, w.clock)
	if st := n.State(); st.Slug != "problem" {
		t.Errorf("a failed lookup moved the step to %s", st.Slug)
	}
}

// toDecompose walks greenfield to its decompose step (a Jira "tasks" step).
func (w *world) toDecompose() {
	w.t.Helper()
	w.start("greenfield")
	for _, s := range []string{"problem", "research", "plan"} {
		w.say("devin", "/autopilot done "+s)
	}
	if w.st.Slug != "decompose" {
		w.t.Fatalf("at %s, want decompose", w.st.Slug)
	}
}

// TestTaskDeclaringReportAsksTaskFilesOnce: a report on a Jira tasks
// step with no tasks block asks for the configured directory once (after
// its author's permission, which decides whether files may stand in); the
// files read are the declared tasks.
func TestTaskDeclaringReportAsksTaskFilesOnce(t *testing.T) {
	w := newWorld(t, taskFilesYAML)
	w.toDecompose()
	n, qs := firstQueries(t, w, w.unlooked("devin", "/autopilot done tasks are in _docs/02_tasks"))
	if len(qs) != 1 || qs[0].Kind != events.QPerms {
		t.Fatalf("first Ready asks %+v, want the permission", qs)
	}
	step(t, n, events.PermsRead{Perms: map[string]evidence.PermRead{"devin": {Perm: access.Write}}}, w.clock)
	rd := ready(t, n, w.clock)
	if len(rd.Queries) != 1 || rd.Queries[0].Kind != events.QTaskFiles || rd.Queries[0].Dir != "_docs/02_tasks" {
		t.Fatalf("second Ready asks %+v, want QTaskFiles of _docs/02_tasks", rd.Queries)
	}
	step(t, n, events.FilesRead{Dir: "_docs/02_tasks", Files: map[string]string{
		"_docs/02_tasks/01_writer.md": "# Streaming writer\n\nPoints: 3\n", "_docs/02_tasks/02_endpoint.md": "# Export endpoint\n\nDepends on: 01\n"}}, w.clock)
	st := n.State()
	if len(st.Tasks) != 2 || st.Tasks[0].Title != "Streaming writer" || st.Tasks[0].Step != "decompose" {
		t.Fatalf("tasks %+v, want the two files", st.Tasks)
	}
	if rd := ready(t, n, w.clock); len(rd.Queries) != 0 {
		t.Errorf("asked again: %+v", rd.Queries)
	}
}

// TestTaskFilesNotAskedOutsideTasksSteps: a report on a step that
// declares no Jira items, a report with its own tasks block, and one by
// an author below the answer permission ask no task files.
func TestTaskFilesNotAskedOutsideTasksSteps(t *testing.T) {
	w := newWorld(t, taskFilesYAML)
	w.start("greenfield")
	c := w.comment("devin", "/autopilot done problem")
	if _, qs := firstQueries(t, w, c); len(qs) != 0 {
		t.Errorf("problem step asked %+v", qs)
	}
	w = newWorld(t, taskFilesYAML)
	w.toDecompose()
	block := w.comment("devin", "/autopilot done\n\n```autopilot-tasks\n- title: Streaming writer\n```\n")
	if _, qs := firstQueries(t, w, block); len(qs) != 0 {
		t.Errorf("a report with its own block asked %+v", qs)
	}
	low := w.comment("eve", "/autopilot done tasks are in _docs/02_tasks")
	low.Perm = access.Read
	if _, qs := firstQueries(t, w, low); len(qs) != 0 {
		t.Errorf("a reader's report asked %+v", qs)
	}
}

// TestTaskFilesReadErrorRefusesTheReport: a read of the task files that
// failed is the report's declaration error (the report is refused with
// it; nothing is declared), whatever its class.
func TestTaskFilesReadErrorRefusesTheReport(t *testing.T) {
	w := newWorld(t, taskFilesYAML)
	w.toDecompose()
	n, qs := firstQueries(t, w, w.comment("devin", "/autopilot done tasks are in _docs/02_tasks"))
	if len(qs) != 1 || qs[0].Kind != events.QTaskFiles {
		t.Fatalf("asked %+v, want QTaskFiles", qs)
	}
	step(t, n, events.FilesRead{Dir: "_docs/02_tasks", Fail: events.ReadForbidden, Err: "read _docs/02_tasks/01.md: forbidden"}, w.clock)
	st := n.State()
	if len(st.Tasks) != 0 || st.Slug != "decompose" {
		t.Fatalf("after a failed read: tasks %+v at %s", st.Tasks, st.Slug)
	}
	last := st.Ledger[len(st.Ledger)-1]
	if !strings.HasPrefix(string(last.Outcome), "rejected") {
		t.Errorf("ledger %+v, want the report refused", last)
	}
}

// TestHeldAnswerIsGivenTheGateOpenWhenItApplies: an answer held behind the
// report that opens its gate (a replay: the report re-applied now) is
// judged against when that gate's comment appeared (Options.Posted), which
// the node reads for the gate open when the answer applies: with it the
// answer counts; without it the answer predates the gate reopened now and
// is stale.
func TestHeldAnswerIsGivenTheGateOpenWhenItApplies(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\n")
	w.toDecompose()
	report := w.unlooked("devin", "/autopilot done\n\n```autopilot-tasks\n- title: Streaming writer\n```\n")
	probe := *w
	probe.apply(w.comment("devin", report.Body))
	if probe.st.Gate == nil {
		t.Fatal("the report opens no gate")
	}
	gate := marker.Build(marker.Gate, probe.st.Gate.ID)
	answer := w.unlooked("maria", "A")
	later := answer.At.Add(10 * time.Minute) // the replay
	for _, tc := range []struct {
		name    string
		posted  map[string]time.Time
		applied bool
	}{
		{"the gate's comment is on the thread", map[string]time.Time{gate: answer.At.Add(-time.Minute)}, true},
		{"no gate comment on the thread", map[string]time.Time{}, false},
	} {
		n := pass.New(w.set, w.st, pass.Options{Issue: issue, Posted: tc.posted})
		step(t, n, report, later)
		step(t, n, answer, later)
		step(t, n, events.PermsRead{Perms: map[string]evidence.PermRead{"devin": {Perm: access.Write}, "maria": {Perm: access.Write}}}, later)
		st := n.State()
		if got := len(st.Decisions) == 1; got != tc.applied {
			t.Errorf("%s: answer applied %v (ledger %+v), want %v", tc.name, got, st.Ledger, tc.applied)
		}
	}
}

// TestDeclarationTooLargeIsRefusedWhereItApplies: the fit of a report's
// declared tasks is judged by the node on the state the report applies to
// (after the reads it waited for): too many tasks for one state comment
// are refused with what fits, and the pass notes it.
func TestDeclarationTooLargeIsRefusedWhereItApplies(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\n")
	w.toDecompose()
	var b strings.Builder
	b.WriteString("/autopilot done\n\n```autopilot-tasks\n")
	rnd := rand.New(rand.NewPCG(29, 1)) // words that do not compress
	for i := 0; i < 180; i++ {
		var d strings.Builder
		for d.Len() < 300 {
			for range 3 + rnd.IntN(7) {
				d.WriteByte(byte('a' + rnd.IntN(26)))
			}
			d.WriteByte(' ')
		}
		fmt.Fprintf(&b, "- title: Task number %d of the CSV export\n  description: %s\n", i+1, strings.TrimSpace(d.String()[:300]))
	}
	b.WriteString("```\n")
	n := pass.New(w.set, w.st, pass.Options{Issue: issue})
	step(t, n, w.unlooked("devin", b.String()), w.clock)
	step(t, n, events.PermsRead{Perms: map[string]evidence.PermRead{"devin": {Perm: access.Write}}}, w.clock)
	st := n.State()
	if len(st.Tasks) != 0 {
		t.Fatalf("%d tasks recorded, want the declaration refused", len(st.Tasks))
	}
	rd := ready(t, n, w.clock)
	if !strings.Contains(strings.Join(rd.Notes, "\n"), "task declaration refused: state too large") {
		t.Errorf("notes %q, want the refusal noted", rd.Notes)
	}
}
