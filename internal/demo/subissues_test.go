package demo

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestDemoWithGitHubSubIssues(t *testing.T) {
	var buf bytes.Buffer
	tr, err := Run(context.Background(), Options{Tracker: "github"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	s := tr.Summary
	if s.Status != "done" || s.SubIssues != 6 || s.JiraIssues != 0 {
		t.Fatalf("status %s, sub-issues %d, Jira issues %d: want done, 6, 0", s.Status, s.SubIssues, s.JiraIssues)
	}
	if s.APICalls["POST sub-issue"] != 6 || s.APICalls["POST issue"] != 6 {
		t.Errorf("API calls %v: want 6 creates and 6 links", s.APICalls)
	}
	out := buf.String()
	for _, want := range []string{"tasks as GitHub sub-issues", "created sub-issue #2 “CSV export”", "- [x] 02 Streaming CSV writer (3 pts) — [#3]("} {
		if !strings.Contains(out, want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	if _, err := Run(context.Background(), Options{Tracker: "gitlab"}, &buf); err == nil {
		t.Error("an unknown tracker is accepted")
	}
}

func TestDemoWithGitHubSubIssuesTranscriptIsPinned(t *testing.T) {
	var buf bytes.Buffer
	if _, err := Run(context.Background(), Options{Tracker: "github"}, &buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "greenfield_github.golden", buf.Bytes())
}
