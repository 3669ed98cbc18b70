package engine

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/labels"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/state"
)

func TestSkipNeedsReasonWhereTheStepSaysSo(t *testing.T) {
	tests := []struct {
		name string
		flow string
		slug string
		body string
		want state.LedgerOutcome // ledger outcome
	}{
		{name: "security-audit without reason", flow: "greenfield", slug: "security-audit", body: "/autopilot skip", want: "rejected:reason-required"},
		{name: "security-audit with reason", flow: "greenfield", slug: "security-audit", body: "/autopilot skip internal tool, audited last week", want: state.LedgerApplied},
		{name: "qa without reason", flow: "review-loop", slug: "qa", body: "/autopilot skip", want: "rejected:reason-required"},
		{name: "qa with reason", flow: "review-loop", slug: "qa", body: "/autopilot skip docs-only change", want: state.LedgerApplied},
		{name: "interview without reason", flow: "review-loop", slug: "interview", body: "/autopilot skip", want: "rejected:reason-required"},
		{name: "research without reason", flow: "greenfield", slug: "research", body: "/autopilot skip", want: state.LedgerApplied},
		{name: "code-review never", flow: "review-loop", slug: "code-review", body: "/autopilot skip trust me", want: "rejected:not-skippable"},
		{name: "plan consensus never", flow: "review-loop", slug: "plan", body: "/autopilot skip trust me", want: "rejected:not-skippable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, jiraOff)
			reviewLoopTo(t, h, tc.flow, tc.slug)
			if tc.want != state.LedgerApplied {
				res := h.refused("maria", tc.body, tc.want)
				want(t, "no gate", res.State.Gate == nil, true)
				if tc.want == "rejected:reason-required" && !hasBody(res.Effects, "needs a reason") {
					t.Errorf("reply does not ask for a reason: %q", bodies(res.Effects))
				}
				return
			}
			res := h.say("maria", tc.body)
			if res.State.Gate == nil || !strings.HasPrefix(string(res.State.Gate.Kind), "skip-") {
				t.Fatalf("gate = %+v, want the skip confirmation", res.State.Gate)
			}
		})
	}
}

func TestSkipGateWarnsAndAnswers(t *testing.T) {
	for _, answer := range []string{"A", "B"} {
		t.Run(answer, func(t *testing.T) {
			h := newHarness(t, jiraOff)
			h.runTo("greenfield", "run-tests")
			res := h.say("maria", "/autopilot skip covered by CI")
			s := res.State
			body := gateBody(t, res.Effects, s.Gate)
			wantLines(t, "skip block", body, "DECISION REQUIRED: Skip Run Tests?", "Reason: covered by CI", "Warning: later steps (Security Audit, Deploy) may depend on its output.", " A) Skip Run Tests (with the warning above)", " B) Execute the step", "Recommendation: B")
			res = h.say("bob", answer)
			s = res.State
			if answer == "A" {
				want(t, "moved on", s.Slug, "security-audit")
				want(t, "progress", progressOf(s, "run-tests"), state.Skipped)
				row := s.Completed[len(s.Completed)-1]
				want(t, "outcome", row.Outcome, "SKIPPED — covered by CI")
				want(t, "note", s.Steps[5].Note, "skipped: covered by CI")
				return
			}
			want(t, "stays", s.Slug, "run-tests")
			want(t, "status", s.Status, state.InProgress)
			want(t, "run", s.Run, state.RunInProgress)
			want(t, "gate", s.Gate == nil, true)
			want(t, "completed rows", len(s.Completed), 5)
		})
	}
}

// The skip confirmation must not replace another open question: answering
// "execute" would otherwise start a step past its session boundary.
func TestSkipAndBackWaitForTheOpenQuestion(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.runTo("greenfield", "decompose")
	h.done("tasks")
	gate := h.st.Gate.ID
	for _, body := range []string{"/autopilot skip not needed", "/autopilot back plan"} {
		c := h.comment("maria", access.Write, body)
		res := h.apply(c)
		want(t, body, ledgerOf(res.State, c.ID), "rejected:gate-open")
		want(t, "gate kept", res.State.Gate.ID, gate)
	}
}

