package action_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// The tests in this file are docs/security.md's trust table, row by row:
// each drives the binary against the fake GitHub as an attacker (or a
// careless bystander) would, and checks that the input moved nothing.

// forgedRun is a workflow_run.completed an attacker can cause: a run of
// their own workflow (here on a fork's pull request) whose run-name prints
// the session token they read on the issue. change adjusts it.
func (r *execRig) forgedRun(id int64, session, conclusion string, change map[string]any) []byte {
	r.t.Helper()
	set := map[string]any{
		"workflow_run.id": id, "workflow_run.name": "ci", "workflow_run.display_title": "autopilot " + session,
		"workflow_run.status": "completed", "workflow_run.conclusion": conclusion, "workflow_run.event": "pull_request",
		"workflow_run.path": ".github/workflows/ci.yml", "workflow_run.html_url": runURL(id),
		"workflow_run.created_at":                time.Now().UTC().Format(time.RFC3339),
		"workflow_run.head_repository.full_name": "mallory/widgets", "workflow_run.repository.full_name": repo,
		"workflow.name": "ci", "workflow.path": ".github/workflows/ci.yml",
		"sender.login": "mallory", "sender.type": "User",
	}
	for k, v := range change {
		set[k] = v
	}
	return ghtest.Mutate(r.t, ghtest.WithRepo(r.t, ghtest.Payload(r.t, "workflow_run.completed.json"), repo), set)
}

// Attack 1 (issue 13): a forged workflow_run carrying the step's session
// token but not the recorded run id completed the step, and forged
// failures drove it to SKILL FAILED with a real re-dispatch each time.
func TestTrustForgedWorkflowRunIsIgnored(t *testing.T) {
	r := newExecRig(t, dispatchProblemCfg)
	r.begin()
	s := r.now()
	rn := r.lastRun()
	if s.Exec.RunID != rn.ID {
		t.Fatalf("state records run %d, want %d", s.Exec.RunID, rn.ID)
	}
	v := s.Version
	before := len(r.gh.Comments(repo, r.n))
	// Even a run that looks right in every other way is not ours when its
	// id is not the recorded one.
	lookalike := map[string]any{"workflow_run.event": "workflow_dispatch", "workflow_run.path": ".github/workflows/" + stepWorkflow,
		"workflow_run.head_repository.full_name": repo}
	r.event("forged success", "workflow_run", r.forgedRun(rn.ID+1000, s.Exec.Session, "success", nil))
	r.event("look-alike success", "workflow_run", r.forgedRun(rn.ID+1001, s.Exec.Session, "success", lookalike))
	for i := 0; i < 3; i++ {
		r.event("forged failure", "workflow_run", r.forgedRun(rn.ID+2000+int64(i), s.Exec.Session, "failure", nil))
	}
	s = r.wantAt("after forged runs", "problem", state.RunInProgress)
	if s.Version != v || s.RetryCount != 0 || len(r.runs()) != 1 {
		t.Fatalf("forged runs moved the flow: version %d → %d, retry_count %d, %d runs dispatched", v, s.Version, s.RetryCount, len(r.runs()))
	}
	if got := len(r.gh.Comments(repo, r.n)); got != before {
		t.Errorf("forged runs made the bot post %d comments", got-before)
	}
	// The recorded run still completes the step.
	r.finishRun(rn, "success")
	r.wantAt("after the real run", "research", state.RunInProgress)
}

