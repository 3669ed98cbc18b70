package pass_test

import (
	"errors"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/pass"
)

// Flow detection: a run started with no flow (no flow label) and no
// default flow asks for the repository's top directory, and for _docs/
// when there is one; what they hold picks the flow (or the candidates a
// Choose block offers). Events stepped after the start wait for it.

func startNoFlow() events.Start {
	return events.Start{Issue: issue, Actor: "maria", Title: "Add CSV export", URL: "https://github.com/acme/widgets/issues/12"}
}

func TestStartWithoutFlowAsksTheRepositoryTop(t *testing.T) {
	for _, tc := range []struct {
		name  string
		top   []string
		docs  []string // nil: _docs not asked
		flow  string
		cands int
	}{
		{"empty repository", nil, nil, "greenfield", 0},
		{"only meta files", []string{"README.md", "LICENSE", ".gitignore", ".github", "LICENSE-APACHE"}, nil, "greenfield", 0},
		{"source", []string{"README.md", "go.mod", "main.go"}, nil, "existing-code", 0},
		{"submodules", []string{".gitmodules", "README.md"}, nil, "meta-repo", 0},
		{"submodules and source", []string{".gitmodules", "src"}, nil, "", 2},
		{"docs only", []string{"_docs", "LICENSE"}, []string{"00_problem.md"}, "existing-code", 0},
		{"meta repo", []string{"_docs", ".gitmodules"}, []string{"_repo-config.yaml"}, "meta-repo", 0},
		{"meta with source", []string{"_docs", "cmd"}, []string{"_repo-config.yaml"}, "", 2},
	} {
		w := newWorld(t, "jira: {enabled: false}\n")
		n := pass.New(w.set, nil, pass.Options{Issue: issue})
		step(t, n, startNoFlow(), w.clock)
		step(t, n, w.comment("maria", "/autopilot status"), w.clock)
		rd := ready(t, n, w.clock)
		if len(rd.Queries) != 1 || rd.Queries[0].Kind != events.QRepoDir || rd.Queries[0].Dir != "" {
			t.Fatalf("%s: first Ready asks %+v, want the repository's top", tc.name, rd.Queries)
		}
		step(t, n, events.DirRead{Dir: "", Names: tc.top}, w.clock)
		if tc.docs != nil {
			rd = ready(t, n, w.clock)
			if len(rd.Queries) != 1 || rd.Queries[0].Kind != events.QRepoDir || rd.Queries[0].Dir != "_docs" {
				t.Fatalf("%s: second Ready asks %+v, want _docs", tc.name, rd.Queries)
			}
			step(t, n, events.DirRead{Dir: "_docs", Names: tc.docs}, w.clock)
		}
		st := n.State()
		if st == nil {
			t.Fatalf("%s: no run started", tc.name)
		}
		if tc.flow != "" && st.Flow != tc.flow {
			t.Errorf("%s: flow %q, want %q", tc.name, st.Flow, tc.flow)
		}
		if tc.cands > 0 && (st.Gate == nil || len(st.Gate.Options) < tc.cands) {
			t.Errorf("%s: gate %+v, want a choice among %d flows", tc.name, st.Gate, tc.cands)
		}
		if len(st.Ledger) != 1 {
			t.Errorf("%s: ledger %+v, want the comment stepped after the start applied after it", tc.name, st.Ledger)
		}
	}
}

func TestStartWithAFlowOrADefaultAsksNothing(t *testing.T) {
	w := newWorld(t, "default_flow: greenfield\njira: {enabled: false}\n")
	n := pass.New(w.set, nil, pass.Options{Issue: issue})
	step(t, n, startNoFlow(), w.clock)
	if rd := ready(t, n, w.clock); len(rd.Queries) != 0 || n.State() == nil || n.State().Flow != "greenfield" {
		t.Errorf("default flow: asked %+v, state %+v", rd.Queries, n.State())
	}
	w = newWorld(t, "jira: {enabled: false}\n")
	n = pass.New(w.set, nil, pass.Options{Issue: issue})
	s := startNoFlow()
	s.Flow = "existing-code"
	step(t, n, s, w.clock)
	if rd := ready(t, n, w.clock); len(rd.Queries) != 0 || n.State().Flow != "existing-code" {
		t.Errorf("flow label: asked %+v", rd.Queries)
	}
}

func TestFlowDetectionReadFailureEndsThePass(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\n")
	n := pass.New(w.set, nil, pass.Options{Issue: issue})
	step(t, n, startNoFlow(), w.clock)
	ready(t, n, w.clock)
	boom := errors.New("403 forbidden")
	if err := n.Step(events.DirRead{Fail: events.ReadForbidden, Err: boom}, w.clock); !errors.Is(err, boom) {
		t.Errorf("Step(failed listing) = %v, want the forge's error", err)
	}
}
