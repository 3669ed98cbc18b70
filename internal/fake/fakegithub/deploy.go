package fakegithub

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
)

// Environments and custom deployment protection rules (docs/deploy-gate.md
// lists the GitHub documentation these follow):
//
//   - POST /repos/{o}/{r}/environments/{env}/deployment_protection_rules
//     {integration_id}: 201 with {id, node_id, enabled, app}; admins only
//     (403), 404 for an unknown environment, 422 for an App that is not
//     registered; GET lists {total_count, custom_deployment_protection_rules}.
//   - POST /repos/{o}/{r}/actions/runs/{run}/deployment_protection_rule
//     {environment_name, state, comment}: 204. Only the rule's App may
//     answer (403 otherwise). Without state it is a status report (at most
//     10 per request, 1024 characters). A second answer gets 422 "already
//     decided" (GitHub documents only the 204; the 422 is what issue 28
//     describes, see docs/deploy-gate.md).
//   - GET /repos/{o}/{r}/actions/runs/{run}/approvals: the reviewers'
//     decisions on the environment page (ReviewDeployment).
//
// A protection-rule request is made with RequestDeployment and sent to an
// App's webhook URL, signed, with DeliverDeploymentRequest.

const (
	docProtectionRules = "https://docs.github.com/rest/deployments/protection-rules"
	docReviewGates     = "https://docs.github.com/rest/actions/workflow-runs#review-custom-deployment-protection-rules-for-a-workflow-run"
	docApprovals       = "https://docs.github.com/rest/actions/workflow-runs#get-the-review-history-for-a-workflow-run"
	// maxStatusReports and maxReportLen are GitHub's limits on the status
	// reports of one deployment.
	maxStatusReports = 10
	maxReportLen     = 1024
)

// States of a DeploymentRequest, and of a ReviewDeployment decision.
const (
	DeploymentWaiting  = "waiting"
	DeploymentApproved = "approved"
	DeploymentRejected = "rejected"
)

// DeploymentRequest is one protection-rule request: a workflow run's job
// waiting on an environment for its App's answer.
type DeploymentRequest struct {
	Repo        string
	RunID       int64
	Environment string
	// SHA and Ref default to the run's.
	SHA, Ref string
	// PRs are the pull requests the payload lists (pull_requests).
	PRs []int
	// Set by the fake.
	DeploymentID int64
	AppID        int64
	State        string   // DeploymentWaiting, DeploymentApproved, DeploymentRejected
	Comment      string   // the deciding answer's comment
	Reports      []string // status reports, oldest first
	CreatedAt    time.Time
}

// environment is one repository environment.
type environment struct {
	id    int64
	name  string
	rules []*protectionRule
	made  time.Time
}

type protectionRule struct {
	id  int64
	app int64
}

// deployReview is a reviewer's decision on the environment page.
type deployReview struct {
	run     int64
	env     *environment
	user    *user
	state   string
	comment string
}

// deployState is one Server's environments and requests. Guarded by
// Server.mu.
type deployState struct {
	envs     map[string]map[string]*environment // repo (lower) → name (lower)
	requests []*DeploymentRequest
	reviews  []deployReview
}

func (s *Server) deploys() *deployState {
	if s.deploy == nil {
		s.deploy = &deployState{envs: map[string]map[string]*environment{}}
	}
	return s.deploy
}

func deployRoutes() []route {
	const rp = "/repos/{owner}/{repo}"
	var out []route
	for _, t := range []struct {
		method, pattern string
		h               handlerFunc
	}{
		{"POST", rp + "/environments/{env}/deployment_protection_rules", (*Server).enableRule},
		{"GET", rp + "/environments/{env}/deployment_protection_rules", (*Server).listRules},
		{"POST", rp + "/actions/runs/{run}/deployment_protection_rule", (*Server).reviewGate},
		{"GET", rp + "/actions/runs/{run}/approvals", (*Server).listApprovals},
	} {
		out = append(out, route{method: t.method, segs: splitPath(t.pattern), h: t.h})
	}
	return out
}

// envLocked finds a repository's environment (names ignore case).
func (s *Server) envLocked(rp *repository, name string) *environment {
	return s.deploys().envs[strings.ToLower(rp.fullName())][strings.ToLower(name)]
}

// AddEnvironment creates an environment in repo.
func (s *Server) AddEnvironment(repo, name string) error {
	return s.inRepo(repo, func(rp *repository) error {
		if strings.TrimSpace(name) == "" || len(name) > 255 {
			return fmt.Errorf("fakegithub: environment name %q", name)
		}
		d := s.deploys()
		key := strings.ToLower(rp.fullName())
		if d.envs[key] == nil {
			d.envs[key] = map[string]*environment{}
		}
		if d.envs[key][strings.ToLower(name)] == nil {
			d.envs[key][strings.ToLower(name)] = &environment{id: s.newID(), name: name, made: s.now()}
		}
		return nil
	})
}

