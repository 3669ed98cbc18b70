package engine

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// reviewCfg names the consensus roles of the review loop.
const reviewCfg = "jira: {enabled: false}\nroles: {architect: [alice], critic: [\"@carol\", dave]}\n"

const prURL = "https://github.com/acme/widgets/pull/40"

// reviewLoopTo runs a flow to the step slug; for the review loop it gives
// the rationale, the consensus and the review evidence on the way.
func reviewLoopTo(t *testing.T, h *harness, flowName, slug string) {
	t.Helper()
	if flowName != "review-loop" {
		h.runTo(flowName, slug)
		return
	}
	if h.st == nil {
		if len(h.set.Config.Roles) == 0 {
			h.set = settingsFor(t, reviewCfg)
		}
		h.start("review-loop")
	}
	for i := 0; i < 10 && h.st.Slug != slug; i++ {
		switch h.st.Slug {
		case "interview":
			h.done("requirements are complete: scope and non-goals agreed")
		case "plan":
			h.done("plan and test spec")
			h.say("alice", "/autopilot approve architect")
			h.say("carol", "/autopilot approve critic")
		case "execute":
			h.done("implemented in #40")
			h.apply(events.PRLinked{PR: 40, URL: prURL})
		case "code-review":
			h.apply(approval("bob", "devin"))
		default:
			t.Fatalf("reviewLoopTo: unexpected step %s", h.st.Slug)
		}
	}
	if h.st.Slug != slug {
		t.Fatalf("reviewLoopTo %s: at %s (%s/%s)", slug, h.st.Slug, h.st.Run, h.st.Status)
	}
}

var reviewID int64 = 500

// approval is an APPROVED review of PR 40 by reviewer (write permission).
func approval(reviewer, author string) events.Review {
	reviewID++
	return events.Review{ID: reviewID, PR: 40, PRAuthor: author, Reviewer: reviewer, Perm: access.Write, State: "APPROVED",
		URL: prURL + "#pullrequestreview-" + itoa(reviewID), CommitSHA: testHead, Pull: linkedPR(author)}
}

// testHead is PR 40's head commit.
const testHead = "abcdef1234567"

// linkedPR is PR 40 as read with its evidence: a branch of this
// repository by author (write permission) whose description links the
// issue, at testHead.
func linkedPR(author string) *evidence.PullFacts {
	return &evidence.PullFacts{Number: 40, Author: author, AuthorPerm: access.Write, HeadSHA: testHead, Links: true}
}

