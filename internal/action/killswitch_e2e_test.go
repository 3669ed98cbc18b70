package action_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/fake/fakejira"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// greenfieldCfg is the greenfield flow without Jira plus extra lines.
func greenfieldCfg(extra string) string {
	return "default_flow: greenfield\njira: {enabled: false}\n" + extra
}

// doneUntil reports steps done as devin until the run waits at a gate or
// reaches slug.
func (r *execRig) doneUntil(slug string) {
	r.t.Helper()
	for i := 0; i < 10; i++ {
		s := r.now()
		if s.Slug == slug || s.Gate != nil {
			return
		}
		r.say("devin", "/autopilot done "+s.Slug+" finished")
	}
	r.t.Fatalf("doneUntil %s: stuck at %s", slug, r.now().Slug)
}

// wantStopped checks that the last run stopped the issue's run with the
// kill-switch reason: the state (status, reason, recovery hint, the Last
// Session note carrying detail), the stop notice, the labels, the outputs
// and the run summary (kill-switch column and a line with the hint).
func (r *execRig) wantStopped(res result, reason state.StopReason, detail string) {
	r.t.Helper()
	s := r.now()
	hint := stops.RecoveryHint(reason)
	if s.Run != state.RunStopped || s.Stop == nil || s.Stop.Reason != reason {
		r.t.Fatalf("run %s stop %+v, want stopped with %s", s.Run, s.Stop, reason)
	}
	if s.Stop.Hint != hint || hint == stops.RecoveryHint("") {
		r.t.Errorf("hint %q, want the specific hint %q", s.Stop.Hint, hint)
	}
	if s.LastSession.Reason != "stopped: "+string(reason) || !strings.Contains(s.LastSession.Notes, detail) {
		r.t.Errorf("last session %+v, want notes with %q", s.LastSession, detail)
	}
	if r.botComments("`"+string(reason)+"`") != 1 || r.botComments("Recovery: "+hint) != 1 {
		r.t.Errorf("want one stop notice naming %s with its hint", reason)
	}
	if res.outputs["status"] != "stopped" {
		r.t.Errorf("outputs = %v", res.outputs)
	}
	labels := strings.Join(r.gh.Labels(repo, r.n), ",")
	if !strings.Contains(labels, "autopilot/status:stopped") || strings.Count(labels, "autopilot/status:") != 1 {
		r.t.Errorf("labels %s", labels)
	}
	sum := r.summary()
	if !strings.Contains(sum, fmt.Sprintf("**#%d stopped — kill-switch `%s`.** Recovery: %s", r.n, reason, hint)) ||
		!strings.Contains(sum, fmt.Sprintf("| stopped | %s | %s |", decisionCell(res), reason)) {
		r.t.Errorf("run summary lacks the kill-switch and its hint:\n%s", sum)
	}
}

// decisionCell is the run summary's decision cell for a run.
func decisionCell(res result) string {
	if d := res.outputs["decision"]; d != "" {
		return d
	}
	return "—"
}

// resume comments /autopilot resume as maria and checks where the run goes.
func (r *execRig) resume(slug string, run state.RunStatus) {
	r.t.Helper()
	r.say("maria", "/autopilot resume")
	s := r.wantAt("after resume", slug, run)
	if s.Stop != nil {
		r.t.Errorf("stop record kept after resume: %+v", s.Stop)
	}
}

func TestKillSwitchMaxSessionsReached(t *testing.T) {
	r := newExecRig(t, greenfieldCfg("limits: {max_sessions: 1}\n"))
	r.begin()
	r.doneUntil("implement")
	res := r.say("maria", "A") // start implement with a fresh session: the second
	r.wantStopped(res, "max-sessions-reached", "1 executor sessions used")
	if s := r.now(); s.Slug != "implement" || s.Status != state.NotStarted {
		t.Errorf("at %s (%s), want implement not started", s.Slug, s.Status)
	}
	r.resume("implement", state.RunInProgress)
}

func TestKillSwitchMaxHoursExceeded(t *testing.T) {
	r := newExecRig(t, greenfieldCfg("limits: {max_hours: 1}\n"))
	r.begin()
	r.doneUntil("implement") // waits at the session boundary
	v := r.now().Version
	r.sweep()
	if s := r.now(); s.Run != state.RunAwaitingDecision || s.Version != v {
		t.Fatalf("a sweep within max_hours changed the run: %s v%d", s.Run, s.Version)
	}
	r.backdate(func(s *state.State) { s.Limits.RunStartedAt = s.Limits.RunStartedAt.Add(-61 * time.Minute) })
	res := r.sweep()
	r.wantStopped(res, "max-hours-exceeded", "the run has been going for more than 1.0 hours")
	// Resume restores the open question, with a fresh clock.
	r.resume("implement", state.RunAwaitingDecision)
	if s := r.now(); s.Gate == nil || s.Gate.Kind != "session-boundary" || time.Since(s.Limits.RunStartedAt) > time.Minute {
		t.Errorf("gate %+v, run started %s", s.Gate, s.Limits.RunStartedAt)
	}
}