// EnableProtectionRule makes App appID a protection rule of the
// environment (the settings page's checkbox).
func (s *Server) EnableProtectionRule(repo, env string, appID int64) error {
	return s.inRepo(repo, func(rp *repository) error {
		e := s.envLocked(rp, env)
		if e == nil || s.apps[appID] == nil {
			return fmt.Errorf("fakegithub: enable rule: no environment %q or app %d", env, appID)
		}
		s.enableLocked(e, appID)
		return nil
	})
}

func (s *Server) enableLocked(e *environment, appID int64) *protectionRule {
	for _, r := range e.rules {
		if r.app == appID {
			return r
		}
	}
	r := &protectionRule{id: s.newID(), app: appID}
	e.rules = append(e.rules, r)
	return r
}

// ProtectionRuleEnabled reports whether App appID guards the environment.
func (s *Server) ProtectionRuleEnabled(repo, env string, appID int64) bool {
	found := false
	_ = s.inRepo(repo, func(rp *repository) error {
		if e := s.envLocked(rp, env); e != nil {
			for _, r := range e.rules {
				found = found || r.app == appID
			}
		}
		return nil
	})
	return found
}

func (s *Server) ruleJSON(r *protectionRule) obj {
	a := s.apps[r.app]
	return obj{"id": r.id, "node_id": nodeID("DeploymentProtectionRule", r.id), "enabled": true,
		"app": obj{"id": a.id, "slug": a.slug, "node_id": nodeID("Integration", a.id), "integration_url": s.api("/apps/%s", a.slug)}}
}

// enableRule serves POST …/environments/{env}/deployment_protection_rules.
func (s *Server) enableRule(c *call) reply {
	if !effectivePermission(c.repo, c.who.login).AtLeast(access.Admin) {
		return errorReply(http.StatusForbidden, "Must have admin rights to Repository.", docProtectionRules)
	}
	e := s.envLocked(c.repo, c.params["env"])
	if e == nil {
		return notFound()
	}
	var in struct {
		IntegrationID int64 `json:"integration_id"`
	}
	if rep, good := c.decode(&in); !good {
		return rep
	}
	if in.IntegrationID <= 0 || s.apps[in.IntegrationID] == nil || in.IntegrationID == ActionsAppID {
		return validation(docProtectionRules, fieldError{"resource": "DeploymentProtectionRule", "field": "integration_id", "code": "invalid"})
	}
	return created(s.ruleJSON(s.enableLocked(e, in.IntegrationID)))
}

// listRules serves GET …/environments/{env}/deployment_protection_rules.
func (s *Server) listRules(c *call) reply {
	e := s.envLocked(c.repo, c.params["env"])
	if e == nil {
		return notFound()
	}
	rules := []obj{}
	for _, r := range e.rules {
		rules = append(rules, s.ruleJSON(r))
	}
	return ok(obj{"total_count": len(rules), "custom_deployment_protection_rules": rules})
}

// RequestDeployment makes a workflow run's job wait on an environment for
// its protection rule's App: the request GitHub then sends that App. The
// environment must have exactly one App's rule (the fake's simplification).
func (s *Server) RequestDeployment(repo string, req DeploymentRequest) (DeploymentRequest, error) {
	err := s.inRepo(repo, func(rp *repository) error {
		rn := s.runs[req.RunID]
		if rn == nil || rn.repo != rp {
			return fmt.Errorf("fakegithub: request deployment: no run %d in %s", req.RunID, repo)
		}
		e := s.envLocked(rp, req.Environment)
		if e == nil || len(e.rules) != 1 {
			return fmt.Errorf("fakegithub: request deployment: environment %q does not exist or has not one protection rule", req.Environment)
		}
		for _, n := range req.PRs {
			if is := rp.issues[n]; is == nil || is.pull == nil {
				return fmt.Errorf("fakegithub: request deployment: no pull request #%d", n)
			}
		}
		req.Repo, req.Environment = rp.fullName(), e.name
		if req.SHA == "" {
			req.SHA = rn.sha
		}
		if req.Ref == "" {
			req.Ref = "refs/heads/" + rn.ref
		}
		req.DeploymentID, req.AppID, req.State, req.CreatedAt = s.newID(), e.rules[0].app, DeploymentWaiting, s.now()
		req.PRs, req.Reports = append([]int(nil), req.PRs...), nil
		stored := req
		s.deploys().requests = append(s.deploys().requests, &stored)
		return nil
	})
	return req, err
}