// changes is a CHANGES_REQUESTED review of PR 40.
func changes(reviewer, body string) events.Review {
	reviewID++
	return events.Review{ID: reviewID, PR: 40, PRAuthor: "devin", Reviewer: reviewer, Perm: access.Write, State: "CHANGES_REQUESTED", Body: body,
		URL: prURL + "#pullrequestreview-" + itoa(reviewID), CommitSHA: testHead, Pull: linkedPR("devin")}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestReviewLoopStartRecordsSnapshotAndSlug(t *testing.T) {
	h := newHarness(t, reviewCfg)
	res := h.apply(events.Start{Flow: "review-loop", Issue: testIssue, Actor: "maria", Title: "Add CSV export (v2) to Reports!",
		Body: "Please add CSV.\n\n## Desired outcome\nCSV downloads for every report\n## Constraints:\nno new dependencies\n## Open questions\nmax rows?"})
	s := res.State
	if s.Review == nil {
		t.Fatal("no review-loop fields")
	}
	want(t, "slug", s.Review.Slug, "add-csv-export-v2-to-reports")
	want(t, "iteration", s.Review.Iteration, 1)
	want(t, "max iterations", s.Review.MaxIterations, 10)
	want(t, "review cycle", s.Review.ReviewCycle, 0)
	if !strings.Contains(s.Review.Snapshot, "autopilot:snapshot") {
		t.Errorf("snapshot marker = %q", s.Review.Snapshot)
	}
	var snap string
	for _, e := range effectsOf(res.Effects, state.EffComment) {
		if e.Marker == s.Review.Snapshot {
			snap = e.Body
		}
	}
	wantLines(t, "snapshot", snap, "### Context snapshot: add-csv-export-v2-to-reports", "> Please add CSV.", "**Desired outcome:** CSV downloads for every report", "**Constraints:** no new dependencies", "**Open questions:** max rows?", "**Known facts:** —")
	want(t, "step", s.Slug, "interview")
}

func TestInterviewNeedsRationaleOrReasonedSkip(t *testing.T) {
	h := newHarness(t, reviewCfg)
	h.start("review-loop")
	c := h.comment("maria", access.Write, "/autopilot done")
	res := h.apply(c)
	want(t, "bare done", ledgerOf(res.State, c.ID), "rejected:rationale-required")
	want(t, "still interview", res.State.Slug, "interview")
	if !hasBody(res.Effects, "needs a recorded rationale") {
		t.Errorf("reply = %q", bodies(res.Effects))
	}
	res = h.done("all five readiness gates answered")
	s := res.State
	want(t, "moved", s.Slug, "plan")
	want(t, "rationale", s.Review.InterviewRationale, "all five readiness gates answered")
	ho := s.Review.Handoffs["interview"]
	want(t, "handoff summary", ho.Summary, "all five readiness gates answered")
	if len(ho.Links) != 2 || !strings.HasPrefix(ho.Links[1], "snapshot:") {
		t.Errorf("handoff links = %q, want the report and the snapshot", ho.Links)
	}
}

func TestInterviewSkipIsRecordedOnlyWhenConfirmed(t *testing.T) {
	for _, answer := range []string{"A", "B"} {
		t.Run(answer, func(t *testing.T) {
			h := newHarness(t, reviewCfg)
			h.start("review-loop")
			h.say("maria", "/autopilot skip spec came from the PRD")
			want(t, "not yet recorded", h.st.Review.InterviewSkipped, "")
			s := h.say("bob", answer).State
			if answer == "B" {
				want(t, "not recorded", s.Review.InterviewSkipped, "")
				want(t, "stays", s.Slug, "interview")
				return
			}
			want(t, "recorded", s.Review.InterviewSkipped, "spec came from the PRD (requested by @maria, confirmed by @bob)")
			want(t, "moved", s.Slug, "plan")
		})
	}
}

func TestAgentsCannotSkipTheInterview(t *testing.T) {
	h := newHarness(t, reviewCfg)
	h.start("review-loop")
	c := h.comment("claude[bot]", "", "/autopilot skip too slow")
	c.Bot, c.Agent = true, true
	res := h.apply(c)
	want(t, "ledger", ledgerOf(res.State, c.ID), state.LedgerNotCommand)
	want(t, "no gate", res.State.Gate == nil, true)
}

func TestPlanConsensus(t *testing.T) {
	tests := []struct {
		name  string
		steps []struct {
			who, body string
			want      state.LedgerOutcome
		}
		slug string
	}{
		{name: "architect then critic", slug: "execute", steps: []struct {
			who, body string
			want      state.LedgerOutcome
		}{
			{"alice", "/autopilot approve architect looks sound", state.LedgerApplied},
			{"carol", "/autopilot approve critic", state.LedgerApplied},
		}},
		{name: "critic first is out of order", slug: "plan", steps: []struct {
			who, body string
			want      state.LedgerOutcome
		}{
			{"carol", "/autopilot approve critic", "rejected:out-of-order"},
		}},
		{name: "not in role", slug: "plan", steps: []struct {
			who, body string
			want      state.LedgerOutcome
		}{
			{"bob", "/autopilot approve architect", "rejected:not-in-role"},
		}},
		{name: "unknown role", slug: "plan", steps: []struct {
			who, body string
			want      state.LedgerOutcome
		}{
			{"alice", "/autopilot approve boss", "rejected:bad-role"},
		}},
		{name: "duplicate architect", slug: "plan", steps: []struct {
			who, body string
			want      state.LedgerOutcome
		}{
			{"alice", "/autopilot approve architect", state.LedgerApplied},
			{"alice", "/autopilot approve architect", "rejected:duplicate"},
		}},
		{name: "reject keeps plan and needs a new report", slug: "plan", steps: []struct {
			who, body string
			want      state.LedgerOutcome
		}{
			{"alice", "/autopilot approve architect", state.LedgerApplied},
			{"carol", "/autopilot reject critic no rollback story", state.LedgerApplied},
			{"alice", "/autopilot approve architect", "rejected:no-plan"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, reviewCfg)
			reviewLoopTo(t, h, "review-loop", "plan")
			res := h.done("plan v1 and test spec")
			s := res.State
			want(t, "plan report does not leave", s.Slug, "plan")
			want(t, "sub_step", s.SubStep.Name, "awaiting-architect-review")
			want(t, "plan handoff", s.Review.Handoffs["plan"].Summary, "plan v1 and test spec")
			if !hasBody(res.Effects, "Plan recorded. It needs consensus") {
				t.Errorf("no consensus notice: %q", bodies(res.Effects))
			}
			for _, st := range tc.steps {
				c := h.comment(st.who, access.Write, st.body)
				res = h.apply(c)
				want(t, st.who+": "+st.body, ledgerOf(res.State, c.ID), st.want)
			}
			s = res.State
			want(t, "slug", s.Slug, tc.slug)
			if tc.slug == "execute" {
				want(t, "architect", s.Review.Architect.By, "alice")
				want(t, "architect note", s.Review.Architect.Note, "looks sound")
				want(t, "critic", s.Review.Critic.By, "carol")
				if !strings.Contains(s.Completed[len(s.Completed)-1].Outcome, "consensus: architect @alice, critic @carol") {
					t.Errorf("outcome = %q", s.Completed[len(s.Completed)-1].Outcome)
				}
				want(t, "consensus handoff links", len(s.Review.Handoffs["plan-consensus"].Links), 3)
			}
		})
	}
}

func TestRejectRecordsReasonAndAnnouncesIt(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "plan")
	h.done("plan v1")
	res := h.say("alice", "/autopilot reject architect no migration plan")
	s := res.State
	want(t, "return reason", s.Review.ReturnToPlanReason, "no migration plan")
	want(t, "sub_step", s.SubStep.Name, "plan-rejected")
	if !hasBody(res.Effects, "The architect rejected the plan: no migration plan") {
		t.Errorf("notice = %q", bodies(res.Effects))
	}
	// A new report reopens the consensus.
	h.done("plan v2 with migration")
	h.say("alice", "/autopilot approve architect")
	want(t, "after v2", h.say("carol", "/autopilot approve critic").State.Slug, "execute")
}

