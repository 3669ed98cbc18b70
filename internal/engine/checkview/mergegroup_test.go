package checkview

import (
	"strings"
	"testing"
)

// TestMergeGroupConclusion pins the check the bot writes on a merge
// queue's commit: the conclusion of the newest check named name on the
// queued PR's head, success only when that is success, and only check
// runs of the bot's App (0: GitHub Actions) count.
func TestMergeGroupConclusion(t *testing.T) {
	q := MergeQueue{Name: "autopilot", App: 0, PR: 7, PRURL: "https://github.com/o/r/pull/7", PRHead: "abcdef0123", QueueHead: "fff999"}
	actions := int64(15368)
	for _, tc := range []struct {
		name       string
		app        int64
		seen       []SeenCheck
		conclusion string
		title      string
	}{
		{"no check on the head", 0, nil, CheckFailure, "PR #7: no autopilot check on its head abcdef0"},
		{"newest is success", 0, []SeenCheck{
			{ID: 1, Name: "autopilot", AppID: actions, Status: CheckCompleted, Conclusion: CheckFailure},
			{ID: 3, Name: "autopilot", AppID: actions, Status: CheckCompleted, Conclusion: CheckSuccess},
		}, CheckSuccess, "PR #7 passed its merge gate on abcdef0"},
		{"newest is action required", 0, []SeenCheck{
			{ID: 3, Name: "autopilot", AppID: actions, Status: CheckCompleted, Conclusion: CheckSuccess},
			{ID: 4, Name: "autopilot", AppID: actions, Status: CheckCompleted, Conclusion: CheckActionRequired},
		}, CheckFailure, "PR #7: the autopilot check on its head abcdef0 is action_required"},
		{"newest still running", 0, []SeenCheck{{ID: 4, Name: "autopilot", AppID: actions, Status: CheckInProgress}}, CheckFailure,
			"PR #7: the autopilot check on its head abcdef0 is in_progress"},
		{"another app's success does not count", 0, []SeenCheck{{ID: 9, Name: "autopilot", AppID: 1, Status: CheckCompleted, Conclusion: CheckSuccess}}, CheckFailure,
			"PR #7: no autopilot check on its head abcdef0"},
		{"the App's own check", 42, []SeenCheck{
			{ID: 9, Name: "autopilot", AppID: 42, Status: CheckCompleted, Conclusion: CheckSuccess},
			{ID: 10, Name: "autopilot", AppID: actions, Status: CheckCompleted, Conclusion: CheckFailure},
		}, CheckSuccess, "PR #7 passed its merge gate on abcdef0"},
		{"another name does not count", 0, []SeenCheck{{ID: 9, Name: "ci", AppID: actions, Status: CheckCompleted, Conclusion: CheckSuccess}}, CheckFailure,
			"PR #7: no autopilot check on its head abcdef0"},
	} {
		q := q
		q.App = tc.app
		got := q.Check(tc.seen)
		if got.Conclusion != tc.conclusion || got.Title != tc.title || got.Status != CheckCompleted {
			t.Errorf("%s: %s %s %q; want %s %q", tc.name, got.Status, got.Conclusion, got.Title, tc.conclusion, tc.title)
		}
		if got.Name != "autopilot" || got.HeadSHA != "fff999" || got.ExternalID != QueueExternalID(7) || got.DetailsURL != q.PRURL {
			t.Errorf("%s: check %+v names the wrong commit, PR or page", tc.name, got)
		}
		if !strings.HasPrefix(got.Summary, got.Title+".\n\n") || !strings.Contains(got.Summary, "(https://github.com/o/r/pull/7)") {
			t.Errorf("%s: summary %q", tc.name, got.Summary)
		}
	}
}
