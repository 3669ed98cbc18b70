package prose

import (
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// The one-off notices and refusals the engine posts; the engine decides
// when, these say what.

// Tampered: a state comment edited by someone else was restored to
// version.
func Tampered(version int64) string {
	return fmt.Sprintf("⚠️ The autopilot state comment was edited by someone other than the bot. Edits are not acted on: the last good state (version %d) was restored.", version)
}

// StateLost: no state verifies although a run existed; deleted says the
// state comment is gone rather than altered. label is the trigger label.
func StateLost(deleted bool, label string) string {
	why := "modified so that it no longer verifies"
	if deleted {
		why = "deleted"
	}
	return "⚠️ The autopilot state comment of this issue was " + why + ", so autopilot has paused here rather than guess. Nothing further happens on this issue (tasks already in Jira or filed as sub-issues are never re-created). To start over, remove and re-add the `" + label + "` label."
}

// Unmanaged answers a command on an issue without a run.
func Unmanaged(label string) string {
	return "This issue is not managed by autopilot. Add the `" + label + "` label to start a run."
}

// TrackerCloseAuth: a 401 while moving the tasks to done left some open;
// label names the tracker ("Jira", "GitHub").
func TrackerCloseAuth(label string, left int) string {
	if label == "GitHub" {
		return fmt.Sprintf("⚠️ GitHub refused autopilot's token while closing this issue's task sub-issues, so %d of them are still open. The flow is not affected. Give the token `issues: write` (docs/tasks.md), then comment `/autopilot tasks retry` to finish.", left)
	}
	return fmt.Sprintf("⚠️ %s refused autopilot's credentials while moving this issue's tasks to done there, so %d of them are still open in %s. The GitHub side is not affected. Fix the token, then comment `/autopilot tasks retry` to finish.", label, left, label)
}

// The tracker refused the credentials: the sync is paused.
const (
	SubIssuesRefused = "⚠️ GitHub refused to create this issue's task sub-issues (401/403), so the task sync is paused. The flow goes on; tasks wait as `GitHub: pending`. Give the token `issues: write` (docs/tasks.md), then comment `/autopilot tasks retry`."
	JiraRefused      = "⚠️ Jira rejected autopilot's credentials (401), so Jira sync is paused. The GitHub side goes on; tasks wait as `Jira: pending`. Fix the token, then comment `/autopilot tasks retry`."
)

// NoTracker answers /autopilot tasks sync|retry where no tracker is
// configured: it says how to set one up.
const NoTracker = "No task tracker is configured for this repository, so there is nothing to sync with; " +
	"the tasks stay in the state comment. To file them as GitHub sub-issues, set `tracker: github` in " +
	"`.github/autopilot.yml` (autopilot's docs/tasks.md); to use Jira, set the action inputs `jira_url`, `jira_token` and " +
	"`jira_project` (plus `jira_user` on Jira Cloud; docs/jira.md). Then comment `/autopilot tasks sync`."

// Unauthorized refuses a comment whose author lacks perm.
func Unauthorized(author, perm string) string {
	return fmt.Sprintf("@\u200b%s, thanks — only people with at least **%s** permission on this repository can answer autopilot's questions or run its commands, so this comment was not applied.",
		textsafe.Escape(author), perm)
}

// UnauthorizedClick refuses a PR-check click on option letter by a sender
// who lacks perm.
func UnauthorizedClick(sender, perm, letter string) string {
	return fmt.Sprintf("@\u200b%s, thanks — only people with at least **%s** permission on this repository can answer autopilot's questions, so your click on **%s** in the PR check was not applied.",
		textsafe.Escape(sender), perm, letter)
}

// Edited refuses a comment edited before it was processed.
func Edited(author string) string {
	return fmt.Sprintf("@\u200b%s: this comment was edited before autopilot processed it, and autopilot cannot confirm that you wrote its current text, so it was not applied. Please post your answer or command as a new comment.",
		textsafe.Escape(author))
}
