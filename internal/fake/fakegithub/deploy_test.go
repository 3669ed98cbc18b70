package fakegithub

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const appTok = "ghs_app_install"

// deployEnv is a fake with the environment production, the test App
// installed on testRepo as its protection rule, and one dispatched run.
func deployEnv(t *testing.T) (*env, int64) {
	t.Helper()
	e, _ := appEnv(t)
	e.s.AddToken(appTok, Identity{Login: "autopilot-test[bot]", Type: "Bot", AppID: testAppID, InstallationID: testInstall})
	must(t, e.s.AddEnvironment(testRepo, "production"))
	must(t, e.s.EnableProtectionRule(testRepo, "production", testAppID))
	resp, _ := e.do("POST", "/repos/"+testRepo+"/actions/workflows/deploy.yml/dispatches", humanTok, `{"ref":"main"}`, nil)
	if resp.StatusCode != 204 {
		t.Fatalf("dispatch: %s", resp.Status)
	}
	runs := e.s.Runs(testRepo)
	return e, runs[len(runs)-1].ID
}

func callbackPath(run int64) string {
	return "/repos/" + testRepo + "/actions/runs/" + itoa(run) + "/deployment_protection_rule"
}

func TestDeployEnablingTheRuleOnAnEnvironment(t *testing.T) {
	e, _ := appEnv(t)
	must(t, e.s.AddEnvironment(testRepo, "production"))
	path := "/repos/" + testRepo + "/environments/production/deployment_protection_rules"

	resp, _ := e.do("POST", path, humanTok, `{"integration_id":4242}`, nil)
	if resp.StatusCode != 403 {
		t.Fatalf("a writer enabling the rule: %s, want 403 (admins only)", resp.Status)
	}
	must(t, e.s.SetPermission(testRepo, "alice", "admin"))
	for _, c := range []struct {
		path, body string
		status     int
	}{
		{"/repos/" + testRepo + "/environments/staging/deployment_protection_rules", `{"integration_id":4242}`, 404},
		{path, `{"integration_id":999}`, 422},
		{path, `{}`, 422},
	} {
		if resp, b := e.do("POST", c.path, humanTok, c.body, nil); resp.StatusCode != c.status {
			t.Errorf("POST %s %s: %s %s, want %d", c.path, c.body, resp.Status, b, c.status)
		}
	}
	resp, b := e.do("POST", path, humanTok, `{"integration_id":4242}`, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("enable: %s %s", resp.Status, b)
	}
	var rule struct {
		ID      int64  `json:"id"`
		NodeID  string `json:"node_id"`
		Enabled bool   `json:"enabled"`
		App     struct {
			ID   int64  `json:"id"`
			Slug string `json:"slug"`
		} `json:"app"`
	}
	must(t, json.Unmarshal(b, &rule))
	if rule.ID == 0 || rule.NodeID == "" || !rule.Enabled || rule.App.ID != testAppID || rule.App.Slug != "autopilot-test" {
		t.Fatalf("rule %s", b)
	}
	resp, b = e.do("GET", path, humanTok, "", nil)
	var list struct {
		Total int               `json:"total_count"`
		Rules []json.RawMessage `json:"custom_deployment_protection_rules"`
	}
	must(t, json.Unmarshal(b, &list))
	if resp.StatusCode != 200 || list.Total != 1 || len(list.Rules) != 1 {
		t.Fatalf("list: %s %s", resp.Status, b)
	}
	if !e.s.ProtectionRuleEnabled(testRepo, "PRODUCTION", testAppID) {
		t.Fatal("environment names ignore case on GitHub")
	}
}

