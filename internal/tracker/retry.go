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
		err := Named(f(ctx), s.o.Name)
		if err == nil {
			return nil
		}
		var ae *AuthError
		var rl *RateLimitError
		var te *TransientError
		switch {
		case errors.As(err, &ae):
			s.res.Paused = PausedAuth
			s.note("%s authentication failed (HTTP %d); sync paused until `/autopilot tasks retry`", s.o.Name, ae.Status)
			return &haltError{cause: err}
		case errors.As(err, &rl):
			if !s.waitRateLimit(ctx, rl, rateWaits) {
				return &haltError{cause: err}
			}
			rateWaits++
		case errors.As(err, &te) && idempotent && attempt < s.o.Attempts:
			if !s.waitToRetry(ctx, te, attempt) {
				return &haltError{cause: err}
			}
			attempt++
		case errors.As(err, &te):
			s.giveUp(te, idempotent, attempt)
			return &haltError{cause: err}
		case ctx.Err() != nil:
			s.note("stopped: %v", ctx.Err())
			return &haltError{cause: err}
		default:
			return err
		}
	}
}

// waitRateLimit waits out a 429 so the request can be sent again. It
// reports false, with the reason noted, when the sync stops instead: the
// wait is longer than MaxWait, the request waited maxRateWaits times
// already, or ctx ended.
func (s *syncer) waitRateLimit(ctx context.Context, rl *RateLimitError, waits int) bool {
	wait := rl.RetryAfter
	if wait <= 0 {
		wait = DefaultRetryAfter
	}
	if wait > s.o.MaxWait || waits >= maxRateWaits {
		s.res.RetryAt = s.o.Now().Add(wait)
		s.note("%s rate limit%s; next request not before %s", s.o.Name, reasonSuffix(rl.Reason), s.res.RetryAt.UTC().Format(time.RFC3339))
		return false
	}
	if err := s.o.Sleep(ctx, wait); err != nil {
		s.note("stopped while waiting out a %s rate limit: %v", s.o.Name, err)
		return false
	}
	return true
}

// waitToRetry waits before retrying an idempotent request after a transient
// error (at least as long as the tracker asked). It reports false, with the
// reason noted, when the sync stops instead: the wait is longer than
// MaxWait, or ctx ended.
func (s *syncer) waitToRetry(ctx context.Context, te *TransientError, attempt int) bool {
	wait := s.backoff(attempt)
	if te.RetryAfter > wait {
		wait = te.RetryAfter
	}
	if wait > s.o.MaxWait {
		s.res.RetryAt = s.o.Now().Add(wait)
		s.note("%s unavailable (%v); next request not before %s", s.o.Name, te, s.res.RetryAt.UTC().Format(time.RFC3339))
		return false
	}
	if err := s.o.Sleep(ctx, wait); err != nil {
		s.note("stopped while backing off from %s: %v", s.o.Name, err)
		return false
	}
	return true
}

// giveUp records a transient error that is not retried: a request that is
// not idempotent may have been processed, and an idempotent one has used its
// attempts.
func (s *syncer) giveUp(te *TransientError, idempotent bool, attempt int) {
	if te.RetryAfter > 0 {
		s.res.RetryAt = s.o.Now().Add(te.RetryAfter)
	}
	if idempotent {
		s.note("%s unavailable after %d attempts (%v); tasks kept for the next sync", s.o.Name, attempt, te)
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
