package engine

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// onlyCheck returns the single desired check, failing otherwise.
func onlyCheck(t *testing.T, h *harness, o checkview.CheckOptions) checkview.CheckRun {
	t.Helper()
	cs := checkview.DesiredChecks(h.set.Config, h.set.AnswerPermission, h.st, o)
	if len(cs) != 1 {
		t.Fatalf("%d desired checks, want 1: %+v", len(cs), cs)
	}
	return cs[0]
}

// TestPRCheckAcrossTheReviewLoop: in_progress while the code review and QA
// wait, success once both are clean on the head, and a push afterwards
// leaves the new head red, never green on code nobody reviewed.
func TestPRCheckAcrossTheReviewLoop(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "execute")
	h.done("implemented in #40")
	h.apply(events.PRLinked{PR: 40, URL: prURL})
	if cs := checkview.DesiredChecks(h.set.Config, h.set.AnswerPermission, h.st, checkview.CheckOptions{}); len(cs) != 0 {
		t.Fatalf("a check before the PR was read: %+v", cs)
	}
	h.apply(events.PullSeen{Pull: linkedPR("devin")})
	c := onlyCheck(t, h, checkview.CheckOptions{})
	want(t, "status", c.Status, checkview.CheckInProgress)
	want(t, "head", c.HeadSHA, testHead)
	want(t, "name", c.Name, "autopilot")
	want(t, "external id", c.ExternalID, "autopilot#12")
	if !strings.Contains(c.Waiting, "approving review") || !strings.Contains(c.Banner, "Code Review") {
		t.Errorf("waiting %q, banner %q", c.Waiting, c.Banner)
	}
	inReview := c.Hash()

	h.apply(approval("bob", "devin"))
	c = onlyCheck(t, h, checkview.CheckOptions{})
	want(t, "qa status", c.Status, checkview.CheckInProgress)
	want(t, "qa waits", c.Waiting, "green checks on the PR's head")
	if c.Hash() == inReview {
		t.Error("the check's hash did not change when the step did")
	}
	h.apply(events.Checks{PR: 40, SHA: testHead, State: "success", URL: prURL + "/checks", Pull: linkedPR("devin")})
	c = onlyCheck(t, h, checkview.CheckOptions{})
	want(t, "conclusion", c.Status+"/"+c.Conclusion, "completed/success")

	pushed := linkedPR("devin")
	pushed.HeadSHA = "fedcba9876543"
	res := h.apply(events.PullSeen{Pull: pushed})
	want(t, "push recorded", res.Changed, true)
	c = onlyCheck(t, h, checkview.CheckOptions{})
	want(t, "new head", c.HeadSHA, pushed.HeadSHA)
	want(t, "new head conclusion", c.Conclusion, checkview.CheckFailure)
	if h.st.PRChecks[0].Shown != "" {
		t.Error("a new head kept the old head's shown hash")
	}
}

// TestPRCheckNeedsATrustedPR: a PR whose author lacks answer_permission
// and that nobody approved gets no check at all.
func TestPRCheckNeedsATrustedPR(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "code-review")
	p := linkedPR("randy")
	p.AuthorPerm = access.Read
	h.apply(events.PullSeen{Pull: p})
	if cs := checkview.DesiredChecks(h.set.Config, h.set.AnswerPermission, h.st, checkview.CheckOptions{}); len(cs) != 0 {
		t.Fatalf("untrusted PR got a check: %+v", cs)
	}
	p.Approvals = []evidence.PullApproval{{ID: 9, Reviewer: "bob", Perm: access.Write, CommitSHA: testHead}}
	h.apply(events.PullSeen{Pull: p})
	want(t, "after approval", len(checkview.DesiredChecks(h.set.Config, h.set.AnswerPermission, h.st, checkview.CheckOptions{})), 1)
}