// Without a recorded run id (older GHES), the session token matches only a
// run of the configured workflow, triggered by workflow_dispatch, on the
// base repository, created after the dispatch.
func TestTrustTokenFallbackNeedsTheConfiguredDispatchedRun(t *testing.T) {
	r := newExecRig(t, dispatchProblemCfg)
	r.gh.SetLegacyDispatch(true)
	r.begin()
	s := r.now()
	rn := r.lastRun()
	if s.Exec.RunID != 0 {
		t.Fatalf("state records run %d without run details", s.Exec.RunID)
	}
	v := s.Version
	ours := map[string]any{"workflow_run.event": "workflow_dispatch", "workflow_run.path": ".github/workflows/" + stepWorkflow,
		"workflow.path": ".github/workflows/" + stepWorkflow, "workflow_run.head_repository.full_name": repo}
	cases := map[string]map[string]any{
		"another workflow file": {"workflow_run.event": "workflow_dispatch", "workflow_run.head_repository.full_name": repo},
		"a pull_request run":    {"workflow_run.path": ".github/workflows/" + stepWorkflow, "workflow_run.head_repository.full_name": repo},
		"a fork's head":         {"workflow_run.event": "workflow_dispatch", "workflow_run.path": ".github/workflows/" + stepWorkflow},
		"created before the dispatch": func() map[string]any {
			m := map[string]any{"workflow_run.created_at": s.Exec.DispatchedAt.Add(-time.Hour).Format(time.RFC3339)}
			for k, v := range ours {
				m[k] = v
			}
			return m
		}(),
	}
	id := rn.ID + 1000
	for name, change := range cases {
		for _, conclusion := range []string{"success", "failure"} {
			id++
			r.event(name, "workflow_run", r.forgedRun(id, s.Exec.Session, conclusion, change))
			if got := r.wantAt(name, "problem", state.RunInProgress); got.Version != v || got.RetryCount != 0 {
				t.Fatalf("%s (%s) moved the flow: version %d → %d, retry_count %d", name, conclusion, v, got.Version, got.RetryCount)
			}
		}
	}
	if len(r.runs()) != 1 {
		t.Errorf("%d runs dispatched, want 1", len(r.runs()))
	}
	r.finishRun(rn, "success")
	s = r.wantAt("after the dispatched run", "research", state.RunInProgress)
	if !strings.Contains(s.Completed[0].Outcome, fmt.Sprint(rn.ID)) {
		t.Errorf("outcome %q does not name run %d", s.Completed[0].Outcome, rn.ID)
	}
}

// adminOnlyCfg lets only admins (maria) answer and report.
const adminOnlyCfg = "default_flow: greenfield\njira: {enabled: false}\nanswer_permission: admin\n"

// atBoundary drives greenfield to the session-boundary question after
// decompose, as maria.
func (r *execRig) atBoundary() {
	r.t.Helper()
	r.begin()
	for _, s := range []string{"problem", "research", "plan", "decompose"} {
		r.say("maria", "/autopilot done "+s)
	}
	if s := r.wantAt("at the boundary", "implement", state.RunAwaitingDecision); s.Gate == nil {
		r.t.Fatal("no gate at the boundary")
	}
}

// nextSecond waits until the wall clock (the fake's) enters a new second,
// so an edit gets an updated_at after the comment's created_at, as on
// GitHub.
func nextSecond() {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 10*time.Millisecond).Sub(now))
}

// editLater finds author's comment with body on issue or PR n, waits for
// the next second and edits it to text as editor; it returns the comment id.
func (r *execRig) editLater(n int, author, body, editor, text string) int64 {
	r.t.Helper()
	var id int64
	for _, c := range r.gh.Comments(repo, n) {
		if c.Author.Login == author && c.Body == body {
			id = c.ID
		}
	}
	if id == 0 {
		r.t.Fatalf("no comment %q by %s on #%d", body, author, n)
	}
	nextSecond()
	if _, err := r.gh.EditComment(id, editor, text); err != nil {
		r.t.Fatal(err)
	}
	return id
}

