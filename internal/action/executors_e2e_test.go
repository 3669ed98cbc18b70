package action_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

// execRig is one issue driven through the binary against the fake GitHub,
// with a repository configuration, consensus roles for the review loop
// (alice the architect, bob the critic) and a workflow the dispatch
// executor runs.
//
// It shares the Jira rig's event, say, sweep and botComments helpers; its
// Jira fake is nil unless a test adds one.
type execRig struct {
	*jiraRig
	cfg string
}

// stepWorkflow is the dispatch executor's workflow, as in
// docs/examples/autopilot-step.yml.
const stepWorkflow = "autopilot-step.yml"

const (
	// dispatchProblemCfg dispatches the greenfield flow's first step.
	dispatchProblemCfg = "default_flow: greenfield\njira: {enabled: false}\n" +
		"steps:\n  problem: {kind: dispatch, workflow: " + stepWorkflow + ", timeout: 30m}\n"
	// reviewLoopCfg runs the review loop with its consensus roles.
	reviewLoopCfg = "default_flow: review-loop\njira: {enabled: false}\nroles: {architect: [alice], critic: [bob]}\n"
)

func newExecRig(t *testing.T, cfg string, env ...string) *execRig {
	t.Helper()
	h := newHarness(t)
	for _, login := range []string{"alice", "bob"} {
		h.gh.AddUser(login, "User")
		if err := h.gh.SetPermission(repo, login, access.Write); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.gh.SetFile(repo, ".github/autopilot.yml", []byte(cfg)); err != nil {
		t.Fatal(err)
	}
	if err := h.gh.SetWorkflow(repo, stepWorkflow, "autopilot-step", "autopilot ${{ inputs.session }}"); err != nil {
		t.Fatal(err)
	}
	n, err := h.gh.CreateIssue(repo, "maria", "Add CSV export", "## Desired outcome\nCSV downloads of every report.", nil)
	if err != nil {
		t.Fatal(err)
	}
	return &execRig{jiraRig: &jiraRig{harness: h, n: n, env: env}, cfg: cfg}
}

// begin adds the trigger label as maria and runs the binary for it.
func (r *execRig) begin() result {
	r.t.Helper()
	r.addLabel(r.n, "autopilot")
	return r.event("start", "issues", r.labeled(r.n, "maria"))
}

// now is the issue's newest state; the test fails when there is none.
func (r *execRig) now() *state.State {
	r.t.Helper()
	s := r.state(r.n)
	if s == nil {
		r.t.Fatal("no state comment")
	}
	return s
}

// summary is the step summary written by the last run.
func (r *execRig) summary() string {
	b, err := os.ReadFile(filepath.Join(r.dir, fmt.Sprintf("summary-%d", r.harness.n)))
	if err != nil {
		r.t.Fatalf("step summary of run %d: %v", r.harness.n, err)
	}
	return string(b)
}

// backdate rewrites the issue's newest state comment as the bot would have
// written it earlier: change moves its clocks back (the run started, or a
// run was dispatched, hours ago). The fake and the binary both read the
// wall clock, so this is how a test lets time pass. The rewritten comment
// is rendered and signed with the state key, so it verifies like any other.
func (r *execRig) backdate(change func(*state.State)) {
	r.t.Helper()
	var (
		best *state.State
		id   int64
	)
	want := codec.Want{Repo: repo, Issue: r.n, Key: []byte(key)}
	for _, c := range r.gh.Comments(repo, r.n) {
		if c.Author.Login != fakegithub.ActionsBotLogin || !strings.HasPrefix(c.Body, state.Marker) {
			continue
		}
		if s, err := codec.Parse(c.Body, want); err == nil && (best == nil || s.Version > best.Version) {
			best, id = s, c.ID
		}
	}
	if best == nil {
		r.t.Fatal("backdate: no state comment")
	}
	change(best)
	cfg, err := config.Parse([]byte(r.cfg))
	if err != nil {
		r.t.Fatal(err)
	}
	var view codec.View
	if f := cfg.All[best.Flow]; f != nil {
		for i, st := range f.Steps {
			view.Steps = append(view.Steps, codec.StepInfo{Slug: st.Slug, Name: st.Name, Label: f.LabelOf(i + 1)})
		}
	}
	body, err := codec.Render(best, view, []byte(key))
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.gh.EditComment(id, fakegithub.ActionsBotLogin, body); err != nil {
		r.t.Fatal(err)
	}
}

// runs returns the dispatched runs of the step workflow, oldest first.
func (r *execRig) runs() []fakegithub.WorkflowRun {
	var out []fakegithub.WorkflowRun
	for _, rn := range r.gh.Runs(repo) {
		if strings.HasSuffix(rn.Workflow, "/"+stepWorkflow) {
			out = append(out, rn)
		}
	}
	return out
}

// lastRun is the newest dispatched run; the test fails without one.
func (r *execRig) lastRun() fakegithub.WorkflowRun {
	r.t.Helper()
	rs := r.runs()
	if len(rs) == 0 {
		r.t.Fatal("no workflow run was dispatched")
	}
	return rs[len(rs)-1]
}

// finishRun completes a run on the fake and delivers its
// workflow_run.completed event, built from GitHub's example payload.
func (r *execRig) finishRun(rn fakegithub.WorkflowRun, conclusion string) result {
	r.t.Helper()
	if err := r.gh.CompleteRun(rn.ID, conclusion); err != nil {
		r.t.Fatal(err)
	}
	p := ghtest.Mutate(r.t, ghtest.WithRepo(r.t, ghtest.Payload(r.t, "workflow_run.completed.json"), repo), map[string]any{
		"workflow_run.id": rn.ID, "workflow_run.name": "autopilot-step", "workflow_run.display_title": rn.DisplayTitle,
		"workflow_run.status": "completed", "workflow_run.conclusion": conclusion, "workflow_run.event": "workflow_dispatch",
		"workflow_run.head_branch": rn.Ref, "workflow_run.head_sha": rn.HeadSHA, "workflow_run.path": rn.Workflow,
		"workflow_run.run_number": rn.RunNumber, "workflow_run.html_url": runURL(rn.ID),
		"workflow.name": "autopilot-step", "workflow.path": rn.Workflow,
		"workflow_run.created_at": rn.CreatedAt.Format(time.RFC3339), "workflow_run.head_repository.full_name": repo, "workflow_run.repository.full_name": repo,
		"sender.login": fakegithub.ActionsBotLogin, "sender.type": "Bot",
	})
	return r.event(fmt.Sprintf("run %d %s", rn.ID, conclusion), "workflow_run", p)
}

func runURL(id int64) string { return fmt.Sprintf("https://github.com/%s/actions/runs/%d", repo, id) }

// openPR opens a PR by devin whose body links the issue, and delivers
// pull_request.opened.
func (r *execRig) openPR(sha string) int {
	r.t.Helper()
	pr, err := r.gh.CreatePull(repo, "devin", "CSV export", fmt.Sprintf("Streams reports as CSV.\n\nFixes #%d", r.n), "csv-export", sha)
	if err != nil {
		r.t.Fatal(err)
	}
	r.event("pr opened", "pull_request", r.prPayload("pull_request.opened.json", pr, sha))
	return pr
}

// prPayload is a pull_request event about PR pr (author devin) at head sha.
func (r *execRig) prPayload(file string, pr int, sha string) []byte {
	return ghtest.Mutate(r.t, ghtest.WithRepo(r.t, ghtest.Payload(r.t, file), repo), map[string]any{
		"number": pr, "pull_request.number": pr, "pull_request.title": "CSV export",
		"pull_request.body":       fmt.Sprintf("Streams reports as CSV.\n\nFixes #%d", r.n),
		"pull_request.user.login": "devin", "pull_request.user.type": "User", "pull_request.head.sha": sha,
		"pull_request.html_url": prLink(pr), "pull_request.labels": []any{},
		"sender.login": "devin", "sender.type": "User",
	})
}

func prLink(pr int) string { return fmt.Sprintf("https://github.com/%s/pull/%d", repo, pr) }

// review submits a review on the fake and delivers its
// pull_request_review.submitted event. state is APPROVED or
// CHANGES_REQUESTED.
func (r *execRig) review(pr int, sha, reviewer, reviewState, body string) result {
	r.t.Helper()
	id, err := r.gh.SubmitReview(repo, pr, reviewer, reviewState, body)
	if err != nil {
		r.t.Fatal(err)
	}
	file := map[string]string{"APPROVED": "pull_request_review.submitted.approved.json", "CHANGES_REQUESTED": "pull_request_review.submitted.changes_requested.json"}[reviewState]
	p := ghtest.Mutate(r.t, ghtest.WithRepo(r.t, ghtest.Payload(r.t, file), repo), map[string]any{
		"review.id": id, "review.user.login": reviewer, "review.user.type": "User", "review.body": body,
		"review.submitted_at": time.Now().UTC().Format(time.RFC3339), "review.commit_id": sha,
		"review.html_url":     fmt.Sprintf("%s#pullrequestreview-%d", prLink(pr), id),
		"pull_request.number": pr, "pull_request.user.login": "devin", "pull_request.user.type": "User",
		"pull_request.body":     fmt.Sprintf("Streams reports as CSV.\n\nFixes #%d", r.n),
		"pull_request.head.sha": sha, "pull_request.html_url": prLink(pr),
		"sender.login": reviewer, "sender.type": "User",
	})
	return r.event(fmt.Sprintf("review %s by %s", reviewState, reviewer), "pull_request_review", p)
}

// wantAt fails the test unless the run is at step slug with run status run.
func (r *execRig) wantAt(what, slug string, run state.RunStatus) *state.State {
	r.t.Helper()
	s := r.now()
	if s.Slug != slug || s.Run != run {
		r.t.Fatalf("%s: at %s (%s, step status %s), want %s (%s); blockers %q", what, s.Slug, s.Run, s.Status, slug, run, s.Blockers)
	}
	return s
}

// dispatches counts the dispatch requests the fake answered with status.
func (r *execRig) dispatches(status int) int {
	n := 0
	for _, q := range r.gh.Requests() {
		if q.Method == http.MethodPost && strings.HasSuffix(q.Path, "/dispatches") && q.Status == status {
			n++
		}
	}
	return n
}

func TestDispatchExecutorSucceeds(t *testing.T) {
	r := newExecRig(t, dispatchProblemCfg)
	res := r.begin()
	if res.outputs["step"] != "problem" || res.outputs["status"] != "in-progress" {
		t.Fatalf("outputs after start = %v", res.outputs)
	}
	s := r.now()
	rn := r.lastRun()
	if s.Exec == nil || s.Exec.Executor != "dispatch" || s.Exec.Session == "" {
		t.Fatalf("execution = %+v", s.Exec)
	}
	if s.Exec.RunID != rn.ID {
		t.Errorf("state records run %d, the fake created run %d", s.Exec.RunID, rn.ID)
	}
	wantInputs := map[string]string{"issue": fmt.Sprint(r.n), "step": "problem", "sub_step": "0 awaiting-invocation", "attempt": "1", "session": s.Exec.Session}
	for k, v := range wantInputs {
		if rn.Inputs[k] != v {
			t.Errorf("dispatch input %s = %q, want %q", k, rn.Inputs[k], v)
		}
	}
	if rn.Ref != "main" || rn.DisplayTitle != "autopilot "+s.Exec.Session {
		t.Errorf("run ref %q title %q", rn.Ref, rn.DisplayTitle)
	}
	if r.botComments("dispatched workflow `"+stepWorkflow+"` (session `"+s.Exec.Session+"`)") != 1 {
		t.Errorf("no dispatch announcement")
	}

	res = r.finishRun(rn, "success")
	s = r.wantAt("after the run succeeded", "research", state.RunInProgress)
	done := s.Completed[len(s.Completed)-1]
	if done.Slug != "problem" || done.Outcome != "workflow run succeeded: "+runURL(rn.ID) {
		t.Errorf("completed row = %+v", done)
	}
	if res.outputs["step"] != "research" {
		t.Errorf("outputs = %v", res.outputs)
	}
	// The same delivery again changes nothing.
	v := s.Version
	r.finishRun(rn, "success")
	if got := r.now().Version; got != v {
		t.Errorf("a redelivered run event wrote the state (version %d → %d)", v, got)
	}
	if len(r.runs()) != 1 {
		t.Errorf("%d runs dispatched, want 1", len(r.runs()))
	}
}

func TestDispatchExecutorFailsThreeTimesAndEscalates(t *testing.T) {
	r := newExecRig(t, dispatchProblemCfg)
	r.begin()
	for attempt := 1; attempt <= 3; attempt++ {
		rn := r.lastRun()
		if rn.Inputs["attempt"] != fmt.Sprint(attempt) {
			t.Fatalf("run %d has attempt %q, want %d", rn.ID, rn.Inputs["attempt"], attempt)
		}
		r.finishRun(rn, "failure")
		s := r.now()
		if attempt < 3 {
			if s.RetryCount != attempt || s.Run != state.RunInProgress || len(s.RetryLog) != attempt {
				t.Fatalf("after failure %d: retry_count %d run %s log %d", attempt, s.RetryCount, s.Run, len(s.RetryLog))
			}
			if !strings.Contains(s.RetryLog[attempt-1].Reason, fmt.Sprintf("workflow run %d (session %s) concluded failure", rn.ID, rn.Inputs["session"])) {
				t.Errorf("retry log row = %+v", s.RetryLog[attempt-1])
			}
		}
	}
	s := r.wantAt("after three failures", "problem", state.RunFailed)
	if s.Status != state.Failed || s.Gate == nil || s.Gate.Kind != "skill-failed" || len(s.Blockers) != 1 {
		t.Fatalf("status %s gate %+v blockers %q", s.Status, s.Gate, s.Blockers)
	}
	if r.botComments("SKILL FAILED: Problem — 3 consecutive failures") != 1 {
		t.Error("no SKILL FAILED Choose block")
	}
	if got := len(r.runs()); got != 3 {
		t.Errorf("%d runs dispatched, want 3 (no fourth without a decision)", got)
	}
	if !strings.Contains(strings.Join(r.gh.Labels(repo, r.n), ","), "autopilot/status:failed") {
		t.Errorf("labels %v lack autopilot/status:failed", r.gh.Labels(repo, r.n))
	}
	// A: retry with a fresh session dispatches again, attempt 1.
	res := r.say("maria", "A")
	if res.outputs["decision"] != "A" {
		t.Errorf("outputs = %v", res.outputs)
	}
	if rn := r.lastRun(); len(r.runs()) != 4 || rn.Inputs["attempt"] != "1" {
		t.Errorf("after A: %d runs, last attempt %q", len(r.runs()), rn.Inputs["attempt"])
	}
	r.wantAt("after A", "problem", state.RunInProgress)
}

func TestDispatchExecutorNeverReportsSweepTimesOut(t *testing.T) {
	r := newExecRig(t, dispatchProblemCfg)
	r.begin()
	first := r.lastRun()
	v := r.now().Version
	// Within the timeout the sweep leaves the run alone.
	r.sweep()
	if s := r.now(); s.RetryCount != 0 || len(r.runs()) != 1 {
		t.Fatalf("sweep within the timeout: retry_count %d, %d runs", s.RetryCount, len(r.runs()))
	}
	// 31 minutes later (timeout 30m) the run has still not reported.
	r.backdate(func(s *state.State) {
		s.Exec.DispatchedAt = s.Exec.DispatchedAt.Add(-31 * time.Minute)
	})
	// A maintainer starts the sweep by hand (workflow_dispatch).
	res := r.event("manual sweep", "workflow_dispatch", ghtest.WithRepo(t, ghtest.Payload(t, "workflow_dispatch.json"), repo))
	s := r.wantAt("after the timeout", "problem", state.RunInProgress)
	if s.Version <= v || s.RetryCount != 1 || len(s.RetryLog) != 1 {
		t.Fatalf("after the timeout: version %d retry_count %d log %+v", s.Version, s.RetryCount, s.RetryLog)
	}
	if want := fmt.Sprintf("dispatched run (session %s) did not report within 30m0s", first.Inputs["session"]); !strings.Contains(s.RetryLog[0].Reason, want) {
		t.Errorf("retry reason %q lacks %q", s.RetryLog[0].Reason, want)
	}
	second := r.lastRun()
	if len(r.runs()) != 2 || second.Inputs["attempt"] != "2" || second.Inputs["session"] == first.Inputs["session"] {
		t.Errorf("retry: %d runs, attempt %q, session %q", len(r.runs()), second.Inputs["attempt"], second.Inputs["session"])
	}
	if !strings.Contains(r.summary(), fmt.Sprintf("| #%d | greenfield | problem | in-progress |", r.n)) {
		t.Errorf("sweep summary:\n%s", r.summary())
	}
	if res.outputs["issue"] != fmt.Sprint(r.n) {
		t.Errorf("sweep outputs = %v", res.outputs)
	}
	// The late report of the abandoned run is not the current execution.
	r.finishRun(first, "success")
	r.wantAt("late report of the timed-out run", "problem", state.RunInProgress)
	// The retry succeeds; the session had a failed batch, so the run stops
	// at this boundary (seed 004's failed-wave), naming the silent run.
	r.finishRun(second, "success")
	s = r.wantAt("the retry's report", "problem", state.RunStopped)
	if s.Stop.Reason != "failed-wave" || !strings.Contains(s.LastSession.Notes, "the failed run: dispatched run (session "+first.Inputs["session"]+")") {
		t.Errorf("stop %+v, notes %q", s.Stop, s.LastSession.Notes)
	}
	if progress := s.Steps[0].Status; progress != state.Completed {
		t.Errorf("problem is %s, want completed before the stop", progress)
	}
}

func TestDispatchLegacyGHESMatchesBySessionToken(t *testing.T) {
	r := newExecRig(t, dispatchProblemCfg)
	r.gh.SetLegacyDispatch(true)
	r.begin()
	if r.dispatches(http.StatusUnprocessableEntity) != 1 || r.dispatches(http.StatusNoContent) != 1 {
		t.Fatalf("dispatch requests: %d answered 422, %d answered 204; want one each", r.dispatches(422), r.dispatches(204))
	}
	s := r.now()
	rn := r.lastRun()
	if s.Exec.RunID != 0 {
		t.Errorf("state records run %d though the server gave no run id", s.Exec.RunID)
	}
	if rn.DisplayTitle != "autopilot "+s.Exec.Session {
		t.Fatalf("run title %q does not carry session %s", rn.DisplayTitle, s.Exec.Session)
	}
	// A run whose title merely starts with our token is not ours.
	p := ghtest.Mutate(t, ghtest.WithRepo(t, ghtest.Payload(t, "workflow_run.completed.json"), repo), map[string]any{
		"workflow_run.id": rn.ID + 1000, "workflow_run.display_title": "autopilot " + s.Exec.Session + "x", "workflow_run.conclusion": "success",
	})
	r.event("foreign run", "workflow_run", p)
	r.wantAt("after a foreign run", "problem", state.RunInProgress)

	r.finishRun(rn, "success")
	s = r.wantAt("after the run matched by its token", "research", state.RunInProgress)
	if s.Completed[len(s.Completed)-1].Outcome != "workflow run succeeded: "+runURL(rn.ID) {
		t.Errorf("outcome = %q", s.Completed[len(s.Completed)-1].Outcome)
	}
}

// reviewLoopTo drives the review loop as the people involved would: devin
// reports the interview, the plan and the execution, alice and bob give the
// consensus, devin opens the PR during execute. It stops when the run is at
// slug; pr is the PR (opened once, at head sha).
func (r *execRig) reviewLoopTo(slug string, pr *int, sha string) {
	r.t.Helper()
	for i := 0; i < 12; i++ {
		s := r.now()
		if s.Slug == slug {
			return
		}
		switch s.Slug {
		case "interview":
			r.say("devin", "/autopilot done requirements are complete: CSV only, no Excel")
		case "plan":
			r.say("devin", "/autopilot done plan and test spec written")
			r.say("alice", "/autopilot approve architect")
			r.say("bob", "/autopilot approve critic")
		case "execute":
			if *pr == 0 {
				*pr = r.openPR(sha)
			}
			r.say("devin", fmt.Sprintf("/autopilot done implemented in #%d", *pr))
		default:
			r.t.Fatalf("reviewLoopTo %s: stuck at %s (%s)", slug, s.Slug, s.Run)
		}
	}
	r.t.Fatalf("reviewLoopTo %s: did not get there", slug)
}

const headSHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"

func TestReviewLoopChangesRequestedThenApproved(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg)
	r.begin()
	var pr int
	r.reviewLoopTo("code-review", &pr, headSHA)
	if _, err := r.gh.AddCheckRun(repo, headSHA, "test", "completed", "success"); err != nil {
		t.Fatal(err)
	}

	r.review(pr, headSHA, "maria", "CHANGES_REQUESTED", "Please add tests for quoting.")
	s := r.wantAt("after changes were requested", "plan", state.RunInProgress)
	rl := s.Review
	if rl.ReviewCycle != 1 || rl.ReturnToPlanReason != "changes requested by @maria: Please add tests for quoting." {
		t.Fatalf("review cycle %d, reason %q", rl.ReviewCycle, rl.ReturnToPlanReason)
	}
	if rl.ReviewVerdict == nil || rl.ReviewVerdict.Clean || rl.Architect != nil || rl.Critic != nil {
		t.Errorf("verdict %+v, approvals %+v %+v", rl.ReviewVerdict, rl.Architect, rl.Critic)
	}
	if r.botComments("Return-to-plan reason (review cycle 1): changes requested by @") != 1 {
		t.Error("the plan announcement does not carry the return-to-plan reason")
	}

	// Consensus again, then a clean review and green checks.
	r.reviewLoopTo("code-review", &pr, headSHA)
	if c := r.now().Review; c.Architect == nil || c.Architect.By != "alice" || c.Critic == nil || c.Critic.By != "bob" {
		t.Fatalf("consensus not recorded again: %+v %+v", c.Architect, c.Critic)
	}
	r.review(pr, headSHA, "maria", "APPROVED", "Tests look right.")
	s = r.wantAt("after the approval", "done", state.RunDone)
	rl = s.Review
	if rl.ReviewVerdict == nil || !rl.ReviewVerdict.Clean || !strings.HasPrefix(rl.ReviewVerdict.Evidence, prLink(pr)+"#pullrequestreview-") {
		t.Errorf("review verdict = %+v", rl.ReviewVerdict)
	}
	if rl.QAVerdict == nil || !rl.QAVerdict.Clean || rl.QAVerdict.Reason != "all checks green on "+headSHA[:7] {
		t.Errorf("qa verdict = %+v", rl.QAVerdict)
	}
	if rl.ReviewCycle != 1 || rl.Iteration != 2 {
		t.Errorf("review cycle %d iteration %d, want 1 and 2", rl.ReviewCycle, rl.Iteration)
	}
}

