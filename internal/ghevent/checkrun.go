package ghevent

import "strconv"

// CheckAction is a click on a requested action (button) of a check run:
// check_run.requested_action, sent only to the GitHub App that created the
// check run.
type CheckAction struct {
	// CheckRunID is check_run.id; URL its html_url.
	CheckRunID int64
	URL        string
	Name       string
	HeadSHA    string
	// ExternalID is check_run.external_id, which names the autopilot issue
	// ("autopilot#12").
	ExternalID string
	// AppID is check_run.app.id.
	AppID int64
	// Identifier is requested_action.identifier.
	Identifier string
	// PRs are check_run.pull_requests[].number.
	PRs []int
}

// check_run: requested_action.
type checkRunPayload struct {
	envelope
	CheckRun *struct {
		ID         int64  `json:"id"`
		HeadSHA    string `json:"head_sha"`
		ExternalID string `json:"external_id"`
		HTMLURL    string `json:"html_url"`
		Name       string `json:"name"`
		App        *struct {
			ID int64 `json:"id"`
		} `json:"app"`
		PullRequests []struct {
			Number int `json:"number"`
		} `json:"pull_requests"`
	} `json:"check_run"`
	RequestedAction *struct {
		Identifier string `json:"identifier"`
	} `json:"requested_action"`
}

func (p *checkRunPayload) fill(ev *Event) {
	cr := p.CheckRun
	if cr == nil {
		return
	}
	a := &CheckAction{CheckRunID: cr.ID, URL: cr.HTMLURL, Name: cr.Name, HeadSHA: cr.HeadSHA, ExternalID: cr.ExternalID}
	if cr.App != nil {
		a.AppID = cr.App.ID
	}
	if p.RequestedAction != nil {
		a.Identifier = p.RequestedAction.Identifier
	}
	for _, pr := range cr.PullRequests {
		a.PRs = append(a.PRs, pr.Number)
	}
	ev.CheckAction = a
	// The issue a click answers: only autopilot's own check runs name one.
	if n, ok := issueOfExternalID(cr.ExternalID); ok {
		ev.LinkedIssues = []int{n}
	}
}

func (p *checkRunPayload) check(ev *Event) error {
	switch {
	case ev.Repo == "":
		return missing(ev.Name, "repository.full_name")
	case p.CheckRun == nil || p.CheckRun.ID <= 0:
		return missing(ev.Name, "check_run.id")
	case p.RequestedAction == nil || p.RequestedAction.Identifier == "":
		return missing(ev.Name, "requested_action.identifier")
	}
	return nil
}

// issueOfExternalID reads "autopilot#N" (checkview.ExternalID's format).
func issueOfExternalID(s string) (int, bool) {
	const prefix = "autopilot#"
	if len(s) <= len(prefix) || s[:len(prefix)] != prefix {
		return 0, false
	}
	n, err := strconv.Atoi(s[len(prefix):])
	if err != nil || n <= 0 || strconv.Itoa(n) != s[len(prefix):] {
		return 0, false
	}
	return n, true
}
