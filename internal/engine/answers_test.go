package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// atBoundary runs greenfield to the session-boundary question after decompose.
func atBoundary(t *testing.T, yaml string) *harness {
	t.Helper()
	h := newHarness(t, jiraOff+yaml)
	h.runTo("greenfield", "decompose")
	h.done("tasks")
	if h.st.Gate == nil {
		t.Fatal("no boundary gate")
	}
	return h
}

func TestLetterOutsideTheOptionsIsNotApplied(t *testing.T) {
	h := atBoundary(t, "")
	gate := h.st.Gate.ID
	c := h.comment("maria", access.Write, "C")
	res := h.apply(c)
	want(t, "ledger", ledgerOf(res.State, c.ID), "rejected:invalid-option")
	wantDeep(t, "reactions", reactions(res.Effects, c.ID), []string{outbox.ReactConfuse})
	want(t, "gate kept", res.State.Gate.ID, gate)
	want(t, "no decision", len(res.State.Decisions), 0)
	if !hasBody(res.Effects, "`C` is not one of the options; did you mean one of A, B?") {
		t.Errorf("reply = %q", bodies(res.Effects))
	}
	// The same user's next invalid letter: 😕 but no second reply.
	c2 := h.comment("maria", access.Write, "D")
	res = h.apply(c2)
	wantDeep(t, "reactions", reactions(res.Effects, c2.ID), []string{outbox.ReactConfuse})
	want(t, "replies", repliesTo(res.Effects, c2.ID), 0)
}

func TestAnswerWrittenBeforeTheGateOpenedIsStale(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.runTo("greenfield", "decompose")
	early := h.comment("maria", access.Write, "A")
	early.At = h.now().Add(-time.Second)
	h.done("tasks")
	res := h.apply(early)
	want(t, "ledger", ledgerOf(res.State, early.ID), "rejected:stale")
	wantDeep(t, "reactions", reactions(res.Effects, early.ID), []string{outbox.ReactConfuse})
	if !hasBody(res.Effects, "written before the current question was asked") {
		t.Errorf("reply = %q", bodies(res.Effects))
	}
	want(t, "gate kept", res.State.Gate != nil, true)
}

func TestGatePostedAtEarlierThanOpenedAtCounts(t *testing.T) {
	h := atBoundary(t, "")
	// GitHub's clock says the gate comment appeared a minute before the
	// engine's clock; an answer between the two is not stale.
	c := h.comment("maria", access.Write, "A")
	c.At = h.st.Gate.OpenedAt.Add(-30 * time.Second)
	c.GatePostedAt = h.st.Gate.OpenedAt.Add(-time.Minute)
	res := h.apply(c)
	want(t, "ledger", ledgerOf(res.State, c.ID), state.LedgerApplied)
	want(t, "decision", res.Decision, "A")
}

func TestFirstValidAnswerWinsSecondGetsOneAlreadyDecided(t *testing.T) {
	h := atBoundary(t, "")
	c1 := h.comment("maria", access.Write, "A")
	c2 := h.comment("bob", access.Write, "B because it is faster")
	c3 := h.comment("bob", access.Write, "B")
	res := h.apply(c1)
	want(t, "winner", res.Decision, "A")
	wantDeep(t, "winner reaction", reactions(res.Effects, c1.ID), []string{outbox.ReactUp})
	res = h.apply(c2)
	want(t, "loser ledger", ledgerOf(res.State, c2.ID), "rejected:already-decided")
	want(t, "no decision", res.Decision, "")
	wantDeep(t, "loser reaction", reactions(res.Effects, c2.ID), []string{outbox.ReactConfuse})
	want(t, "loser reply", repliesTo(res.Effects, c2.ID), 1)
	if !hasBody(res.Effects, "already decided by @\u200bmaria: A") {
		t.Errorf("reply = %q", bodies(res.Effects))
	}
	res = h.apply(c3)
	want(t, "second loser comment: no reply", repliesTo(res.Effects, c3.ID), 0)
	want(t, "one decision", len(res.State.Decisions), 1)
	want(t, "run", res.State.Run, state.RunInProgress)
}

func TestNonCollaboratorsAreRefusedWithOneReplyPerGate(t *testing.T) {
	h := atBoundary(t, "")
	c1 := h.comment("drive-by", access.Read, "A")
	res := h.apply(c1)
	want(t, "ledger", ledgerOf(res.State, c1.ID), "rejected:unauthorized")
	wantDeep(t, "reactions", reactions(res.Effects, c1.ID), []string{outbox.ReactConfuse})
	want(t, "reply", repliesTo(res.Effects, c1.ID), 1)
	if !hasBody(res.Effects, "only people with at least **write** permission") {
		t.Errorf("reply = %q", bodies(res.Effects))
	}
	want(t, "gate open", res.State.Gate != nil, true)
	c2 := h.comment("Drive-By", access.Read, "A please, I need this feature")
	res = h.apply(c2)
	wantDeep(t, "second: 😕 only", reactions(res.Effects, c2.ID), []string{outbox.ReactConfuse})
	want(t, "second: no reply", repliesTo(res.Effects, c2.ID), 0)
	// Commands are refused the same way.
	c3 := h.comment("triager", access.Triage, "/autopilot stop")
	res = h.apply(c3)
	want(t, "triage below write", ledgerOf(res.State, c3.ID), "rejected:unauthorized")
	want(t, "run", res.State.Run, state.RunAwaitingDecision)
}

