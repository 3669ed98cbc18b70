package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/approvals"
	"github.com/autopilot-dev/autopilot/internal/engine/deploygate"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// The deploy question obeys approvals: {deploy: ...} (docs/deploy-gate.md,
// "Approver policies"): votes, quorum, reject_wins, expiry, and a review on
// the environment page counted as its reviewer's vote.

const deployPolicy = "approvals:\n  deploy:\n    min: 2\n"

// With min 2, the first approve is a vote (the quorum line on the
// question, no callback), the second decides, and the callback names both
// (escaped: the callback mentions nobody but the one who answered).
func TestDeployQuestionNeedsTheDeployPolicysQuorum(t *testing.T) {
	h := atDeployStep(t, deployPolicy)
	h.apply(deployRequest(deploySHA))
	g := wantGate(t, h.st, deploygate.Kind("production", deploySHA))

	res := h.say("ada", "A")
	want(t, "callbacks after one approve", len(effectsOf(res.Effects, state.EffDeployAnswer)), 0)
	if !editedTo(res.Effects, "Approvals: 1 of 2 approvals") {
		t.Errorf("no quorum line on the question: %+v", effectsOf(res.Effects, state.EffEdit))
	}
	if h.st.Gate == nil || h.st.Gate.Kind != g.Kind {
		t.Fatalf("one approve closed the question: gate %+v", h.st.Gate)
	}

	res = h.say("bob", "A")
	answers := effectsOf(res.Effects, state.EffDeployAnswer)
	if len(answers) != 1 || answers[0].Answer != state.DeployApproved {
		t.Fatalf("callbacks %+v, want one approved", answers)
	}
	if !strings.Contains(answers[0].Body, "decided by 2 of 2: @\u200bada via comment") || !strings.Contains(answers[0].Body, "@\u200bbob via comment") {
		t.Errorf("callback %q does not name both approvers", answers[0].Body)
	}
}

// A vote short of the quorum approves nothing: another run deploying the
// same commit waits for the same question, and the gate job's rule (the
// state as the Action reads it) says wait, not approved.
func TestADeployVoteShortOfTheQuorumApprovesNothing(t *testing.T) {
	h := atDeployStep(t, deployPolicy)
	h.apply(deployRequest(deploySHA))
	h.say("ada", "A")

	other := deployRequest(deploySHA)
	other.RunID = 901
	res := h.apply(other)
	if answers := effectsOf(res.Effects, state.EffDeployAnswer); len(answers) != 0 {
		t.Fatalf("a second run deploying the commit was answered %+v after one vote of two", answers)
	}
	dec := deploygate.Decide(h.st, h.set.Config.DeployGate, deploygate.Request{Environment: "production", SHA: deploySHA, RunID: 902})
	want(t, "the gate job's verdict", dec.Verdict, deploygate.Wait)
}

// reject_wins: one reject decides the deploy question at once.
func TestDeployQuestionRejectWins(t *testing.T) {
	h := atDeployStep(t, "approvals:\n  deploy:\n    min: 2\n    reject_wins: true\n")
	h.apply(deployRequest(deploySHA))
	res := h.say("bob", "B")
	answers := effectsOf(res.Effects, state.EffDeployAnswer)
	if len(answers) != 1 || answers[0].Answer != state.DeployRejected || !strings.Contains(answers[0].Body, "reject_wins") {
		t.Fatalf("callbacks %+v, want one rejected by reject_wins", answers)
	}
}

// expire_after: the question left unanswered is decided by on_expire —
// reject rejects, default approves (the recommended option), stop stops
// the run and rejects — and the callback says it expired.
func TestAnExpiredDeployQuestionFollowsOnExpire(t *testing.T) {
	for _, tc := range []struct{ onExpire, answer, says string }{
		{"reject", state.DeployRejected, "the deploy question on acme/widgets#12 expired after 2h (on_expire: reject)"},
		{"default", state.DeployApproved, "the deploy question on acme/widgets#12 expired after 2h (on_expire: default)"},
		{"stop", state.DeployRejected, "is stopped (approval-expired)"},
	} {
		h := atDeployStep(t, deployPolicy+"    expire_after: 2h\n    on_expire: "+tc.onExpire+"\n")
		h.apply(deployRequest(deploySHA))
		h.advance(3 * time.Hour)
		res := h.apply(events.Tick{})
		answers := effectsOf(res.Effects, state.EffDeployAnswer)
		if len(answers) != 1 || answers[0].Answer != tc.answer || !strings.Contains(answers[0].Body, tc.says) {
			t.Errorf("on_expire %s: callbacks %+v, want one %s saying %q", tc.onExpire, answers, tc.answer, tc.says)
		}
		if tc.onExpire != "stop" && h.st.Run == state.RunStopped {
			t.Errorf("on_expire %s stopped the run", tc.onExpire)
		}
	}
}

