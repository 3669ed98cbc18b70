package tracker

import (
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestErrorsNameTheTracker: every tracker error says which tracker
// answered (SyncOptions.Name), never "jira" for GitHub sub-issues, and
// "tracker" when nobody said.
func TestErrorsNameTheTracker(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&ValidationError{Field: "add sub-issue to #3", Message: "already has a parent", Tracker: "GitHub"}, `GitHub rejected field "add sub-issue to #3": already has a parent`},
		{&ValidationError{Message: "bad", Tracker: "Jira"}, "Jira rejected the request: bad"},
		{&AuthError{Status: 401, Tracker: "GitHub"}, "GitHub authentication failed (HTTP 401)"},
		{&RateLimitError{RetryAfter: time.Minute, Tracker: "Jira"}, "Jira rate limit: retry after 1m0s"},
		{&TransientError{Status: 502, Tracker: "GitHub"}, "GitHub unavailable (HTTP 502)"},
		{&ValidationError{Field: "summary", Message: "too long"}, `tracker rejected field "summary": too long`},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

// TestSyncNotesAndTaskErrorsNameTheTracker: a sync stamps its tracker's
// name on the errors it records in tasks and on its notes.
func TestSyncNotesAndTaskErrorsNameTheTracker(t *testing.T) {
	r := newRig(0)
	ts := manyTasks(2)
	ts[1].Title = strings.Repeat("x", 300)
	res := r.sync(t, ts, func(o *SyncOptions) { o.Name = "GitHub" })
	if bad := res.Tasks[1]; bad.Sync != state.SyncFailed || !strings.HasPrefix(bad.Error, "GitHub rejected field") {
		t.Errorf("rejected task error = %q", bad.Error)
	}
	r.sb.SetAuth(false)
	res = r.sync(t, manyTasks(1), func(o *SyncOptions) { o.Name = "GitHub" })
	if res.Paused != PausedAuth || !strings.Contains(res.Note, "GitHub authentication failed") || strings.Contains(res.Note, "Jira") ||
		!strings.Contains(res.Note, "/autopilot tasks retry") {
		t.Errorf("auth note = %q", res.Note)
	}
}