func TestPermissionLookupFailureDefersTheComment(t *testing.T) {
	h := atBoundary(t, "")
	c := h.comment("maria", access.None, "A")
	c.PermErr = true
	res := h.apply(c)
	want(t, "not ledgered", ledgerOf(res.State, c.ID), "")
	want(t, "no effects", nEffects(res), 0)
	want(t, "gate open", res.State.Gate != nil, true)
	// Retried later with the permission known, it applies.
	c.PermErr, c.Perm = false, access.Admin
	res = h.apply(c)
	want(t, "applied later", ledgerOf(res.State, c.ID), state.LedgerApplied)
}

func TestBotsNeverCountAgentsOnlyReport(t *testing.T) {
	h := atBoundary(t, "agents: [\"@claude\"]\n")
	bot := h.comment("dependabot[bot]", "", "A")
	bot.Bot = true
	res := h.apply(bot)
	want(t, "bot", ledgerOf(res.State, bot.ID), state.LedgerNotCommand)
	want(t, "gate open", res.State.Gate != nil, true)

	agent := h.comment("claude", "", "A")
	agent.Bot, agent.Agent = true, true
	res = h.apply(agent)
	want(t, "agent answering a gate", ledgerOf(res.State, agent.ID), state.LedgerNotCommand)
	want(t, "gate still open", res.State.Gate != nil, true)

	h.say("maria", "A")
	for _, tc := range []struct {
		body string
		want state.LedgerOutcome
	}{
		{"/autopilot stop", state.LedgerNotCommand},
		{"/autopilot progress 1 batch-loop batch 1 of 2", state.LedgerApplied},
		{"/autopilot done implemented", state.LedgerApplied},
	} {
		c := h.comment("claude", "", tc.body)
		c.Bot, c.Agent = true, true
		res = h.apply(c)
		want(t, tc.body, ledgerOf(res.State, c.ID), tc.want)
	}
	want(t, "agent's done moved on", res.State.Slug, "run-tests")
}

func TestQuotedAndFencedLettersAreNotCommands(t *testing.T) {
	h := atBoundary(t, "")
	for _, body := range []string{"> A\n\nI agree with the above", "```\nA\n```", "Thanks, looks good", ""} {
		c := h.comment("maria", access.Write, body)
		res := h.apply(c)
		want(t, body, ledgerOf(res.State, c.ID), state.LedgerNotCommand)
		want(t, body+": no effects", nEffects(res), 0)
		want(t, body+": gate open", res.State.Gate != nil, true)
	}
}

func TestChoiceWithoutOpenGate(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.start("greenfield")
	// Written after the last state write: may answer a gate not visible
	// yet, so it is deferred (not ledgered).
	late := h.comment("maria", access.Write, "A")
	late.At = h.now().Add(30 * time.Second)
	res := h.apply(late)
	want(t, "deferred", ledgerOf(res.State, late.ID), "")
	want(t, "no effects", nEffects(res), 0)
	// Written before the last write: no gate to answer.
	h.say("devin", "/autopilot progress 1 drafting")
	old := h.comment("maria", access.Write, "B")
	old.At = h.st.UpdatedAt.Add(-time.Second)
	res = h.apply(old)
	want(t, "rejected", ledgerOf(res.State, old.ID), "rejected:no-open-gate")
	wantDeep(t, "reactions", reactions(res.Effects, old.ID), []string{outbox.ReactConfuse})
}

func TestCommentsOlderThanTheRunAreHistory(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.start("greenfield")
	c := h.comment("maria", access.Write, "/autopilot stop")
	c.At = h.st.StartedAt.Add(-time.Hour)
	res := h.apply(c)
	want(t, "ledger", ledgerOf(res.State, c.ID), state.LedgerNotCommand)
	want(t, "run", res.State.Run, state.RunInProgress)
}

func TestEveryCommentIsLedgeredExactlyOnce(t *testing.T) {
	for _, body := range []string{"A", "C", "/autopilot stop", "/autopilot status", "**A**", "hello", "/autopilot back plan"} {
		t.Run(body, func(t *testing.T) {
			h := atBoundary(t, "")
			c := h.comment("maria", access.Write, body)
			first := h.apply(c)
			if !outbox.Handled(first.State, c.ID) {
				t.Fatalf("not ledgered")
			}
			n := 0
			for _, e := range first.State.Ledger {
				if e.CommentID == c.ID {
					n++
				}
			}
			want(t, "ledger entries", n, 1)
			before := mustJSON(t, first.State)
			again := h.apply(c)
			want(t, "second: no effects", nEffects(again), 0)
			want(t, "second: unchanged", again.Changed, false)
			want(t, "second: same state", string(mustJSON(t, again.State)), string(before))
		})
	}
}