// gateOpen runs greenfield to a Choose block and records PR 40 as trusted.
func gateOpen(t *testing.T, h *harness) {
	t.Helper()
	h.runTo("greenfield", "problem")
	h.apply(events.PRLinked{PR: 40, URL: prURL})
	h.apply(events.PullSeen{Pull: linkedPR("devin")})
	h.apply(events.Tick{BudgetLow: false})
	// A failing step opens a SKILL FAILED gate after its retries.
	for i := 0; i < 5 && h.st.Gate == nil; i++ {
		h.say("maria", "/autopilot fail tool crashed")
	}
	if h.st.Gate == nil {
		t.Fatalf("no gate opened (run %s, step %s)", h.st.Run, h.st.Slug)
	}
}

// TestPRCheckOffersTheOpenGate: while a Choose block is open the check is
// completed/action_required, and in App mode offers at most three options
// whose identifiers name the gate and fit GitHub's 20 characters.
func TestPRCheckOffersTheOpenGate(t *testing.T) {
	h := newHarness(t, "jira: {enabled: false}\n")
	gateOpen(t, h)
	g := h.st.Gate
	c := onlyCheck(t, h, checkview.CheckOptions{Buttons: true})
	want(t, "conclusion", c.Status+"/"+c.Conclusion, "completed/action_required")
	want(t, "gate", c.Gate, g.ID)
	if n := min(len(g.Options), checkview.MaxCheckActions); len(c.Actions) != n {
		t.Fatalf("%d actions for %d options", len(c.Actions), len(g.Options))
	}
	for i, a := range c.Actions {
		if len(a.Identifier) > 20 || len([]rune(a.Label)) > 20 || len([]rune(a.Description)) > 40 {
			t.Errorf("action %+v exceeds GitHub's limits", a)
		}
		want(t, "identifier", a.Identifier, checkview.GateToken(g.ID)+"."+g.Options[i].Letter)
	}
	if c := onlyCheck(t, h, checkview.CheckOptions{}); len(c.Actions) != 0 {
		t.Errorf("Action mode offered buttons: %+v", c.Actions)
	}
	if !strings.Contains(c.Summary(checkview.CheckLinks{Choose: "https://x/choose", State: "https://x/state"}), "https://x/choose") {
		t.Error("summary does not link the Choose comment")
	}
}

// TestClickAnswersOnlyTheOpenGate: a click by a writer answers the gate it
// was offered for, recorded with who clicked; the same click again, a
// click for an older gate and a failed permission lookup decide nothing; a
// reader's clicks are refused with one explanation.
func TestClickAnswersOnlyTheOpenGate(t *testing.T) {
	h := newHarness(t, "jira: {enabled: false}\n")
	gateOpen(t, h)
	g := h.st.Gate
	letter := g.Options[0].Letter
	id := checkview.GateToken(g.ID) + "." + letter

	res := h.apply(events.Click{Identifier: id, Sender: "rita", Perm: access.Read, URL: "https://x/runs/1"})
	want(t, "reader decided", len(res.State.Decisions), 0)
	replies := 0
	for _, e := range res.Effects {
		if e.Kind == state.EffComment && strings.Contains(e.Body, "@\u200brita") {
			replies++
		}
	}
	want(t, "reader told", replies, 1)
	res = h.apply(events.Click{Identifier: id, Sender: "rita", Perm: access.Read})
	want(t, "reader told once", nEffects(res), 0)
	res = h.apply(events.Click{Identifier: id, Sender: "maria", PermErr: true})
	want(t, "lookup failed", res.Changed, false)
	res = h.apply(events.Click{Identifier: "g1." + letter, Sender: "maria", Perm: access.Admin})
	want(t, "stale gate token", res.Changed, false)

	res = h.apply(events.Click{Identifier: id, Sender: "maria", Perm: access.Admin, URL: "https://x/runs/1"})
	ds := res.State.Decisions
	if len(ds) != 1 || ds[0].By != "maria" || ds[0].Gate != g.ID || ds[0].Option != letter || ds[0].Link != "https://x/runs/1" {
		t.Fatalf("decisions = %+v", ds)
	}
	res = h.apply(events.Click{Identifier: id, Sender: "maria", Perm: access.Admin})
	want(t, "second click", res.Changed, false)
	want(t, "decisions after second click", len(res.State.Decisions), 1)
}

