package ghevent

// IssueKey returns the repository and the issue or pull request number a
// handled event is about, for routing and per-issue serialisation. ok is
// false for events about no single issue: sweeps (schedule,
// workflow_dispatch), workflow_run, unhandled events, and nil.
//
// For pull request, review and PR comment events the number is the PR's;
// the autopilot issues such an event concerns are in ev.LinkedIssues.
func IssueKey(ev *Event) (repo string, issue int, ok bool) {
	if ev == nil || !ev.Handled || ev.Sweep || ev.Repo == "" || ev.Issue <= 0 {
		return "", 0, false
	}
	return ev.Repo, ev.Issue, true
}
