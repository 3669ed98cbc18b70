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
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/labels"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
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
	set   machine.Settings
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
	return &world{t: t, set: machine.Settings{Config: cfg, AnswerPermission: access.Write, Repo: "acme/widgets"},
		clock: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), id: 1000}
}

func (w *world) apply(ev events.Event) {
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

func (w *world) comment(author, body string) events.Comment {
	w.id++
	return events.Comment{ID: w.id, Author: author, Perm: access.Write, Body: body, At: w.clock,
		URL: fmt.Sprintf("https://github.com/acme/widgets/issues/12#issuecomment-%d", w.id)}
}

func (w *world) say(author, body string) { w.t.Helper(); w.apply(w.comment(author, body)) }

func (w *world) start(flow string) {
	w.t.Helper()
	w.apply(events.Start{Flow: flow, Issue: issue, Actor: "maria", Title: "Add CSV export", Body: "## Desired outcome\nCSV", URL: "https://github.com/acme/widgets/issues/12"})
}

func pr() *evidence.PullFacts {
	return &evidence.PullFacts{Number: 40, Author: "devin", AuthorPerm: access.Write, HeadSHA: head, Links: true}
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
			w.apply(events.PRLinked{PR: 40, URL: prURL})
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
	rd, err := n.Ready(pass.Input{Now: now, WriteID: "w1"})
	if err != nil {
		t.Fatalf("Ready: %v", err)
	}
	return rd
}

func step(t *testing.T, n *pass.Node, ev any, now time.Time) {
	t.Helper()
	if err := n.Step(ev, now); err != nil {
		t.Fatalf("Step(%T): %v", ev, err)
	}
}

func kinds(qs []events.Query) []events.QueryKind {
	var out []events.QueryKind
	for _, q := range qs {
		out = append(out, q.Kind)
	}
	return out
}

// rounds drives n to its end as a carrier would, storing every Persist
// (version v stored as comment 900+v) and answering no query, and returns
// what each Ready held, in order: "query:<kind>", "persist:v<N>",
// "effect:<kind>", "labels", "checks", "tracker:<op>" (answered as done:
// every create created); and the states persisted.
func rounds(t *testing.T, n *pass.Node, now time.Time) (log []string, persisted []*state.State) {
	t.Helper()
	id := 0
	err := pass.Drive(n, func() pass.Input { id++; return pass.Input{Now: now, WriteID: fmt.Sprintf("w%d", id)} }, func(rd pass.Ready) error {
		for _, q := range rd.Queries {
			log = append(log, fmt.Sprintf("query:%v", q.Kind))
		}
		if s := rd.Persist; s != nil {
			log = append(log, fmt.Sprintf("persist:v%d", s.Version))
			persisted = append(persisted, s)
			step(t, n, pass.Persisted{Outcome: pass.Stored, CommentID: 900 + s.Version, Version: s.Version}, now)
		}
		for _, e := range rd.Effects {
			log = append(log, "effect:"+string(e.Kind))
		}
		if rd.Labels != nil {
			log = append(log, "labels")
		}
		if len(rd.Checks) > 0 {
			log = append(log, "checks")
		}
		if rd.Tracker != nil {
			log = append(log, "tracker:"+op(rd))
			out := tasksync.Outcome{At: now}
			if c, ok := rd.Tracker.Op.(tasksync.Create); ok {
				for i, it := range c.Items {
					out.Results = append(out.Results, tasksync.ItemResult{IdemKey: it.IdemKey, Issue: tasksync.Issue{Key: fmt.Sprintf("PROJ-%d", i+1)}})
				}
			}
			step(t, n, pass.TrackerOutcome{Op: rd.Tracker.Op, Outcome: out}, now)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Drive: %v", err)
	}
	return log, persisted
}

func TestReadsComeBeforeTheSettle(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\nroles: {architect: [alice], critic: [\"@carol\", dave]}\n")
	w.toCodeReview()
	started := w.st.Exec.StartedAt
	now := w.clock.Add(time.Minute)
	n := pass.New(w.set, w.st, pass.Options{Issue: issue})

	step(t, n, events.PRLinked{PR: 40, URL: prURL}, now)
	rd := ready(t, n, now)
	testkit.WantDeep(t, "first the PR read", kinds(rd.Queries), []events.QueryKind{events.QCheckPR})
	testkit.Want(t, "nothing to carry out while reads are open", rd.Persist == nil && len(rd.Effects) == 0 && rd.Labels == nil, true)
	testkit.Want(t, "asked, not handed out twice", n.Asks(events.QCheckPR, 40), false)

	step(t, n, events.PullRead{Pull: pr(), URL: prURL, Reviews: []evidence.ReviewRead{
		{ID: 3, Reviewer: "bob", State: "APPROVED", At: started.Add(time.Minute), CommitSHA: head, URL: prURL + "#r3"},
	}}, now)
	rd = ready(t, n, now)
	if len(rd.Queries) != 1 || rd.Queries[0].Kind != events.QPerms || !reflect.DeepEqual(rd.Queries[0].Logins, []string{"bob"}) {
		t.Fatalf("queries = %+v, want the reviewer's permission", rd.Queries)
	}
	step(t, n, rd.Queries[0].Then.WithPerms(map[string]evidence.PermRead{"bob": {Perm: "write"}}), now)

	rd = ready(t, n, now)
	// Approved: qa starts and reads the PR's checks.
	testkit.WantDeep(t, "the next step's read", kinds(rd.Queries), []events.QueryKind{events.QCheckPR})
	step(t, n, events.PullRead{Pull: pr(), URL: prURL}, now)

	rd = ready(t, n, now)
	testkit.Want(t, "no more queries", len(rd.Queries), 0)
	if rd.Persist == nil {
		t.Fatal("the settled change is not persisted first")
	}
	testkit.Want(t, "approved: next step", rd.Persist.Slug, "qa")
	testkit.Want(t, "nothing else in the persist's Ready", len(rd.Effects) == 0 && rd.Labels == nil, true)
	persisted := rd.Persist
	step(t, n, pass.Persisted{Outcome: pass.Stored, CommentID: 5, Version: persisted.Version}, now)
	n.Advance(rd)
	rd = ready(t, n, now)
	if len(rd.Effects) == 0 {
		t.Fatal("no effects after the persist")
	}
	for _, e := range rd.Effects {
		if state.EffectKinds[e.Kind].Outbox && !outbox.Announced(persisted.Outbox, e.Marker) {
			t.Errorf("effect %s %s not announced in the state it follows", e.Kind, e.Marker)
		}
	}
	testkit.Want(t, "input state kept", w.st.Slug, "code-review")
	n.Advance(rd)
	rd = ready(t, n, now)
	testkit.Want(t, "labels follow the state", strings.Join(rd.Labels, " "), strings.Join(labels.Labels(persisted), " "))
	n.Advance(rd)
	testkit.Want(t, "after the write nothing is left", ready(t, n, now).Empty(), true)
}

func TestNoTrackerWorkWhenNotConfigured(t *testing.T) {
	w := newWorld(t, "jira:\n  project: PROJ\n  transition_on_close: true\n")
	w.start("greenfield")
	now := w.clock.Add(time.Minute)
	n := pass.New(w.set, w.st, pass.Options{Issue: issue, Closed: true})
	step(t, n, w.comment("maria", "/autopilot jira sync"), now)
	log, _ := rounds(t, n, now)
	for _, l := range log {
		if strings.HasPrefix(l, "tracker:") {
			t.Errorf("tracker work handed out: %v", log)
		}
	}
}

func TestWhatNoWriteCarriedIsKept(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\n")
	w.start("greenfield")
	now := w.clock.Add(time.Minute)

	n := pass.New(w.set, w.st, pass.Options{Issue: issue})
	log, _ := rounds(t, n, now)
	testkit.WantDeep(t, "no events: labels only, no write", log, []string{"labels"})

	// A refusal while the effects are performed waits for the last write.
	n = pass.New(w.set, w.st, pass.Options{Issue: issue})
	step(t, n, w.comment("maria", "/autopilot status"), now)
	rd := ready(t, n, now)
	for ; len(rd.Effects) == 0; rd = ready(t, n, now) {
		if rd.Empty() || rd.Labels != nil {
			t.Fatalf("no effects handed out: %+v", rd)
		}
		if rd.Persist != nil {
			step(t, n, pass.Persisted{Outcome: pass.Stored, Version: rd.Persist.Version}, now)
		}
		n.Advance(rd)
	}
	step(t, n, events.Refused{Request: "comment x"}, now)
	n.Advance(rd)
	log, ps := rounds(t, n, now)
	testkit.WantDeep(t, "labels, then the refusal written last", log, []string{"labels", "persist:v2"})
	testkit.WantDeep(t, "remembered", ps[0].Refused, []string{"comment x"})

	n = pass.New(w.set, w.st, pass.Options{Issue: issue})
	step(t, n, w.comment("erin", "thanks, looks good"), now)
	log, _ = rounds(t, n, now)
	testkit.WantDeep(t, "a classification alone waits for the end", log, []string{"labels", "persist:v1"})

	n = pass.New(w.set, w.st, pass.Options{Issue: issue, Rewrite: true, MaxVersion: 7})
	log, _ = rounds(t, n, now)
	testkit.WantDeep(t, "a rolled-back state is written whatever happens, above the bot's comments", log, []string{"persist:v8", "labels"})
}

func TestANewStateGetsTheIssue(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\n")
	n := pass.New(w.set, nil, pass.Options{Issue: 77})
	step(t, n, events.Start{Flow: "greenfield", Issue: 77, Actor: "maria", Title: "t"}, w.clock)
	rd := ready(t, n, w.clock)
	if rd.Persist == nil {
		t.Fatal("a new state is not written first")
	}
	testkit.Want(t, "issue", rd.Persist.Issue, 77)
	testkit.Want(t, "repo", rd.Persist.Repo, "acme/widgets")
	testkit.Want(t, "first version", rd.Persist.Version, int64(1))
}

// The engine decides the whole write: the version one above the last
// stored (a write that was only previewed does not count), the write id
// the caller supplied, the watermark below the comments still pending,
// and the compaction; the caller writes exactly that.
func TestPersistIsDecidedWhole(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\n")
	w.start("greenfield")
	w.st.Version = 4
	now := w.clock.Add(time.Minute)
	n := pass.New(w.set, w.st, pass.Options{Issue: issue})
	c := w.comment("maria", "/autopilot done problem")
	late := w.comment("reader", "/autopilot done research")
	late.Perm = access.Read
	step(t, n, c, now)
	step(t, n, pass.ThreadRead{Newest: now, Read: []pass.Read{{ID: c.ID, UpdatedAt: now.Add(-10 * time.Minute)}, {ID: 4242, UpdatedAt: now.Add(-5 * time.Minute)}}}, now)
	rd, err := n.Ready(pass.Input{Now: now, WriteID: "abc"})
	if err != nil || rd.Persist == nil {
		t.Fatalf("Ready = %+v, %v; want a persist", rd, err)
	}
	p := rd.Persist
	testkit.Want(t, "version", p.Version, int64(5))
	testkit.Want(t, "write id", p.WriteID, "abc")
	// Below the applied comment, whose 👍 is still to be sent, and so below
	// the unhandled one too.
	testkit.Want(t, "watermark below the comments pending", p.Since, now.Add(-10*time.Minute-time.Second).UTC().Truncate(time.Second))
	testkit.Want(t, "the input state is not edited", w.st.Version, int64(4))
	step(t, n, pass.Persisted{Outcome: pass.Previewed}, now)
	step(t, n, events.Refused{Request: "x"}, now)
	log, _ := rounds(t, n, now)
	testkit.Want(t, "a preview stores nothing: the next write is v5 again", log[len(log)-1], "persist:v5")
}

// A failed write ends the pass: nothing after it is handed out.
func TestAFailedWriteEndsThePass(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\n")
	w.start("greenfield")
	now := w.clock.Add(time.Minute)
	n := pass.New(w.set, w.st, pass.Options{Issue: issue})
	step(t, n, w.comment("maria", "/autopilot done problem"), now)
	rd := ready(t, n, now)
	testkit.Want(t, "the change is written first", rd.Persist != nil, true)
	step(t, n, pass.Persisted{Outcome: pass.Failed}, now)
	n.Advance(rd)
	testkit.Want(t, "nothing after a failed write", ready(t, n, now).Empty(), true)
}

// What the thread shows is data given to the node (ThreadRead): a comment
// whose marker is on the thread is not posted again.
func TestWhatTheThreadShowsIsData(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\n")
	w.start("greenfield")
	now := w.clock.Add(time.Minute)
	marker := "<!-- autopilot:reply 1 -->"
	w.st.Outbox = []state.Effect{{Kind: state.EffComment, Marker: marker, Body: "hello"}}
	for _, tc := range []struct {
		name   string
		thread pass.ThreadRead
		want   bool
	}{
		{"not on the thread: owed", pass.ThreadRead{}, true},
		{"on the thread", pass.ThreadRead{Links: map[string]string{marker: "https://x"}}, false},
		{"refused", pass.ThreadRead{Refused: map[string]bool{marker: true}}, false},
	} {
		n := pass.New(w.set, w.st, pass.Options{Issue: issue})
		step(t, n, tc.thread, now)
		log, _ := rounds(t, n, now)
		testkit.Want(t, tc.name, strings.Contains(strings.Join(log, " "), "effect:comment"), tc.want)
	}
}

// With GitHub sub-issues, any event on the autopilot issue reads the open
// tasks' issues back (docs/tasks.md "status comes back"), not only the
// sweep or the sync command: a comment that is no command at all is enough.
// Without open tasks, or with Jira, nothing is read.
func TestAnyEventReadsOpenSubIssueTasksBack(t *testing.T) {
	w := newWorld(t, "tracker: github\n")
	w.set.TrackerConfigured = true
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
		got := op(rd) == "statuses"
		if got != tc.want {
			t.Errorf("%s: tracker op %q, want a read-back %v", tc.name, op(rd), tc.want)
		}
	}
}

// A dispatch's outcome is written before the effects after it: the
// effects are handed out up to the dispatch, and the Ready after its
// outcome (Dispatched, which records the run) persists first.
func TestADispatchOutcomeIsPersistedBeforeTheEffectsAfterIt(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\nsteps: {implement: {kind: dispatch, workflow: impl.yml, ref: main, timeout: 2h}}\n")
	w.start("greenfield")
	for i := 0; i < 40 && w.st.Slug != "decompose"; i++ {
		if w.st.Gate != nil {
			w.say("maria", w.st.Gate.Recommend)
		} else {
			w.say("maria", "/autopilot done ok")
		}
	}
	w.say("maria", "/autopilot done tasks")
	now := w.clock.Add(time.Minute)
	n := pass.New(w.set, w.st, pass.Options{Issue: issue})
	step(t, n, w.comment("maria", "A"), now)
	// A later comment's reply comes after the dispatch.
	step(t, n, w.comment("maria", "/autopilot status"), now)
	var log []string
	dispatched := false
	id := 0
	err := pass.Drive(n, func() pass.Input { id++; return pass.Input{Now: now, WriteID: fmt.Sprint(id)} }, func(rd pass.Ready) error {
		if s := rd.Persist; s != nil {
			log = append(log, "persist")
			step(t, n, pass.Persisted{Outcome: pass.Stored, Version: s.Version}, now)
		}
		for _, e := range rd.Effects {
			log = append(log, "effect:"+string(e.Kind))
			if e.Kind == state.EffDispatch {
				dispatched = true
				step(t, n, events.Dispatched{Session: e.Marker, RunID: 777}, now)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !dispatched {
		t.Fatalf("no dispatch handed out: %v (step %s)", log, w.st.Slug)
	}
	got := strings.Join(log, " ")
	t.Logf("rounds: %s", got)
	i := strings.Index(got, "effect:dispatch")
	rest := got[i+len("effect:dispatch"):]
	if !strings.HasPrefix(rest, " persist") {
		t.Errorf("after the dispatch %q, want its outcome persisted first (all: %s)", rest, got)
	}
	if !strings.HasPrefix(got, "persist") {
		t.Errorf("the settled state is not written first: %s", got)
	}
}