// TestMergeGateStep: the default merge gate follows the implementation
// step; merge_gate overrides it where the flow has that step; completing
// it turns the check green.
func TestMergeGateStep(t *testing.T) {
	want(t, "greenfield default", checkview.MergeGateStep(settingsFor(t, "").Config, "greenfield"), "run-tests")
	want(t, "meta-repo default", checkview.MergeGateStep(settingsFor(t, "").Config, "meta-repo"), "deploy")
	set := settingsFor(t, "merge_gate: security-audit\n")
	want(t, "configured", checkview.MergeGateStep(set.Config, "greenfield"), "security-audit")
	want(t, "flow without it", checkview.MergeGateStep(set.Config, "meta-repo"), "deploy")

	h := newHarness(t, "jira: {enabled: false}\n")
	h.runTo("greenfield", "run-tests")
	h.apply(events.PRLinked{PR: 40, URL: prURL})
	h.apply(events.PullSeen{Pull: linkedPR("devin")})
	want(t, "before", onlyCheck(t, h, checkview.CheckOptions{}).Status, checkview.CheckInProgress)
	h.done("tests pass")
	want(t, "after", onlyCheck(t, h, checkview.CheckOptions{}).Conclusion, checkview.CheckSuccess)
}

// TestPRCheckConclusions: a stopped run fails the check; a run finished
// without passing the gate is neutral; CheckShown records the hash once.
func TestPRCheckConclusions(t *testing.T) {
	h := newHarness(t, "jira: {enabled: false}\n")
	h.runTo("greenfield", "research")
	h.apply(events.PRLinked{PR: 40, URL: prURL})
	h.apply(events.PullSeen{Pull: linkedPR("devin")})
	h.apply(events.LabelRemoved{Actor: "maria"})
	want(t, "stopped", onlyCheck(t, h, checkview.CheckOptions{}).Conclusion, checkview.CheckFailure)
	c := onlyCheck(t, h, checkview.CheckOptions{})
	want(t, "recorded", h.apply(events.CheckShown{PR: 40, Head: testHead, Hash: c.Hash()}).Changed, true)
	want(t, "again", h.apply(events.CheckShown{PR: 40, Head: testHead, Hash: c.Hash()}).Changed, false)

	s := h.st
	done := *s
	done.Run, done.Stop = state.RunDone, nil
	cs := checkview.DesiredChecks(h.set.Config, h.set.AnswerPermission, &done, checkview.CheckOptions{})
	want(t, "done without gate", cs[0].Conclusion, checkview.CheckNeutral)
}

// TestPRCheckGateHeadEveryFlow: in a flow without a review loop, a push
// after the merge gate step passed leaves the new head red, never green on
// code the gate never saw; a force-push back to the gated head is green
// again, and keep_stale_approvals keeps any head green.
func TestPRCheckGateHeadEveryFlow(t *testing.T) {
	h := newHarness(t, "jira: {enabled: false}\n")
	h.runTo("greenfield", "run-tests")
	h.apply(events.PRLinked{PR: 40, URL: prURL})
	h.apply(events.PullSeen{Pull: linkedPR("devin")})
	h.done("tests pass")
	want(t, "gate head", h.st.PRChecks[0].GateHead, testHead)
	want(t, "on the gated head", onlyCheck(t, h, checkview.CheckOptions{}).Conclusion, checkview.CheckSuccess)

	pushed := linkedPR("devin")
	pushed.HeadSHA = "fedcba9876543"
	h.apply(events.PullSeen{Pull: pushed})
	c := onlyCheck(t, h, checkview.CheckOptions{})
	want(t, "pushed head", c.HeadSHA, pushed.HeadSHA)
	want(t, "after the push", c.Status+"/"+c.Conclusion, "completed/failure")
	if !strings.Contains(c.Title, "head changed after the merge gate passed") || !strings.Contains(c.Waiting, "/autopilot back run-tests") {
		t.Errorf("title %q, waiting %q", c.Title, c.Waiting)
	}
	want(t, "gate head kept", h.st.PRChecks[0].GateHead, testHead)
	// Back on the gated head (a force-push back): green again.
	h.apply(events.PullSeen{Pull: linkedPR("devin")})
	want(t, "back on the gated head", onlyCheck(t, h, checkview.CheckOptions{}).Conclusion, checkview.CheckSuccess)

	kept := newHarness(t, "jira: {enabled: false}\nkeep_stale_approvals: true\n")
	kept.runTo("greenfield", "run-tests")
	kept.apply(events.PRLinked{PR: 40, URL: prURL})
	kept.apply(events.PullSeen{Pull: linkedPR("devin")})
	kept.done("tests pass")
	kept.apply(events.PullSeen{Pull: pushed})
	want(t, "keep_stale_approvals", onlyCheck(t, kept, checkview.CheckOptions{}).Conclusion, checkview.CheckSuccess)
}

