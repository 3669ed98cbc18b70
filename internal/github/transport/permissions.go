package transport

import (
	"fmt"
	"net/http"
	"strings"
)

// AcceptedPermissions reads GitHub's X-Accepted-GitHub-Permissions header:
// the sets of fine-grained permissions that each let the call through,
// sets separated by ";", the permissions of one set by "," (for example
// "repository_projects=write; organization_projects=admin": either one).
// It returns nil when the header is absent or empty.
func AcceptedPermissions(h http.Header) [][]string {
	var sets [][]string
	for _, raw := range strings.Split(h.Get("X-Accepted-GitHub-Permissions"), ";") {
		var set []string
		for _, p := range strings.Split(raw, ",") {
			name, level, ok := strings.Cut(strings.TrimSpace(p), "=")
			name, level = strings.TrimSpace(name), strings.TrimSpace(level)
			if ok && name != "" && level != "" {
				set = append(set, name+"="+level)
			}
		}
		if len(set) > 0 {
			sets = append(sets, set)
		}
	}
	return sets
}

// PermissionHint says which permission a 403 asked for, as a workflow's
// permissions: block spells it ("pull-requests: write") and as GitHub
// named it, or "" when the answer did not say.
func PermissionHint(h http.Header) string {
	sets := AcceptedPermissions(h)
	if len(sets) == 0 {
		return ""
	}
	var yaml, raw []string
	for _, set := range sets {
		var y []string
		for _, p := range set {
			name, level, _ := strings.Cut(p, "=")
			y = append(y, strings.ReplaceAll(name, "_", "-")+": "+level)
		}
		yaml = append(yaml, strings.Join(y, " and "))
		raw = append(raw, strings.Join(set, ","))
	}
	return fmt.Sprintf("the token lacks the permission this call takes: grant %s (in a workflow's permissions: block; a GitHub App's permission %s)",
		strings.Join(yaml, " or "), strings.Join(raw, " or "))
}
