package engine

import (
	"reflect"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// ready takes the node's next Ready, failing the test on an error.
func ready(t *testing.T, n *Node, now time.Time) Ready {
	t.Helper()
	rd, err := n.Ready(outbox.Seen{}, now)
	if err != nil {
		t.Fatalf("Ready: %v", err)
	}
	return rd
}

func step(t *testing.T, n *Node, ev Event, now time.Time) {
	t.Helper()
	if err := n.Step(ev, now); err != nil {
		t.Fatalf("Step(%T): %v", ev, err)
	}
}

func kinds(qs []Query) []QueryKind {
	var out []QueryKind
	for _, q := range qs {
		out = append(out, q.Kind)
	}
	return out
}

func TestNodeHandsOutReadsBeforeItSettles(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "code-review")
	started := h.st.Exec.StartedAt
	now := h.now().Add(time.Minute)
	n := NewNode(h.set, h.st, NodeOptions{Issue: testIssue})

	step(t, n, PRLinked{PR: 40, URL: prURL}, now)
	rd := ready(t, n, now)
	wantDeep(t, "first the PR read", kinds(rd.Queries), []QueryKind{QCheckPR})
	want(t, "nothing to carry out while reads are open", rd.State == nil && !rd.Write && len(rd.Effects) == 0, true)

	step(t, n, PullRead{Pull: linkedPR("devin"), URL: prURL, Reviews: []ReviewRead{
		{ID: 3, Reviewer: "bob", State: "APPROVED", At: started.Add(time.Minute), CommitSHA: testHead, URL: prURL + "#r3"},
	}}, now)
	rd = ready(t, n, now)
	if len(rd.Queries) != 1 || rd.Queries[0].Kind != QPerms || !reflect.DeepEqual(rd.Queries[0].Logins, []string{"bob"}) {
		t.Fatalf("queries = %+v, want the reviewer's permission", rd.Queries)
	}
	step(t, n, rd.Queries[0].Then.WithPerms(map[string]PermRead{"bob": {Perm: "write"}}), now)

	rd = ready(t, n, now)
	// Approved: qa starts and reads the PR's checks.
	wantDeep(t, "the next step's read", kinds(rd.Queries), []QueryKind{QCheckPR})
	step(t, n, PullRead{Pull: linkedPR("devin"), URL: prURL}, now)
	rd = ready(t, n, now)
	want(t, "no more queries", len(rd.Queries), 0)
	want(t, "approved: next step", rd.State.Slug, "qa")
	want(t, "written", rd.Write, true)
	want(t, "labels follow the state", len(rd.Labels) > 0, true)
	for _, e := range rd.Effects {
		if state.EffectKinds[e.Kind].Outbox && !outbox.Announced(rd.State.Outbox, e.Marker) {
			t.Errorf("effect %s %s not announced in the state it follows", e.Kind, e.Marker)
		}
	}
	want(t, "input state kept", h.st.Slug, "code-review")

	n.Wrote(rd.State)
	rd = ready(t, n, now)
	want(t, "after the write nothing is left", rd.Write || len(rd.Effects) > 0 || len(rd.Queries) > 0, false)
}

func TestNodeHandsOutTheTrackerWorkOnceEachInOrder(t *testing.T) {
	h := newHarness(t, "jira:\n  project: PROJ\n  transition_on_close: true\n")
	h.set.JiraConfigured = true
	toPlan(t, h)
	h.apply(JiraAuth{OK: true})
	now := h.now().Add(time.Minute)
	n := NewNode(h.set, h.st, NodeOptions{Issue: testIssue, Closed: true})

	c := h.comment("maria", "write", "/autopilot done plan")
	c.Declared = []state.Task{{Kind: state.KindEpic, Title: "CSV export"}}
	step(t, n, c, now)
	rd := ready(t, n, now)
	if len(rd.Queries) != 1 || rd.Queries[0].Kind != QJiraSync || !rd.Queries[0].Sync.Run {
		t.Fatalf("queries = %+v, want one planned sync", rd.Queries)
	}
	want(t, "the settled state comes with the sync", rd.State != nil && rd.Write, true)
	task := rd.State.Tasks[0]
	want(t, "not handed out twice while it runs", len(ready(t, n, now).Queries), 0)

	// The sync created the epic: its issue is now closable.
	task.Jira, task.JiraKey = state.JiraCreated, "PROJ-1"
	step(t, n, JiraSynced{Tasks: []state.Task{task}}, now)
	rd = ready(t, n, now)
	if len(rd.Queries) != 1 || rd.Queries[0].Kind != QJiraClose || rd.Queries[0].Open != 1 {
		t.Fatalf("queries = %+v, want one close of 1 task", rd.Queries)
	}
	rd = ready(t, n, now)
	want(t, "each once a pass", len(rd.Queries), 0)
}

func TestNodeKeepsWhatNoWriteCarried(t *testing.T) {
	h := newHarness(t, "")
	h.start("greenfield")
	now := h.now().Add(time.Minute)

	n := NewNode(h.set, h.st, NodeOptions{Issue: testIssue})
	want(t, "nothing yet", n.Unwritten(), false)
	rd := ready(t, n, now)
	want(t, "no events, no write", rd.Write, false)
	step(t, n, Refused{Request: "comment x"}, now)
	want(t, "a refusal after the settle waits for a write", n.Unwritten(), true)
	rd = ready(t, n, now)
	want(t, "the last Ready writes it", rd.Write, true)
	n.Wrote(rd.State)
	want(t, "written", n.Unwritten(), false)

	n = NewNode(h.set, h.st, NodeOptions{Issue: testIssue, Rewrite: true})
	want(t, "a rolled-back state is written whatever happens", ready(t, n, now).Write, true)
}

func TestAdoptRun(t *testing.T) {
	h, res := toDispatch(t)
	s := res.State
	session := s.Exec.Session
	at := s.Exec.DispatchedAt
	ours := evidence.Run{ID: 7, DisplayTitle: "implement " + session, Path: ".github/workflows/impl.yml", Event: "workflow_dispatch", HeadRepo: "acme/widgets", CreatedAt: at.Add(time.Second)}
	tests := []struct {
		name    string
		runs    []evidence.Run
		id      int64
		skipped int
	}{
		{name: "the run with the token", runs: []evidence.Run{ours}, id: 7},
		{name: "the token inside another word", runs: []evidence.Run{func() evidence.Run { r := ours; r.DisplayTitle = "x" + session; return r }()}},
		{name: "another workflow carrying the token", runs: []evidence.Run{func() evidence.Run { r := ours; r.ID, r.Path = 8, ".github/workflows/evil.yml"; return r }(), ours}, id: 7, skipped: 1},
		{name: "a fork's run", runs: []evidence.Run{func() evidence.Run { r := ours; r.HeadRepo = "mallory/widgets"; return r }()}, skipped: 1},
		{name: "none", runs: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, found, skipped := AdoptRun(h.set, s, session, tt.runs)
			want(t, "id", id, tt.id)
			want(t, "found", found, tt.id != 0)
			want(t, "skipped", len(skipped), tt.skipped)
		})
	}
	want(t, "window starts before the dispatch", AdoptSince(s, at.Add(time.Hour)), at.Add(-5*time.Minute))
	none := outbox.Clone(s)
	none.Exec.DispatchedAt = time.Time{}
	want(t, "a day back when no dispatch is recorded", AdoptSince(none, at), at.Add(-24*time.Hour))
}