func TestApprovalsOutsideThePlanAreRefused(t *testing.T) {
	h := newHarness(t, reviewCfg)
	h.start("review-loop")
	c := h.comment("alice", access.Write, "/autopilot approve architect")
	res := h.apply(c)
	want(t, "ledger", ledgerOf(res.State, c.ID), "rejected:no-consensus-gate")
}

func TestCriticMustDifferFromArchitect(t *testing.T) {
	h := newHarness(t, "jira: {enabled: false}\nroles: {architect: [alice], critic: [alice]}\n")
	h.start("review-loop")
	h.done("rationale")
	h.done("plan")
	h.say("alice", "/autopilot approve architect")
	c := h.comment("alice", access.Write, "/autopilot approve critic")
	res := h.apply(c)
	want(t, "ledger", ledgerOf(res.State, c.ID), "rejected:same-reviewer")
	want(t, "slug", res.State.Slug, "plan")
}

func TestApprovingPRReviewsCountForConsensus(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "plan")
	// Before the plan report, a review does not count.
	h.apply(approval("alice", "devin"))
	want(t, "no early approval", h.st.Review.Architect == nil, true)
	h.done("plan")
	// A critic's review before the architect's is not counted.
	h.apply(approval("carol", "devin"))
	want(t, "critic out of order", h.st.Review.Critic == nil, true)
	// The PR author approving their own PR never counts.
	h.apply(approval("alice", "alice"))
	want(t, "self approval", h.st.Review.Architect == nil, true)
	h.apply(approval("alice", "devin"))
	want(t, "architect by review", h.st.Review.Architect.By, "alice")
	if !strings.Contains(h.st.Review.Architect.Link, "pullrequestreview") {
		t.Errorf("architect link = %q", h.st.Review.Architect.Link)
	}
	res := h.apply(approval("dave", "devin"))
	want(t, "to execute", res.State.Slug, "execute")
	want(t, "critic", res.State.Review.Critic.By, "dave")
}

