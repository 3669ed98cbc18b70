package engine

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/deploygate"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/state"
)

const (
	deploySHA = "1111111111111111111111111111111111111111"
	laterSHA  = "2222222222222222222222222222222222222222"
)

// atDeployStep runs greenfield to its deploy step with the merge gate of
// PR #5 passed on deploySHA.
func atDeployStep(t *testing.T, yaml string) *harness {
	t.Helper()
	h := newHarness(t, yaml)
	h.runTo("greenfield", "deploy")
	h.st.LinkedPRs = []int{5}
	h.st.PRChecks = []state.PRCheck{{PR: 5, Head: deploySHA, GateHead: deploySHA}}
	return h
}

func deployRequest(sha string) events.DeploymentRequested {
	return events.DeploymentRequested{Environment: "production", SHA: sha, Ref: "refs/heads/main", RunID: 900,
		PRs: []events.DeployPR{{Number: 5, LinkedIssues: []int{testIssue}}}, Linked: []int{testIssue}, Sender: "ci"}
}

// A request for the reviewed commit at the deploy step opens the deploy
// question and posts a status report on the run; the answer "approve" is
// recorded in Key Decisions with who and where and makes exactly one
// callback, approved, kept in the outbox until GitHub took it.
func TestDeployRequestAsksThenTheAnswerApproves(t *testing.T) {
	h := atDeployStep(t, "")
	res := h.apply(deployRequest(deploySHA))
	g := wantGate(t, h.st, deploygate.Kind("production", deploySHA))
	want(t, "question", g.Title, "Deploy 1111111 to production?")
	reports := effectsOf(res.Effects, state.EffDeployReport)
	want(t, "status reports", len(reports), 1)
	want(t, "callbacks before the answer", len(effectsOf(res.Effects, state.EffDeployAnswer)), 0)

	again := h.apply(deployRequest(deploySHA)) // a redelivery
	want(t, "redelivery effects", len(again.Effects), 0)

	res = h.say("ada", "A")
	answers := effectsOf(res.Effects, state.EffDeployAnswer)
	want(t, "callbacks", len(answers), 1)
	want(t, "answer", answers[0].Answer, state.DeployApproved)
	want(t, "run", answers[0].RunID, int64(900))
	if !strings.Contains(answers[0].Body, "@ada answered approve on acme/widgets#12") {
		t.Errorf("callback comment %q does not say who answered where", answers[0].Body)
	}
	last := h.st.Decisions[len(h.st.Decisions)-1]
	want(t, "decision by", last.By, "ada")
	want(t, "decision option", last.Option, "A")
	if last.Link == "" {
		t.Error("the decision records no link")
	}

	h.apply(events.DeployAnswered{Marker: answers[0].Marker, Done: true})
	want(t, "sent", h.st.Deploy(900, "production").Sent, true)
	for _, o := range h.st.Outbox {
		if o.Kind == state.EffDeployAnswer {
			t.Errorf("the outbox still holds the sent answer %+v", o)
		}
	}
	res = h.apply(deployRequest(deploySHA))
	want(t, "effects of a request answered and sent", len(res.Effects), 0)
}

// A push after the gates passed is not reviewed: rejected at once, with a
// note on the issue that says why.
func TestDeployOfAnUnreviewedCommitIsRejected(t *testing.T) {
	h := atDeployStep(t, "")
	res := h.apply(deployRequest(laterSHA))
	answers := effectsOf(res.Effects, state.EffDeployAnswer)
	want(t, "callbacks", len(answers), 1)
	want(t, "answer", answers[0].Answer, state.DeployRejected)
	if !hasBody(res.Effects, "a later push is not reviewed") {
		t.Errorf("no note on the issue says why: %q", bodies(res.Effects))
	}
	if h.st.Gate != nil {
		t.Errorf("a question was opened: %+v", h.st.Gate)
	}
}

// A stopped flow is rejected with the stop's reason.
func TestDeployOfAStoppedFlowIsRejected(t *testing.T) {
	h := atDeployStep(t, "")
	h.say("maria", "/autopilot stop")
	res := h.apply(deployRequest(deploySHA))
	answers := effectsOf(res.Effects, state.EffDeployAnswer)
	if len(answers) != 1 || answers[0].Answer != state.DeployRejected || !strings.Contains(answers[0].Body, "is stopped") {
		t.Fatalf("answers %+v, want one rejected: stopped", answers)
	}
}

