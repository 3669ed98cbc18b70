package ghevent

import "fmt"

// eventPayload is one event's wire shape: the envelope plus the event's own
// members, able to fill an Event and to say what a handled event lacks.
type eventPayload interface {
	env() *envelope
	// fill copies the payload's members into ev (whatever is present).
	fill(ev *Event)
	// check reports the first member a handled event needs but lacks.
	check(ev *Event) error
}

func (e *envelope) env() *envelope     { return e }
func (e *envelope) fill(*Event)        {}
func (e *envelope) check(*Event) error { return nil }

// issues: labeled, unlabeled, closed, reopened.
type issuesPayload struct {
	envelope
	Issue *wireIssue `json:"issue"`
	Label *wireLabel `json:"label"`
}

func (p *issuesPayload) fill(ev *Event) {
	if p.Issue != nil {
		setIssue(ev, p.Issue)
	}
	if p.Label != nil {
		ev.Label = p.Label.Name
	}
}

func (p *issuesPayload) check(ev *Event) error {
	if err := requireNumber(ev, "issue", p.Issue != nil); err != nil {
		return err
	}
	if (ev.Action == "labeled" || ev.Action == "unlabeled") && ev.Label == "" {
		return missing(ev.Name, "label.name")
	}
	return nil
}

// issue_comment: created, edited; on issues and PRs.
type commentPayload struct {
	envelope
	Issue   *wireIssue   `json:"issue"`
	Comment *wireComment `json:"comment"`
}

func (p *commentPayload) fill(ev *Event) {
	if p.Issue != nil {
		setIssue(ev, p.Issue)
		if ev.IsPR {
			// A PR's conversation: the issue body is the PR body.
			ev.LinkedIssues = LinkedIssues(p.Issue.Body)
		}
	}
	if p.Comment != nil {
		ev.Comment = p.Comment.comment(ev.Issue)
	}
}

func (p *commentPayload) check(ev *Event) error {
	if err := requireNumber(ev, "issue", p.Issue != nil); err != nil {
		return err
	}
	if p.Comment == nil || p.Comment.ID <= 0 {
		return missing(ev.Name, "comment.id")
	}
	return nil
}

// pull_request: opened, edited, closed, reopened, synchronize.
type pullPayload struct {
	envelope
	PullRequest *wirePull `json:"pull_request"`
	Changes     *struct {
		Body *struct {
			From string `json:"from"`
		} `json:"body"`
	} `json:"changes"`
}

func (p *pullPayload) fill(ev *Event) {
	if p.PullRequest != nil {
		setPull(ev, p.PullRequest)
	}
	ev.BodyEdited = ev.Action == "edited" && p.Changes != nil && p.Changes.Body != nil
}

func (p *pullPayload) check(ev *Event) error {
	return requireNumber(ev, "pull_request", p.PullRequest != nil)
}

// pull_request_review: submitted.
type reviewPayload struct {
	envelope
	Review      *wireReview `json:"review"`
	PullRequest *wirePull   `json:"pull_request"`
}

func (p *reviewPayload) fill(ev *Event) {
	if p.PullRequest != nil {
		setPull(ev, p.PullRequest)
	}
	if p.Review != nil {
		ev.Review = p.Review.review(ev.Issue)
	}
}

func (p *reviewPayload) check(ev *Event) error {
	if err := requireNumber(ev, "pull_request", p.PullRequest != nil); err != nil {
		return err
	}
	switch {
	case p.Review == nil || p.Review.ID <= 0:
		return missing(ev.Name, "review.id")
	case p.Review.State == "":
		return missing(ev.Name, "review.state")
	}
	return nil
}

// workflow_run: completed.
type runPayload struct {
	envelope
	WorkflowRun *wireRun      `json:"workflow_run"`
	Workflow    *wireWorkflow `json:"workflow"`
}

func (p *runPayload) fill(ev *Event) {
	if p.WorkflowRun != nil {
		ev.WorkflowRun = p.WorkflowRun.run(p.Workflow)
		ev.RunPRs = p.WorkflowRun.prs()
	}
}

func (p *runPayload) check(ev *Event) error {
	if ev.Repo == "" {
		return missing(ev.Name, "repository.full_name")
	}
	if p.WorkflowRun == nil || p.WorkflowRun.ID <= 0 {
		return missing(ev.Name, "workflow_run.id")
	}
	return nil
}

func setIssue(ev *Event, is *wireIssue) {
	ev.Issue = is.Number
	ev.IsPR = is.PullRequest != nil
	ev.Labels = labelNames(is.Labels)
	ev.Title = is.Title
	ev.Body = is.Body
	ev.IssueState = is.State
}

func setPull(ev *Event, p *wirePull) {
	ev.Issue = p.Number
	ev.IsPR = true
	ev.Labels = labelNames(p.Labels)
	ev.Title = p.Title
	ev.Body = p.Body
	ev.IssueState = p.State
	ev.Pull = p.pull()
	ev.LinkedIssues = LinkedIssues(p.Body)
}

// requireNumber checks what every handled issue, comment, PR or review event
// needs: the repository and the number in <object>.number.
func requireNumber(ev *Event, object string, present bool) error {
	switch {
	case ev.Repo == "":
		return missing(ev.Name, "repository.full_name")
	case !present || ev.Issue == 0:
		return missing(ev.Name, object+".number")
	case ev.Issue < 0:
		return &PayloadError{Event: ev.Name, Field: object + ".number", Reason: fmt.Sprintf("invalid %d (want a positive number)", ev.Issue)}
	}
	return nil
}
