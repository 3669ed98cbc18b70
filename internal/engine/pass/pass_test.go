package pass_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/pass"
	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/testkit"
)

const (
	issue = 12
	prURL = "https://github.com/acme/widgets/pull/40"
	head  = "abcdef1234567"
)

// world walks an issue's run to where a test starts, one event per
// engine.Apply, on a clock one minute per event.
type world struct {
	t     *testing.T
	set   engine.Settings
	st    *state.State
	clock time.Time
	id    int64
}

func newWorld(t *testing.T, yaml string) *world {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatalf("config.Parse: %v", err)
	}
	return &world{t: t, set: engine.Settings{Config: cfg, AnswerPermission: access.Write, Repo: "acme/widgets"},
		clock: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), id: 1000}
}

func (w *world) apply(ev engine.Event) {
	w.t.Helper()
	w.clock = w.clock.Add(time.Minute)
	res, err := engine.Apply(w.set, w.st, ev, w.clock)
	if err != nil {
		w.t.Fatalf("Apply(%T): %v", ev, err)
	}
	if res.State != nil {
		w.st = res.State
	}
}

func (w *world) comment(author, body string) engine.Comment {
	w.id++
	return engine.Comment{ID: w.id, Author: author, Perm: access.Write, Body: body, At: w.clock,
		URL: fmt.Sprintf("https://github.com/acme/widgets/issues/12#issuecomment-%d", w.id)}
}

func (w *world) say(author, body string) { w.t.Helper(); w.apply(w.comment(author, body)) }

func (w *world) start(flow string) {
	w.t.Helper()
	w.apply(engine.Start{Flow: flow, Issue: issue, Actor: "maria", Title: "Add CSV export", Body: "## Desired outcome\nCSV", URL: "https://github.com/acme/widgets/issues/12"})
}

func pr() *engine.PullFacts {
	return &engine.PullFacts{Number: 40, Author: "devin", AuthorPerm: access.Write, HeadSHA: head, Links: true}
}

// toCodeReview walks the review loop to its code-review step.
func (w *world) toCodeReview() {
	w.t.Helper()
	w.start("review-loop")
	for i := 0; i < 10 && w.st.Slug != "code-review"; i++ {
		switch w.st.Slug {
		case "interview":
			w.say("maria", "/autopilot done requirements are complete: scope and non-goals agreed")
		case "plan":
			w.say("maria", "/autopilot done plan and test spec")
			w.say("alice", "/autopilot approve architect")
			w.say("carol", "/autopilot approve critic")
		case "execute":
			w.say("maria", "/autopilot done implemented in #40")
			w.apply(engine.PRLinked{PR: 40, URL: prURL})
		default:
			w.t.Fatalf("toCodeReview: at %s", w.st.Slug)
		}
	}
	if w.st.Slug != "code-review" {
		w.t.Fatalf("toCodeReview: at %s (%s/%s)", w.st.Slug, w.st.Run, w.st.Status)
	}
}

func ready(t *testing.T, n *pass.Node, now time.Time) pass.Ready {
	t.Helper()
	rd, err := n.Ready(func() outbox.Seen { return outbox.Seen{} }, now)
	if err != nil {
		t.Fatalf("Ready: %v", err)
	}
	return rd
}

func step(t *testing.T, n *pass.Node, ev engine.Event, now time.Time) {
	t.Helper()
	if err := n.Step(ev, now); err != nil {
		t.Fatalf("Step(%T): %v", ev, err)
	}
}

func kinds(qs []engine.Query) []engine.QueryKind {
	var out []engine.QueryKind
	for _, q := range qs {
		out = append(out, q.Kind)
	}
	return out
}

