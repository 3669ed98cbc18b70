package action_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// lastCheck is the newest autopilot check run on sha (GitHub shows and
// branch protection reads that one); ok is false when there is none.
func (r *execRig) lastCheck(sha string) (fakegithub.CheckRun, bool) {
	var last fakegithub.CheckRun
	found := false
	for _, c := range r.gh.CheckRuns(repo, sha) {
		if c.Name == "autopilot" {
			last, found = c, true
		}
	}
	return last, found
}

// checkWrites counts the check runs the last binary run created.
func (r *execRig) checkWrites() int {
	k := 0
	for _, q := range r.gh.Requests()[r.starts[len(r.starts)-1]:] {
		if q.Method == "POST" && strings.HasSuffix(q.Path, "/check-runs") {
			k++
		}
	}
	return k
}

// mergeGroup delivers merge_group.checks_requested for PR pr queued at
// the temporary commit sha.
func (r *execRig) mergeGroup(pr int, sha string) result {
	r.t.Helper()
	p := ghtest.Mutate(r.t, ghtest.WithRepo(r.t, ghtest.Payload(r.t, "merge_group.checks_requested.json"), repo), map[string]any{
		"merge_group.head_sha": sha, "merge_group.head_ref": fmt.Sprintf("refs/heads/gh-readonly-queue/main/pr-%d-%s", pr, headSHA),
		"sender.login": "maria", "sender.type": "User",
	})
	return r.event("merge group", "merge_group", p)
}

// TestPRCheckRedToGreenAcrossAPush drives the review loop through the
// Action binary: the check on the PR head is in progress while the code
// review waits; a push gives the new head its own check and leaves the
// old head's as it was; an approval of the new head and green CI there
// turn the new head's check green. Every pass creates at most one check
// run per state change, and none when nothing shown changed.
func TestPRCheckRedToGreenAcrossAPush(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg)
	type pass struct {
		what          string
		changed       bool
		writes, calls int
	}
	var passes []pass
	measure := func(what string, run func() result) {
		t.Helper()
		before := int64(-1)
		if len(r.starts) > 0 {
			before = r.now().Version
		}
		res := run()
		passes = append(passes, pass{what, r.now().Version != before, r.checkWrites(), res.calls})
	}
	measure("start", r.begin)
	var pr int
	r.reviewLoopTo("code-review", &pr, headSHA)
	c, ok := r.lastCheck(headSHA)
	if !ok || c.Status != "in_progress" || c.ExternalID != fmt.Sprintf("autopilot#%d", r.n) || len(c.Actions) != 0 {
		t.Fatalf("check at code review = %+v (found %v)", c, ok)
	}
	if !strings.Contains(c.Summary, "approving review") || !strings.Contains(c.Summary, "Code Review") {
		t.Errorf("summary does not say what the check waits for:\n%s", c.Summary)
	}
	measure("sweep, nothing changed", r.sweep)

	// A push: the new head gets its own check; the old head's stays.
	const newHead = "0123456789abcdef0123456789abcdef01234567"
	oldRuns := r.gh.CheckRuns(repo, headSHA)
	if err := r.gh.PushPull(repo, pr, newHead); err != nil {
		t.Fatal(err)
	}
	measure("push", func() result {
		return r.event("synchronize", "pull_request", r.prPayload("pull_request.synchronize.json", pr, newHead))
	})
	if c, ok := r.lastCheck(newHead); !ok || c.Status != "in_progress" {
		t.Fatalf("new head's check = %+v (found %v)", c, ok)
	}
	if got := r.gh.CheckRuns(repo, headSHA); fmt.Sprint(got) != fmt.Sprint(oldRuns) {
		t.Errorf("the old head's checks changed after the push:\nbefore %+v\nafter  %+v", oldRuns, got)
	}

	// A merge queue entry now: the queue's commit gets a failing check.
	r.mergeGroup(pr, "9999999999999999999999999999999999999991")
	if c, ok := r.lastCheck("9999999999999999999999999999999999999991"); !ok || c.Conclusion != "failure" {
		t.Errorf("merge group check before the gate = %+v (found %v), want failure", c, ok)
	}

	// Red → green on the new head: approval there, then green CI.
	if err := r.gh.AddStatus(repo, newHead, "ci/test", "pending"); err != nil {
		t.Fatal(err)
	}
	measure("approval", func() result { return r.review(pr, newHead, "maria", "APPROVED", "") })
	r.wantAt("qa", "qa", state.RunInProgress)
	if c, _ := r.lastCheck(newHead); c.Status != "in_progress" || !strings.Contains(c.Summary, "green checks") {
		t.Errorf("check during QA = %+v", c)
	}
	if err := r.gh.AddStatus(repo, newHead, "ci/test", "success"); err != nil {
		t.Fatal(err)
	}
	measure("green CI", func() result {
		return r.event("synchronize", "pull_request", r.prPayload("pull_request.synchronize.json", pr, newHead))
	})
	r.wantAt("done", "done", state.RunDone)
	green, _ := r.lastCheck(newHead)
	if green.Status != "completed" || green.Conclusion != "success" {
		t.Fatalf("new head's check after QA = %s/%s, want completed/success", green.Status, green.Conclusion)
	}
	if c, _ := r.lastCheck(headSHA); c.Conclusion == "success" {
		t.Error("the old head, never approved, turned green")
	}
	measure("sweep after done", r.sweep)
	// Queued now, the merge group's commit carries the head's success.
	measure("merge group", func() result { return r.mergeGroup(pr, "9999999999999999999999999999999999999992") })
	if c, ok := r.lastCheck("9999999999999999999999999999999999999992"); !ok || c.Conclusion != "success" {
		t.Errorf("merge group check after the gate = %+v (found %v), want success", c, ok)
	}
	// The queue asks again for the same commit (a re-run): the bot's own
	// green check there is no stranger's.
	r.mergeGroup(pr, "9999999999999999999999999999999999999992")

	t.Logf("check summary on %s (%s/%s), as rendered:\n%s\n%s", newHead[:7], green.Status, green.Conclusion, green.Title, green.Summary)
	t.Log("calls per pass (check-run writes / all API calls, state changed?):")
	for _, p := range passes {
		t.Logf("  %-24s check writes %d, calls %d, state changed %v", p.what, p.writes, p.calls, p.changed)
		if p.writes > 1 {
			t.Errorf("%s: %d check-run writes for one PR", p.what, p.writes)
		}
		if !p.changed && p.writes != 0 && p.what != "merge group" {
			t.Errorf("%s: a check run written although the state did not change", p.what)
		}
	}
}