// DeploymentRequests snapshots repo's protection-rule requests, oldest
// first.
func (s *Server) DeploymentRequests(repo string) []DeploymentRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []DeploymentRequest
	for _, r := range s.deploys().requests {
		if strings.EqualFold(r.Repo, repo) {
			c := *r
			c.PRs, c.Reports = append([]int(nil), r.PRs...), append([]string(nil), r.Reports...)
			out = append(out, c)
		}
	}
	return out
}

// reviewGate serves POST …/actions/runs/{run}/deployment_protection_rule.
func (s *Server) reviewGate(c *call) reply {
	id, good := c.intParam("run")
	if rn := s.runs[id]; !good || rn == nil || rn.repo != c.repo {
		return notFound()
	}
	var in struct {
		Env     string  `json:"environment_name"`
		State   *string `json:"state"`
		Comment *string `json:"comment"`
	}
	if rep, good := c.decode(&in); !good {
		return rep
	}
	invalid := func(field string) reply {
		return validation(docReviewGates, fieldError{"resource": "DeploymentProtectionRule", "field": field, "code": "invalid"})
	}
	switch {
	case in.Env == "":
		return invalid("environment_name")
	case in.State == nil && in.Comment == nil:
		return invalid("state")
	case in.State != nil && *in.State != DeploymentApproved && *in.State != DeploymentRejected:
		return invalid("state")
	case in.Comment != nil && len(*in.Comment) > maxReportLen:
		return invalid("comment")
	}
	var req *DeploymentRequest
	for _, r := range s.deploys().requests {
		if r.RunID == id && strings.EqualFold(r.Environment, in.Env) {
			req = r
		}
	}
	if req == nil {
		return errorReply(http.StatusUnprocessableEntity, fmt.Sprintf("No deployment protection rule request for environment %q on this run.", in.Env), docReviewGates)
	}
	if c.tok.id.AppID != req.AppID {
		return errorReply(http.StatusForbidden, "GitHub Apps can only review their own custom deployment protection rules.", docReviewGates)
	}
	if in.State == nil {
		if len(req.Reports) >= maxStatusReports {
			return errorReply(http.StatusUnprocessableEntity, "A deployment can have at most 10 status reports.", docReviewGates)
		}
		req.Reports = append(req.Reports, *in.Comment)
		return noContent()
	}
	if req.State != DeploymentWaiting {
		return errorReply(http.StatusUnprocessableEntity, "This deployment protection rule has already been decided: "+req.State+".", docReviewGates)
	}
	req.State = *in.State
	if in.Comment != nil {
		req.Comment = *in.Comment
	}
	return noContent()
}

// ReviewDeployment records a reviewer's decision on the environment page
// for a run (what GET …/approvals lists).
func (s *Server) ReviewDeployment(repo string, run int64, env, login, state, comment string) error {
	return s.inRepo(repo, func(rp *repository) error {
		e := s.envLocked(rp, env)
		rn := s.runs[run]
		if e == nil || rn == nil || rn.repo != rp || (state != DeploymentApproved && state != DeploymentRejected) {
			return fmt.Errorf("fakegithub: review deployment: run %d, environment %q, state %q", run, env, state)
		}
		d := s.deploys()
		d.reviews = append(d.reviews, deployReview{run: run, env: e, user: s.user(login, ""), state: state, comment: comment})
		return nil
	})
}

// listApprovals serves GET …/actions/runs/{run}/approvals.
func (s *Server) listApprovals(c *call) reply {
	id, good := c.intParam("run")
	if rn := s.runs[id]; !good || rn == nil || rn.repo != c.repo {
		return notFound()
	}
	out := []obj{}
	for _, r := range s.deploys().reviews {
		if r.run != id {
			continue
		}
		env := obj{"id": r.env.id, "node_id": nodeID("Environment", r.env.id), "name": r.env.name,
			"url":        s.api("/repos/%s/environments/%s", c.repo.fullName(), r.env.name),
			"html_url":   fmt.Sprintf("%s/%s/deployments/activity_log?environments_filter=%s", s.webURL, c.repo.fullName(), r.env.name),
			"created_at": stamp(r.env.made), "updated_at": stamp(r.env.made)}
		out = append(out, obj{"environments": []obj{env}, "state": r.state, "comment": r.comment, "user": s.userJSON(r.user)})
	}
	return ok(out)
}