// TestPRCheckReviewLoopOrdersAroundTheGate: every order of push, review
// and QA around the review loop's merge gate. The check on a head is green
// only when the approval the review verdict rests on was given on that
// head; a fresh approval of a new head (during QA or after the run ended)
// is the verdict's new evidence, a stale one (on an older head) is not.
func TestPRCheckReviewLoopOrdersAroundTheGate(t *testing.T) {
	const head2 = "fedcba9876543"
	at := func(sha string) *evidence.PullFacts {
		p := linkedPR("devin")
		p.HeadSHA = sha
		return p
	}
	approve := func(reviewer, commit, head string) events.Review {
		r := approval(reviewer, "devin")
		r.CommitSHA, r.Pull = commit, at(head)
		return r
	}
	push := func(h *harness) { h.apply(events.PullSeen{Pull: at(head2)}) }
	green := func(sha string) func(h *harness) {
		return func(h *harness) {
			h.apply(events.Checks{PR: 40, SHA: sha, State: "success", URL: prURL + "/checks", Pull: at(sha)})
		}
	}
	reapprove := func(h *harness) { h.apply(approve("erin", head2, head2)) }
	stale := func(h *harness) { h.apply(approve("erin", testHead, head2)) }
	for _, tc := range []struct {
		name  string
		steps []func(h *harness)
		head  string
		want  string
	}{
		{"review and QA on one head", []func(*harness){green(testHead)}, testHead, checkview.CheckSuccess},
		{"push after QA", []func(*harness){green(testHead), push}, head2, checkview.CheckFailure},
		{"push after QA, re-approval after the run ended", []func(*harness){green(testHead), push, reapprove}, head2, checkview.CheckSuccess},
		{"push before QA", []func(*harness){push, green(head2)}, head2, checkview.CheckFailure},
		{"push, re-approval, then QA", []func(*harness){push, reapprove, green(head2)}, head2, checkview.CheckSuccess},
		{"push, QA, then re-approval", []func(*harness){push, green(head2), reapprove}, head2, checkview.CheckSuccess},
		{"push, stale approval of the old head, QA", []func(*harness){push, stale, green(head2)}, head2, checkview.CheckFailure},
		{"push after QA, stale approval of the old head", []func(*harness){green(testHead), push, stale}, head2, checkview.CheckFailure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, reviewCfg)
			reviewLoopTo(t, h, "review-loop", "execute")
			h.done("implemented in #40")
			h.apply(events.PRLinked{PR: 40, URL: prURL})
			h.apply(events.PullSeen{Pull: linkedPR("devin")})
			h.apply(approve("bob", testHead, testHead))
			want(t, "at QA", h.st.Slug, "qa")
			for _, step := range tc.steps {
				step(h)
			}
			want(t, "run", h.st.Run, state.RunDone)
			c := onlyCheck(t, h, checkview.CheckOptions{})
			want(t, "head", c.HeadSHA, tc.head)
			if c.Conclusion != tc.want {
				t.Errorf("conclusion %s (%q), want %s", c.Conclusion, c.Title, tc.want)
			}
		})
	}
}
