package tracker

import (
	"testing"
	"time"
)

// TestErrorsNameTheTracker: every tracker error says which tracker
// answered (the sync's Name), never "jira" for GitHub sub-issues, and
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
