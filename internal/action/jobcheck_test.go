package action

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

// TestJobCheckRules: which commit a run's job check lands on, which check
// runs of the PR check's name are autopilot's, and which may still pass.
func TestJobCheckRules(t *testing.T) {
	pr := []byte(`{"pull_request": {"head": {"sha": "aaa"}}, "issue": {"number": 3}}`)
	for _, tc := range []struct {
		event, want string
		payload     []byte
	}{
		{"pull_request", "aaa", pr},
		{"pull_request_review", "aaa", pr},
		{"pull_request_review_comment", "aaa", pr},
		{"merge_group", "bbb", []byte(`{"merge_group": {"head_sha": "bbb"}}`)},
		{"issue_comment", "", pr},
		{"pull_request", "", []byte(`not json`)},
	} {
		if got := gatedCommit(tc.event, tc.payload); got != tc.want {
			t.Errorf("gatedCommit(%s) = %q, want %q", tc.event, got, tc.want)
		}
	}
	for _, tc := range []struct {
		what      string
		c         forge.Check
		ours, may bool
	}{
		{"the bot's check", forge.Check{AppID: actionsAppID, ExternalID: "autopilot#12", Status: "completed", Conclusion: "success"}, true, true},
		{"the bot's merge queue check", forge.Check{AppID: actionsAppID, ExternalID: "autopilot-queue#40", Status: "completed", Conclusion: "success"}, true, true},
		{"a job's running check", forge.Check{AppID: actionsAppID, ExternalID: "0000-job", Status: "in_progress"}, false, true},
		{"a job's green check", forge.Check{AppID: actionsAppID, Status: "completed", Conclusion: "success"}, false, true},
		{"a job's failed check", forge.Check{AppID: actionsAppID, Status: "completed", Conclusion: "failure"}, false, false},
		{"a neutral check", forge.Check{AppID: actionsAppID, Status: "completed", Conclusion: "neutral"}, false, true},
		{"another App's", forge.Check{AppID: 99, ExternalID: "autopilot#12", Status: "queued"}, false, true},
	} {
		if got := ours(tc.c); got != tc.ours {
			t.Errorf("%s: ours = %v, want %v", tc.what, got, tc.ours)
		}
		if got := mayPass(tc.c); got != tc.may {
			t.Errorf("%s: mayPass = %v, want %v", tc.what, got, tc.may)
		}
	}
}

// FuzzGatedCommit: any event file gives a commit or none, never a panic,
// and only the events whose job check lands on a PR head (or a merge
// queue's commit) give one.
func FuzzGatedCommit(f *testing.F) {
	f.Add("pull_request", []byte(`{"pull_request": {"head": {"sha": "aaa"}}}`))
	f.Add("merge_group", []byte(`{"merge_group": {"head_sha": "bbb"}}`))
	f.Add("issues", []byte(`{"pull_request": {"head": {"sha": "aaa"}}}`))
	f.Add("pull_request_review", []byte(`{"pull_request": {"head": {"sha": 7}}}`))
	f.Fuzz(func(t *testing.T, event string, payload []byte) {
		if got := gatedCommit(event, payload); got != "" && !gatedEvents[event] {
			t.Fatalf("event %q gave commit %q", event, got)
		}
	})
}