// Unmatched requests (no issue) follow deploy_gate.unmatched; in App mode
// ignore answers approved (autopilot is the rule: no answer would block
// the job for 30 days).
func TestUnmatchedDeployFollowsThePolicy(t *testing.T) {
	for _, tc := range []struct{ yaml, answer, says string }{
		{"", state.DeployApproved, "autopilot does not gate it (deploy_gate.unmatched: ignore)"},
		{"deploy_gate:\n  unmatched: reject\n", state.DeployRejected, "deploy_gate.unmatched is reject"},
	} {
		h := newHarness(t, tc.yaml)
		res := h.apply(deployRequest(deploySHA))
		answers := effectsOf(res.Effects, state.EffDeployAnswer)
		if len(answers) != 1 || answers[0].Answer != tc.answer || !strings.Contains(answers[0].Body, tc.says) {
			t.Errorf("%q: answers %+v, want one %s saying %q", tc.yaml, answers, tc.answer, tc.says)
		}
	}
}

// auto_approve approves without a question when the deploy step was
// reached by an answer.
func TestDeployAutoApprove(t *testing.T) {
	h := atDeployStep(t, "deploy_gate:\n  auto_approve: true\n")
	last := h.st.Completed[len(h.st.Completed)-1]
	h.st.Decisions = append(h.st.Decisions, state.Decision{Gate: "g1-session-boundary", Option: "A", By: "maria", At: last.At})
	res := h.apply(deployRequest(deploySHA))
	answers := effectsOf(res.Effects, state.EffDeployAnswer)
	if len(answers) != 1 || answers[0].Answer != state.DeployApproved || !strings.Contains(answers[0].Body, "auto_approve") {
		t.Fatalf("answers %+v, want one approved by auto_approve", answers)
	}
	if h.st.Gate != nil {
		t.Errorf("a question was opened: %+v", h.st.Gate)
	}
}

// A flow stopped while its deploy question is open rejects the waiting
// deploy at once (GitHub would otherwise keep the job waiting for 30
// days), saying why.
func TestOpenDeployQuestionOfAStoppedFlowIsRejected(t *testing.T) {
	h := atDeployStep(t, "")
	h.apply(deployRequest(deploySHA))
	res := h.say("maria", "/autopilot stop")
	answers := effectsOf(res.Effects, state.EffDeployAnswer)
	if len(answers) != 1 || answers[0].Answer != state.DeployRejected || !strings.Contains(answers[0].Body, "is stopped") {
		t.Fatalf("answers %+v, want one rejected: stopped", answers)
	}
}

// Reviewers' decisions on the environment page are read when a request
// arrives (and on the sweep while the flow is at its deploy step) and
// recorded as decisions of the deploy step, once: a re-read of the same
// history adds nothing, a later decision is added.
func TestEnvironmentPageApprovalsAreRecordedOnce(t *testing.T) {
	h := atDeployStep(t, "")
	res := h.apply(deployRequest(deploySHA))
	qs := queriesOf(res.Queries, events.QDeployApprovals)
	if len(qs) != 1 || qs[0].RunID != 900 {
		t.Fatalf("queries %+v, want one approvals read of run 900", res.Queries)
	}
	before := len(h.st.Decisions)
	read := events.DeployApprovalsRead{RunID: 900, Approvals: []events.DeployApproval{
		{Environments: []string{"production"}, State: "approved", User: "grace", Comment: "ship it"},
	}}
	h.apply(read)
	want(t, "decisions", len(h.st.Decisions), before+1)
	d := h.st.Decisions[len(h.st.Decisions)-1]
	want(t, "by", d.By, "grace")
	want(t, "option", d.Option, deploygate.LetterApprove)
	want(t, "reason", d.Reason, "ship it")
	if !strings.Contains(d.Question, "environment page") || !strings.Contains(d.Link, "/actions/runs/900") {
		t.Errorf("decision %+v does not say where", d)
	}
	if g := h.st.Gate; g == nil || g.Kind != deploygate.Kind("production", deploySHA) {
		t.Errorf("a reviewer's approval answered the deploy question: gate %+v", g)
	}

	res = h.apply(read)
	want(t, "decisions after a re-read", len(h.st.Decisions), before+1)
	want(t, "a re-read changes nothing", res.Changed, false)

	read.Approvals = append(read.Approvals, events.DeployApproval{Environments: []string{"production"}, State: "rejected", User: "bob"})
	h.apply(read)
	want(t, "decisions after a new one", len(h.st.Decisions), before+2)
	want(t, "rejected", h.st.Decisions[len(h.st.Decisions)-1].Option, deploygate.LetterReject)

	res = h.apply(events.Tick{})
	if len(queriesOf(res.Queries, events.QDeployApprovals)) != 1 {
		t.Errorf("the sweep asks %+v, want the approvals of run 900 again", res.Queries)
	}
}
