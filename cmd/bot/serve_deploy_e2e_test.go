package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// The deploy gate in App mode (docs/deploy-gate.md) through the real
// binary: two replicas of `bot serve` on one Redis, the fake GitHub as the
// environment's custom deployment protection rule sending signed
// deployment_protection_rule deliveries, and the callback's calls counted
// on the fake.

const deployFlow = `default_flow: ship
jira: {enabled: false}
flows:
  ship:
    title: Ship
    steps:
      - {slug: code, name: Code, implements: true}
      - {slug: verify, name: Verify}
      - {slug: deploy, name: Deploy}
steps:
  deploy: {kind: dispatch, workflow: deploy.yml, timeout: 30m}
`

const deploySHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"

// deployRig is a repository whose issue reached its deploy step with the
// merge gate passed on PR's head deploySHA, the deploy workflow's run
// dispatched and recorded, and two replicas serving.
type deployRig struct {
	g      *apptest.GitHub
	a, b   *replica
	issue  int
	pr     int
	run    int64
	before int // the fake's request log length when the rig was ready
}

func newDeployRig(t *testing.T, config string, extra ...string) *deployRig {
	t.Helper()
	g := apptest.New(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(g.SetFile(apptest.Repo, ".github/autopilot.yml", []byte(config)))
	must(g.SetWorkflow(apptest.Repo, "deploy.yml", "deploy", "autopilot ${{ inputs.session }}"))
	for _, env := range []string{"production", "staging"} {
		must(g.AddEnvironment(apptest.Repo, env))
		must(g.EnableProtectionRule(apptest.Repo, env, apptest.AppID))
	}
	prefix := fmt.Sprintf("autopilot-e2e-deploy-%d:", time.Now().UnixNano())
	env := func() map[string]string {
		e := baseEnv(t, g)
		redisEnv(t, e, prefix)
		for i := 0; i+1 < len(extra); i += 2 {
			e[extra[i]] = extra[i+1]
		}
		return e
	}
	rg := &deployRig{g: g, a: startReplica(t, "a", env()), b: startReplica(t, "b", env())}
	rg.issue = g.Issue(apptest.Repo, "Ship CSV export")
	rg.a.mustAccept(g.Labeled(apptest.Repo, rg.issue, apptest.Maintainer, "autopilot"))
	waitStep(t, g, rg.issue, "code")
	pr, d := g.OpenPR(apptest.Repo, rg.issue, apptest.Writer, deploySHA)
	rg.pr = pr
	rg.b.mustAccept(d)
	waitFor(t, "the PR linked and read", func() bool {
		st := g.State(apptest.Repo, rg.issue)
		return st != nil && len(st.PRChecks) == 1 && st.PRChecks[0].Head == deploySHA
	})
	rg.a.mustAccept(g.Say(apptest.Repo, rg.issue, apptest.Maintainer, "/autopilot done implemented in #"+fmt.Sprint(pr)))
	waitStep(t, g, rg.issue, "verify")
	rg.b.mustAccept(g.Say(apptest.Repo, rg.issue, apptest.Maintainer, "/autopilot done verified"))
	waitFor(t, "the deploy step's run dispatched and recorded", func() bool {
		st := g.State(apptest.Repo, rg.issue)
		return st != nil && st.Slug == "deploy" && st.Exec != nil && st.Exec.RunID != 0
	})
	st := g.State(apptest.Repo, rg.issue)
	if st.PRChecks[0].GateHead != deploySHA {
		t.Fatalf("the merge gate passed on %q, want %s", st.PRChecks[0].GateHead, deploySHA)
	}
	rg.run = st.Exec.RunID
	rg.before = len(g.Requests())
	return rg
}

// request makes run's job wait on env and delivers the protection-rule
// request to replica r (signed as GitHub signs); it returns the status.
func (rg *deployRig) request(t *testing.T, r *replica, run int64, env string, prs ...int) fakegithub.DeploymentRequest {
	t.Helper()
	req, err := rg.g.RequestDeployment(apptest.Repo, fakegithub.DeploymentRequest{RunID: run, Environment: env, SHA: deploySHA, PRs: prs})
	if err != nil {
		t.Fatal(err)
	}
	rg.deliver(t, r, req)
	return req
}

// deliver (re)delivers req to replica r and wants it accepted.
func (rg *deployRig) deliver(t *testing.T, r *replica, req fakegithub.DeploymentRequest) {
	t.Helper()
	code, err := rg.g.DeliverDeploymentRequest(req, r.url+hookPath, apptest.Secret)
	if err != nil || code != http.StatusAccepted {
		t.Fatalf("deployment_protection_rule delivery to %s: %d %v, want 202", r.name, code, err)
	}
}

// answers counts the App's callbacks on run since the rig was ready:
// answers carry a state, reports do not.
func (rg *deployRig) answers(run int64) (answers, reports int) {
	path := fmt.Sprintf("/repos/%s/actions/runs/%d/deployment_protection_rule", apptest.Repo, run)
	for _, q := range rg.g.AppRequests(rg.before) {
		if q.Method != http.MethodPost || q.Path != path {
			continue
		}
		if strings.Contains(q.Body, `"state"`) {
			answers++
		} else {
			reports++
		}
	}
	return answers, reports
}

// deployJobs counts the deployment_protection_rule jobs both replicas
// finished (the Redis queue hands a job to either).
func (rg *deployRig) deployJobs() float64 {
	n := 0.0
	for _, r := range []*replica{rg.a, rg.b} {
		n += max(r.metric(`autopilot_jobs_total{event="deployment_protection_rule",outcome="ok"}`), 0)
	}
	return n
}

// waitDeploy waits until run's request for env is recorded with pred.
func waitDeploy(t *testing.T, rg *deployRig, run int64, env, what string, pred func(*state.DeployRequest) bool) {
	t.Helper()
	waitFor(t, what, func() bool {
		st := rg.g.State(apptest.Repo, rg.issue)
		return st != nil && st.Deploy(run, env) != nil && pred(st.Deploy(run, env))
	})
}

func fakeRequest(g *apptest.GitHub, run int64, env string) fakegithub.DeploymentRequest {
	for _, r := range g.DeploymentRequests(apptest.Repo) {
		if r.RunID == run && strings.EqualFold(r.Environment, env) {
			return r
		}
	}
	return fakegithub.DeploymentRequest{}
}

// TestServeDeployGateApprovedByAnAnswerCallsBackOnce: the dispatched
// deploy run's request is matched by its run id; autopilot posts one status
// report and asks; the answer A (on the other replica) makes exactly one
// callback, approved, recorded in Key Decisions; a redelivered request
// and a sweep make none.
func TestServeDeployGateApprovedByAnAnswerCallsBackOnce(t *testing.T) {
	rg := newDeployRig(t, deployFlow)
	rg.request(t, rg.a, rg.run, "production")
	waitFor(t, "the deploy question open", func() bool {
		st := rg.g.State(apptest.Repo, rg.issue)
		return st != nil && st.Gate != nil && strings.HasPrefix(string(st.Gate.Kind), "deploy-")
	})
	rg.a.idle()
	rg.b.idle()
	if _, reports := rg.answers(rg.run); reports != 1 {
		t.Errorf("status reports %d, want 1", reports)
	}
	asked := len(rg.g.Requests())
	t.Logf("the request, to the question: %s", callsOf(rg.g.AppRequests(rg.before)))
	rg.b.mustAccept(rg.g.Say(apptest.Repo, rg.issue, apptest.Maintainer, "A"))
	waitDeploy(t, rg, rg.run, "production", "the approval sent", func(d *state.DeployRequest) bool { return d.Sent })
	rg.a.idle()
	rg.b.idle()
	t.Logf("the answer A, to the callback: %s", callsOf(rg.g.AppRequests(asked)))
	if got := fakeRequest(rg.g, rg.run, "production"); got.State != fakegithub.DeploymentApproved || !strings.Contains(got.Comment, "@maria answered approve") {
		t.Errorf("GitHub's request %+v, want approved by maria's answer", got)
	}
	st := rg.g.State(apptest.Repo, rg.issue)
	last := st.Decisions[len(st.Decisions)-1]
	if last.By != apptest.Maintainer || last.Option != "A" || last.Link == "" {
		t.Errorf("key decision %+v, want maria's A with its link", last)
	}

	// GitHub's redelivery keeps the delivery's id: answered as a duplicate.
	req := fakeRequest(rg.g, rg.run, "production")
	if code, err := rg.g.DeliverDeploymentRequest(req, rg.b.url+hookPath, apptest.Secret); err != nil || code != http.StatusOK {
		t.Fatalf("redelivery: %d %v, want 200 (duplicate)", code, err)
	}
	// The same request in a delivery of its own (another id): handled,
	// and answered by the state, not again.
	version := st.Version
	jobs := rg.deployJobs()
	again := req
	again.DeploymentID++
	rg.deliver(t, rg.b, again)
	waitFor(t, "the second delivery handled", func() bool { return rg.deployJobs() > jobs })
	if answers, _ := rg.answers(rg.run); answers != 1 {
		t.Errorf("callbacks with an answer %d, want exactly 1", answers)
	}
	if v := rg.g.State(apptest.Repo, rg.issue).Version; v != version {
		t.Errorf("the redelivery wrote the state (v%d → v%d)", version, v)
	}
}

// TestServeDeployGateRejectsAndCountsA422AsSent: a stopped flow's deploy
// is rejected with the reason and a note on the issue; an answer that
// meets GitHub's 422 (someone decided first) is recorded sent, not
// retried; an unmatched request follows deploy_gate.unmatched.
func TestServeDeployGateRejectsAndCountsA422AsSent(t *testing.T) {
	rg := newDeployRig(t, deployFlow)

	// Someone decided first: the App's answer gets 422, which counts.
	req, err := rg.g.RequestDeployment(apptest.Repo, fakegithub.DeploymentRequest{RunID: rg.run, Environment: "staging", SHA: deploySHA})
	if err != nil {
		t.Fatal(err)
	}
	if err := rg.g.DecideDeployment(apptest.Repo, rg.run, "staging", fakegithub.DeploymentApproved); err != nil {
		t.Fatal(err)
	}
	rg.a.mustAccept(g422Stop(rg)) // stop the flow first: the answer is a rejection
	waitFor(t, "the flow stopped", func() bool {
		st := rg.g.State(apptest.Repo, rg.issue)
		return st != nil && st.Run == state.RunStopped
	})
	rg.deliver(t, rg.b, req)
	waitDeploy(t, rg, rg.run, "staging", "the rejection recorded sent after a 422", func(d *state.DeployRequest) bool { return d.Sent })
	d := rg.g.State(apptest.Repo, rg.issue).Deploy(rg.run, "staging")
	if d.Answer != state.DeployRejected || !strings.Contains(d.Comment, "is stopped") {
		t.Errorf("recorded %+v, want rejected: stopped", d)
	}
	if answers, _ := rg.answers(rg.run); answers != 1 {
		t.Errorf("answers sent %d, want 1 (the 422 is not retried)", answers)
	}

	// A stopped flow: rejected with the reason, and a note on the issue.
	rg.request(t, rg.a, rg.run, "production")
	waitDeploy(t, rg, rg.run, "production", "the stopped flow's deploy rejected", func(d *state.DeployRequest) bool { return d.Sent })
	if got := fakeRequest(rg.g, rg.run, "production"); got.State != fakegithub.DeploymentRejected || !strings.Contains(got.Comment, "is stopped") {
		t.Errorf("GitHub's request %+v, want rejected: stopped", got)
	}
	if n := rg.g.BotComments(apptest.Repo, rg.issue, "🚫 Rejected the deploy"); n != 2 {
		t.Errorf("%d notes on the issue say why a deploy was rejected, want 2 (staging, production)", n)
	}

	// A run autopilot did not dispatch, for no pull request: unmatched.
	other := rg.otherRun(t)
	rg.request(t, rg.b, other, "production")
	waitFor(t, "the unmatched request answered (ignore: approved)", func() bool {
		return fakeRequest(rg.g, other, "production").State == fakegithub.DeploymentApproved
	})
	if err := rg.g.SetFile(apptest.Repo, ".github/autopilot.yml", []byte(deployFlow+"deploy_gate: {unmatched: reject}\n")); err != nil {
		t.Fatal(err)
	}
	rg.request(t, rg.a, other, "staging")
	waitFor(t, "the unmatched request answered (reject)", func() bool {
		return fakeRequest(rg.g, other, "staging").State == fakegithub.DeploymentRejected
	})
	if c := fakeRequest(rg.g, other, "staging").Comment; !strings.Contains(c, "deploy_gate.unmatched is reject") {
		t.Errorf("comment %q does not name the policy", c)
	}
}

// g422Stop is maria's /autopilot stop on the rig's issue.
func g422Stop(rg *deployRig) apptest.Delivery {
	return rg.g.Say(apptest.Repo, rg.issue, apptest.Maintainer, "/autopilot stop")
}

// otherRun is a run autopilot did not dispatch (a contributor's, whose
// name carries no session token).
func (rg *deployRig) otherRun(t *testing.T) int64 {
	t.Helper()
	id, err := rg.g.AddForkRun(apptest.Repo, "deploy.yml", "someone/widgets", "manual deploy", deploySHA)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestServeDeployGateReplicaKilledBeforeTheCallbackAnswersOnce: the
// replica applying the answer A writes the state (the callback announced
// in its outbox) and is killed (SIGKILL) while the callback hangs, before
// GitHub took it; the other replica claims the delivery and sends the
// callback from the outbox: exactly one answer reaches GitHub. A callback
// GitHub took while its answer was lost is sent again and meets the 422,
// which counts as sent.
func TestServeDeployGateReplicaKilledBeforeTheCallbackAnswersOnce(t *testing.T) {
	rg := newDeployRig(t, deployFlow, "QUEUE_CLAIM_IDLE", "2s", "LOCK_TTL", "2s")
	jobs := rg.deployJobs()
	rg.request(t, rg.a, rg.run, "production")
	waitFor(t, "the deploy question open", func() bool {
		st := rg.g.State(apptest.Repo, rg.issue)
		return st != nil && st.Gate != nil && strings.HasPrefix(string(st.Gate.Kind), "deploy-")
	})
	// The request's job ends with its status report, a POST to the same
	// callback: the scripts below are for the answers, so they wait for it
	// (the question shows in the state before the report is sent).
	waitFor(t, "the request's job done", func() bool { return rg.deployJobs() > jobs })
	callback := "/repos/*/*/actions/runs/*/deployment_protection_rule"
	rg.g.Script("POST", callback, fakegithub.Delayed(time.Hour))
	rg.a.mustAccept(rg.g.Say(apptest.Repo, rg.issue, apptest.Maintainer, "A"))
	waitDeploy(t, rg, rg.run, "production", "the answer written before the callback", func(d *state.DeployRequest) bool {
		return d.Answer == state.DeployApproved && !d.Sent
	})
	var doomed, other *replica
	// Stuck in the callback: the hanging step taken (GitHub holds the
	// request), not only a job in flight — killed earlier, the replica
	// would leave the hang to the other one's callback.
	waitFor(t, "the replica stuck in the callback", func() bool {
		for _, r := range []*replica{rg.a, rg.b} {
			if r.metric("autopilot_jobs_in_flight") == 1 {
				doomed = r
			}
		}
		return doomed != nil && rg.g.PendingSteps() == 0
	})
	other = rg.a
	if doomed == rg.a {
		other = rg.b
	}
	if err := doomed.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-doomed.exited
	waitDeploy(t, rg, rg.run, "production", "the callback sent by the other replica", func(d *state.DeployRequest) bool { return d.Sent })
	if got := fakeRequest(rg.g, rg.run, "production"); got.State != fakegithub.DeploymentApproved {
		t.Errorf("GitHub's request %+v, want approved", got)
	}
	taken := 0
	for _, q := range rg.g.AppRequests(rg.before) {
		if q.Method == http.MethodPost && strings.HasSuffix(q.Path, "/deployment_protection_rule") && strings.Contains(q.Body, `"state"`) && q.Status == http.StatusNoContent {
			taken++
		}
	}
	if taken != 1 {
		t.Errorf("GitHub took %d answers, want exactly 1", taken)
	}
	if other.metric(`autopilot_jobs_total{event="issue_comment",outcome="ok"}`) < 1 {
		t.Errorf("the other replica did not run the claimed delivery")
	}

	// GitHub takes the staging answer but its reply is lost: the job
	// fails with the answer still owed; the next event on the issue (here
	// a comment; else the sweep) sends it again and meets the 422 of a
	// decided request, which counts as sent.
	jobs = rg.deployJobs()
	rg.request(t, other, rg.run, "staging")
	waitFor(t, "the staging question open", func() bool {
		st := rg.g.State(apptest.Repo, rg.issue)
		return st != nil && st.Gate != nil && st.Gate.Kind == st.Deploy(rg.run, "staging").Gate
	})
	waitFor(t, "the staging request's job done", func() bool { return rg.deployJobs() > jobs })
	rg.g.Script("POST", callback, fakegithub.AfterCommit(0))
	other.mustAccept(rg.g.Say(apptest.Repo, rg.issue, apptest.Maintainer, "B"))
	waitFor(t, "the lost answer taken by GitHub", func() bool {
		return fakeRequest(rg.g, rg.run, "staging").State == fakegithub.DeploymentRejected && rg.g.PendingSteps() == 0
	})
	other.idle()
	// The killed replica's delivery of A, claimed when idle, may be the
	// event that sends the owed answer again (422: counted as sent)
	// before the comment below; either order is right.
	if d := rg.g.State(apptest.Repo, rg.issue).Deploy(rg.run, "staging"); !d.Sent {
		other.mustAccept(rg.g.Say(apptest.Repo, rg.issue, apptest.Writer, "Thanks, deploying tomorrow."))
	}
	waitDeploy(t, rg, rg.run, "staging", "the lost answer counted as sent after the 422", func(d *state.DeployRequest) bool { return d.Sent })
	if got := fakeRequest(rg.g, rg.run, "staging"); got.State != fakegithub.DeploymentRejected {
		t.Errorf("GitHub's staging request %+v, want rejected", got)
	}
	took, met422 := 0, 0
	for _, q := range rg.g.AppRequests(rg.before) {
		if q.Method != http.MethodPost || !strings.HasSuffix(q.Path, "/deployment_protection_rule") || !strings.Contains(q.Body, `"state"`) || !strings.Contains(q.Body, `"staging"`) {
			continue
		}
		if q.Status == http.StatusUnprocessableEntity {
			met422++
		} else {
			took++
		}
	}
	if took != 1 || met422 < 1 {
		t.Errorf("staging answers: GitHub took %d (want exactly 1), %d met the 422 (want at least 1: the lost one sent again)", took, met422)
	}
}

// callsOf summarises requests as "METHOD path-shape ×n" (numbers as {n}),
// in order of first appearance.
func callsOf(reqs []fakegithub.Request) string {
	var order []string
	count := map[string]int{}
	for _, q := range reqs {
		var segs []string
		for _, seg := range strings.Split(q.Path, "/") {
			if seg != "" && strings.Trim(seg, "0123456789") == "" {
				seg = "{n}"
			}
			segs = append(segs, seg)
		}
		k := q.Method + " " + strings.Join(segs, "/")
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, fmt.Sprintf("%s ×%d", k, count[k]))
	}
	return fmt.Sprintf("%d calls: %s", len(reqs), strings.Join(out, ", "))
}

// TestServeDeployGateRejectsAnUnreviewedPush: the dispatched deploy run
// asks for a commit the gates did not pass on (a push after the review):
// GitHub gets one rejection that says so, and the issue a note.
func TestServeDeployGateRejectsAnUnreviewedPush(t *testing.T) {
	rg := newDeployRig(t, deployFlow)
	const later = "0123456789abcdef0123456789abcdef01234567"
	req, err := rg.g.RequestDeployment(apptest.Repo, fakegithub.DeploymentRequest{RunID: rg.run, Environment: "production", SHA: later})
	if err != nil {
		t.Fatal(err)
	}
	rg.deliver(t, rg.b, req)
	waitDeploy(t, rg, rg.run, "production", "the unreviewed push's rejection recorded sent", func(d *state.DeployRequest) bool { return d.Sent })
	got := fakeRequest(rg.g, rg.run, "production")
	if got.State != fakegithub.DeploymentRejected || !strings.Contains(got.Comment, "a later push is not reviewed") {
		t.Errorf("GitHub's request %+v, want rejected: a later push is not reviewed", got)
	}
	if answers, _ := rg.answers(rg.run); answers != 1 {
		t.Errorf("answers sent %d, want 1", answers)
	}
	if n := rg.g.BotComments(apptest.Repo, rg.issue, "🚫 Rejected the deploy"); n != 1 {
		t.Errorf("%d notes on the issue say why the deploy was rejected, want 1", n)
	}
}