// edited is the issue_comment.edited delivery for comment id on the issue,
// sent by editor, carrying the comment's current text.
func (r *execRig) edited(id int64, author, editor, body, from string) []byte {
	r.t.Helper()
	c, ok := r.gh.Comment(id)
	if !ok {
		r.t.Fatalf("no comment %d", id)
	}
	return ghtest.Mutate(r.t, ghtest.WithRepo(r.t, ghtest.Payload(r.t, "issue_comment.edited.json"), repo), map[string]any{
		"issue.number": r.n, "issue.labels": r.labels(r.n), "issue.pull_request": ghtest.Delete,
		"comment.id": id, "comment.body": body, "comment.user.login": author, "comment.user.type": "User",
		"comment.created_at": c.CreatedAt.UTC().Format(time.RFC3339), "comment.updated_at": c.UpdatedAt.UTC().Format(time.RFC3339),
		"comment.performed_via_github_app": nil, "changes.body.from": from,
		"sender.login": editor, "sender.type": "User",
	})
}

// Attack 3 (issue 13): with answer_permission admin, an admin's answer not
// yet processed was edited by a write user, and the bot applied the
// edited text as the admin's decision.
func TestTrustAnswerEditedBeforeProcessingIsRefused(t *testing.T) {
	r := newExecRig(t, adminOnlyCfg)
	r.atBoundary()
	// maria answers B; the run for it waits (a concurrency group, a lost
	// delivery) while devin, with write access, edits it to A.
	payload := r.comment(r.n, "maria", "B")
	id := r.editLater(r.n, "maria", "B", "devin", "A")
	res := r.event("maria's answer, edited by devin", "issue_comment", payload)
	s := r.wantAt("after the edited answer", "implement", state.RunAwaitingDecision)
	if res.outputs["decision"] != "" || len(s.Decisions) != 0 {
		t.Fatalf("the edited answer was applied: decision %q, decisions %+v", res.outputs["decision"], s.Decisions)
	}
	const reply = "was edited before autopilot processed it"
	if n := r.botComments(reply); n != 1 {
		t.Fatalf("%d replies about the edit, want 1", n)
	}
	// devin's edit delivery, the sweep: still nothing, no second reply.
	r.event("devin's edit", "issue_comment", r.edited(id, "maria", "devin", "A", "B"))
	r.sweep()
	r.wantAt("after the edit delivery and the sweep", "implement", state.RunAwaitingDecision)
	if n := r.botComments(reply); n != 1 {
		t.Errorf("%d replies about the edit, want 1", n)
	}
	// maria answers again in a new comment: applied.
	res = r.say("maria", "B")
	if res.outputs["decision"] != "B" {
		t.Errorf("maria's new answer: decision %q, want B", res.outputs["decision"])
	}
}

// An author who edits their own answer before it is processed is proven
// by the issue_comment.edited delivery GitHub sends in their name: the
// edited text is applied.
func TestTrustAnswerEditedByItsAuthorIsApplied(t *testing.T) {
	r := newExecRig(t, adminOnlyCfg)
	r.atBoundary()
	payload := r.comment(r.n, "maria", "A")
	id := r.editLater(r.n, "maria", "A", "maria", "B")
	// The created delivery's run was superseded in the concurrency group;
	// the edited one runs.
	res := r.event("maria's own edit", "issue_comment", r.edited(id, "maria", "maria", "B", "A"))
	if res.outputs["decision"] != "B" {
		t.Fatalf("decision %q, want B (maria's edited text)", res.outputs["decision"])
	}
	r.event("the created delivery, late", "issue_comment", payload)
	if s := r.now(); len(s.Decisions) != 1 || r.botComments("was edited before autopilot processed it") != 0 {
		t.Errorf("decisions %+v, edit replies %d", s.Decisions, r.botComments("was edited before autopilot processed it"))
	}
}