// A skip asked while the approval gate is open, then declined, asks for
// the approval again instead of dropping it.
func TestDeclinedSkipOfApprovalStepAsksApprovalAgain(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.start("meta-repo")
	h.done("config written")
	h.say("maria", "/autopilot skip")
	res := h.say("maria", "B")
	wantGate(t, res.State, "approval-config-review")
}

func TestRollbackGate(t *testing.T) {
	for _, answer := range []string{"A", "B"} {
		t.Run(answer, func(t *testing.T) {
			h := newHarness(t, jiraOff)
			h.runTo("greenfield", "implement")
			h.say("maria", "/autopilot progress 3 batch-loop batch 2 of 4")
			res := h.say("maria", "/autopilot back plan")
			s := res.State
			body := gateBody(t, res.Effects, s.Gate)
			wantLines(t, "rollback block", body, "ROLLBACK: Re-run Plan?", "Warning: this returns the run to Plan", " A) Re-run Plan (later steps run again)", " B) Stay on the current step", "Recommendation: B")
			want(t, "still implement", s.Slug, "implement")
			res = h.say("maria", answer)
			s = res.State
			if answer == "B" {
				want(t, "stays", s.Slug, "implement")
				want(t, "status", s.Status, state.InProgress)
				want(t, "sub-step kept", s.SubStep.Name, "batch-loop")
				return
			}
			want(t, "slug", s.Slug, "plan")
			want(t, "step", s.Step, 3)
			want(t, "status", s.Status, state.InProgress)
			want(t, "plan progress", progressOf(s, "plan"), state.InProgress)
			for _, slug := range []string{"decompose", "implement", "run-tests", "deploy"} {
				want(t, slug, progressOf(s, slug), state.NotStarted)
			}
			want(t, "earlier kept", progressOf(s, "research"), state.Completed)
			want(t, "last session", s.LastSession.Reason, "rollback")
		})
	}
}

func TestBackRefusesLaterUnknownOrCurrentSteps(t *testing.T) {
	for _, target := range []string{"deploy", "implement", "nonsense", "9"} {
		t.Run(target, func(t *testing.T) {
			h := newHarness(t, jiraOff)
			h.runTo("greenfield", "implement")
			c := h.comment("maria", access.Write, "/autopilot back "+target)
			res := h.apply(c)
			want(t, "ledger", ledgerOf(res.State, c.ID), "rejected:bad-step")
			want(t, "no gate", res.State.Gate == nil, true)
			if !hasBody(res.Effects, "needs an earlier step of this flow: problem, research, plan") {
				t.Errorf("reply does not list the steps: %q", bodies(res.Effects))
			}
		})
	}
}

func TestBackAcceptsStepNumbersAndWorksAfterDone(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.runTo("greenfield", "deploy")
	h.done("shipped")
	res := h.say("maria", "/autopilot back 8")
	if res.State.Gate == nil || res.State.Gate.Title != "ROLLBACK: Re-run Deploy?" {
		t.Fatalf("gate = %+v", res.State.Gate)
	}
	res = h.say("maria", "A")
	want(t, "slug", res.State.Slug, "deploy")
	want(t, "run", res.State.Run, state.RunInProgress)
}

func TestBackFromAFailedStepDeclinedAsksSkillFailedAgain(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.start("greenfield")
	h.done("problem")
	failThrice(h, "broken")
	h.say("maria", "/autopilot back problem")
	res := h.say("maria", "B")
	wantGate(t, res.State, "skill-failed")
	want(t, "run", res.State.Run, state.RunFailed)
}

