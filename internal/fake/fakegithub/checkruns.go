package fakegithub

import (
	"net/http"
	"slices"
	"time"
)

// Check runs written through the API (REST "Checks > Check runs"): create,
// update and get, plus the list for a ref in pulls.go. Only a GitHub App
// (an installation token or GITHUB_TOKEN) may write them, and only the App
// that created a run may update it, as on GitHub.

const docCheckRuns = docRoot + "/checks/runs"

// CheckRunAction is a requested action (button) of a check run.
type CheckRunAction struct {
	Label       string `json:"label"`
	Description string `json:"description"`
	Identifier  string `json:"identifier"`
}

// CheckRun is a check run as the fake holds it.
type CheckRun struct {
	ID                       int64
	HeadSHA                  string
	Name, Status, Conclusion string
	ExternalID, DetailsURL   string
	Title, Summary           string
	Actions                  []CheckRunAction
	AppID                    int64
	StartedAt, CompletedAt   time.Time
}

// checkRunIn is the body of a create or update.
type checkRunIn struct {
	Name        *string `json:"name"`
	HeadSHA     *string `json:"head_sha"`
	DetailsURL  *string `json:"details_url"`
	ExternalID  *string `json:"external_id"`
	Status      *string `json:"status"`
	Conclusion  *string `json:"conclusion"`
	StartedAt   *string `json:"started_at"`
	CompletedAt *string `json:"completed_at"`
	Output      *struct {
		Title   *string `json:"title"`
		Summary *string `json:"summary"`
	} `json:"output"`
	Actions *[]CheckRunAction `json:"actions"`
}

var (
	checkStatuses    = []string{"queued", "in_progress", "completed", "waiting", "requested", "pending"}
	checkConclusions = []string{"action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out"}
)

func checkInvalid(field, code string) reply {
	return validation(docCheckRuns, fieldError{"resource": "CheckRun", "code": code, "field": field})
}

// apply validates in and applies it to cr (create: cr is new). The first
// invalid field is the one reported; on failure cr is not to be kept.
func (in *checkRunIn) apply(cr *checkRun, now time.Time) (reply, bool) {
	if in.Name != nil {
		if *in.Name == "" {
			return checkInvalid("name", "missing_field"), false
		}
		cr.name = *in.Name
	}
	if rep, good := in.applyStatus(cr, now); !good {
		return rep, false
	}
	if in.DetailsURL != nil {
		cr.detailsURL = *in.DetailsURL
	}
	if in.ExternalID != nil {
		cr.externalID = *in.ExternalID
	}
	if rep, good := in.applyOutput(cr); !good {
		return rep, false
	}
	if in.Actions != nil {
		if rep, good := checkActions(*in.Actions); !good {
			return rep, false
		}
		cr.actions = slices.Clone(*in.Actions)
	}
	return reply{}, true
}

// applyStatus sets the status and conclusion: a completed run needs a
// conclusion and gets its completion time; any other has neither.
func (in *checkRunIn) applyStatus(cr *checkRun, now time.Time) (reply, bool) {
	if in.Status != nil {
		if !slices.Contains(checkStatuses, *in.Status) {
			return checkInvalid("status", "invalid"), false
		}
		cr.status = *in.Status
	}
	if in.Conclusion != nil {
		if !slices.Contains(checkConclusions, *in.Conclusion) {
			return checkInvalid("conclusion", "invalid"), false
		}
		// Giving a conclusion completes the run (GitHub sets the status).
		cr.conclusion, cr.status = *in.Conclusion, "completed"
	}
	if cr.status == "completed" && cr.conclusion == "" {
		return checkInvalid("conclusion", "missing_field"), false
	}
	if cr.status != "completed" {
		cr.conclusion, cr.completed = "", time.Time{}
	} else if cr.completed.IsZero() {
		cr.completed = now
	}
	return reply{}, true
}

// applyOutput replaces the output: a summary is required, the title not.
func (in *checkRunIn) applyOutput(cr *checkRun) (reply, bool) {
	o := in.Output
	if o == nil {
		return reply{}, true
	}
	if o.Summary == nil || *o.Summary == "" {
		return checkInvalid("output.summary", "missing_field"), false
	}
	if len(*o.Summary) > 65535 {
		return checkInvalid("output.summary", "too_long"), false
	}
	cr.title, cr.summary = "", *o.Summary
	if o.Title != nil {
		cr.title = *o.Title
	}
	return reply{}, true
}

// checkActions holds requested actions to GitHub's bounds: at most three,
// each with a label, description and identifier of bounded length.
func checkActions(as []CheckRunAction) (reply, bool) {
	if len(as) > 3 {
		return checkInvalid("actions", "too_many"), false
	}
	for _, a := range as {
		switch {
		case a.Label == "" || len([]rune(a.Label)) > 20:
			return checkInvalid("actions.label", "invalid"), false
		case a.Description == "" || len([]rune(a.Description)) > 40:
			return checkInvalid("actions.description", "invalid"), false
		case a.Identifier == "" || len([]rune(a.Identifier)) > 20:
			return checkInvalid("actions.identifier", "invalid"), false
		}
	}
	return reply{}, true
}