// pullPayload is a pull_request event (file names the action) about PR pr
// by author at head sha, whose head branch lives in headRepo.
func (r *execRig) pullPayload(file string, pr int, author, headRepo, sha, body string) []byte {
	return ghtest.Mutate(r.t, ghtest.WithRepo(r.t, ghtest.Payload(r.t, file), repo), map[string]any{
		"number": pr, "pull_request.number": pr, "pull_request.title": "CSV export", "pull_request.body": body,
		"pull_request.user.login": author, "pull_request.user.type": "User", "pull_request.head.sha": sha,
		"pull_request.head.repo.full_name": headRepo, "pull_request.html_url": prLink(pr), "pull_request.labels": []any{},
		"sender.login": author, "sender.type": "User",
	})
}

// toQA drives the review loop to QA on devin's PR (checks pending on its
// head) and returns the PR.
func (r *execRig) toQA() int {
	r.t.Helper()
	r.begin()
	var pr int
	r.reviewLoopTo("code-review", &pr, headSHA)
	if err := r.gh.AddStatus(repo, headSHA, "ci/test", "pending"); err != nil {
		r.t.Fatal(err)
	}
	r.review(pr, headSHA, "maria", "APPROVED", "")
	r.wantAt("qa, checks pending", "qa", state.RunInProgress)
	return pr
}

// greenForkPR opens a PR from author's fork (head branch at sha, with a
// green check) that carries body, and delivers its opened event.
func (r *execRig) greenForkPR(author, fork, branch, sha, body string) int {
	r.t.Helper()
	if _, err := r.gh.AddCheckRun(repo, sha, "test", "completed", "success"); err != nil {
		r.t.Fatal(err)
	}
	pr, err := r.gh.CreateForkPull(repo, fork, author, "CSV export", body, branch, sha)
	if err != nil {
		r.t.Fatal(err)
	}
	r.event(author+"'s fork PR", "pull_request", r.pullPayload("pull_request.opened.json", pr, author, fork, sha, body))
	return pr
}

// Attack 2 (issue 13): a user with read permission opened a fork PR that
// links the issue, with green checks on its head; QA recorded "clean" on
// them. A maintainer's approval of the fork's current head makes it count.
func TestTrustForkPRByAReaderIsNotEvidence(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg)
	r.toQA()
	const forkSHA = "f00dfeedf00dfeedf00dfeedf00dfeedf00dfeed"
	fork := r.greenForkPR("reader", "reader/widgets", "patch-1", forkSHA, fmt.Sprintf("A better CSV export.\n\nFixes #%d", r.n))
	r.sweep()
	s := r.wantAt("after the reader's green fork PR", "qa", state.RunInProgress)
	if s.Review.QAVerdict != nil {
		t.Fatalf("QA verdict from an untrusted PR: %+v", s.Review.QAVerdict)
	}
	// maria (admin) approves the fork's current head: now it counts.
	r.review(fork, forkSHA, "maria", "APPROVED", "Checked the diff.")
	r.sweep()
	s = r.wantAt("after maria approved the fork", "done", state.RunDone)
	ho := s.Review.Handoffs["qa"]
	if ho.PR != fork || ho.HeadSHA != forkSHA || len(ho.Checks) != 1 {
		t.Errorf("qa handoff = %+v, want PR #%d at %s with its check", ho, fork, forkSHA)
	}
}

// A fork PR by someone with write permission needs the approval too: its
// head's workflows ran the fork's code.
func TestTrustForkPRByAWriterNeedsAnApproval(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg)
	r.toQA()
	const forkSHA = "beadbeadbeadbeadbeadbeadbeadbeadbeadbead"
	r.greenForkPR("bob", "bob/widgets", "csv", forkSHA, fmt.Sprintf("Fixes #%d", r.n))
	r.wantAt("after a writer's fork PR", "qa", state.RunInProgress)
}