func TestDeployCallbackDecidesOnceThenAnswers422(t *testing.T) {
	e, run := deployEnv(t)
	if _, err := e.s.RequestDeployment(testRepo, DeploymentRequest{RunID: run, Environment: "production"}); err != nil {
		t.Fatal(err)
	}
	// A status report: no state, a comment.
	if resp, b := e.do("POST", callbackPath(run), appTok, `{"environment_name":"production","comment":"asked on #12"}`, nil); resp.StatusCode != 204 {
		t.Fatalf("status report: %s %s", resp.Status, b)
	}
	for _, c := range []struct {
		name, tok, body string
		status          int
	}{
		{"a person's token", humanTok, `{"environment_name":"production","state":"approved"}`, 403},
		{"an unknown state", appTok, `{"environment_name":"production","state":"maybe"}`, 422},
		{"another environment", appTok, `{"environment_name":"staging","state":"approved"}`, 422},
		{"no environment", appTok, `{"state":"approved"}`, 422},
		{"neither state nor comment", appTok, `{"environment_name":"production"}`, 422},
		{"a comment over 1024 characters", appTok, `{"environment_name":"production","state":"approved","comment":"` + strings.Repeat("x", 1025) + `"}`, 422},
	} {
		if resp, b := e.do("POST", callbackPath(run), c.tok, c.body, nil); resp.StatusCode != c.status {
			t.Errorf("%s: %s %s, want %d", c.name, resp.Status, b, c.status)
		}
	}
	if resp, b := e.do("POST", callbackPath(run+1000), appTok, `{"environment_name":"production","state":"approved"}`, nil); resp.StatusCode != 404 {
		t.Errorf("an unknown run: %s %s, want 404", resp.Status, b)
	}
	if got := e.s.DeploymentRequests(testRepo); len(got) != 1 || got[0].State != DeploymentWaiting {
		t.Fatalf("before the answer: %+v", got)
	}
	if resp, b := e.do("POST", callbackPath(run), appTok, `{"environment_name":"Production","state":"approved","comment":"approved by @maria on #12"}`, nil); resp.StatusCode != 204 {
		t.Fatalf("approve: %s %s", resp.Status, b)
	}
	got := e.s.DeploymentRequests(testRepo)
	if len(got) != 1 || got[0].State != DeploymentApproved || got[0].Comment != "approved by @maria on #12" || !slices.Equal(got[0].Reports, []string{"asked on #12"}) {
		t.Fatalf("after the answer: %+v", got)
	}
	resp, b := e.do("POST", callbackPath(run), appTok, `{"environment_name":"production","state":"rejected"}`, nil)
	if resp.StatusCode != 422 || !strings.Contains(string(b), "already") {
		t.Fatalf("a second answer: %s %s, want 422 already decided", resp.Status, b)
	}
	if e.s.DeploymentRequests(testRepo)[0].State != DeploymentApproved {
		t.Fatal("a second answer changed the decision")
	}
	if n := e.s.Count("POST " + callbackPath(run)); n < 2 {
		t.Fatalf("the request log counts %d callbacks", n)
	}
}