func TestApprovalByPRAuthorIsNotEvidence(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg)
	r.begin()
	var pr int
	r.reviewLoopTo("code-review", &pr, headSHA)
	const notice = "was not counted as evidence: the PR's author cannot approve their own work"
	r.review(pr, headSHA, "devin", "APPROVED", "LGTM")
	s := r.wantAt("after the author's approval", "code-review", state.RunInProgress)
	if s.Review.ReviewVerdict != nil {
		t.Errorf("verdict = %+v", s.Review.ReviewVerdict)
	}
	if n := r.botComments(notice); n != 1 {
		t.Fatalf("%d notices, want 1", n)
	}
	// The sweep reads the PR's reviews again: still refused, still one notice.
	r.sweep()
	r.wantAt("after the sweep", "code-review", state.RunInProgress)
	if n := r.botComments(notice); n != 1 {
		t.Errorf("%d notices after the sweep, want 1", n)
	}
	// Someone else's approval is evidence.
	r.review(pr, headSHA, "bob", "APPROVED", "")
	r.wantAt("after bob's approval", "qa", state.RunInProgress)
}

func TestQAChecksRedThenGreen(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg)
	r.begin()
	var pr int
	r.reviewLoopTo("code-review", &pr, headSHA)
	if _, err := r.gh.AddCheckRun(repo, headSHA, "build", "completed", "success"); err != nil {
		t.Fatal(err)
	}
	status := func(st string) {
		if err := r.gh.AddStatus(repo, headSHA, "ci/test", st); err != nil {
			t.Fatal(err)
		}
	}
	status("pending")
	r.review(pr, headSHA, "maria", "APPROVED", "")
	v := r.wantAt("qa with checks pending", "qa", state.RunInProgress).Version
	r.sweep()
	if s := r.wantAt("sweep while pending", "qa", state.RunInProgress); s.Version != v {
		t.Errorf("a sweep with pending checks wrote the state (v%d → v%d)", v, s.Version)
	}

	// Red: read on the sweep, back to plan with the failing check named.
	status("failure")
	r.sweep()
	s := r.wantAt("after red checks", "plan", state.RunInProgress)
	if want := "checks failed on " + headSHA[:7] + ": ci/test"; s.Review.ReturnToPlanReason != want || s.Review.ReviewCycle != 1 {
		t.Fatalf("reason %q cycle %d, want %q and 1", s.Review.ReturnToPlanReason, s.Review.ReviewCycle, want)
	}
	if s.Review.QAVerdict == nil || s.Review.QAVerdict.Clean {
		t.Errorf("qa verdict = %+v", s.Review.QAVerdict)
	}

	// The fix is pushed; CI runs again. QA waits while it is pending.
	status("pending")
	r.reviewLoopTo("code-review", &pr, headSHA)
	r.review(pr, headSHA, "maria", "APPROVED", "")
	r.wantAt("qa again, pending", "qa", state.RunInProgress)

	// Green: read on pull_request.synchronize of the linked PR.
	status("success")
	r.event("synchronize", "pull_request", r.prPayload("pull_request.synchronize.json", pr, headSHA))
	s = r.wantAt("after green checks", "done", state.RunDone)
	if v := s.Review.QAVerdict; v == nil || !v.Clean || v.Evidence != prLink(pr)+"/checks" {
		t.Errorf("qa verdict = %+v", v)
	}
}