// A push after an approval makes it stale (GitHub's "dismiss stale
// approvals"): noted once, not counted; an approval of the new head counts
// and the handoff names the PR, head and review.
func TestTrustApprovalBeforeAPushIsStale(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg)
	r.begin()
	var pr int
	r.reviewLoopTo("code-review", &pr, headSHA)
	const pushed = "0badc0de0badc0de0badc0de0badc0de0badc0de"
	id, err := r.gh.SubmitReview(repo, pr, "maria", "APPROVED", "")
	if err != nil {
		t.Fatal(err)
	}
	// devin pushes before the review's run processes it.
	if err := r.gh.PushPull(repo, pr, pushed); err != nil {
		t.Fatal(err)
	}
	r.event("maria's approval of the old head", "pull_request_review", r.reviewPayload(pr, id, headSHA, "maria", "APPROVED", headSHA))
	r.wantAt("after the stale approval", "code-review", state.RunInProgress)
	const notice = "was given on commit 6dcb09b, but the PR's head is now 0badc0d"
	if n := r.botComments(notice); n != 1 {
		t.Fatalf("%d stale-approval notices, want 1", n)
	}
	r.sweep()
	r.wantAt("after the sweep", "code-review", state.RunInProgress)
	if n := r.botComments(notice); n != 1 {
		t.Errorf("%d stale-approval notices after the sweep, want 1", n)
	}
	res := r.review(pr, pushed, "maria", "APPROVED", "")
	s := r.wantAt("after the approval of the new head", "qa", state.RunInProgress)
	ho := s.Review.Handoffs["code-review"]
	if ho.PR != pr || ho.HeadSHA != pushed || ho.Review == 0 || ho.Review == id {
		t.Errorf("code-review handoff = %+v, want #%d at %s and the second review (outputs %v)", ho, pr, pushed, res.outputs)
	}
}

// keep_stale_approvals: true lets the approval of an earlier commit count.
func TestTrustKeepStaleApprovalsOptsOut(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg+"keep_stale_approvals: true\n")
	r.begin()
	var pr int
	r.reviewLoopTo("code-review", &pr, headSHA)
	id, err := r.gh.SubmitReview(repo, pr, "maria", "APPROVED", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.gh.PushPull(repo, pr, "0badc0de0badc0de0badc0de0badc0de0badc0de"); err != nil {
		t.Fatal(err)
	}
	r.event("maria's approval of the old head", "pull_request_review", r.reviewPayload(pr, id, headSHA, "maria", "APPROVED", headSHA))
	r.wantAt("after the kept approval", "qa", state.RunInProgress)
}

// reviewPayload is the pull_request_review.submitted delivery of review id
// (given on commit) of PR pr by devin, whose head was sha when it was sent.
func (r *execRig) reviewPayload(pr int, id int64, commit, reviewer, reviewState, sha string) []byte {
	file := map[string]string{"APPROVED": "pull_request_review.submitted.approved.json", "CHANGES_REQUESTED": "pull_request_review.submitted.changes_requested.json"}[reviewState]
	return ghtest.Mutate(r.t, ghtest.WithRepo(r.t, ghtest.Payload(r.t, file), repo), map[string]any{
		"review.id": id, "review.user.login": reviewer, "review.user.type": "User", "review.body": "",
		"review.submitted_at": time.Now().UTC().Format(time.RFC3339), "review.commit_id": commit,
		"review.html_url":     fmt.Sprintf("%s#pullrequestreview-%d", prLink(pr), id),
		"pull_request.number": pr, "pull_request.user.login": "devin", "pull_request.user.type": "User",
		"pull_request.body":     fmt.Sprintf("Streams reports as CSV.\n\nFixes #%d", r.n),
		"pull_request.head.sha": sha, "pull_request.html_url": prLink(pr),
		"sender.login": reviewer, "sender.type": "User",
	})
}

