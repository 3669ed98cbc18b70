package engine

import (
	"reflect"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/labels"
	"github.com/autopilot-dev/autopilot/internal/state"
)

func TestStartChoosesFlow(t *testing.T) {
	tests := []struct {
		name       string
		yaml       string
		flow       string
		candidates []string
		wantFlow   string
		wantSlug   string
	}{
		{name: "explicit flow wins over config default", yaml: "default_flow: meta-repo\n", flow: "existing-code", candidates: []string{"greenfield", "meta-repo"}, wantFlow: "existing-code", wantSlug: "document"},
		{name: "config default when no flow given", yaml: "default_flow: meta-repo\n", candidates: []string{"greenfield", "existing-code"}, wantFlow: "meta-repo", wantSlug: "discover"},
		{name: "single detected candidate", candidates: []string{"existing-code"}, wantFlow: "existing-code", wantSlug: "document"},
		{name: "nothing detected falls back to greenfield", wantFlow: "greenfield", wantSlug: "problem"},
		{name: "review-loop by name", flow: "review-loop", wantFlow: "review-loop", wantSlug: "interview"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.yaml)
			res := h.apply(events.Start{Flow: tc.flow, Issue: testIssue, Candidates: tc.candidates, Actor: "maria", Title: "Export"})
			s := res.State
			want(t, "flow", s.Flow, tc.wantFlow)
			want(t, "slug", s.Slug, tc.wantSlug)
			want(t, "step", s.Step, 1)
			want(t, "status", s.Status, state.InProgress)
			want(t, "run", s.Run, state.RunInProgress)
			want(t, "issue", s.Issue, testIssue)
			want(t, "repo", s.Repo, "acme/widgets")
			want(t, "cycle", s.Cycle, 1)
			want(t, "sessions", s.Limits.Sessions, 1)
			want(t, "sub_step", s.SubStep, state.SubStep{Phase: 0, Name: state.AwaitingInvocation})
			want(t, "changed", res.Changed, true)
			want(t, "steps in banner", len(s.Steps), len(h.set.Config.All[tc.wantFlow].Steps))
			want(t, "step 1 progress", s.Steps[0].Status, state.InProgress)
			for _, p := range s.Steps[1:] {
				want(t, "later step "+p.Slug, p.Status, state.NotStarted)
			}
			if !hasBody(res.Effects, "▶️ **"+h.set.Config.All[tc.wantFlow].LabelOf(1)+" — "+s.Name+"**") {
				t.Errorf("no executor announcement for step 1 in %q", bodies(res.Effects))
			}
		})
	}
}

func TestStartWithAmbiguousCandidatesOpensFlowSelectGate(t *testing.T) {
	h := newHarness(t, "")
	res := h.apply(events.Start{Issue: testIssue, Candidates: []string{"existing-code", "meta-repo"}, Actor: "maria", Title: "t"})
	s := res.State
	wantGate(t, s, "flow-select")
	want(t, "run", s.Run, state.RunAwaitingDecision)
	want(t, "flow", s.Flow, "")
	body := gateBody(t, res.Effects, s.Gate)
	golden(t, "gate-flow-select", body)
	wantDeep(t, "labels", labels.Labels(s), []string{"autopilot/step:select-flow", "autopilot/status:awaiting-decision"})

	res = h.say("maria", "B")
	want(t, "flow after B", res.State.Flow, "meta-repo")
	want(t, "slug after B", res.State.Slug, "discover")
	want(t, "run after B", res.State.Run, state.RunInProgress)
	want(t, "decision", res.Decision, "B")
	if len(res.State.Decisions) != 1 || res.State.Decisions[0].OptionText != "Run the meta-repo flow" {
		t.Errorf("decisions = %+v", res.State.Decisions)
	}
}

func TestStartWithUnknownFlowIsAnErrorNamingIt(t *testing.T) {
	h := newHarness(t, "")
	_, err := h.try(events.Start{Flow: "bogus-flow", Issue: testIssue})
	if err == nil || !strings.Contains(err.Error(), `"bogus-flow"`) || !strings.Contains(err.Error(), "greenfield") {
		t.Fatalf("err = %v, want unknown flow naming bogus-flow and the known flows", err)
	}
}

func TestApplyRejectsStateNamingUnknownFlow(t *testing.T) {
	set := settingsFor(t, "")
	s := &state.State{Flow: "vanished", Step: 1, Run: state.RunInProgress}
	_, err := Apply(set, s, events.Tick{}, t0)
	if err == nil || !strings.Contains(err.Error(), `"vanished"`) {
		t.Fatalf("err = %v, want an error naming the unknown flow", err)
	}
}

