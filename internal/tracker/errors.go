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