// A PR edited so that it no longer links the issue is no evidence, though
// the bot recorded it as linked (pull_request.edited names no issue then).
func TestTrustPRUnlinkedByAnEditIsNotEvidence(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg)
	pr := r.toQA()
	body := "Streams reports as CSV."
	if err := r.gh.SetBody(repo, pr, body); err != nil {
		t.Fatal(err)
	}
	r.event("PR edited to unlink", "pull_request", r.pullPayload("pull_request.edited.json", pr, "devin", repo, headSHA, body))
	// Only the reads that keep the workflow job's own check from standing
	// in for the PR check on this head (the configuration, the check runs
	// of its name): nothing about the issue.
	if got := r.callKinds(); got != "GET contents, GET check-runs" {
		t.Errorf("an edit of a PR that links no managed issue made the calls %s, want only the job check guard's", got)
	}
	if err := r.gh.AddStatus(repo, headSHA, "ci/test", "success"); err != nil {
		t.Fatal(err)
	}
	r.sweep()
	r.wantAt("green checks on the unlinked PR", "qa", state.RunInProgress)
	// Linked again: its green head counts.
	body += fmt.Sprintf("\n\nFixes #%d", r.n)
	if err := r.gh.SetBody(repo, pr, body); err != nil {
		t.Fatal(err)
	}
	r.event("PR edited to link again", "pull_request", r.pullPayload("pull_request.edited.json", pr, "devin", repo, headSHA, body))
	r.wantAt("linked again", "done", state.RunDone)
}

// A dismissed approval is no evidence: the delivery of the approval was
// lost, the approval was dismissed, and the sweep reads it as DISMISSED.
func TestTrustDismissedApprovalIsNotEvidence(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg)
	r.begin()
	var pr int
	r.reviewLoopTo("code-review", &pr, headSHA)
	id, err := r.gh.SubmitReview(repo, pr, "maria", "APPROVED", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.gh.DismissReview(repo, pr, id); err != nil {
		t.Fatal(err)
	}
	p := ghtest.Mutate(t, r.reviewPayload(pr, id, headSHA, "maria", "APPROVED", headSHA), map[string]any{"action": "dismissed", "review.state": "dismissed"})
	if res := r.event("dismissed", "pull_request_review", p); res.calls != 0 {
		t.Errorf("a dismissal made %d API calls", res.calls)
	}
	r.sweep()
	r.wantAt("after the dismissal", "code-review", state.RunInProgress)
}

// Labels are derived from the state, never read as state: autopilot/*
// labels set by someone else change nothing, cost no API call, and the
// next pass puts back the labels the state derives.
func TestTrustLabelsSetByOthersAreNotState(t *testing.T) {
	r := newExecRig(t, dispatchProblemCfg)
	r.begin()
	s := r.now()
	for _, l := range []string{"autopilot/status:done", "autopilot/step:deploy", "autopilot/flow:meta-repo"} {
		r.addLabel(r.n, l)
		p := ghtest.Mutate(t, ghtest.WithRepo(t, ghtest.Payload(t, "issues.labeled.json"), repo), map[string]any{
			"issue.number": r.n, "issue.labels": r.labels(r.n), "label.name": l, "sender.login": "maria", "sender.type": "User",
		})
		if res := r.event("label "+l, "issues", p); res.calls != 0 {
			t.Errorf("label %s: %d API calls, want 0", l, res.calls)
		}
	}
	r.sweep()
	after := r.wantAt("after foreign labels", "problem", state.RunInProgress)
	if after.Flow != s.Flow || len(after.Completed) != 0 {
		t.Fatalf("foreign labels changed the state: flow %s, completed %+v", after.Flow, after.Completed)
	}
	got := strings.Join(r.gh.Labels(repo, r.n), ",")
	for _, l := range []string{"autopilot/status:done", "autopilot/step:deploy", "autopilot/flow:meta-repo"} {
		if strings.Contains(got, l) {
			t.Errorf("labels %s still carry %s", got, l)
		}
	}
	if !strings.Contains(got, "autopilot/status:in-progress") || !strings.Contains(got, "autopilot/step:problem") {
		t.Errorf("labels %s lack the derived ones", got)
	}
}

