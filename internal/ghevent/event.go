// Package ghevent decodes GitHub webhook / Actions event payloads into one
// small normalised Event that the rest of autopilot routes on. It trusts
// nothing in a payload beyond routing: the state, comments and labels are
// always re-read from the API (payload snapshots can be stale).
package ghevent

import (
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/forge"
)

// Event is a decoded GitHub event, reduced to what autopilot routes on.
type Event struct {
	// Name is the X-GitHub-Event / GITHUB_EVENT_NAME value, e.g. "issue_comment".
	Name   string
	Action string
	// Repo is "owner/name" from repository.full_name.
	Repo string
	// Installation is installation.id (App deliveries), 0 when absent.
	Installation int64
	Sender       forge.User

	// Handled is false for events/actions autopilot ignores (exit 0, no API call).
	Handled bool
	// Sweep is true for schedule and workflow_dispatch: reconcile every open
	// autopilot issue.
	Sweep bool

	// Issue is the issue or PR number the event is about (0 when none).
	Issue int
	// IsPR is true when Issue is a pull request.
	IsPR bool
	// Labels is the issue's label snapshot from the payload (may be stale).
	Labels []string
	// Label is the label added or removed (issues.labeled/unlabeled).
	Label string
	// Title and Body are the issue's (or PR's) title and body snapshot.
	Title string
	Body  string
	// IssueState is "open" or "closed" from the payload.
	IssueState string
	// BodyEdited: a pull_request edited delivery whose changes.body is
	// present, so its sender wrote the PR's description as delivered.
	BodyEdited bool

	Comment     *forge.Comment     // issue_comment
	Pull        *forge.Pull        // pull_request, pull_request_review
	Review      *forge.Review      // pull_request_review
	WorkflowRun *forge.WorkflowRun // workflow_run
	// RunPRs are the numbers of the pull requests a workflow run was for
	// (workflow_run.pull_requests[].number: CI runs on a PR's head; empty
	// for dispatched runs).
	RunPRs []int
	// CheckAction is a click on a button of a check run
	// (check_run.requested_action); LinkedIssues then holds the issue its
	// external_id names, if any.
	CheckAction *CheckAction
	// MergeGroup is a merge queue's request for checks
	// (merge_group.checks_requested).
	MergeGroup *MergeGroup
	// LinkedIssues are issue numbers a PR body links to (closing keywords or
	// "Autopilot-Issue: #N"), for pull_request / review / PR comment events.
	LinkedIssues []int

	// Carries is the engine event a kind routed by the table alone becomes
	// (Kind.Concerns): its payload decodes it, route hands it to every
	// issue the event concerns, and the engine's handler for it applies it.
	Carries events.Event
}
