package engine

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/labels"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// jiraOff is a config that turns Jira off, so Jira gates stay out of the way.
const jiraOff = "jira: {enabled: false}\n"

func TestDoneAutoChainsToTheOnlyNextStep(t *testing.T) {
	h := newHarness(t, "")
	h.start("greenfield")
	res := h.done("Problem: users need CSV downloads")
	s := res.State
	want(t, "slug", s.Slug, "research")
	want(t, "step", s.Step, 2)
	want(t, "status", s.Status, state.InProgress)
	want(t, "run", s.Run, state.RunInProgress)
	want(t, "problem progress", progressOf(s, "problem"), state.Completed)
	want(t, "research progress", progressOf(s, "research"), state.InProgress)
	want(t, "gate", s.Gate == nil, true)
	if len(s.Completed) != 1 {
		t.Fatalf("completed rows = %d, want 1", len(s.Completed))
	}
	row := s.Completed[0]
	want(t, "row step", row.Step, 1)
	want(t, "row slug", row.Slug, "problem")
	want(t, "row outcome", row.Outcome, "Problem: users need CSV downloads")
	want(t, "row cycle", row.Cycle, 1)
	want(t, "row time", row.At, h.now())
	want(t, "iterations", s.Limits.Iterations, 1)
	if got := reactions(res.Effects, h.nextID); len(got) != 1 || got[0] != outbox.ReactUp {
		t.Errorf("reactions on the done comment = %v, want [+1]", got)
	}
	if !hasBody(res.Effects, "▶️ **Step 2 — Research**") {
		t.Errorf("research not announced: %q", bodies(res.Effects))
	}
}

func TestBareDoneRecordsWhoReportedIt(t *testing.T) {
	h := newHarness(t, "")
	h.start("greenfield")
	s := h.done("").State
	want(t, "outcome", s.Completed[0].Outcome, "reported done by @maria")
}

func TestSessionBoundaryAsksFreshOrContinue(t *testing.T) {
	tests := []struct {
		flow     string
		after    string
		next     string
		nextName string
	}{
		{flow: "greenfield", after: "decompose", next: "implement", nextName: "implementation"},
		{flow: "existing-code", after: "decompose-tests", next: "implement-tests", nextName: "test implementation"},
		{flow: "existing-code", after: "new-task", next: "implement", nextName: "implementation"},
	}
	for _, tc := range tests {
		for _, answer := range []string{"A", "B"} {
			t.Run(tc.flow+"/"+tc.after+"/"+answer, func(t *testing.T) {
				h := newHarness(t, jiraOff)
				h.runTo(tc.flow, tc.after)
				sessions := h.st.Limits.Sessions
				res := h.done("tasks declared")
				s := res.State
				wantGate(t, s, "session-boundary")
				want(t, "slug", s.Slug, tc.next)
				want(t, "status", s.Status, state.NotStarted)
				want(t, "sub_step", s.SubStep, state.SubStep{Phase: 0, Name: state.AwaitingInvocation})
				want(t, "run", s.Run, state.RunAwaitingDecision)
				want(t, tc.after+" progress", progressOf(s, tc.after), state.Completed)
				want(t, tc.next+" progress", progressOf(s, tc.next), state.NotStarted)
				want(t, "last session reason", s.LastSession.Reason, "session boundary")
				body := gateBody(t, res.Effects, s.Gate)
				title := "DECISION REQUIRED: " + h.set.Config.All[tc.flow].Steps[h.set.Config.All[tc.flow].Index(tc.after)].Name + " complete — start " + tc.nextName + "?"
				wantLines(t, "boundary block", body, title, " A) Start "+tc.nextName+" with a fresh executor session (recommended)", " B) Continue in the current executor session", "Recommendation: A")
				if len(effectsOf(res.Effects, state.EffComment)) != 1 {
					t.Errorf("the boundary must not start %s: %q", tc.next, bodies(res.Effects))
				}

				res = h.say("maria", answer)
				s = res.State
				want(t, "slug after answer", s.Slug, tc.next)
				want(t, "status after answer", s.Status, state.InProgress)
				want(t, "run after answer", s.Run, state.RunInProgress)
				wantSessions := sessions
				if answer == "A" {
					wantSessions++
				}
				want(t, "sessions", s.Limits.Sessions, wantSessions)
			})
		}
	}
}

func TestBoundaryGateSummarisesDeclaredTasks(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.runTo("greenfield", "decompose")
	c := h.comment("maria", "write", "/autopilot done five tasks")
	c.Declared = []state.Task{{Kind: state.KindTask, Title: "a", Points: 3}, {Kind: state.KindTask, Title: "b", Points: 2.5}}
	res := h.apply(c)
	body := gateBody(t, res.Effects, res.State.Gate)
	if !strings.Contains(body, "Tasks: 2 (5.5 points)") {
		t.Errorf("boundary block lacks the task summary:\n%s", body)
	}
	want(t, "decompose note", res.State.Steps[3].Note, "2 tasks")
	want(t, "outcome", res.State.Completed[len(res.State.Completed)-1].Outcome, "five tasks (2 tasks declared)")
}