// Editing the issue's title or description after the start changes nothing
// (the run keeps the text it started with; commands are comments).
func TestTrustIssueEditsChangeNothing(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg)
	r.begin()
	s := r.now()
	if err := r.gh.SetBody(repo, r.n, "/autopilot done\nA"); err != nil {
		t.Fatal(err)
	}
	p := ghtest.Mutate(t, ghtest.WithRepo(t, ghtest.Payload(t, "issues.opened.json"), repo), map[string]any{
		"action": "edited", "changes": map[string]any{"body": map[string]any{"from": "## Desired outcome"}},
		"issue.number": r.n, "issue.labels": r.labels(r.n), "issue.body": "/autopilot done\nA", "sender.login": "reader", "sender.type": "User",
	})
	if res := r.event("issue edited", "issues", p); res.calls != 0 {
		t.Errorf("issues.edited made %d API calls, want 0", res.calls)
	}
	r.sweep()
	after := r.wantAt("after the edit", s.Slug, s.Run)
	if after.Review.Snapshot != s.Review.Snapshot || len(after.Completed) != len(s.Completed) {
		t.Errorf("the edit changed the run: snapshot %q → %q, completed %d → %d", s.Review.Snapshot, after.Review.Snapshot, len(s.Completed), len(after.Completed))
	}
}

// A review edited later (pull_request_review.edited) is not an event the
// bot acts on: no API call, nothing changes.
func TestTrustReviewEditsChangeNothing(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg)
	r.begin()
	var pr int
	r.reviewLoopTo("code-review", &pr, headSHA)
	id, err := r.gh.SubmitReview(repo, pr, "bob", "COMMENTED", "nit")
	if err != nil {
		t.Fatal(err)
	}
	p := ghtest.Mutate(t, r.reviewPayload(pr, id, headSHA, "bob", "APPROVED", headSHA), map[string]any{
		"action": "edited", "review.state": "commented", "review.body": "LGTM", "sender.login": "mallory",
	})
	if res := r.event("review edited", "pull_request_review", p); res.calls != 0 {
		t.Errorf("pull_request_review.edited made %d API calls, want 0", res.calls)
	}
	r.wantAt("after the edit", "code-review", state.RunInProgress)
}

// TestTrustTableNamesRealTests keeps docs/security.md's trust table true:
// every test it names exists, in this package or the engine's.
func TestTrustTableNamesRealTests(t *testing.T) {
	doc, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "## Trust table")
	if start < 0 {
		t.Fatal("docs/security.md has no trust table")
	}
	end := strings.Index(text[start+1:], "\n## ")
	table := text[start : start+1+end]
	var src strings.Builder
	for _, dir := range []string{".", "../engine", "../reconcile", "../../cmd/bot"} {
		files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src.Write(b)
		}
	}
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| input ") {
			continue
		}
		rows++
		named := 0
		for _, f := range strings.Split(line, "`") {
			if strings.HasPrefix(f, "Test") && !strings.ContainsAny(f, " |") {
				named++
				if !strings.Contains(src.String(), "func "+f+"(") {
					t.Errorf("the trust table names %s, which does not exist", f)
				}
			}
		}
		if named == 0 {
			t.Errorf("trust table row without a test: %s", line)
		}
	}
	if rows < 10 {
		t.Errorf("the trust table has %d rows", rows)
	}
}