func TestStopAndResume(t *testing.T) {
	tests := []struct {
		name   string
		event  func(h *harness) events.Event
		detail string
	}{
		{name: "stop command", event: func(h *harness) events.Event { return h.comment("maria", access.Write, "/autopilot stop") }, detail: "stopped by @\u200bmaria"},
		{name: "label removed", event: func(*harness) events.Event { return events.LabelRemoved{Actor: "maria"} }, detail: "trigger label was removed"},
		{name: "issue closed", event: func(*harness) events.Event { return events.Closed{Actor: "maria"} }, detail: "the issue was closed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, jiraOff)
			h.start("greenfield")
			res := h.apply(tc.event(h))
			s := res.State
			want(t, "run", s.Run, state.RunStopped)
			want(t, "reason", s.Stop.Reason, stops.KillUserAbort)
			want(t, "hint", s.Stop.Hint, stops.RecoveryHint(stops.KillUserAbort))
			if s.Stop.Hint == "" {
				t.Error("empty recovery hint")
			}
			want(t, "resume status", s.Stop.Resume, state.RunInProgress)
			if !hasBody(res.Effects, "Autopilot stopped", "`user-abort`", tc.detail, "Resume with `/autopilot resume`") {
				t.Errorf("stop notice = %q", bodies(res.Effects))
			}
			wantDeep(t, "labels", labels.Labels(s), []string{"autopilot/step:problem", "autopilot/status:stopped", "autopilot/flow:greenfield"})
			// Executor reports are refused while stopped.
			c := h.comment("devin", access.Write, "/autopilot done")
			want(t, "done while stopped", ledgerOf(h.apply(c).State, c.ID), "rejected:no-step-running")
			// Stopping again is refused.
			c = h.comment("maria", access.Write, "/autopilot stop")
			want(t, "stop while stopped", ledgerOf(h.apply(c).State, c.ID), "rejected:not-running")

			res = h.say("maria", "/autopilot resume")
			s = res.State
			want(t, "run after resume", s.Run, state.RunInProgress)
			want(t, "stop cleared", s.Stop == nil, true)
			want(t, "last session", s.LastSession.Reason, "resumed")
			want(t, "continues", h.done("problem").State.Slug, "research")
		})
	}
}

func TestResumeRestoresAnOpenGate(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.runTo("greenfield", "decompose")
	h.done("tasks")
	h.say("maria", "/autopilot stop")
	want(t, "stopped", h.st.Run, state.RunStopped)
	res := h.say("maria", "/autopilot resume")
	want(t, "run", res.State.Run, state.RunAwaitingDecision)
	want(t, "gate kept", res.State.Gate != nil && res.State.Gate.Kind == "session-boundary", true)
	want(t, "answerable", h.say("maria", "A").State.Status, state.InProgress)
}

func TestResumeWhenNotStoppedIsRefused(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.start("greenfield")
	h.refused("maria", "/autopilot resume", "rejected:not-stopped")
}

func TestReAddingTheLabelResumesAStoppedRun(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.start("greenfield")
	h.apply(events.LabelRemoved{Actor: "maria"})
	res := h.apply(events.Start{Issue: testIssue, Actor: "maria"})
	want(t, "run", res.State.Run, state.RunInProgress)
	want(t, "notes", res.State.LastSession.Notes, "@maria re-added the trigger label")
}

func TestClosingAFinishedRunChangesNothing(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.runTo("greenfield", "deploy")
	h.done("shipped")
	res := h.apply(events.Closed{Actor: "maria"})
	want(t, "run", res.State.Run, state.RunDone)
	want(t, "effects", nEffects(res), 0)
}

