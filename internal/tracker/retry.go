package tracker

import (
	"context"
	"errors"
	"time"
)

// call sends one tracker request with the politeness rules: a 401/403 pauses
// the sync at once; a 429 is waited out (when the wait is short enough) and
// the request sent again, since a rate-limited request was not processed;
// a transient error is retried with jittered exponential backoff only when
// the request is idempotent. Anything else is returned unchanged. Every stop
// comes back as a *haltError whose reason is already noted.
func (s *syncer) call(ctx context.Context, idempotent bool, f func(context.Context) error) error {
	rateWaits := 0
	for attempt := 1; ; {
		s.res.Requests++
		err := f(ctx)
		if err == nil {
			return nil
		}
		var ae *AuthError
		var rl *RateLimitError
		var te *TransientError
		switch {
		case errors.As(err, &ae):
			s.res.Paused = PausedAuth
			s.note("Jira authentication failed (HTTP %d); sync paused until `/autopilot jira retry`", ae.Status)
			return &haltError{cause: err}
		case errors.As(err, &rl):
			wait := rl.RetryAfter
			if wait <= 0 {
				wait = DefaultRetryAfter
			}
			if wait > s.o.MaxWait || rateWaits >= maxRateWaits {
				s.res.RetryAt = s.o.Now().Add(wait)
				s.note("Jira rate limit%s; next request not before %s", reasonSuffix(rl.Reason), s.res.RetryAt.UTC().Format(time.RFC3339))
				return &haltError{cause: err}
			}
			rateWaits++
			if err := s.o.Sleep(ctx, wait); err != nil {
				s.note("stopped while waiting out a Jira rate limit: %v", err)
				return &haltError{cause: err}
			}
		case errors.As(err, &te) && idempotent && attempt < s.o.Attempts:
			wait := s.backoff(attempt)
			if te.RetryAfter > wait {
				wait = te.RetryAfter
			}
			if wait > s.o.MaxWait {
				s.res.RetryAt = s.o.Now().Add(wait)
				s.note("Jira unavailable (%v); next request not before %s", te, s.res.RetryAt.UTC().Format(time.RFC3339))
				return &haltError{cause: err}
			}
			if err := s.o.Sleep(ctx, wait); err != nil {
				s.note("stopped while backing off from Jira: %v", err)
				return &haltError{cause: err}
			}
			attempt++
		case errors.As(err, &te):
			if te.RetryAfter > 0 {
				s.res.RetryAt = s.o.Now().Add(te.RetryAfter)
			}
			if idempotent {
				s.note("Jira unavailable after %d attempts (%v); tasks kept for the next sync", attempt, te)
			}
			return &haltError{cause: err}
		case ctx.Err() != nil:
			s.note("stopped: %v", ctx.Err())
			return &haltError{cause: err}
		default:
			return err
		}
	}
}

// backoff is the delay before retry number attempt (1-based): Backoff·2^(n-1),
// with "equal jitter" (between half and all of it).
func (s *syncer) backoff(attempt int) time.Duration {
	d := s.o.Backoff << (attempt - 1)
	if d <= 0 || d > 5*time.Minute {
		d = 5 * time.Minute
	}
	half := d / 2
	return half + time.Duration(s.o.Rand()*float64(half))
}

func reasonSuffix(reason string) string {
	if reason == "" {
		return ""
	}
	return " (" + reason + ")"
}
