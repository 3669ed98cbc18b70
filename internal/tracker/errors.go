package tracker

import (
	"fmt"
	"time"
)

// AuthError means the tracker refused the credentials (HTTP 401 or 403).
// Sync stops at once and reports Paused "auth"; it is never retried
// automatically, because repeated failed logins lock accounts (CAPTCHA).
type AuthError struct {
	Status  int    // HTTP status, 401 or 403
	Message string // the tracker's own words, if any
}

func (e *AuthError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("jira authentication failed (HTTP %d)", e.Status)
	}
	return fmt.Sprintf("jira authentication failed (HTTP %d): %s", e.Status, e.Message)
}

// RateLimitError means the tracker answered 429. No request may be sent
// before RetryAfter has passed. A rate-limited request was not processed.
type RateLimitError struct {
	RetryAfter time.Duration
	Reason     string // Jira's RateLimit-Reason header, e.g. "jira-per-issue-on-write"
}

func (e *RateLimitError) Error() string {
	msg := fmt.Sprintf("jira rate limit: retry after %s", e.RetryAfter)
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	return msg
}

// TransientError is a 5xx answer, a timeout or a broken connection. For a
// create, the outcome is unknown: the issue may or may not exist.
type TransientError struct {
	Status     int           // HTTP status; 0 for network errors and timeouts
	RetryAfter time.Duration // from a Retry-After header on a 503, if any
	Err        error
}

func (e *TransientError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("jira unavailable: %v", e.Err)
	}
	if e.Err == nil {
		return fmt.Sprintf("jira unavailable (HTTP %d)", e.Status)
	}
	return fmt.Sprintf("jira unavailable (HTTP %d): %v", e.Status, e.Err)
}

// Unwrap returns the underlying error.
func (e *TransientError) Unwrap() error { return e.Err }

// ValidationError is Jira's 400 answer for a request or one bulk item, taken
// from its "errors" (field → message) or "errorMessages". Field is empty when
// Jira named no field.
type ValidationError struct {
	Field   string
	Message string
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return "jira rejected the request: " + e.Message
	}
	return fmt.Sprintf("jira rejected field %q: %s", e.Field, e.Message)
}

// GoneError means the tracker no longer has one issue: deleted (GitHub
// answers 410 Gone), not found (404) or transferred to another repository
// (GitHub answers 301 Moved Permanently). It concerns that issue alone:
// Sync records it on the task (state.Task.Gone) and goes on with the others.
type GoneError struct {
	// Gone is state.IssueDeleted, state.IssueNotFound or state.IssueTransferred.
	Gone   string
	Status int
	// MovedTo is where a transferred issue went (GitHub's Location), if known.
	MovedTo string
	Message string
}

func (e *GoneError) Error() string {
	msg := fmt.Sprintf("issue %s (HTTP %d)", e.Gone, e.Status)
	if e.MovedTo != "" {
		msg += " to " + e.MovedTo
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}