func TestEventsWithoutStateDoNothing(t *testing.T) {
	set := settingsFor(t, "")
	for _, ev := range []events.Event{events.Tick{}, events.LabelRemoved{Actor: "x"}, events.Closed{}, events.Comment{ID: 1, Body: "A", Perm: access.Admin}} {
		res, err := Apply(set, nil, ev, t0)
		if err != nil || res.State != nil || nEffects(res) != 0 || res.Changed {
			t.Errorf("%T on no state: res=%+v err=%v, want nothing", ev, res, err)
		}
	}
}

func TestLabelsDerivedFromState(t *testing.T) {
	tests := []struct {
		name string
		s    *state.State
		want []string
	}{
		{name: "nil state", s: nil, want: nil},
		{name: "running step", s: &state.State{Slug: "plan", Run: state.RunInProgress, Flow: "greenfield"},
			want: []string{"autopilot/step:plan", "autopilot/status:in-progress", "autopilot/flow:greenfield"}},
		{name: "pending tasks add jira label", s: &state.State{Slug: "decompose", Run: state.RunAwaitingDecision, Flow: "greenfield", Tasks: []state.Task{{Sync: state.SyncCreated}, {Sync: state.SyncSending}}},
			want: []string{"autopilot/step:decompose", "autopilot/status:awaiting-decision", "autopilot/flow:greenfield", "autopilot/jira:pending"}},
		{name: "all created: no jira label", s: &state.State{Slug: "done", Run: state.RunDone, Flow: "greenfield", Tasks: []state.Task{{Sync: state.SyncCreated}}},
			want: []string{"autopilot/step:done", "autopilot/status:done", "autopilot/flow:greenfield"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := labels.Labels(tc.s); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Labels = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLabelColorsAreDistinctPerStatus(t *testing.T) {
	seen := map[string]string{}
	for _, l := range []string{"autopilot/status:in-progress", "autopilot/status:awaiting-decision", "autopilot/status:failed", "autopilot/status:done", "autopilot/status:stopped", "autopilot/jira:pending", "autopilot/step:plan", "autopilot/flow:greenfield"} {
		c, d := labels.LabelColor(l)
		if len(c) != 6 || d == "" {
			t.Errorf("LabelColor(%s) = %q, %q", l, c, d)
		}
		if other, dup := seen[c]; dup {
			t.Errorf("%s and %s share colour %s", l, other, c)
		}
		seen[c] = l
	}
	if _, d := labels.LabelColor("autopilot/step:plan"); !strings.Contains(d, "plan") {
		t.Errorf("step label description %q does not name the step", d)
	}
	if c, _ := labels.LabelColor("something-else"); c != "ededed" {
		t.Errorf("unknown label colour = %s", c)
	}
}

// The first step's announcement, prompt and dispatch carry the issue number
// (the Start event names it; before the fix they said #0).
func TestStartCarriesIssueNumberIntoFirstDispatch(t *testing.T) {
	h := newHarness(t, "executor: {kind: dispatch, workflow: run.yml}\n")
	res := h.start("greenfield")
	d := effectsOf(res.Effects, state.EffDispatch)
	if len(d) != 1 {
		t.Fatalf("dispatch effects = %d, want 1", len(d))
	}
	want(t, "issue input", d[0].Inputs["issue"], "12")
	if !strings.HasPrefix(d[0].Inputs["session"], "ap-12-problem-c1-a1-") {
		t.Errorf("session = %q, want ap-12-problem-c1-a1-…", d[0].Inputs["session"])
	}
	for _, e := range effectsOf(res.Effects, state.EffComment) {
		if strings.Contains(e.Marker, " 0-") {
			t.Errorf("marker %q carries issue 0", e.Marker)
		}
	}
}

func TestApplyNeverMutatesItsInput(t *testing.T) {
	h := newHarness(t, "")
	toPlan(t, h)
	h.say("maria", "B") // Jira gate: continue without Jira
	events := []events.Event{
		h.comment("maria", access.Write, "/autopilot progress 2 drafting architecture"),
		h.comment("maria", access.Write, "/autopilot fail flaky"),
		h.comment("bob", access.Read, "A"),
		h.comment("maria", access.Write, "/autopilot back research"),
		events.Tick{BudgetLow: true},
		events.TrackerSynced{Paused: "auth"},
		events.LabelRemoved{Actor: "maria"},
	}
	for _, ev := range events {
		before := mustJSON(t, h.st)
		snapshot := h.st
		if _, err := Apply(h.set, h.st, ev, h.now().Add(10*60*1e9)); err != nil {
			t.Fatalf("%T: %v", ev, err)
		}
		if string(mustJSON(t, snapshot)) != string(before) {
			t.Fatalf("%T mutated the input state", ev)
		}
	}
}