func TestExistingCodeCycleLoopsBackToNewTask(t *testing.T) {
	for _, tc := range []struct {
		answer   string
		wantRun  state.RunStatus
		wantSlug string
	}{
		{answer: "A", wantRun: state.RunInProgress, wantSlug: "new-task"},
		{answer: "B", wantRun: state.RunDone, wantSlug: "done"},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			h := newHarness(t, jiraOff)
			h.runTo("existing-code", "deploy")
			res := h.done("deployed")
			s := res.State
			wantGate(t, s, "next-cycle")
			want(t, "run", s.Run, state.RunAwaitingDecision)
			body := gateBody(t, res.Effects, s.Gate)
			wantLines(t, "next-cycle block", body, "DECISION REQUIRED: Cycle 1 complete — start the next feature?", " A) Start the next feature (cycle 2, back to New Task)", " B) Finish the run here", "Recommendation: B")
			res = h.say("maria", tc.answer)
			s = res.State
			want(t, "run", s.Run, tc.wantRun)
			want(t, "slug", s.Slug, tc.wantSlug)
			if tc.answer == "B" {
				want(t, "cycle", s.Cycle, 1)
				want(t, "step", s.Step, 0)
				want(t, "gate", s.Gate == nil, true)
				if !hasBody(res.Effects, "Autopilot run complete") {
					t.Errorf("no completion notice: %q", bodies(res.Effects))
				}
				return
			}
			want(t, "cycle", s.Cycle, 2)
			want(t, "status", s.Status, state.InProgress)
			for _, p := range s.Steps[:5] {
				want(t, "before loop "+p.Slug, p.Status, state.Completed)
			}
			want(t, "new-task", progressOf(s, "new-task"), state.InProgress)
			for _, p := range s.Steps[6:] {
				want(t, "reset "+p.Slug, p.Status, state.NotStarted)
			}
			if !hasBody(res.Effects, "(existing-code flow, cycle 2)") {
				t.Errorf("announcement does not name cycle 2: %q", bodies(res.Effects))
			}
			// Completed rows of the new cycle carry it.
			s = h.done("next feature").State
			want(t, "row cycle", s.Completed[len(s.Completed)-1].Cycle, 2)
		})
	}
}

func TestGreenfieldFinishesAfterDeploy(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.runTo("greenfield", "deploy")
	res := h.done("shipped")
	s := res.State
	want(t, "run", s.Run, state.RunDone)
	want(t, "slug", s.Slug, "done")
	want(t, "status", s.Status, state.Completed)
	want(t, "last session", s.LastSession.Reason, "completed")
	for _, p := range s.Steps {
		want(t, p.Slug, p.Status, state.Completed)
	}
	wantDeep(t, "labels", labels.Labels(s), []string{"autopilot/step:done", "autopilot/status:done", "autopilot/flow:greenfield"})
	// A finished run refuses executor reports and stays finished on Start.
	c := h.comment("maria", "write", "/autopilot done again")
	res = h.apply(c)
	want(t, "done after finish", ledgerOf(res.State, c.ID), "rejected:no-step-running")
	res = h.apply(events.Start{Issue: testIssue, Actor: "maria"})
	want(t, "run after re-label", res.State.Run, state.RunDone)
	if !hasBody(res.Effects, "already **done**") {
		t.Errorf("re-adding the label on a done run says nothing: %q", bodies(res.Effects))
	}
	// A redelivered label event does not say it twice.
	res = h.apply(events.Start{Issue: testIssue, Actor: "maria"})
	want(t, "second notice", nEffects(res), 0)
}

func TestMetaRepoConfigReviewApprovalGate(t *testing.T) {
	tests := []struct {
		answer   string
		wantSlug string
		wantRun  state.RunStatus
	}{
		{answer: "A", wantSlug: "plan", wantRun: state.RunInProgress},
		{answer: "B", wantSlug: "config-review", wantRun: state.RunInProgress},
		{answer: "C", wantSlug: "config-review", wantRun: state.RunStopped},
	}
	for _, tc := range tests {
		t.Run(tc.answer, func(t *testing.T) {
			h := newHarness(t, jiraOff)
			h.start("meta-repo")
			res := h.done("repo config written")
			s := res.State
			want(t, "slug", s.Slug, "config-review")
			wantGate(t, s, "approval-config-review")
			want(t, "sub_step", s.SubStep.Name, "awaiting-human-review")
			want(t, "status", s.Status, state.InProgress)
			body := gateBody(t, res.Effects, s.Gate)
			wantLines(t, "approval block", body, "DECISION REQUIRED: Config Review — approve and continue?", " A) Approve and continue", " B) Request changes", " C) Abort the run")
			res = h.say("maria", tc.answer)
			s = res.State
			want(t, "slug after", s.Slug, tc.wantSlug)
			want(t, "run after", s.Run, tc.wantRun)
			switch tc.answer {
			case "A":
				want(t, "config-review", progressOf(s, "config-review"), state.Completed)
				want(t, "outcome", s.Completed[len(s.Completed)-1].Outcome, "approved by @maria")
			case "B":
				want(t, "gate", s.Gate == nil, true)
				want(t, "sub_step", s.SubStep.Name, "changes-requested")
				if !hasBody(res.Effects, "Changes requested for **Config Review**") {
					t.Errorf("no changes-requested notice: %q", bodies(res.Effects))
				}
				// The executor revises and reports done: the approval is asked again.
				res = h.done("revised")
				if res.State.Gate == nil || res.State.Gate.Kind != "approval-config-review" {
					t.Fatalf("gate after revision = %+v, want the approval again", res.State.Gate)
				}
				want(t, "still config-review", res.State.Slug, "config-review")
				res = h.say("maria", "A")
				want(t, "approved after revision", res.State.Slug, "plan")
			case "C":
				want(t, "stop reason", s.Stop.Reason, stops.KillUserAbort)
			}
		})
	}
}
