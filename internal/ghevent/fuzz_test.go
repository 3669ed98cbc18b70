package ghevent

import (
	"errors"
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