// Under a deploy policy, a reviewer's decision on the environment page is
// that reviewer's vote on the deploy question (where: environment), judged
// like any vote: a listed user counts, someone else is refused; without a
// policy it is recorded only (TestEnvironmentPageApprovalsAreRecordedOnce).
func TestAnEnvironmentReviewIsAVoteUnderTheDeployPolicy(t *testing.T) {
	h := atDeployStep(t, "approvals:\n  deploy:\n    users: [grace, ada]\n    min: 2\n")
	h.apply(deployRequest(deploySHA))
	read := events.DeployApprovalsRead{RunID: 900, Approvals: []events.DeployApproval{
		{Environments: []string{"production"}, State: "approved", User: "grace", Comment: "ship it"},
		{Environments: []string{"production"}, State: "approved", User: "mallory"},
	}}
	res := h.apply(read)
	want(t, "callbacks after grace's review", len(effectsOf(res.Effects, state.EffDeployAnswer)), 0)
	b := h.st.Gate.Ballot
	if b == nil || len(b.Votes) != 1 || b.Votes[0].By != "grace" || b.Votes[0].Where != state.VoteEnvironment {
		t.Fatalf("ballot %+v, want grace's vote via environment", b)
	}
	if !editedTo(res.Effects, "Approvals: 1 of 2 approvals") {
		t.Errorf("no quorum line on the question: %+v", effectsOf(res.Effects, state.EffEdit))
	}
	if !hasBody(res.Effects, "mallory") {
		t.Errorf("mallory was not told why her review is no vote: %q", bodies(res.Effects))
	}
	reviews := 0
	for _, d := range h.st.Decisions {
		if strings.HasPrefix(d.Gate, "env900-") {
			reviews++
		}
	}
	want(t, "environment reviews in Key Decisions", reviews, 2)

	res = h.apply(read) // the sweep reads the same history again
	want(t, "a re-read votes again", res.Changed, false)

	res = h.say("ada", "A")
	answers := effectsOf(res.Effects, state.EffDeployAnswer)
	if len(answers) != 1 || answers[0].Answer != state.DeployApproved || !strings.Contains(answers[0].Body, "@\u200bgrace via environment") {
		t.Fatalf("callbacks %+v, want one approved naming grace's review", answers)
	}
}

// A team policy needs the reviewer's membership: the read asks for it
// (QApprovers) and, given again with the facts, counts the vote.
func TestAnEnvironmentReviewWaitsForTheApproverFacts(t *testing.T) {
	h := atDeployStep(t, "approvals:\n  deploy:\n    teams: [\"@acme/sre\"]\n    min: 2\n")
	h.apply(deployRequest(deploySHA))
	read := events.DeployApprovalsRead{RunID: 900, Approvals: []events.DeployApproval{
		{Environments: []string{"production"}, State: "approved", User: "grace"},
	}}
	res := h.apply(read)
	qs := queriesOf(res.Queries, events.QApprovers)
	if len(qs) != 1 || qs[0].Approvers == nil || !containsLogin(qs[0].Approvers.Logins, "grace") {
		t.Fatalf("queries %+v, want the approvers asked about grace", res.Queries)
	}
	res = h.apply(qs[0].Approvers.Answer(approvals.Facts{Teams: map[string]map[string]approvals.Membership{
		"grace": {"@acme/sre": approvals.Active},
	}}))
	b := h.st.Gate.Ballot
	if b == nil || len(b.Votes) != 1 || b.Votes[0].By != "grace" {
		t.Fatalf("ballot %+v, want grace's vote", b)
	}
}

func containsLogin(ls []string, l string) bool {
	for _, x := range ls {
		if strings.EqualFold(x, l) {
			return true
		}
	}
	return false
}

// editedTo reports whether an edit effect's body contains s.
func editedTo(effs []state.Effect, s string) bool {
	for _, e := range effectsOf(effs, state.EffEdit) {
		if strings.Contains(e.Body, s) {
			return true
		}
	}
	return false
}
