package ghevent

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
)

// FuzzDecode checks that no payload makes Decode panic, that every error is
// a *PayloadError, and that every decoded event keeps the promises routing
// relies on. Seeds: every vendored payload under the event name it is for;
// testdata/fuzz/FuzzDecode holds the hand-made edge cases.
func FuzzDecode(f *testing.F) {
	for _, file := range ghtest.Files(f) {
		f.Add(ghtest.EventName(file), ghtest.Payload(f, file))
	}
	f.Fuzz(func(t *testing.T, name string, payload []byte) {
		ev, err := Decode(name, payload)
		if err != nil {
			var pe *PayloadError
			if !errors.As(err, &pe) || ev != nil {
				t.Fatalf("Decode(%q) = %v, %v: want nil and a *PayloadError", name, ev, err)
			}
			return
		}
		checkInvariants(t, name, ev)
	})
}

// checkInvariants asserts what callers of a successfully decoded event rely
// on.
func checkInvariants(t *testing.T, name string, ev *Event) {
	t.Helper()
	if ev.Name != name {
		t.Fatalf("Name = %q, want %q", ev.Name, name)
	}
	if ev.Handled != handles(name, ev.Action) {
		t.Fatalf("Handled = %v for %s.%s", ev.Handled, name, ev.Action)
	}
	if ev.Sweep != (name == "schedule" || name == "workflow_dispatch") {
		t.Fatalf("Sweep = %v for %s", ev.Sweep, name)
	}
	if ev.Repo != "" && !validRepo(ev.Repo) {
		t.Fatalf("Repo %q is not owner/name", ev.Repo)
	}
	if len(ev.LinkedIssues) > MaxLinkedIssues {
		t.Fatalf("%d linked issues, cap is %d", len(ev.LinkedIssues), MaxLinkedIssues)
	}
	if !ev.Handled || ev.Sweep {
		return
	}
	if ev.Repo == "" {
		t.Fatalf("handled %s.%s without a repository", name, ev.Action)
	}
	switch name {
	case "issues", "issue_comment", "pull_request", "pull_request_review":
		if ev.Issue <= 0 {
			t.Fatalf("handled %s.%s with issue %d", name, ev.Action, ev.Issue)
		}
	}
	switch {
	case name == "issue_comment" && (ev.Comment == nil || ev.Comment.ID <= 0 || ev.Comment.IssueNumber != ev.Issue):
		t.Fatalf("handled issue_comment with comment %+v", ev.Comment)
	case name == "pull_request" && (ev.Pull == nil || ev.Pull.Number != ev.Issue || !ev.IsPR):
		t.Fatalf("handled pull_request with pull %+v", ev.Pull)
	case name == "pull_request_review" && (ev.Review == nil || ev.Review.ID <= 0 || ev.Review.State == "" || ev.Review.PR != ev.Issue):
		t.Fatalf("handled pull_request_review with review %+v", ev.Review)
	case name == "workflow_run" && (ev.WorkflowRun == nil || ev.WorkflowRun.ID <= 0):
		t.Fatalf("handled workflow_run with run %+v", ev.WorkflowRun)
	case name == "issues" && (ev.Action == "labeled" || ev.Action == "unlabeled") && ev.Label == "":
		t.Fatalf("handled issues.%s without a label", ev.Action)
	}
}

// FuzzCallbackRun checks the run id read from a deployment_callback_url:
// never negative, and when found, the URL names exactly that run's
// protection-rule endpoint.
func FuzzCallbackRun(f *testing.F) {
	for _, s := range []string{
		"https://api.github.com/repos/o/r/actions/runs/42/deployment_protection_rule",
		"https://ghe.example.com/api/v3/repos/o/r/actions/runs/7/deployment_protection_rule",
		"https://api.github.com/repos/o/r/actions/runs/-1/deployment_protection_rule",
		"https://api.github.com/repos/o/r/actions/runs/42/approvals",
		"/actions/runs//deployment_protection_rule", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, url string) {
		id := CallbackRun(url)
		if id < 0 {
			t.Fatalf("CallbackRun(%q) = %d", url, id)
		}
		if id > 0 && !strings.Contains(url, fmt.Sprintf("/actions/runs/%s/deployment_protection_rule", runText(url))) {
			t.Fatalf("CallbackRun(%q) = %d from a URL without that endpoint", url, id)
		}
	})
}

// runText is the text between the first "/actions/runs/" and the next "/".
func runText(url string) string {
	_, rest, _ := strings.Cut(url, "/actions/runs/")
	num, _, _ := strings.Cut(rest, "/")
	return num
}