func TestProgressSetsStructuredSubStep(t *testing.T) {
	tests := []struct {
		name    string
		bodies  []string
		want    state.LedgerOutcome // ledger outcome of the last
		wantSub state.SubStep
	}{
		{name: "phase name detail", bodies: []string{"/autopilot progress 2 batch-loop batch 1 of 3"}, want: state.LedgerApplied, wantSub: state.SubStep{Phase: 2, Name: "batch-loop", Detail: "batch 1 of 3"}},
		{name: "same phase updates detail", bodies: []string{"/autopilot progress 2 batch-loop batch 1 of 3", "/autopilot progress 2 batch-loop batch 2 of 3"}, want: state.LedgerApplied, wantSub: state.SubStep{Phase: 2, Name: "batch-loop", Detail: "batch 2 of 3"}},
		{name: "lower phase refused", bodies: []string{"/autopilot progress 3 review", "/autopilot progress 2 batch-loop"}, want: "rejected:phase-backwards", wantSub: state.SubStep{Phase: 3, Name: "review"}},
		{name: "awaiting-invocation reserved for phase 0", bodies: []string{"/autopilot progress 1 awaiting-invocation"}, want: "rejected:reserved-name", wantSub: state.SubStep{Phase: 0, Name: state.AwaitingInvocation}},
		{name: "phase 0 only for awaiting-invocation", bodies: []string{"/autopilot progress 0 warming-up"}, want: "rejected:reserved-name", wantSub: state.SubStep{Phase: 0, Name: state.AwaitingInvocation}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, jiraOff)
			h.start("greenfield")
			var c events.Comment
			var res Result
			for _, b := range tc.bodies {
				c = h.comment("devin", access.Write, b)
				res = h.apply(c)
			}
			want(t, "ledger", ledgerOf(res.State, c.ID), tc.want)
			want(t, "sub_step", res.State.SubStep, tc.wantSub)
			if tc.want == state.LedgerApplied {
				want(t, "banner note", res.State.Steps[0].Note, tc.wantSub.Detail)
			}
		})
	}
}

func TestProgressNoteIsDroppedOnCompletion(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.start("greenfield")
	h.say("devin", "/autopilot progress 1 drafting first draft")
	s := h.done("problem").State
	want(t, "note cleared", s.Steps[0].Note, "")
	want(t, "next step starts at awaiting-invocation", s.SubStep, state.SubStep{Phase: 0, Name: state.AwaitingInvocation})
}

func TestStatusAndHelpAnswerWithoutChangingTheRun(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.start("greenfield")
	for _, tc := range []struct{ body, golden string }{
		{"/autopilot status", "reply-status"},
		{"/autopilot help", "reply-help"},
	} {
		c := h.comment("bob", access.Write, tc.body)
		res := h.apply(c)
		want(t, tc.body+" ledger", ledgerOf(res.State, c.ID), state.LedgerApplied)
		want(t, tc.body+" changed", res.Changed, false)
		if b := bodies(res.Effects); len(b) != 1 {
			t.Errorf("%s: replies %q, want one", tc.body, b)
		} else {
			golden(t, tc.golden, b[0])
		}
		if !ReadOnly(tc.body) {
			t.Errorf("ReadOnly(%q) = false", tc.body)
		}
	}
	if ReadOnly("/autopilot done") || ReadOnly("A") {
		t.Error("ReadOnly accepts a state-changing reply")
	}
}

func TestAttemptsGetOneHint(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.runTo("greenfield", "decompose")
	h.done("tasks")
	c1 := h.comment("bob", access.Write, "**A**")
	res := h.apply(c1)
	want(t, "ledger", ledgerOf(res.State, c1.ID), "rejected:not-canonical")
	if !hasBody(res.Effects, "did you mean `A`?") {
		t.Errorf("no hint: %q", bodies(res.Effects))
	}
	wantDeep(t, "reactions", reactions(res.Effects, c1.ID), []string{outbox.ReactConfuse})
	c2 := h.comment("bob", access.Write, "Option A")
	res = h.apply(c2)
	wantDeep(t, "second attempt reactions", reactions(res.Effects, c2.ID), []string{outbox.ReactConfuse})
	want(t, "second attempt: no second reply", repliesTo(res.Effects, c2.ID), 0)
	want(t, "gate still open", res.State.Gate != nil, true)
}

func TestUnknownEventIsAnError(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.start("greenfield")
	if _, err := Apply(h.set, h.st, strangeEvent{}, t0); err == nil {
		t.Fatal("unknown event accepted")
	}
}

// strangeEvent is an Event (through the embedded Tick's marker) that
// Apply has no case for.
type strangeEvent struct{ events.Tick }
