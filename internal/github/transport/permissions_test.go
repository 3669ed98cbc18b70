package transport

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestAcceptedPermissions reads the header as GitHub documents it: sets
// separated by ";", a set's permissions by ",".
func TestAcceptedPermissions(t *testing.T) {
	for _, tc := range []struct{ header, want string }{
		{"", "[]"},
		{"issues=write", "[[issues=write]]"},
		{"repository_projects=write; organization_projects=admin", "[[repository_projects=write] [organization_projects=admin]]"},
		{"contents=read,pull_requests=write; issues=write", "[[contents=read pull_requests=write] [issues=write]]"},
		{" ; =write; issues", "[]"},
	} {
		h := http.Header{}
		if tc.header != "" {
			h.Set("X-Accepted-GitHub-Permissions", tc.header)
		}
		if got := fmt.Sprint(AcceptedPermissions(h)); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.header, got, tc.want)
		}
	}
	h := http.Header{}
	h.Set("X-Accepted-GitHub-Permissions", "contents=read,pull_requests=write; issues=write")
	hint := PermissionHint(h)
	for _, want := range []string{"contents: read and pull-requests: write or issues: write", "contents=read,pull_requests=write or issues=write"} {
		if !strings.Contains(hint, want) {
			t.Errorf("hint %q lacks %q", hint, want)
		}
	}
	if PermissionHint(http.Header{}) != "" {
		t.Error("a hint without the header")
	}
}

func FuzzAcceptedPermissions(f *testing.F) {
	f.Add("repository_projects=write; organization_projects=admin")
	f.Add("contents=read,pull_requests=write;;=")
	f.Fuzz(func(t *testing.T, s string) {
		h := http.Header{}
		h.Set("X-Accepted-GitHub-Permissions", s)
		for _, set := range AcceptedPermissions(h) {
			for _, p := range set {
				name, level, ok := strings.Cut(p, "=")
				if !ok || name == "" || level == "" || strings.ContainsAny(p, ";,") {
					t.Fatalf("%q: bad permission %q", s, p)
				}
			}
		}
		_ = PermissionHint(h)
	})
}