func TestReadsComeBeforeTheSettle(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\nroles: {architect: [alice], critic: [\"@carol\", dave]}\n")
	w.toCodeReview()
	started := w.st.Exec.StartedAt
	now := w.clock.Add(time.Minute)
	n := pass.New(w.set, w.st, pass.Options{Issue: issue})

	step(t, n, engine.PRLinked{PR: 40, URL: prURL}, now)
	rd := ready(t, n, now)
	testkit.WantDeep(t, "first the PR read", kinds(rd.Queries), []engine.QueryKind{engine.QCheckPR})
	testkit.Want(t, "nothing to carry out while reads are open", rd.State == nil && !rd.Write && len(rd.Effects) == 0, true)
	testkit.Want(t, "asked, not handed out twice", n.Asks(engine.QCheckPR, 40), false)

	step(t, n, engine.PullRead{Pull: pr(), URL: prURL, Reviews: []engine.ReviewRead{
		{ID: 3, Reviewer: "bob", State: "APPROVED", At: started.Add(time.Minute), CommitSHA: head, URL: prURL + "#r3"},
	}}, now)
	rd = ready(t, n, now)
	if len(rd.Queries) != 1 || rd.Queries[0].Kind != engine.QPerms || !reflect.DeepEqual(rd.Queries[0].Logins, []string{"bob"}) {
		t.Fatalf("queries = %+v, want the reviewer's permission", rd.Queries)
	}
	step(t, n, rd.Queries[0].Then.WithPerms(map[string]engine.PermRead{"bob": {Perm: "write"}}), now)

	rd = ready(t, n, now)
	// Approved: qa starts and reads the PR's checks.
	testkit.WantDeep(t, "the next step's read", kinds(rd.Queries), []engine.QueryKind{engine.QCheckPR})
	step(t, n, engine.PullRead{Pull: pr(), URL: prURL}, now)

	rd = ready(t, n, now)
	testkit.Want(t, "no more queries", len(rd.Queries), 0)
	testkit.Want(t, "approved: next step", rd.State.Slug, "qa")
	testkit.Want(t, "written", rd.Write, true)
	testkit.Want(t, "labels follow the state", strings.Join(rd.Labels, " "), strings.Join(outbox.Labels(rd.State), " "))
	for _, e := range rd.Effects {
		if state.EffectKinds[e.Kind].Outbox && !outbox.Announced(rd.State.Outbox, e.Marker) {
			t.Errorf("effect %s %s not announced in the state it follows", e.Kind, e.Marker)
		}
	}
	testkit.Want(t, "input state kept", w.st.Slug, "code-review")

	n.Wrote(rd.State)
	rd = ready(t, n, now)
	testkit.Want(t, "after the write nothing is left", rd.Write || len(rd.Effects) > 0 || len(rd.Queries) > 0, false)
}

func TestTrackerWorkOnceEachInOrder(t *testing.T) {
	w := newWorld(t, "jira:\n  project: PROJ\n  transition_on_close: true\n")
	w.set.JiraConfigured = true
	w.start("greenfield")
	w.say("maria", "/autopilot done problem")
	w.say("maria", "/autopilot done research")
	w.apply(engine.JiraAuth{OK: true})
	now := w.clock.Add(time.Minute)
	n := pass.New(w.set, w.st, pass.Options{Issue: issue, Closed: true})

	c := w.comment("maria", "/autopilot done plan")
	c.Declared = []state.Task{{Kind: state.KindEpic, Title: "CSV export"}}
	step(t, n, c, now)
	rd := ready(t, n, now)
	if len(rd.Queries) != 1 || rd.Queries[0].Kind != engine.QJiraSync || !rd.Queries[0].Sync.Run {
		t.Fatalf("queries = %+v, want one planned sync", rd.Queries)
	}
	testkit.Want(t, "the settled state comes with the sync", rd.State != nil && rd.Write, true)
	task := rd.State.Tasks[0]
	testkit.Want(t, "not handed out twice while it runs", len(ready(t, n, now).Queries), 0)

	// The sync created the epic: its issue is now closable.
	task.Sync, task.Key = state.SyncCreated, "PROJ-1"
	step(t, n, engine.JiraSynced{Tasks: []state.Task{task}}, now)
	rd = ready(t, n, now)
	if len(rd.Queries) != 1 || rd.Queries[0].Kind != engine.QJiraClose || rd.Queries[0].Open != 1 {
		t.Fatalf("queries = %+v, want one close of 1 task", rd.Queries)
	}
	testkit.Want(t, "each once a pass", len(ready(t, n, now).Queries), 0)
}

func TestNoTrackerWorkWhenNotConfigured(t *testing.T) {
	w := newWorld(t, "jira:\n  project: PROJ\n  transition_on_close: true\n")
	w.start("greenfield")
	now := w.clock.Add(time.Minute)
	n := pass.New(w.set, w.st, pass.Options{Issue: issue, Closed: true})
	step(t, n, w.comment("maria", "/autopilot jira sync"), now)
	rd := ready(t, n, now)
	testkit.Want(t, "no tracker work", len(rd.Queries), 0)
}

func TestWhatNoWriteCarriedIsKept(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\n")
	w.start("greenfield")
	now := w.clock.Add(time.Minute)

	n := pass.New(w.set, w.st, pass.Options{Issue: issue})
	testkit.Want(t, "nothing yet", n.Unwritten(), false)
	testkit.Want(t, "no events, no write", ready(t, n, now).Write, false)
	step(t, n, engine.Refused{Request: "comment x"}, now)
	testkit.Want(t, "a refusal after the settle waits for a write", n.Unwritten(), true)
	rd := ready(t, n, now)
	testkit.Want(t, "the last Ready writes it", rd.Write, true)
	n.Wrote(rd.State)
	testkit.Want(t, "written", n.Unwritten(), false)

	n = pass.New(w.set, w.st, pass.Options{Issue: issue})
	step(t, n, w.comment("erin", "thanks, looks good"), now)
	rd = ready(t, n, now)
	testkit.Want(t, "a classification alone waits for the end", rd.Write, false)
	testkit.Want(t, "but is not forgotten", n.Unwritten(), true)

	n = pass.New(w.set, w.st, pass.Options{Issue: issue, Rewrite: true})
	testkit.Want(t, "a rolled-back state is written whatever happens", ready(t, n, now).Write, true)
}

func TestANewStateGetsTheIssue(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\n")
	n := pass.New(w.set, nil, pass.Options{Issue: 77})
	step(t, n, engine.Start{Flow: "greenfield", Issue: 77, Actor: "maria", Title: "t"}, w.clock)
	rd := ready(t, n, w.clock)
	testkit.Want(t, "issue", rd.State.Issue, 77)
	testkit.Want(t, "written", rd.Write, true)
}

// The thread's view is built once a pass, when it settles: the caller
// asks Ready again for every effect it performs.
func TestTheThreadIsAskedOnceAPass(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\n")
	w.start("greenfield")
	now := w.clock.Add(time.Minute)
	n := pass.New(w.set, w.st, pass.Options{Issue: issue})
	step(t, n, w.comment("maria", "/autopilot status"), now)
	asked := 0
	seen := func() outbox.Seen { asked++; return outbox.Seen{} }
	for i := 0; i < 5; i++ {
		if _, err := n.Ready(seen, now); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Want(t, "thread views built", asked, 1)
}

// With GitHub sub-issues, any event on the autopilot issue reads the open
// tasks' issues back (docs/tasks.md "status comes back"), not only the
// sweep or the sync command: a comment that is no command at all is enough.
// Without open tasks, or with Jira, nothing is read.
func TestAnyEventReadsOpenSubIssueTasksBack(t *testing.T) {
	w := newWorld(t, "tracker: github\n")
	w.set.JiraConfigured = true
	w.start("greenfield")
	on := true
	w.st.TrackerEnabled = &on
	w.st.Tasks = []state.Task{{ID: "01", Kind: state.KindTask, Title: "a", IdemKey: "autopilot-0000000001", Sync: state.SyncCreated, Key: "#20"}}
	now := w.clock.Add(time.Minute)
	for _, tc := range []struct {
		name      string
		subIssues bool
		done      bool
		want      bool
	}{
		{"sub-issues, an open task", true, false, true},
		{"sub-issues, every task done", true, true, false},
		{"jira, an open task", false, false, false},
	} {
		cp := *w.st
		st := &cp
		st.Tasks = []state.Task{w.st.Tasks[0]}
		st.Tasks[0].Done = tc.done
		n := pass.New(w.set, st, pass.Options{Issue: issue, Tracker: tasksync.Caps{ReadBack: tc.subIssues}})
		step(t, n, w.comment("erin", "thanks, looks good"), now)
		rd := ready(t, n, now)
		got := len(rd.Queries) == 1 && rd.Queries[0].Kind == engine.QJiraSync && rd.Queries[0].Sync.Run
		if got != tc.want {
			t.Errorf("%s: queries %+v, want a read-back %v", tc.name, rd.Queries, tc.want)
		}
	}
}