// The same rule for answers on a linked PR's conversation: an edit by
// someone else before processing is refused; the author's own edit,
// proven by its issue_comment.edited delivery, is applied.
func TestTrustPRAnswerEditedBeforeProcessing(t *testing.T) {
	r := newExecRig(t, adminOnlyCfg)
	r.atBoundary()
	pr := r.openPR(headSHA)
	prBody := fmt.Sprintf("Streams reports as CSV.\n\nFixes #%d", r.n)
	payload := r.prComment(pr, prBody, "maria", "B")
	r.editLater(pr, "maria", "B", "devin", "A")
	res := r.event("maria's PR answer, edited by devin", "issue_comment", payload)
	if s := r.wantAt("after the edited PR answer", "implement", state.RunAwaitingDecision); res.outputs["decision"] != "" || len(s.Decisions) != 0 {
		t.Fatalf("the edited answer was applied: %q %+v", res.outputs["decision"], s.Decisions)
	}
	if n := r.botComments("was edited before autopilot processed it"); n != 1 {
		t.Fatalf("%d replies about the edit, want 1", n)
	}

	if _, err := r.gh.AddComment(repo, pr, "maria", "A"); err != nil { // its delivery is lost
		t.Fatal(err)
	}
	id := r.editLater(pr, "maria", "A", "maria", "B")
	c, _ := r.gh.Comment(id)
	edited := ghtest.Mutate(t, ghtest.WithRepo(t, ghtest.Payload(t, "issue_comment.created.pr.json"), repo), map[string]any{
		"action": "edited", "changes": map[string]any{"body": map[string]any{"from": "A"}},
		"issue.number": pr, "issue.body": prBody, "issue.labels": r.labels(pr), "issue.user.login": "devin",
		"comment.id": id, "comment.body": "B", "comment.user.login": "maria", "comment.user.type": "User",
		"comment.created_at": c.CreatedAt.UTC().Format(time.RFC3339), "comment.updated_at": c.UpdatedAt.UTC().Format(time.RFC3339),
		"comment.performed_via_github_app": nil, "sender.login": "maria", "sender.type": "User",
	})
	if res := r.event("maria's own edit on the PR", "issue_comment", edited); res.outputs["decision"] != "B" {
		t.Errorf("decision %q, want B", res.outputs["decision"])
	}
}

// A dispatch whose answer never came is sent again by a later run, which
// first looks for a run carrying the session token so as not to dispatch
// twice. A fork's pull_request run of the same workflow file whose title
// prints the token is not adopted: the dispatch is sent again, and the
// fork run's completion changes nothing.
func TestTrustForkRunIsNotAdoptedAfterALostDispatch(t *testing.T) {
	r := newExecRig(t, dispatchProblemCfg)
	r.gh.Script("POST", "/repos/*/*/actions/workflows/*/dispatches", fakegithub.Fail(http.StatusBadGateway))
	r.begin()
	s := r.now()
	if s.Exec == nil || s.Exec.Session == "" || s.Exec.RunID != 0 || len(r.runs()) != 0 {
		t.Fatalf("after the failed dispatch: execution %+v, %d runs", s.Exec, len(r.runs()))
	}
	r.gh.ClearScripts()
	fork, err := r.gh.AddForkRun(repo, stepWorkflow, "mallory/widgets", "autopilot "+s.Exec.Session, "abababababababababababababababababababab")
	if err != nil {
		t.Fatal(err)
	}
	r.sweep()
	s = r.now()
	if s.Exec.RunID == 0 || s.Exec.RunID == fork {
		t.Fatalf("recorded run %d (the fork's run is %d), want the dispatched one", s.Exec.RunID, fork)
	}
	var ours *fakegithub.WorkflowRun
	for _, rn := range r.runs() {
		if rn.ID == s.Exec.RunID {
			rn := rn
			ours = &rn
		}
	}
	if ours == nil || ours.Inputs["session"] != s.Exec.Session {
		t.Fatalf("the recorded run %d is not a dispatch of session %s", s.Exec.RunID, s.Exec.Session)
	}
	p := r.forgedRun(fork, s.Exec.Session, "success", map[string]any{"workflow_run.path": ".github/workflows/" + stepWorkflow,
		"workflow.path": ".github/workflows/" + stepWorkflow})
	r.event("the fork run completes", "workflow_run", p)
	r.wantAt("after the fork run", "problem", state.RunInProgress)
	r.finishRun(*ours, "success")
	r.wantAt("after the dispatched run", "research", state.RunInProgress)
}