func TestKillSwitchSpiral(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg)
	r.begin()
	var pr int
	var res result
	for cycle := 1; cycle <= 3; cycle++ {
		r.reviewLoopTo("code-review", &pr, headSHA)
		res = r.review(pr, headSHA, "maria", "CHANGES_REQUESTED", "Please add tests for quoting.")
		if cycle < 3 {
			r.wantAt(fmt.Sprintf("cycle %d", cycle), "plan", state.RunInProgress)
		}
	}
	r.wantStopped(res, "spiral", "the same finding came back three review cycles in a row: changes requested by @maria: Please add tests for quoting.")
	if s := r.now(); s.Review.ReviewCycle != 3 {
		t.Errorf("review cycle %d, want 3", s.Review.ReviewCycle)
	}
	r.resume("plan", state.RunInProgress)
}

func TestKillSwitchFailedWave(t *testing.T) {
	r := newExecRig(t, dispatchProblemCfg)
	r.begin()
	first := r.lastRun()
	r.finishRun(first, "failure")
	res := r.finishRun(r.lastRun(), "success")
	r.wantStopped(res, "failed-wave", fmt.Sprintf("the failed run: workflow run %d (session %s) concluded failure — %s", first.ID, first.Inputs["session"], runURL(first.ID)))
	if s := r.now(); s.Steps[0].Status != state.Completed {
		t.Errorf("problem is %s: the step completes before the stop", s.Steps[0].Status)
	}
	r.resume("research", state.RunInProgress)
}

func TestKillSwitchCarryoverTooHigh(t *testing.T) {
	fj := fakejira.New(fakejira.Options{Deployment: fakejira.Cloud})
	t.Cleanup(fj.Close)
	fo := fj.Options()
	r := newExecRig(t, "default_flow: greenfield\njira:\n  deployment: cloud\n",
		"INPUT_JIRA_URL="+fj.URL(), "INPUT_JIRA_USER="+fo.User, "INPUT_JIRA_TOKEN="+fo.Token, "INPUT_JIRA_PROJECT="+fo.Project)
	r.begin()
	r.doneUntil("plan")
	r.say("devin", "/autopilot done plan\n\n```autopilot-epics\n- title: CSV export\n```\n")
	r.say("devin", "/autopilot done decomposed\n\n```autopilot-tasks\n"+
		"- title: Writer\n  epic: CSV export\n- title: Endpoint\n  epic: CSV export\n"+
		"- title: Docs\n  epic: CSV export\n- title: Metrics\n  epic: CSV export\n```\n")
	s := r.now()
	var tasks []state.Task
	for _, tk := range s.Tasks {
		if tk.Kind == state.KindTask {
			tasks = append(tasks, tk)
		}
	}
	if len(tasks) != 4 || tasks[0].Sync != state.SyncCreated {
		t.Fatalf("tasks = %+v", s.Tasks)
	}
	// One task is finished in Jira; the sweep reads it back.
	if err := fj.Transition(tasks[0].Key, "Done"); err != nil {
		t.Fatal(err)
	}
	r.sweep()
	if tk := r.now().Tasks[1]; !tk.Done || tk.Title != "Writer" {
		t.Fatalf("task after the sweep = %+v, want Writer done", tk)
	}
	r.say("maria", "A")
	res := r.say("devin", "/autopilot done first batch")
	r.wantStopped(res, "carryover-too-high", "3 of 4 tasks are still open after Implement")
	r.resume("run-tests", state.RunInProgress)
}

func TestKillSwitchLowConfidenceFallback(t *testing.T) {
	r := newExecRig(t, greenfieldCfg(""))
	r.begin()
	r.say("devin", "/autopilot done --confidence 0.9 problem statement")
	res := r.say("devin", "/autopilot done --confidence 0.5 not sure the research covers it")
	r.wantStopped(res, "low-confidence-fallback", "the executor reported confidence 0.50, below the threshold 0.85")
	if s := r.now(); s.Steps[1].Status != state.Completed {
		t.Errorf("research is %s; the iteration completes before the stop", s.Steps[1].Status)
	}
	r.resume("plan", state.RunInProgress)
}

