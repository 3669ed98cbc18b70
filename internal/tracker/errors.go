package tracker

import (
	"errors"
	"fmt"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
)

// Each error carries the name of the tracker that answered (Tracker:
// "Jira", or "GitHub" for sub-issues), which its message starts with;
// Sync sets it from SyncOptions.Name (Named). Without one the message says
// "tracker".

// Named sets name as the Tracker of err's tracker error, if it has none
// yet, and returns err.
func Named(err error, name string) error {
	var (
		ae *AuthError
		rl *RateLimitError
		te *TransientError
		ve *ValidationError
	)
	switch {
	case err == nil:
	case errors.As(err, &ae) && ae.Tracker == "":
		ae.Tracker = name
	case errors.As(err, &rl) && rl.Tracker == "":
		rl.Tracker = name
	case errors.As(err, &te) && te.Tracker == "":
		te.Tracker = name
	case errors.As(err, &ve) && ve.Tracker == "":
		ve.Tracker = name
	}
	return err
}

func trackerName(name string) string {
	if name == "" {
		return "tracker"
	}
	return name
}

// AuthError means the tracker refused the credentials (HTTP 401 or 403).
// Sync stops at once and reports Paused "auth"; it is never retried
// automatically, because repeated failed logins lock accounts (CAPTCHA).
type AuthError struct {
	Status  int    // HTTP status, 401 or 403
	Message string // the tracker's own words, if any
	Tracker string // which tracker answered, e.g. "Jira"
}

func (e *AuthError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%s authentication failed (HTTP %d)", trackerName(e.Tracker), e.Status)
	}
	return fmt.Sprintf("%s authentication failed (HTTP %d): %s", trackerName(e.Tracker), e.Status, e.Message)
}

// RateLimitError means the tracker answered 429. No request may be sent
// before RetryAfter has passed. A rate-limited request was not processed.
type RateLimitError struct {
	RetryAfter time.Duration
	Reason     string // Jira's RateLimit-Reason header, e.g. "jira-per-issue-on-write"
	Tracker    string // which tracker answered, e.g. "Jira"
}

func (e *RateLimitError) Error() string {
	msg := fmt.Sprintf("%s rate limit: retry after %s", trackerName(e.Tracker), e.RetryAfter)
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
	Tracker    string // which tracker answered, e.g. "Jira"
}

func (e *TransientError) Error() string {
	name := trackerName(e.Tracker)
	if e.Status == 0 {
		return fmt.Sprintf("%s unavailable: %v", name, e.Err)
	}
	if e.Err == nil {
		return fmt.Sprintf("%s unavailable (HTTP %d)", name, e.Status)
	}
	return fmt.Sprintf("%s unavailable (HTTP %d): %v", name, e.Status, e.Err)
}

// Unwrap returns the underlying error.
func (e *TransientError) Unwrap() error { return e.Err }

// ValidationError is the tracker's refusal of a request or one bulk item:
// Jira's 400 (from its "errors", field → message, or "errorMessages"), or
// GitHub's 422/404 with the request in Field. Field is empty when the
// tracker named no field.
type ValidationError struct {
	Field   string
	Message string
	Tracker string // which tracker answered, e.g. "Jira"
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return trackerName(e.Tracker) + " rejected the request: " + e.Message
	}
	return fmt.Sprintf("%s rejected field %q: %s", trackerName(e.Tracker), e.Field, e.Message)
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

// Classify maps an answer of the tracker to the outcome class the sync
// rules (engine/tasksync) understand: nil for success. The message names
// the tracker (Named) where the error type carries a name.
func Classify(err error, name string) *tasksync.Refusal {
	if err == nil {
		return nil
	}
	err = Named(err, name)
	r := &tasksync.Refusal{Class: tasksync.Other, Msg: err.Error()}
	var (
		ae   *AuthError
		rl   *RateLimitError
		te   *TransientError
		ve   *ValidationError
		gone *GoneError
	)
	switch {
	case errors.Is(err, ErrNoDependencies):
		r.Class = tasksync.NoDependencies
	case errors.As(err, &ae):
		r.Class, r.Status = tasksync.Auth, ae.Status
	case errors.As(err, &rl):
		r.Class, r.RetryAfter, r.Reason = tasksync.RateLimited, rl.RetryAfter, rl.Reason
	case errors.As(err, &te):
		r.Class, r.RetryAfter, r.Status = tasksync.Transient, te.RetryAfter, te.Status
	case errors.As(err, &ve):
		r.Class = tasksync.Rejected
	case errors.As(err, &gone):
		r.Class, r.Status, r.Gone = tasksync.Gone, gone.Status, gone.Gone
	}
	return r
}