func TestCodeReviewNeedsEvidence(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "code-review")
	c := h.comment("devin", access.Write, "/autopilot done looks good to me")
	res := h.apply(c)
	want(t, "bare done", ledgerOf(res.State, c.ID), "rejected:needs-evidence")
	if !hasBody(res.Effects, "is clean only on evidence: an approving review") {
		t.Errorf("reply = %q", bodies(res.Effects))
	}
	want(t, "still code-review", res.State.Slug, "code-review")

	// The PR author's own approval: not counted, one notice per review.
	self := approval("devin", "devin")
	res = h.apply(self)
	want(t, "self approval", res.State.Slug, "code-review")
	if !hasBody(res.Effects, "was not counted as evidence") {
		t.Errorf("no notice: %q", bodies(res.Effects))
	}
	res = h.apply(self)
	want(t, "notice once", len(bodies(res.Effects)), 0)

	// A reader's approval does not count either.
	reader := approval("randy", "devin")
	reader.Perm = access.Read
	want(t, "read approval", h.apply(reader).State.Slug, "code-review")
	// Permission lookup failure: not counted.
	unknown := approval("bob", "devin")
	unknown.PermErr = true
	want(t, "perm error", h.apply(unknown).State.Slug, "code-review")

	good := approval("bob", "devin")
	res = h.apply(good)
	s := res.State
	want(t, "to qa", s.Slug, "qa")
	v := s.Review.ReviewVerdict
	if v == nil || !v.Clean || v.Evidence != good.URL || v.Reason != "approved by @bob" {
		t.Errorf("review verdict = %+v", v)
	}
	if !strings.Contains(s.Completed[len(s.Completed)-1].Outcome, good.URL) {
		t.Errorf("outcome does not cite the review: %q", s.Completed[len(s.Completed)-1].Outcome)
	}
}

func TestStaleReviewFromAnEarlierCycleDoesNotCount(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "code-review")
	old := approval("bob", "devin")
	old.At = h.st.Exec.StartedAt.Add(-time.Minute)
	res := h.apply(old)
	want(t, "stale approval ignored", res.State.Slug, "code-review")
	want(t, "no verdict", res.State.Review.ReviewVerdict == nil, true)
}

func TestChangesRequestedReturnsToPlan(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "code-review")
	res := h.apply(changes("bob", "\n  Missing tests for the escaping.\nmore text"))
	s := res.State
	want(t, "slug", s.Slug, "plan")
	want(t, "status", s.Status, state.InProgress)
	want(t, "review cycle", s.Review.ReviewCycle, 1)
	want(t, "iteration", s.Review.Iteration, 2)
	want(t, "reason", s.Review.ReturnToPlanReason, "changes requested by @bob: Missing tests for the escaping.")
	if v := s.Review.ReviewVerdict; v == nil || v.Clean {
		t.Errorf("verdict = %+v, want not clean", v)
	}
	want(t, "approvals cleared", s.Review.Architect == nil && s.Review.Critic == nil, true)
	for _, slug := range []string{"execute", "code-review", "qa"} {
		want(t, slug, progressOf(s, slug), state.NotStarted)
	}
	if !hasBody(res.Effects, "Returning to **Plan** (review cycle 1)") || !hasBody(res.Effects, "Return-to-plan reason (review cycle 1): changes requested by @\u200bbob") {
		t.Errorf("notices = %q", bodies(res.Effects))
	}
	row := s.Completed[len(s.Completed)-1]
	if !strings.HasPrefix(row.Outcome, "NOT CLEAN — ") {
		t.Errorf("row = %+v", row)
	}
}

func TestSameFindingThreeCyclesIsASpiral(t *testing.T) {
	h := newHarness(t, reviewCfg)
	for cycle := 1; cycle <= 3; cycle++ {
		reviewLoopTo(t, h, "review-loop", "code-review")
		h.apply(changes([]string{"bob", "erin", "bob"}[cycle-1], "Missing tests"))
	}
	s := h.st
	want(t, "run", s.Run, state.RunStopped)
	want(t, "reason", s.Stop.Reason, stops.KillSpiral)
	want(t, "hint", s.Stop.Hint, stops.RecoveryHint(stops.KillSpiral))
	want(t, "cycles", s.Review.ReviewCycle, 3)

	// Resume after triage: back to plan with the findings.
	res := h.say("maria", "/autopilot resume")
	want(t, "resumed to plan", res.State.Slug, "plan")
	want(t, "status", res.State.Status, state.InProgress)
	want(t, "run", res.State.Run, state.RunInProgress)
}