func TestCIWorkflowRunRereadsTheLinkedPRsChecks(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg)
	r.begin()
	var pr int
	r.reviewLoopTo("code-review", &pr, headSHA)
	if err := r.gh.AddStatus(repo, headSHA, "ci/test", "pending"); err != nil {
		t.Fatal(err)
	}
	r.review(pr, headSHA, "maria", "APPROVED", "")
	r.wantAt("qa, pending", "qa", state.RunInProgress)

	ci := func(prs []any) []byte {
		return ghtest.Mutate(t, ghtest.WithRepo(t, ghtest.Payload(t, "workflow_run.completed.pr.json"), repo), map[string]any{
			"workflow_run.pull_requests": prs, "workflow_run.head_sha": headSHA,
		})
	}
	// A CI run on no PR, or on a PR that links no autopilot issue: no work.
	res := r.event("ci run without PRs", "workflow_run", ci([]any{}))
	if res.calls != 0 {
		t.Errorf("a CI run on no PR made %d API calls, want 0", res.calls)
	}
	other, err := r.gh.CreatePull(repo, "devin", "Typo", "Fixes a typo.", "typo", "1111111111111111111111111111111111111111")
	if err != nil {
		t.Fatal(err)
	}
	res = r.event("ci run on an unlinked PR", "workflow_run", ci([]any{map[string]any{"number": other}}))
	if res.calls != 1 {
		t.Errorf("a CI run on an unlinked PR made %d API calls, want 1 (read the PR)", res.calls)
	}

	if err := r.gh.AddStatus(repo, headSHA, "ci/test", "success"); err != nil {
		t.Fatal(err)
	}
	r.event("ci run on the linked PR", "workflow_run", ci([]any{map[string]any{"number": pr}}))
	r.wantAt("after CI passed", "done", state.RunDone)
}