func TestKillSwitchResourceOverload(t *testing.T) {
	r := newExecRig(t, greenfieldCfg(""))
	r.begin()
	reset := time.Now().Add(time.Hour)
	if err := r.gh.SetRateLimit(token, 1000, 45, reset); err != nil {
		t.Fatal(err)
	}
	res := r.say("devin", "/autopilot done problem statement")
	r.wantStopped(res, "resource-overload", "the API rate budget is nearly spent")
	if !strings.Contains(r.summary(), "rate limit remaining") {
		t.Errorf("summary:\n%s", r.summary())
	}
	// The budget resets; the run resumes.
	if err := r.gh.SetRateLimit(token, 1000, 1000, reset); err != nil {
		t.Fatal(err)
	}
	r.resume("research", state.RunInProgress)
}

func TestKillSwitchUserAbortByStopCommand(t *testing.T) {
	r := newExecRig(t, greenfieldCfg(""))
	r.begin()
	res := r.say("maria", "/autopilot stop")
	r.wantStopped(res, "user-abort", "stopped by @maria")
	// Reports are refused while stopped.
	r.say("devin", "/autopilot done problem")
	r.wantAt("report while stopped", "problem", state.RunStopped)
	r.resume("problem", state.RunInProgress)
	r.say("devin", "/autopilot done problem")
	r.wantAt("after resume", "research", state.RunInProgress)
}

// removeLabel removes a label through the API as maria and returns the
// issues.unlabeled payload for it.
func (r *execRig) removeLabel(label string) []byte {
	r.t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, fmt.Sprintf("%s/repos/%s/issues/%d/labels/%s", r.gh.URL(), repo, r.n, label), nil)
	req.Header.Set("Authorization", "token ghp_maria")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		r.t.Fatalf("remove label: %s", resp.Status)
	}
	return ghtest.Mutate(r.t, ghtest.WithRepo(r.t, ghtest.Payload(r.t, "issues.unlabeled.json"), repo), map[string]any{
		"issue.number": r.n, "issue.labels": r.labels(r.n), "label.name": label, "sender.login": "maria", "sender.type": "User",
	})
}

func TestKillSwitchUserAbortByRemovingTheLabel(t *testing.T) {
	r := newExecRig(t, greenfieldCfg(""))
	r.begin()
	r.say("devin", "/autopilot done problem")
	res := r.event("unlabeled", "issues", r.removeLabel("autopilot"))
	r.wantStopped(res, "user-abort", "the trigger label was removed by @maria")
	// Re-adding the label resumes where the run was.
	r.begin()
	s := r.wantAt("after the label is back", "research", state.RunInProgress)
	if s.Stop != nil || s.LastSession.Reason != "resumed" {
		t.Errorf("stop %+v, last session %+v", s.Stop, s.LastSession)
	}
}

func TestSweepStopsEarlyWhenTheBudgetRunsLow(t *testing.T) {
	r := newExecRig(t, greenfieldCfg(""))
	r.begin()
	issues := []int{r.n}
	for i := 0; i < 2; i++ {
		n, err := r.gh.CreateIssue(repo, "maria", fmt.Sprintf("Another %d", i), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.addLabel(n, "autopilot")
		r.event("start", "issues", r.labeled(n, "maria"))
		issues = append(issues, n)
	}
	// 52 REST requests left (the sweep lists the issues and reads the
	// configuration) and 51 GraphQL ones (one thread read per issue), 50
	// of each kept in reserve: the sweep reconciles what fits and stops.
	if err := r.gh.SetRateLimit(token, 1000, 52, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := r.gh.SetGraphQLRateLimit(token, 51); err != nil {
		t.Fatal(err)
	}
	res := r.sweep()
	sum := r.summary()
	done := strings.Count(sum, "| in-progress |")
	if done < 1 || done > 2 {
		t.Fatalf("%d issues reconciled, want 1 or 2 before the budget ran low:\n%s", done, sum)
	}
	note := fmt.Sprintf("sweep stopped early: the API rate budget is nearly spent; %d of 3 issues left for the next sweep", 3-done)
	if !strings.Contains(sum, note) {
		t.Fatalf("summary lacks %q:\n%s\n%s", note, sum, res.stdout)
	}
	if !strings.Contains(res.stdout, "::warning::") {
		t.Errorf("no warning annotation:\n%s", res.stdout)
	}
	if res.outputs["issue"] == "" {
		t.Errorf("outputs describe no issue: %v", res.outputs)
	}
}