// appOnly refuses a token that is not a GitHub App's, as GitHub does.
func appOnly(c *call) (reply, bool) {
	if c.tok == nil || c.tok.id.AppID == 0 {
		return errorReply(http.StatusForbidden, "You must authenticate via a GitHub App.", docCheckRuns+"#create-a-check-run"), false
	}
	return reply{}, true
}

// createCheckRun serves POST /repos/{owner}/{repo}/check-runs.
func (s *Server) createCheckRun(c *call) reply {
	if rep, good := appOnly(c); !good {
		return rep
	}
	var in checkRunIn
	if rep, good := c.decode(&in); !good {
		return rep
	}
	if in.Name == nil {
		return checkInvalid("name", "missing_field")
	}
	if in.HeadSHA == nil || *in.HeadSHA == "" {
		return checkInvalid("head_sha", "missing_field")
	}
	now := s.now()
	cr := &checkRun{id: s.newID(), status: "queued", started: now, appID: c.tok.id.AppID}
	if rep, good := in.apply(cr, now); !good {
		return rep
	}
	sha := *in.HeadSHA
	c.repo.checks[sha] = append(c.repo.checks[sha], cr)
	return created(s.checkRunJSON(c.repo, sha, cr))
}

// findCheckRun resolves {id} to a run of c.repo and its head commit.
func (s *Server) findCheckRun(c *call) (*checkRun, string) {
	id, good := c.intParam("id")
	if !good {
		return nil, ""
	}
	for sha, runs := range c.repo.checks {
		for _, cr := range runs {
			if cr.id == id {
				return cr, sha
			}
		}
	}
	return nil, ""
}

// updateCheckRun serves PATCH /repos/{owner}/{repo}/check-runs/{id}.
func (s *Server) updateCheckRun(c *call) reply {
	if rep, good := appOnly(c); !good {
		return rep
	}
	cr, sha := s.findCheckRun(c)
	if cr == nil {
		return notFound()
	}
	if cr.appID != c.tok.id.AppID {
		return errorReply(http.StatusForbidden, "Invalid app_id `"+itoa(c.tok.id.AppID)+"` - check run can only be modified by its creator.", docCheckRuns+"#update-a-check-run")
	}
	var in checkRunIn
	if rep, good := c.decode(&in); !good {
		return rep
	}
	next := *cr
	if rep, good := in.apply(&next, s.now()); !good {
		return rep
	}
	*cr = next
	return ok(s.checkRunJSON(c.repo, sha, cr))
}

// getCheckRun serves GET /repos/{owner}/{repo}/check-runs/{id}.
func (s *Server) getCheckRun(c *call) reply {
	cr, sha := s.findCheckRun(c)
	if cr == nil {
		return notFound()
	}
	return ok(s.checkRunJSON(c.repo, sha, cr))
}

// checkRunJSON renders a check run in GitHub's shape.
func (s *Server) checkRunJSON(rp *repository, sha string, cr *checkRun) obj {
	url := s.api("/repos/%s/check-runs/%d", rp.fullName(), cr.id)
	html := s.webURL + "/" + rp.fullName() + "/runs/" + itoa(cr.id)
	details := cr.detailsURL
	if details == "" {
		details = url
	}
	appID := cr.app()
	var title, summary any
	if cr.summary != "" {
		title, summary = orNull(cr.title), cr.summary
	}
	o := obj{
		"id": cr.id, "node_id": nodeID("CheckRun", cr.id), "head_sha": sha,
		"external_id": cr.externalID, "url": url, "html_url": html, "details_url": details,
		"status": cr.status, "conclusion": orNull(cr.conclusion),
		"started_at": stamp(cr.started), "completed_at": stamp(cr.completed),
		"output": obj{"title": title, "summary": summary, "text": nil, "annotations_count": 0,
			"annotations_url": url + "/annotations"},
		"name": cr.name, "check_suite": obj{"id": cr.id}, "pull_requests": []obj{},
	}
	if a := s.apps[appID]; a != nil {
		o["app"] = s.appJSON(a)
	}
	return o
}

// CheckRuns returns the check runs on sha in repo, oldest first.
func (s *Server) CheckRuns(repo, sha string) []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoLocked(repo)
	if err != nil {
		return nil
	}
	var out []CheckRun
	for _, cr := range rp.checks[sha] {
		out = append(out, CheckRun{ID: cr.id, HeadSHA: sha, Name: cr.name, Status: cr.status, Conclusion: cr.conclusion,
			ExternalID: cr.externalID, DetailsURL: cr.detailsURL, Title: cr.title, Summary: cr.summary,
			Actions: slices.Clone(cr.actions), AppID: cr.appID, StartedAt: cr.started, CompletedAt: cr.completed})
	}
	return out
}

// app is the App that created the run (GitHub Actions for runs added by
// the control API).
func (cr *checkRun) app() int64 {
	if cr.appID == 0 {
		return ActionsAppID
	}
	return cr.appID
}