// TestPRCheckGreenfieldPushAfterTheGate: in greenfield the check turns
// green when run-tests (the merge gate step) completes, and a push after
// that leaves the new head red through the Action binary.
func TestPRCheckGreenfieldPushAfterTheGate(t *testing.T) {
	r := newExecRig(t, greenfieldCfg(""))
	r.begin()
	for i := 0; i < 20 && r.now().Slug != "run-tests"; i++ {
		if g := r.now().Gate; g != nil {
			r.say("maria", g.Options[0].Letter)
			continue
		}
		r.say("devin", "/autopilot done "+r.now().Slug+" finished")
	}
	r.wantAt("the gate step", "run-tests", state.RunInProgress)
	pr := r.openPR(headSHA)
	r.say("devin", "/autopilot done tests pass")
	if c, ok := r.lastCheck(headSHA); !ok || c.Conclusion != "success" {
		t.Fatalf("check after run-tests = %+v (found %v), want success", c, ok)
	}
	const newHead = "0123456789abcdef0123456789abcdef01234567"
	if err := r.gh.PushPull(repo, pr, newHead); err != nil {
		t.Fatal(err)
	}
	r.event("synchronize", "pull_request", r.prPayload("pull_request.synchronize.json", pr, newHead))
	c, ok := r.lastCheck(newHead)
	if !ok || c.Status != "completed" || c.Conclusion != "failure" || !strings.Contains(c.Title, "head changed after the merge gate passed") {
		t.Fatalf("new head's check = %+v (found %v), want completed/failure", c, ok)
	}
	if c, _ := r.lastCheck(headSHA); c.Conclusion != "success" {
		t.Errorf("the gated head's check changed: %+v", c)
	}
}

// TestPRCheckReapprovedAfterAPush drives the review loop through the
// Action binary in the order that left a re-reviewed PR red: an approval
// of head 1, a push, a fresh approval of head 2 while QA waits, green CI
// on head 2. The run ends done with head 2's check green. A second push
// after the run ended turns head 3 red until someone approves head 3.
func TestPRCheckReapprovedAfterAPush(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg)
	r.begin()
	var pr int
	r.reviewLoopTo("code-review", &pr, headSHA)
	r.review(pr, headSHA, "maria", "APPROVED", "")
	r.wantAt("QA after the first approval", "qa", state.RunInProgress)

	const head2 = "0123456789abcdef0123456789abcdef01234567"
	if err := r.gh.PushPull(repo, pr, head2); err != nil {
		t.Fatal(err)
	}
	r.event("push", "pull_request", r.prPayload("pull_request.synchronize.json", pr, head2))
	r.review(pr, head2, "bob", "APPROVED", "approved again after the push")
	if err := r.gh.AddStatus(repo, head2, "ci/test", "success"); err != nil {
		t.Fatal(err)
	}
	r.event("green CI", "pull_request", r.prPayload("pull_request.synchronize.json", pr, head2))
	r.wantAt("done", "done", state.RunDone)
	if c, ok := r.lastCheck(head2); !ok || c.Status != "completed" || c.Conclusion != "success" {
		t.Fatalf("head 2's check = %+v (found %v), want completed/success: it was approved and green", c, ok)
	}

	const head3 = "1123456789abcdef0123456789abcdef01234567"
	if err := r.gh.PushPull(repo, pr, head3); err != nil {
		t.Fatal(err)
	}
	r.event("push after done", "pull_request", r.prPayload("pull_request.synchronize.json", pr, head3))
	if c, _ := r.lastCheck(head3); c.Conclusion != "failure" {
		t.Fatalf("head 3's check after a push = %+v, want failure (not reviewed)", c)
	}
	r.review(pr, head3, "bob", "APPROVED", "approved after the run ended")
	if c, _ := r.lastCheck(head3); c.Conclusion != "success" {
		t.Errorf("head 3's check after its approval = %s/%s %q, want success", c.Status, c.Conclusion, c.Title)
	}
}