// telemetryLines reads a JSONL telemetry file.
func telemetryLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v: %q", i+1, err, line)
		}
		out = append(out, m)
	}
	return out
}

func TestTelemetryRecordsOneLinePerRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "metrics", "autopilot.jsonl")
	r := newExecRig(t, "default_flow: greenfield\njira: {enabled: false}\nlimits: {max_sessions: 1}\n", "INPUT_TELEMETRY_PATH="+path, "GITHUB_RUN_ID=4242")
	type run struct {
		res     result
		summary string
	}
	var runs []run
	note := func(res result) { runs = append(runs, run{res, r.summary()}) }
	note(r.begin())
	for _, s := range []string{"problem", "research", "plan", "decompose"} {
		note(r.say("devin", "/autopilot done "+s))
	}
	note(r.say("maria", "A")) // a fresh session beyond max_sessions: stopped
	lines := telemetryLines(t, path)
	if len(lines) != len(runs) {
		t.Fatalf("%d telemetry lines for %d runs", len(lines), len(runs))
	}
	steps := []string{"problem", "research", "plan", "decompose", "implement", "implement"}
	before := []string{"", "problem", "research", "plan", "decompose", "implement"}
	for i, rec := range lines {
		if got, _ := rec["step_before"].(string); got != before[i] {
			t.Errorf("line %d: step_before %q, want %q", i+1, got, before[i])
		}
		if rec["schema_version"] != float64(1) || rec["run_id"] != "4242" || rec["issue"] != float64(r.n) || rec["flow"] != "greenfield" {
			t.Errorf("line %d: %v", i+1, rec)
		}
		if rec["step_after"] != steps[i] {
			t.Errorf("line %d: step_after %v, want %s", i+1, rec["step_after"], steps[i])
		}
		if rec["api_calls"] != float64(runs[i].res.calls) {
			t.Errorf("line %d: api_calls %v, the fake counted %d", i+1, rec["api_calls"], runs[i].res.calls)
		}
		if d, ok := rec["duration_ms"].(float64); !ok || d < 0 {
			t.Errorf("line %d: duration_ms %v", i+1, rec["duration_ms"])
		}
		from := before[i]
		if from == "" {
			from = "—"
		}
		facts := fmt.Sprintf("Run `4242` · issue #%d · flow greenfield · step %s → %s", r.n, from, steps[i])
		if !strings.Contains(runs[i].summary, facts) || !strings.Contains(runs[i].summary, fmt.Sprintf(" · %v API calls · %v ms", rec["api_calls"], rec["duration_ms"])) {
			t.Errorf("run %d summary lacks the telemetry facts %q:\n%s", i+1, facts, runs[i].summary)
		}
	}
	last := lines[len(lines)-1]
	if last["decision"] != "A" || last["kill_switch"] != "max-sessions-reached" || last["status"] != "stopped" || last["hint"] == nil {
		t.Errorf("last line = %v", last)
	}
	if _, ok := lines[0]["kill_switch"]; ok {
		t.Errorf("first line has a kill_switch: %v", lines[0])
	}
	// Written by rename: nothing but the file in its directory.
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil || len(entries) != 1 {
		t.Errorf("telemetry directory holds %v (err %v), want only the JSONL file", entries, err)
	}
}