func TestDeployStatusReportsStopAtTen(t *testing.T) {
	e, run := deployEnv(t)
	if _, err := e.s.RequestDeployment(testRepo, DeploymentRequest{RunID: run, Environment: "production"}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 11; i++ {
		resp, b := e.do("POST", callbackPath(run), appTok, `{"environment_name":"production","comment":"report"}`, nil)
		want := 204
		if i == 11 {
			want = 422
		}
		if resp.StatusCode != want {
			t.Fatalf("report %d: %s %s, want %d", i, resp.Status, b, want)
		}
	}
}

func TestDeployApprovalsListTheReviewersDecisions(t *testing.T) {
	e, run := deployEnv(t)
	resp, b := e.do("GET", "/repos/"+testRepo+"/actions/runs/"+itoa(run)+"/approvals", humanTok, "", nil)
	if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != "[]" {
		t.Fatalf("no review yet: %s %s", resp.Status, b)
	}
	must(t, e.s.ReviewDeployment(testRepo, run, "production", "alice", DeploymentApproved, "ship it"))
	resp, b = e.do("GET", "/repos/"+testRepo+"/actions/runs/"+itoa(run)+"/approvals", humanTok, "", nil)
	var list []struct {
		Environments []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"environments"`
		State   string `json:"state"`
		Comment string `json:"comment"`
		User    struct {
			Login string `json:"login"`
		} `json:"user"`
	}
	must(t, json.Unmarshal(b, &list))
	if resp.StatusCode != 200 || len(list) != 1 || list[0].State != "approved" || list[0].User.Login != "alice" || list[0].Comment != "ship it" ||
		len(list[0].Environments) != 1 || list[0].Environments[0].Name != "production" || list[0].Environments[0].ID == 0 {
		t.Fatalf("approvals: %s %s", resp.Status, b)
	}
	if resp, _ := e.do("GET", "/repos/"+testRepo+"/actions/runs/"+itoa(run+1000)+"/approvals", humanTok, "", nil); resp.StatusCode != 404 {
		t.Fatalf("an unknown run's approvals: %s", resp.Status)
	}
	if err := e.s.ReviewDeployment(testRepo, run, "production", "alice", "maybe", ""); err == nil {
		t.Fatal("a review state other than approved or rejected was accepted")
	}
}

func TestDeployRequestIsDeliveredAsASignedWebhookInGitHubsShape(t *testing.T) {
	e, run := deployEnv(t)
	pr, err := e.s.CreatePull(testRepo, "alice", "Ship", "Fixes #1", "ship", "cafe000000000000000000000000000000000000")
	must(t, err)
	const secret = "hook-secret"
	var got struct {
		event, delivery, sig string
		body                 []byte
	}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.body, _ = io.ReadAll(r.Body)
		got.event, got.delivery, got.sig = r.Header.Get("X-GitHub-Event"), r.Header.Get("X-GitHub-Delivery"), r.Header.Get("X-Hub-Signature-256")
		w.WriteHeader(http.StatusAccepted)
	}))
	defer hook.Close()
	req, err := e.s.RequestDeployment(testRepo, DeploymentRequest{RunID: run, Environment: "production", PRs: []int{pr}})
	must(t, err)
	status, err := e.s.DeliverDeploymentRequest(req, hook.URL, secret)
	must(t, err)
	if status != http.StatusAccepted || got.event != "deployment_protection_rule" || got.delivery == "" {
		t.Fatalf("delivered %d event %q delivery %q", status, got.event, got.delivery)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(got.body)
	if got.sig != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
		t.Fatalf("signature %q does not sign the body", got.sig)
	}
	var p map[string]any
	must(t, json.Unmarshal(got.body, &p))
	fixture, err := os.ReadFile("testdata/deployment_protection_rule.requested.json")
	must(t, err)
	var want map[string]any
	must(t, json.Unmarshal(fixture, &want))
	if !reflect.DeepEqual(keys(p), keys(want)) {
		t.Errorf("payload members %v, want the vendored example's %v", keys(p), keys(want))
	}
	dep, _ := p["deployment"].(map[string]any)
	if !reflect.DeepEqual(keys(dep), keys(want["deployment"].(map[string]any))) {
		t.Errorf("deployment members %v, want %v", keys(dep), keys(want["deployment"].(map[string]any)))
	}
	prs, _ := p["pull_requests"].([]any)
	inst, _ := p["installation"].(map[string]any)
	if p["action"] != "requested" || p["environment"] != "production" || p["event"] != "workflow_dispatch" || p["sha"] != req.SHA || p["ref"] != req.Ref ||
		p["deployment_callback_url"] != e.s.URL()+callbackPath(run) || len(prs) != 1 || prs[0].(map[string]any)["number"] != float64(pr) ||
		inst["id"] != float64(testInstall) || dep["environment"] != "production" || dep["sha"] != req.SHA {
		t.Fatalf("payload %s", got.body)
	}
	ds := e.s.Deliveries(testAppID)
	if len(ds) != 1 || ds[0].Event != "deployment_protection_rule" || ds[0].Action != "requested" || ds[0].StatusCode != http.StatusAccepted || ds[0].GUID != got.delivery {
		t.Fatalf("delivery log %+v", ds)
	}
}

func TestDeployRequestNeedsAnEnvironmentWithTheRule(t *testing.T) {
	e, run := deployEnv(t)
	if _, err := e.s.RequestDeployment(testRepo, DeploymentRequest{RunID: run, Environment: "staging"}); err == nil {
		t.Error("a request for an environment that does not exist")
	}
	must(t, e.s.AddEnvironment(testRepo, "staging"))
	if _, err := e.s.RequestDeployment(testRepo, DeploymentRequest{RunID: run, Environment: "staging"}); err == nil {
		t.Error("a request for an environment without a protection rule")
	}
	if _, err := e.s.RequestDeployment(testRepo, DeploymentRequest{RunID: run + 1000, Environment: "production"}); err == nil {
		t.Error("a request for a run that does not exist")
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// A request decided by someone else first answers the App's answer with
// the 422 of a decided request.
func TestDecidedDeploymentRefusesTheAppsAnswer(t *testing.T) {
	e, run := deployEnv(t)
	_, err := e.s.RequestDeployment(testRepo, DeploymentRequest{RunID: run, Environment: "production"})
	must(t, err)
	must(t, e.s.DecideDeployment(testRepo, run, "production", DeploymentApproved))
	resp, b := e.do("POST", callbackPath(run), appTok, `{"environment_name":"production","state":"approved","comment":"ok"}`, nil)
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("the App's answer after a decision: %s %s, want 422", resp.Status, b)
	}
	if err := e.s.DecideDeployment(testRepo, run, "production", DeploymentRejected); err == nil {
		t.Error("a second decision was taken")
	}
}
