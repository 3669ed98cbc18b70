package tracker

import "regexp"

var jiraKeyRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*-[1-9][0-9]*$`)

// IsJiraKey reports whether s looks like a Jira issue key such as "PROJ-12".
func IsJiraKey(s string) bool { return jiraKeyRE.MatchString(s) }