func TestDispatchRunsAtTheRepositorysDefaultBranch(t *testing.T) {
	r := newExecRig(t, dispatchProblemCfg)
	if err := r.gh.SetRepo(repo, false, "trunk"); err != nil {
		t.Fatal(err)
	}
	r.begin()
	rn := r.lastRun()
	if rn.Ref != "trunk" {
		t.Errorf("dispatched at %q, want the default branch trunk", rn.Ref)
	}
	if s := r.now(); s.Exec == nil || s.Exec.RunID != rn.ID || s.RetryCount != 0 {
		t.Errorf("execution %+v retry_count %d", s.Exec, s.RetryCount)
	}
	// A configured ref wins over the default branch: here one the
	// repository lacks, so every attempt is refused and the step escalates.
	r2 := newExecRig(t, strings.Replace(dispatchProblemCfg, "timeout: 30m", "timeout: 30m, ref: main", 1))
	if err := r2.gh.SetRepo(repo, false, "trunk"); err != nil {
		t.Fatal(err)
	}
	r2.begin()
	s := r2.wantAt("dispatching at a missing ref", "problem", state.RunFailed)
	if len(s.RetryLog) != 3 || !strings.Contains(s.RetryLog[0].Reason, `at "main": validation failed: Invalid request. No ref found for: main`) {
		t.Errorf("retry log %+v", s.RetryLog)
	}
	if len(r2.runs()) != 0 {
		t.Errorf("%d runs started at a missing ref", len(r2.runs()))
	}
}

