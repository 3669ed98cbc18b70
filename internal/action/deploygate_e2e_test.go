package action_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/deploygate"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

// deployWorkflow is the deploy step's workflow, as in
// docs/examples/deploy.yml: its first job is the gate job.
const deployWorkflow = "deploy.yml"

const (
	gateReviewed = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	gateLater    = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// deployRig drives a greenfield issue through the binary to its deploy
// step, which the dispatch executor runs as deploy.yml, and records that the
// merge gate passed on gateReviewed (what the PR check records when the
// flow's gates pass on a linked PR's head).
func deployRig(t *testing.T, gateCfg string) (*execRig, gateRun) {
	t.Helper()
	cfg := "default_flow: greenfield\njira: {enabled: false}\n" +
		"steps:\n  deploy: {kind: dispatch, workflow: " + deployWorkflow + "}\n" + gateCfg
	r := newExecRig(t, cfg)
	if err := r.gh.SetWorkflow(repo, deployWorkflow, "deploy", "autopilot ${{ inputs.session }}"); err != nil {
		t.Fatal(err)
	}
	r.mustOK(r.begin(), "start")
	for _, s := range []string{"problem", "research", "plan"} {
		r.mustOK(r.say("devin", "/autopilot done "+s+" finished"), "done "+s)
	}
	r.mustOK(r.say("devin", "/autopilot done decomposed\n\n```autopilot-tasks\n- title: Writer\n```"), "decompose")
	r.mustOK(r.say("maria", "A"), "session boundary")
	for _, s := range []string{"implement", "run-tests", "security-audit"} {
		r.mustOK(r.say("devin", "/autopilot done "+s+" finished"), "done "+s)
	}
	st := r.wantAt("deploy dispatched", "deploy", state.RunInProgress)
	if st.Exec == nil || st.Exec.Session == "" {
		t.Fatalf("the deploy step was not dispatched: exec %+v", st.Exec)
	}
	run := deployRun(r)
	r.backdate(func(s *state.State) {
		s.LinkedPRs = []int{2}
		s.PRChecks = []state.PRCheck{{PR: 2, Head: gateReviewed, GateHead: gateReviewed}}
	})
	return r, gateRun{rig: r, runID: run.ID, session: st.Exec.Session, sha: gateReviewed, env: "production"}
}

// deployRun is the newest run of deploy.yml; the test fails without one.
func deployRun(r *execRig) fakegithub.WorkflowRun {
	r.t.Helper()
	var run fakegithub.WorkflowRun
	for _, rn := range r.gh.Runs(repo) {
		if strings.HasSuffix(rn.Workflow, "/"+deployWorkflow) {
			run = rn
		}
	}
	if run.ID == 0 {
		r.t.Fatal("deploy.yml was not dispatched")
	}
	return run
}

// gateRun is one run of the gate job: the deploy workflow's first job.
type gateRun struct {
	rig     *execRig
	runID   int64
	session string
	sha     string
	env     string
	issue   int
	noKey   bool // run without INPUT_STATE_KEY
}

// run executes "bot deploy-gate" as the gate job of docs/examples/deploy.yml
// does, and returns its exit code and output.
func (g gateRun) run() (int, string) {
	t := g.rig.t
	t.Helper()
	issue := g.issue
	if issue == 0 {
		issue = g.rig.n
	}
	before := len(g.rig.gh.Requests())
	cmd := exec.Command(binary(t), "deploy-gate", "--environment", g.env, "--issue", fmt.Sprint(issue), "--session", g.session)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + g.rig.dir, "GITHUB_ACTIONS=true",
		"GITHUB_REPOSITORY=" + repo, "GITHUB_API_URL=" + g.rig.gh.URL(),
		"GITHUB_RUN_ID=" + fmt.Sprint(g.runID), "GITHUB_SHA=" + g.sha, "GITHUB_REF=refs/heads/main",
		"GITHUB_TOKEN=" + token,
	}
	if !g.noKey {
		cmd.Env = append(cmd.Env, "INPUT_STATE_KEY="+key)
	}
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("gate job: exit %d, %d API calls\n%s", code, len(g.rig.gh.Requests())-before, out)
	return code, string(out)
}

func wantGate(t *testing.T, what string, code int, out string, wantCode int, says string) {
	t.Helper()
	if code != wantCode || !strings.Contains(out, says) {
		t.Fatalf("%s: exit %d, want %d with %q\n%s", what, code, wantCode, says, out)
	}
}

// answerDeploy records maria's answer to the deploy question of env and
// sha, as the engine records an answer.
func answerDeploy(r *execRig, env, sha, letter string) {
	r.backdate(func(s *state.State) {
		s.Seq++
		s.Decisions = append(s.Decisions, state.Decision{
			Gate: fmt.Sprintf("g%d-%s", s.Seq, deploygate.Kind(env, sha)), Question: "Deploy to " + env + "?",
			Option: letter, OptionText: map[string]string{"A": "approve", "B": "reject"}[letter], By: "maria",
			At: time.Now().UTC().Truncate(time.Second), Link: fmt.Sprintf("https://github.com/%s/issues/%d#issuecomment-1", repo, s.Issue),
		})
	})
}

