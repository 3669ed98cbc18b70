package ghevent

import (
	"slices"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

// The wire types below mirror the members of GitHub's webhook payloads that
// autopilot reads; everything else in a payload is skipped by encoding/json.
// Shapes follow @octokit/webhooks-examples (see testdata/webhooks/README.md).

// envelope holds the members every event may carry.
type envelope struct {
	Action       string    `json:"action"`
	Repository   *wireRepo `json:"repository"`
	Installation *struct {
		ID int64 `json:"id"`
	} `json:"installation"`
	Sender *wireUser `json:"sender"`
}

type wireRepo struct {
	FullName string `json:"full_name"`
}

type wireUser struct {
	Login string `json:"login"`
	ID    int64  `json:"id"`
	Type  string `json:"type"`
}

type wireLabel struct {
	Name string `json:"name"`
}

type wireIssue struct {
	Number int         `json:"number"`
	Title  string      `json:"title"`
	Body   string      `json:"body"`
	State  string      `json:"state"`
	Labels []wireLabel `json:"labels"`
	// PullRequest is present (an object of URLs) when the issue is a PR.
	PullRequest *struct{} `json:"pull_request"`
}

type wireComment struct {
	ID                    int64     `json:"id"`
	User                  *wireUser `json:"user"`
	Body                  string    `json:"body"`
	CreatedAt             time.Time `json:"created_at"`
	UpdatedAt             time.Time `json:"updated_at"`
	HTMLURL               string    `json:"html_url"`
	PerformedViaGitHubApp *struct {
		ID int64 `json:"id"`
	} `json:"performed_via_github_app"`
}

type wirePull struct {
	Number   int         `json:"number"`
	Title    string      `json:"title"`
	Body     string      `json:"body"`
	State    string      `json:"state"`
	Merged   bool        `json:"merged"`
	MergedAt *time.Time  `json:"merged_at"`
	User     *wireUser   `json:"user"`
	HTMLURL  string      `json:"html_url"`
	Labels   []wireLabel `json:"labels"`
	Head     *struct {
		SHA  string    `json:"sha"`
		Repo *wireRepo `json:"repo"` // null when the fork was deleted
	} `json:"head"`
}

type wireReview struct {
	ID          int64     `json:"id"`
	User        *wireUser `json:"user"`
	Body        string    `json:"body"`
	State       string    `json:"state"`
	SubmittedAt time.Time `json:"submitted_at"`
	HTMLURL     string    `json:"html_url"`
	CommitID    string    `json:"commit_id"`
}

type wireRun struct {
	ID           int64     `json:"id"`
	Name         string    `json:"name"`
	DisplayTitle string    `json:"display_title"`
	Status       string    `json:"status"`
	Conclusion   string    `json:"conclusion"`
	Event        string    `json:"event"`
	HeadSHA      string    `json:"head_sha"`
	Path         string    `json:"path"`
	HTMLURL      string    `json:"html_url"`
	CreatedAt    time.Time `json:"created_at"`
	// HeadRepository is the repository the run's head came from (a fork
	// for runs on a fork's pull request).
	HeadRepository *wireRepo `json:"head_repository"`
	// PullRequests lists the PRs whose head the run ran on (same
	// repository only; GitHub leaves it empty for forks).
	PullRequests []struct {
		Number int `json:"number"`
	} `json:"pull_requests"`
}

// wireWorkflow is the workflow object beside a workflow_run (it is a plain
// string path in workflow_dispatch payloads, which never decode into this).
type wireWorkflow struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

func (u *wireUser) user() forge.User {
	if u == nil {
		return forge.User{}
	}
	return forge.User{Login: u.Login, ID: u.ID, Type: u.Type}
}

func labelNames(ls []wireLabel) []string {
	if len(ls) == 0 {
		return nil
	}
	names := make([]string, 0, len(ls))
	for _, l := range ls {
		if l.Name != "" {
			names = append(names, l.Name)
		}
	}
	return names
}

func (c *wireComment) comment(issue int) *forge.Comment {
	out := &forge.Comment{
		ID:          c.ID,
		IssueNumber: issue,
		Author:      c.User.user(),
		Body:        c.Body,
		CreatedAt:   c.CreatedAt,
		UpdatedAt:   c.UpdatedAt,
		URL:         c.HTMLURL,
	}
	if c.PerformedViaGitHubApp != nil {
		out.AppID = c.PerformedViaGitHubApp.ID
	}
	return out
}

func (p *wirePull) pull() *forge.Pull {
	out := &forge.Pull{
		Number: p.Number,
		Title:  p.Title,
		Body:   p.Body,
		State:  p.State,
		// Review payloads carry no "merged" member, only merged_at.
		Merged: p.Merged || p.MergedAt != nil,
		Author: p.User.user(),
		URL:    p.HTMLURL,
	}
	if p.Head != nil {
		out.HeadSHA = p.Head.SHA
		if p.Head.Repo != nil {
			out.HeadRepo = p.Head.Repo.FullName
		}
	}
	return out
}

func (r *wireReview) review(pr int) *forge.Review {
	return &forge.Review{
		ID:       r.ID,
		PR:       pr,
		Reviewer: r.User.user(),
		// Webhooks send "approved"; the REST API (and forge.Review) use
		// "APPROVED".
		State:       strings.ToUpper(r.State),
		Body:        r.Body,
		SubmittedAt: r.SubmittedAt,
		URL:         r.HTMLURL,
		CommitSHA:   r.CommitID,
	}
}

// prs returns the positive, distinct PR numbers of the run, in order.
func (r *wireRun) prs() []int {
	var out []int
	for _, p := range r.PullRequests {
		if p.Number > 0 && !slices.Contains(out, p.Number) {
			out = append(out, p.Number)
		}
	}
	return out
}

func (r *wireRun) run(wf *wireWorkflow) *forge.WorkflowRun {
	out := &forge.WorkflowRun{
		ID:           r.ID,
		Name:         r.Name,
		DisplayTitle: r.DisplayTitle,
		Status:       r.Status,
		Conclusion:   r.Conclusion,
		Event:        r.Event,
		HeadSHA:      r.HeadSHA,
		Path:         r.Path,
		URL:          r.HTMLURL,
		CreatedAt:    r.CreatedAt,
	}
	if r.HeadRepository != nil {
		out.HeadRepo = r.HeadRepository.FullName
	}
	// Runs of workflows without a top-level "name:" can arrive with an empty
	// name; the workflow object beside the run still has it.
	if wf != nil {
		if out.Name == "" {
			out.Name = wf.Name
		}
		if out.Path == "" {
			out.Path = wf.Path
		}
	}
	return out
}
