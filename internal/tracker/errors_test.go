package tracker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestClassifyMapsEachErrorToItsOutcomeClass: the tracker's errors reach the
// outbox rules as outcome classes, with what the rules need (retry-after,
// status, what became of an issue) and a message naming the tracker.
func TestClassifyMapsEachErrorToItsOutcomeClass(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want tasksync.Refusal
	}{
		{&AuthError{Status: 401}, tasksync.Refusal{Class: tasksync.Auth, Status: 401, Msg: "GitHub authentication failed (HTTP 401)"}},
		{&RateLimitError{RetryAfter: time.Minute, Reason: "secondary"}, tasksync.Refusal{Class: tasksync.RateLimited, RetryAfter: time.Minute, Reason: "secondary", Msg: "GitHub rate limit: retry after 1m0s (secondary)"}},
		{&TransientError{Status: 503, RetryAfter: time.Second}, tasksync.Refusal{Class: tasksync.Transient, Status: 503, RetryAfter: time.Second, Msg: "GitHub unavailable (HTTP 503)"}},
		{&ValidationError{Message: "bad"}, tasksync.Refusal{Class: tasksync.Rejected, Msg: "GitHub rejected the request: bad"}},
		{&GoneError{Gone: state.IssueDeleted, Status: 410}, tasksync.Refusal{Class: tasksync.Gone, Status: 410, Gone: state.IssueDeleted, Msg: "issue deleted (HTTP 410)"}},
		{&GoneError{Gone: state.IssueTransferred, Status: 301}, tasksync.Refusal{Class: tasksync.Gone, Status: 301, Gone: state.IssueTransferred, Msg: "issue transferred (HTTP 301)"}},
		{fmt.Errorf("link: %w", ErrNoDependencies), tasksync.Refusal{Class: tasksync.NoDependencies, Msg: "link: github: issue dependencies are not available"}},
		{context.Canceled, tasksync.Refusal{Class: tasksync.Other, Msg: "context canceled"}},
	} {
		got := Classify(tc.err, "GitHub")
		if got == nil || *got != tc.want {
			t.Errorf("Classify(%v) = %+v, want %+v", tc.err, got, tc.want)
		}
	}
	if Classify(nil, "GitHub") != nil {
		t.Error("Classify(nil) is not nil")
	}
}