func TestDeployGateJobPassesOnlyAnApprovedReviewedCommit(t *testing.T) {
	r, g := deployRig(t, "deploy_gate: {environments: [production]}\n")

	code, out := g.run()
	wantGate(t, "no answer yet", code, out, 1, "waits for an answer to the deploy question on "+repo+fmt.Sprintf("#%d", r.n))

	answerDeploy(r, "production", gateReviewed, "A")
	code, out = g.run()
	wantGate(t, "answered approve", code, out, 0, "@maria answered approve")

	later := g
	later.sha = gateLater
	code, out = later.run()
	wantGate(t, "a later push", code, out, 1, "a later push is not reviewed")

	staging := g
	staging.env = "staging"
	code, out = staging.run()
	wantGate(t, "an environment autopilot does not gate", code, out, 0, `environment "staging" is not listed`)

	answerDeploy(r, "production", gateReviewed, "B")
	code, out = g.run()
	wantGate(t, "answered reject", code, out, 1, "@maria answered reject")
}

func TestDeployGateJobRejectsAStoppedFlow(t *testing.T) {
	r, g := deployRig(t, "")
	answerDeploy(r, "production", gateReviewed, "A")
	r.backdate(func(s *state.State) {
		s.Run, s.Stop = state.RunStopped, &state.Stop{Reason: "user-abort", Resume: state.RunInProgress}
	})
	code, out := g.run()
	wantGate(t, "stopped", code, out, 1, "is stopped (user-abort)")
}

func TestDeployGateJobUnmatchedFollowsThePolicy(t *testing.T) {
	r, g := deployRig(t, "")
	other, err := r.gh.CreateIssue(repo, "maria", "Not an autopilot issue", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	g.issue, g.session = other, ""
	code, out := g.run()
	wantGate(t, "unmatched, ignore", code, out, 0, "matches no autopilot issue")

	// A run the issue did not dispatch does not match it either.
	g.issue, g.runID = r.n, g.runID+1000
	code, out = g.run()
	wantGate(t, "another run", code, out, 0, "matches no autopilot issue")

	if err := r.gh.SetFile(repo, ".github/autopilot.yml", []byte(r.cfg+"deploy_gate: {unmatched: reject}\n")); err != nil {
		t.Fatal(err)
	}
	code, out = g.run()
	wantGate(t, "unmatched, reject", code, out, 1, "deploy_gate.unmatched is reject")
}

// TestDeployGateJobAutoApprovesADeployStepReachedByAnAnswer is Action
// mode's documented path without the App: a flow whose deploy step asks
// first (confirm: true), deploy_gate.auto_approve, and the gate job passes
// once the confirmation was answered and the gates passed on the commit.
func TestDeployGateJobAutoApprovesADeployStepReachedByAnAnswer(t *testing.T) {
	cfg := "default_flow: ship\njira: {enabled: false}\n" +
		"flows:\n  ship:\n    steps:\n      - {slug: build, name: Build}\n      - {slug: deploy, name: Deploy, confirm: true}\n" +
		"steps:\n  deploy: {kind: dispatch, workflow: " + deployWorkflow + "}\n" +
		"deploy_gate: {auto_approve: true}\n"
	r := newExecRig(t, cfg)
	if err := r.gh.SetWorkflow(repo, deployWorkflow, "deploy", "autopilot ${{ inputs.session }}"); err != nil {
		t.Fatal(err)
	}
	r.mustOK(r.begin(), "start")
	r.mustOK(r.say("devin", "/autopilot done build finished"), "done build")
	if g := r.now().Gate; g == nil || g.Kind != state.GateConfirm("deploy") {
		t.Fatalf("no confirmation asked before deploy: gate %+v", g)
	}
	r.mustOK(r.say("maria", "A"), "confirm deploy")
	st := r.wantAt("deploy dispatched", "deploy", state.RunInProgress)
	run := deployRun(r)
	g := gateRun{rig: r, runID: run.ID, session: st.Exec.Session, sha: gateReviewed, env: "production"}

	code, out := g.run()
	wantGate(t, "no gate passed yet", code, out, 1, "no gate of "+repo)

	r.backdate(func(s *state.State) {
		s.LinkedPRs = []int{2}
		s.PRChecks = []state.PRCheck{{PR: 2, Head: gateReviewed, GateHead: gateReviewed}}
	})
	code, out = g.run()
	wantGate(t, "auto-approved", code, out, 0, "the deploy step was reached by an answer (deploy_gate.auto_approve)")
}

// TestDeployGateJobRefusesAStateThatDoesNotVerify: someone with write
// access edits the signed state comment (here: to record an approval);
// the gate job fails closed instead of passing the deploy as unmatched.
func TestDeployGateJobRefusesAStateThatDoesNotVerify(t *testing.T) {
	r, g := deployRig(t, "")
	for _, c := range r.gh.Comments(repo, r.n) {
		if c.Author.Login != fakegithub.ActionsBotLogin || !strings.HasPrefix(c.Body, state.Marker) {
			continue
		}
		s, err := codec.Parse(c.Body, codec.Want{Repo: repo, Issue: r.n, Key: []byte(key)})
		if err != nil {
			t.Fatal(err)
		}
		s.Decisions = append(s.Decisions, state.Decision{Gate: "g99-" + string(deploygate.Kind("production", gateReviewed)), Option: "A", By: "maria"})
		forged, err := codec.Render(s, codec.View{}, []byte("not-the-key"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.gh.EditComment(c.ID, "maria", forged); err != nil {
			t.Fatal(err)
		}
	}
	code, out := g.run()
	wantGate(t, "tampered state", code, out, 1, "does not verify")
}

// TestDeployGateJobWithoutTheStateKeyRefusesASignedState: a gate job that
// cannot verify the signed state fails instead of trusting it unverified.
func TestDeployGateJobWithoutTheStateKeyRefusesASignedState(t *testing.T) {
	r, g := deployRig(t, "")
	answerDeploy(r, "production", gateReviewed, "A")
	g.noKey = true
	code, out := g.run()
	wantGate(t, "no state key", code, out, 1, "is signed")
}