func TestAgentReportsNeedPermissionUnlessAnAppBot(t *testing.T) {
	r := newExecRig(t, "default_flow: greenfield\njira: {enabled: false}\n"+
		"executor: {kind: comment, agent: \"@claude\"}\nagents: [\"claude[bot]\", devin-ai]\n")
	r.gh.AddUser("claude[bot]", "Bot")
	r.gh.AddUser("devin-ai", "User")
	r.begin()
	if r.botComments("@claude please run step **Step 1 — Problem**") != 1 {
		t.Fatal("no prompt mentioning the agent")
	}
	// The App's bot has no role (read, as anyone on a public repository):
	// its agents: entry is its grant.
	r.say("claude[bot]", "/autopilot done problem statement")
	r.wantAt("after the bot's report", "research", state.RunInProgress)
	// A listed machine user needs write permission like anyone else.
	r.say("devin-ai", "/autopilot done research notes")
	r.wantAt("after the machine user's report", "research", state.RunInProgress)
	if r.botComments("only people with at least **write** permission") != 1 {
		t.Error("the refused agent got no explanation")
	}
	if err := r.gh.SetPermission(repo, "devin-ai", access.Write); err != nil {
		t.Fatal(err)
	}
	// The permission lookup fails: the report waits (fail closed) and is
	// applied by the next run.
	r.gh.Script("GET", "/repos/*/*/collaborators/*/permission", fakegithub.Fail(http.StatusForbidden))
	r.say("devin-ai", "/autopilot done research notes, again")
	r.wantAt("with the lookup failing", "research", state.RunInProgress)
	r.gh.ClearScripts()
	r.sweep()
	r.wantAt("the next run", "plan", state.RunInProgress)
}
