package tracker

import "github.com/autopilot-dev/autopilot/internal/engine/tasksync"

// IsJiraKey reports whether s looks like a Jira issue key such as "PROJ-12".
func IsJiraKey(s string) bool { return tasksync.IsKey(s) }