func TestDifferentFindingsDoNotSpiral(t *testing.T) {
	h := newHarness(t, reviewCfg)
	for _, finding := range []string{"Missing tests", "Missing docs", "Missing tests"} {
		reviewLoopTo(t, h, "review-loop", "code-review")
		h.apply(changes("bob", finding))
	}
	want(t, "run", h.st.Run, state.RunInProgress)
	want(t, "slug", h.st.Slug, "plan")
}

func TestQAChecks(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "qa")
	// Pending and other steps' evidence change nothing.
	want(t, "pending", h.apply(events.Checks{PR: 40, SHA: testHead, State: "pending", Pull: linkedPR("devin")}).Changed, false)
	c := h.comment("devin", access.Write, "/autopilot done all green locally")
	want(t, "bare done", ledgerOf(h.apply(c).State, c.ID), "rejected:needs-evidence")

	res := h.apply(events.Checks{PR: 40, SHA: testHead, State: "success", URL: prURL + "/checks", Pull: linkedPR("devin")})
	s := res.State
	want(t, "run", s.Run, state.RunDone)
	v := s.Review.QAVerdict
	if v == nil || !v.Clean || v.Skipped || v.Evidence != prURL+"/checks" || v.Reason != "all checks green on abcdef1" {
		t.Errorf("qa verdict = %+v", v)
	}
	want(t, "qa handoff", s.Review.Handoffs["qa"].Links[0], prURL+"/checks")
}

func TestQAFailureReturnsToPlan(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "qa")
	res := h.apply(events.Checks{PR: 40, SHA: testHead, State: "failure", Failed: []string{"unit", "lint"}, URL: prURL + "/checks", Pull: linkedPR("devin")})
	s := res.State
	want(t, "slug", s.Slug, "plan")
	want(t, "reason", s.Review.ReturnToPlanReason, "checks failed on abcdef1: unit, lint")
	if v := s.Review.QAVerdict; v == nil || v.Clean {
		t.Errorf("qa verdict = %+v", v)
	}
}

func TestQASkipWithReasonRecordsSkippedVerdictOnlyWhenConfirmed(t *testing.T) {
	for _, answer := range []string{"A", "B"} {
		t.Run(answer, func(t *testing.T) {
			h := newHarness(t, reviewCfg)
			reviewLoopTo(t, h, "review-loop", "qa")
			h.say("maria", "/autopilot skip docs-only change")
			want(t, "no verdict before confirmation", h.st.Review.QAVerdict == nil, true)
			res := h.say("bob", answer)
			s := res.State
			if answer == "B" {
				want(t, "no verdict", s.Review.QAVerdict == nil, true)
				want(t, "still qa", s.Slug, "qa")
				return
			}
			v := s.Review.QAVerdict
			if v == nil || !v.Clean || !v.Skipped || v.Reason != "docs-only change" || v.Evidence == "" {
				t.Errorf("qa verdict = %+v", v)
			}
			want(t, "run", s.Run, state.RunDone)
		})
	}
}

func TestMaxIterationsStopsTheLoop(t *testing.T) {
	h := newHarness(t, reviewCfg+"max_iterations: 2\n")
	h.start("review-loop")
	want(t, "max", h.st.Review.MaxIterations, 2)
	for i, finding := range []string{"first", "second"} {
		reviewLoopTo(t, h, "review-loop", "code-review")
		h.apply(changes("bob", finding))
		if i == 0 {
			want(t, "first not-clean returns", h.st.Slug, "plan")
		}
	}
	want(t, "run", h.st.Run, state.RunStopped)
	want(t, "reason", h.st.Stop.Reason, stops.StopMaxIterations)
	want(t, "hint", h.st.Stop.Hint, stops.RecoveryHint(stops.StopMaxIterations))
}

func TestPRLinkedRecordsOnceAndAsksForEvidence(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "code-review")
	res := h.apply(events.PRLinked{PR: 41})
	wantDeep(t, "linked", res.State.LinkedPRs, []int{40, 41})
	if e := queriesOf(res.Queries, events.QCheckPR); len(e) != 1 || e[0].PR != 41 {
		t.Errorf("check-pr effects = %+v", e)
	}
	res = h.apply(events.PRLinked{PR: 41})
	want(t, "duplicate link", res.Changed, false)
	// The sweep asks for evidence of every linked PR while evidence is due.
	res = h.apply(events.Tick{})
	want(t, "sweep checks", len(queriesOf(res.Queries, events.QCheckPR)), 2)
}
