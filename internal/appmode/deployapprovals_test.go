package appmode

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/engine/deploygate"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
)

const deployPolicyConfig = `default_flow: ship
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
approvals:
  deploy:
    users: [maria, grace]
    min: 2
`

// deliveryOf is the deployment_protection_rule delivery the fake sends
// for req, caught on its way to the App (the rig processes it in process).
func deliveryOf(t *testing.T, g *apptest.GitHub, req fakegithub.DeploymentRequest) apptest.Delivery {
	t.Helper()
	var d apptest.Delivery
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		d = apptest.Delivery{Event: r.Header.Get("X-GitHub-Event"), ID: r.Header.Get("X-GitHub-Delivery"), Body: body}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	if code, err := g.DeliverDeploymentRequest(req, srv.URL, apptest.Secret); err != nil || code != http.StatusAccepted {
		t.Fatalf("deliver the deployment request: %d %v", code, err)
	}
	return d
}

// TestTheDeployPolicyDecidesTheDeployQuestionThroughTheApp: under
// approvals: {deploy: {users: [maria, grace], min: 2}}, maria's answer on
// the issue is one vote (no callback; GitHub's job still waits), and
// grace's approval on the environment page, read by the sweep, is the
// second: one callback, approved, naming both.
func TestTheDeployPolicyDecidesTheDeployQuestionThroughTheApp(t *testing.T) {
	const sha = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	g := apptest.New(t)
	for _, err := range []error{
		g.SetFile(apptest.Repo, ".github/autopilot.yml", []byte(deployPolicyConfig)),
		g.SetWorkflow(apptest.Repo, "deploy.yml", "deploy", "autopilot ${{ inputs.session }}"),
		g.AddEnvironment(apptest.Repo, "production"),
		g.EnableProtectionRule(apptest.Repo, "production", apptest.AppID),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	r := newRigOn(t, g, nil)
	n := g.Issue(apptest.Repo, "Ship CSV export")
	r.mustProcess(g.Labeled(apptest.Repo, n, apptest.Maintainer, "autopilot"))
	pr, d := g.OpenPR(apptest.Repo, n, apptest.Writer, sha)
	r.mustProcess(d)
	r.mustProcess(g.Say(apptest.Repo, n, apptest.Maintainer, fmt.Sprintf("/autopilot done implemented in #%d", pr)))
	r.mustProcess(g.Say(apptest.Repo, n, apptest.Maintainer, "/autopilot done verified"))
	st := g.State(apptest.Repo, n)
	if st == nil || st.Slug != "deploy" || len(st.PRChecks) != 1 || st.PRChecks[0].GateHead != sha {
		t.Fatalf("not at the deploy step with the gates passed on %s: %+v", sha, st)
	}
	runs := g.Runs(apptest.Repo)
	if len(runs) == 0 {
		t.Fatal("the deploy step dispatched no run")
	}
	run := runs[len(runs)-1].ID

	req, err := g.RequestDeployment(apptest.Repo, fakegithub.DeploymentRequest{RunID: run, Environment: "production", SHA: sha, PRs: []int{pr}})
	if err != nil {
		t.Fatal(err)
	}
	r.mustProcess(deliveryOf(t, g, req))
	if st := g.State(apptest.Repo, n); st.Gate == nil || st.Gate.Kind != deploygate.Kind("production", sha) {
		t.Fatalf("no deploy question: %+v", st.Gate)
	}

	r.mustProcess(g.Say(apptest.Repo, n, apptest.Maintainer, "A"))
	if got := requestOf(g, run); got.State != fakegithub.DeploymentWaiting {
		t.Fatalf("one vote of two answered GitHub: %+v", got)
	}
	if g.BotComments(apptest.Repo, n, "Approvals: 1 of 2 approvals") != 1 {
		t.Errorf("the question does not show the quorum:\n%s", botBodies(g, n))
	}

	if err := g.ReviewDeployment(apptest.Repo, run, "production", "grace", fakegithub.DeploymentApproved, "ship it"); err != nil {
		t.Fatal(err)
	}
	if err := r.app.Sweep(context.Background(), apptest.Installation); err != nil {
		t.Fatal(err)
	}
	got := requestOf(g, run)
	t.Logf("callback: %s", got.Comment)
	if got.State != fakegithub.DeploymentApproved || !strings.Contains(got.Comment, "@grace answered approve on acme/widgets#1 (approved on the environment page; decided by 2 of 2") || !strings.Contains(got.Comment, "grace via environment") {
		t.Fatalf("GitHub's request %+v, want approved by the quorum of maria and grace's review", got)
	}
}

func requestOf(g *apptest.GitHub, run int64) fakegithub.DeploymentRequest {
	for _, r := range g.DeploymentRequests(apptest.Repo) {
		if r.RunID == run {
			return r
		}
	}
	return fakegithub.DeploymentRequest{}
}