// DeliverDeploymentRequest sends req's deployment_protection_rule webhook
// (action requested) to url, signed with secret as GitHub signs
// (X-Hub-Signature-256), records the attempt in the App's delivery log and
// returns the status the receiver answered.
func (s *Server) DeliverDeploymentRequest(req DeploymentRequest, url, secret string) (int, error) {
	body, guid, err := s.deploymentPayload(req)
	if err != nil {
		return 0, err
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	hr, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("User-Agent", "GitHub-Hookshot/fake")
	hr.Header.Set("X-GitHub-Event", "deployment_protection_rule")
	hr.Header.Set("X-GitHub-Delivery", guid)
	hr.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	status := 0
	resp, err := http.DefaultClient.Do(hr)
	if err == nil {
		status = resp.StatusCode
		resp.Body.Close()
	}
	s.mu.Lock()
	inst := int64(0)
	if a := s.apps[req.AppID]; a != nil && len(a.installations) > 0 {
		inst = a.installations[0].id
	}
	repoID := int64(0)
	if rp, rerr := s.repoLocked(req.Repo); rerr == nil {
		repoID = rp.id
	}
	s.recordDelivery(HookDelivery{AppID: req.AppID, GUID: guid, Event: "deployment_protection_rule", Action: "requested",
		StatusCode: status, InstallationID: inst, RepositoryID: repoID})
	s.mu.Unlock()
	return status, err
}

// deploymentPayload renders req as GitHub's deployment_protection_rule
// webhook, in the member order of GitHub's OpenAPI description.
func (s *Server) deploymentPayload(req DeploymentRequest) ([]byte, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoLocked(req.Repo)
	if err != nil {
		return nil, "", err
	}
	a := s.apps[req.AppID]
	if a == nil {
		return nil, "", fmt.Errorf("fakegithub: deliver: app %d is not registered", req.AppID)
	}
	rn := s.runs[req.RunID]
	creator := rn.actor
	if creator == nil {
		creator = s.user(rp.owner, "")
	}
	dep := obj{
		"url": s.api("/repos/%s/deployments/%d", rp.fullName(), req.DeploymentID), "id": req.DeploymentID,
		"node_id": nodeID("Deployment", req.DeploymentID), "sha": req.SHA, "ref": strings.TrimPrefix(req.Ref, "refs/heads/"),
		"task": "deploy", "payload": obj{}, "original_environment": req.Environment, "environment": req.Environment,
		"description": nil, "creator": s.userJSON(creator), "created_at": stamp(req.CreatedAt), "updated_at": stamp(req.CreatedAt),
		"statuses_url":   s.api("/repos/%s/deployments/%d/statuses", rp.fullName(), req.DeploymentID),
		"repository_url": s.api("/repos/%s", rp.fullName()),
	}
	prs := []obj{}
	for _, n := range req.PRs {
		prs = append(prs, s.pullJSON(rp, rp.issues[n]))
	}
	inst := obj{"id": int64(0), "node_id": ""}
	if len(a.installations) > 0 {
		id := a.installations[0].id
		inst = obj{"id": id, "node_id": nodeID("Installation", id)}
	}
	p := []struct {
		k string
		v any
	}{
		{"action", "requested"}, {"environment", req.Environment}, {"event", rn.eventName()},
		{"sha", req.SHA}, {"ref", req.Ref},
		{"deployment_callback_url", s.api("/repos/%s/actions/runs/%d/deployment_protection_rule", rp.fullName(), req.RunID)},
		{"deployment", dep}, {"pull_requests", prs}, {"repository", s.repoJSON(rp)},
		{"sender", s.userJSON(creator)}, {"installation", inst},
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.k)
		v, err := json.Marshal(m.v)
		if err != nil {
			return nil, "", err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	guid := fmt.Sprintf("%08x-dp00-11eb-836d-%012x", req.DeploymentID, req.RunID)
	return b.Bytes(), guid, nil
}

// DecideDeployment decides run's protection-rule request for env as if
// someone had answered first (its state becomes state): the App's answer
// after that gets the 422 of a request decided already.
func (s *Server) DecideDeployment(repo string, run int64, env, state string) error {
	return s.inRepo(repo, func(rp *repository) error {
		for _, r := range s.deploys().requests {
			if r.RunID == run && strings.EqualFold(r.Environment, env) && r.Repo == rp.fullName() {
				if r.State != DeploymentWaiting {
					return fmt.Errorf("fakegithub: decide deployment: run %d %s is %s already", run, env, r.State)
				}
				r.State = state
				return nil
			}
		}
		return fmt.Errorf("fakegithub: decide deployment: no request of run %d for %q", run, env)
	})
}