func TestDecisionsAreRecordedInFull(t *testing.T) {
	h := atBoundary(t, "")
	g := *h.st.Gate
	c := h.comment("maria", access.Write, "A: fresh context please")
	res := h.apply(c)
	if len(res.State.Decisions) != 1 {
		t.Fatalf("decisions = %+v", res.State.Decisions)
	}
	wantDeep(t, "decision", res.State.Decisions[0], state.Decision{
		Gate: g.ID, Question: "DECISION REQUIRED: Decompose complete — start implementation?", Option: "A",
		OptionText: "Start implementation with a fresh executor session (recommended)", By: "maria", At: c.At,
		Link: c.URL, CommentID: c.ID, Reason: "fresh context please", GateOpenedAt: g.OpenedAt,
	})
	want(t, "decision result", res.Decision, "A")
}

func TestChooseCommandAnswersLikeALetter(t *testing.T) {
	h := atBoundary(t, "")
	res := h.say("maria", "/autopilot choose b")
	want(t, "decision", res.Decision, "B")
	want(t, "option", res.State.Decisions[0].Option, "B")
}

func TestAnswersWhileStoppedAreNotApplied(t *testing.T) {
	h := atBoundary(t, "")
	h.say("maria", "/autopilot stop")
	c := h.comment("maria", access.Write, "A")
	c.At = h.now().Add(time.Hour) // even a late one is not deferred
	res := h.apply(c)
	want(t, "ledger", ledgerOf(res.State, c.ID), "rejected:no-open-gate")
	want(t, "still stopped", res.State.Run, state.RunStopped)
}

func TestUnknownCommandAttemptIsAnswered(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.start("greenfield")
	res := h.refused("maria", "/autopilot frobnicate", "rejected:not-canonical")
	if !hasBody(res.Effects, "unknown /autopilot command") {
		t.Errorf("reply = %q", bodies(res.Effects))
	}
}

func TestBadTaskBlockIsRefused(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.runTo("greenfield", "decompose")
	c := h.comment("maria", access.Write, "/autopilot done tasks")
	c.DeclaredErr = "line 3: points: not a number"
	res := h.apply(c)
	want(t, "ledger", ledgerOf(res.State, c.ID), "rejected:bad-task-block")
	want(t, "still decompose", res.State.Slug, "decompose")
	if !hasBody(res.Effects, "could not be read", "line 3: points: not a number") {
		t.Errorf("reply = %q", bodies(res.Effects))
	}
}

// Commands that touch the flow must not crash while the flow is still
// being chosen (flow-select gate): the state has no flow yet.
func TestFlowSelectGateSurvivesEveryEvent(t *testing.T) {
	h := newHarness(t, reviewCfg)
	h.apply(events.Start{Issue: testIssue, Candidates: []string{"greenfield", "review-loop"}, Actor: "maria"})
	for _, ev := range []events.Event{
		events.Tick{}, events.PRLinked{PR: 40},
		h.comment("alice", access.Write, "/autopilot approve architect"),
		h.comment("alice", access.Write, "/autopilot reject architect bad"),
		h.comment("maria", access.Write, "/autopilot back plan"),
		h.comment("maria", access.Write, "/autopilot skip because"),
		h.comment("maria", access.Write, "/autopilot done"),
		h.comment("maria", access.Write, "/autopilot status"),
		approval("bob", "devin"), events.Checks{PR: 40, State: "success"}, events.RunCompleted{RunID: 1}, events.Dispatched{Session: "x"},
		events.TrackerAuth{OK: true}, events.TrackerSynced{}, events.Tick{BudgetLow: true},
	} {
		if _, err := h.try(ev); err != nil {
			t.Fatalf("%T: %v", ev, err)
		}
	}
	want(t, "gate still open", h.st.Gate != nil && h.st.Gate.Kind == "flow-select", true)
	want(t, "budget tick stopped it at the question", h.st.Stop != nil && h.st.Stop.Reason == stops.KillResource, true)
	want(t, "resume", h.say("maria", "/autopilot resume").State.Run, state.RunAwaitingDecision)
	if !strings.Contains(prose.Banner(h.set.Config.All, h.st), "no flow selected") {
		t.Errorf("banner = %q", prose.Banner(h.set.Config.All, h.st))
	}
	want(t, "answerable", h.say("maria", "B").State.Flow, "review-loop")
}

// The caller parses each comment once and passes the parsed form: the
// engine classifies by it, not by parsing the body again.
func TestCommentUsesTheReplyParsedByTheCaller(t *testing.T) {
	h := newHarness(t, "")
	h.start("greenfield")
	c := h.comment("maria", access.Write, "thanks, looks good")
	done := Parse("/autopilot done problem written")
	c.Reply = &done
	res := h.apply(c)
	want(t, "classified by the given parse", ledgerOf(res.State, c.ID), state.LedgerApplied)
	want(t, "step done", res.State.Slug, "research")
}
