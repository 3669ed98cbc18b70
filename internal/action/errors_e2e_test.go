package action_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
)

// TestForbiddenNamesTheMissingPermission: GitHub refuses the state
// comment with 403 and says which permission the call takes
// (X-Accepted-GitHub-Permissions). The run's error output names that
// permission as the workflow's permissions: block spells it, every line
// of it carries the one prefix "autopilot:" (or is the ::error::
// annotation), no line before it looks like a success, and no "rate limit
// remaining -1" is printed anywhere.
func TestForbiddenNamesTheMissingPermission(t *testing.T) {
	h := newHarness(t)
	n := h.startRun("Add CSV export")
	h.gh.Script("POST", "/repos/*/*/issues/*/comments", fakegithub.Step{Status: 403,
		Headers: map[string]string{"X-Accepted-GitHub-Permissions": "issues=write; pull_requests=write"},
		Body:    `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/issues/comments#create-an-issue-comment","status":"403"}`})
	// A transient answer on the way makes the adapter log its retry.
	h.gh.Script("GET", "/repos/*/*/collaborators/*/permission", fakegithub.Fail(502))
	r := h.run("issue_comment", h.comment(n, "devin", "/autopilot done problem framed"))
	t.Logf("output:\n%s", r.stdout)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1", r.code)
	}
	var errLines []string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		switch {
		case strings.HasPrefix(l, "::error::"):
			errLines = append(errLines, l)
		case strings.HasPrefix(l, "::warning::"), strings.HasPrefix(l, "autopilot: "):
		default:
			t.Errorf("a line without the autopilot: prefix: %q", l)
		}
		if strings.Contains(l, "remaining -1") {
			t.Errorf("an unknown rate limit printed as -1: %q", l)
		}
		if len(errLines) == 0 && strings.Contains(l, "step=") {
			t.Errorf("a status line before the error looks like success: %q", l)
		}
	}
	if !strings.Contains(r.stdout, "autopilot: level=WARN") {
		t.Errorf("no retry log line with the prefix:\n%s", r.stdout)
	}
	sum, err := os.ReadFile(filepath.Join(h.dir, fmt.Sprintf("summary-%d", h.n)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sum), "API calls:") || strings.Contains(string(sum), "remaining -1") {
		t.Errorf("summary:\n%s\nwant the API calls and no unknown rate limit", sum)
	}
	if len(errLines) != 1 {
		t.Fatalf("%d ::error:: lines, want 1", len(errLines))
	}
	for _, want := range []string{"Resource not accessible by integration", "issues: write", "pull-requests: write"} {
		if !strings.Contains(errLines[0], want) {
			t.Errorf("the error lacks %q: %s", want, errLines[0])
		}
	}
}
