package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"time"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/redisq"
	"github.com/autopilot-dev/autopilot/internal/server/tracing"
	"github.com/autopilot-dev/autopilot/internal/server/workq"
)

// jobCtx is what a running job's context carries: the server (for its
// Locker and lease renewal), the job's logger and the leases it holds.
type jobCtx struct {
	srv  *Server
	log  *slog.Logger
	held []job.Lease
	// keep: the job's own leases are handed to the caller (kept) instead
	// of released when it returns, to be released with the queue entry's
	// acknowledgement.
	keep bool
	kept []job.Lease
}

type jobCtxKey struct{}

// lease returns the held lease on key.
func (jc *jobCtx) lease(key string) (job.Lease, bool) {
	if jc != nil {
		for _, l := range jc.held {
			if l.Key == key {
				return l, true
			}
		}
	}
	return job.Lease{}, false
}

// LeaseFor returns the lease the running job holds on repo#issue, so the
// processor can stamp writes with its fencing token.
func LeaseFor(ctx context.Context, repo string, issue int) (job.Lease, bool) {
	jc, _ := ctx.Value(jobCtxKey{}).(*jobCtx)
	return jc.lease(IssueLockKey(repo, issue))
}

// LockIssue takes the per-issue lease a webhook job for repo#issue takes,
// without renewing it (prefer WithIssueLock, which does). Release the lease
// when done. If the job already holds that issue's lease, the returned lease
// is that one and its Release does nothing. Take one lease at a time:
// holding one while waiting for another can deadlock. Outside a server job
// it returns a lease that guards nothing.
func LockIssue(ctx context.Context, repo string, issue int) (job.Lease, error) {
	key := IssueLockKey(repo, issue)
	jc, _ := ctx.Value(jobCtxKey{}).(*jobCtx)
	if jc == nil {
		return job.Lease{Key: key}, nil
	}
	if l, ok := jc.lease(key); ok {
		return job.Lease{Key: l.Key, Token: l.Token, Owner: l.Owner}, nil // Release: no-op
	}
	return jc.srv.deps.Locker.Lock(ctx, key)
}

// WithIssueLock runs fn holding the per-issue lease a webhook job for
// repo#issue takes, so that the work never overlaps other work on that
// issue, in this replica or another. A Sweeper calls it around each issue it
// reconciles, and a Processor handling an event that names no issue
// (workflow_run) around the issue it finds. The lease is taken like a job's
// (store errors retried until ctx ends), renewed every third of LOCK_TTL
// while fn runs, and released when fn returns; if it is lost, fn's context
// is cancelled and the cause returned. Within a job that already holds the
// lease, and outside a server job, fn simply runs. Do not nest calls for
// different issues: holding one lease while waiting for another can
// deadlock.
func WithIssueLock(ctx context.Context, repo string, issue int, fn func(context.Context) error) error {
	key := IssueLockKey(repo, issue)
	jc, _ := ctx.Value(jobCtxKey{}).(*jobCtx)
	if jc == nil {
		return fn(ctx)
	}
	if _, ok := jc.lease(key); ok {
		return fn(ctx)
	}
	inner := &jobCtx{srv: jc.srv, log: jc.log.With("issue", issue), held: slices.Clone(jc.held)}
	outer := len(inner.held)
	ctx = context.WithValue(ctx, jobCtxKey{}, inner)
	return jc.srv.holding(ctx, inner, []string{key}, outer, fn)
}

// IssueLockKey is the lock key of an issue: "owner/repo#12".
func IssueLockKey(repo string, issue int) string {
	return fmt.Sprintf("%s#%d", repo, issue)
}

// work runs jobs until the queue closes empty or ctx (the shutdown deadline)
// ends. A Redis queue entry is acknowledged once its job returned, whatever
// the outcome: a failed job is left to the next event or sweep, as in
// process.
func (s *Server) work(ctx context.Context) {
	for {
		w, ok := s.queue.Take(ctx)
		if !ok {
			return
		}
		kept := s.run(ctx, w)
		if w.Entry != "" {
			s.stream.Finish(ctx, w, kept)
		}
		s.queue.Done(w.Key)
	}
}

// run runs one job with its leases held and renewed, recovering a panic so
// one bad job cannot take the queue down. A Redis queue entry's leases,
// when the queue's store granted them, are returned unreleased: Finish
// releases them in the round trip that acknowledges the entry.
func (s *Server) run(ctx context.Context, w workq.Work) (kept []job.Lease) {
	name := "sweep"
	log := s.log.With("installation", w.Sweep)
	if w.Sweep == 0 {
		ev := w.Job.Event
		name = eventLabel(ev.Name)
		_, issue, _ := ghevent.IssueKey(ev)
		log = s.log.With("delivery", w.Job.Delivery, "event", ev.Name, "installation", ev.Installation,
			"repo", ev.Repo, "issue", issue)
	}
	start := time.Now()
	s.metrics.JobStarted(start.Sub(queuedAt(w)))
	outcome := "ok"
	var err error
	if w.Sweep == 0 {
		ctx = s.deps.Tracer.Claimed(ctx, w.Job.Trace, w.Job.Received)
	}
	ctx, span := s.deps.Tracer.Job(ctx, name)
	if w.Sweep == 0 {
		ev := w.Job.Event
		_, issue, _ := ghevent.IssueKey(ev)
		tracing.Delivered(span, ev.Name, ev.Action, w.Job.Delivery, ev.Installation, ev.Repo, issue)
	} else {
		tracing.Swept(span, w.Sweep)
	}
	defer func() {
		if p := recover(); p != nil {
			outcome = "panic"
			log.Error("job panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
		s.metrics.JobDone(name, outcome, time.Since(start))
		tracing.Finished(span, outcome, err)
		span.End()
	}()

	jc := &jobCtx{srv: s, log: log, keep: w.Entry != "" && s.leasesFromQueue()}
	defer func() { kept = jc.kept }() // also after a panic
	ctx = context.WithValue(ctx, jobCtxKey{}, jc)
	if w.Sweep != 0 {
		err = s.deps.Sweeper.Sweep(ctx, w.Sweep)
		if err == nil {
			s.metrics.SweepDone(w.Sweep, s.now())
		}
	} else {
		err = s.holding(ctx, jc, w.Locks, 0, func(ctx context.Context) error {
			return s.deps.Processor.Process(ctx, w.Job)
		})
	}
	switch {
	case errors.Is(err, ErrDropped):
		outcome = "dropped"
		log.Warn("delivery dropped: it can never succeed, so it is not retried", "err", err)
	case w.Sweep != 0 && errors.Is(err, ErrHeld):
		outcome = "held" // the Sweeper logged the wait and its until
	case err != nil:
		outcome = "error"
		log.Error("job failed; the next event or sweep retries the issue", "err", err)
	}
	return jc.kept
}

// queuedAt is when w was accepted: a Redis entry's append time (it may
// have waited in the stream before this replica read it), else when it was
// queued in this process.
func queuedAt(w workq.Work) time.Time {
	if w.Entry != "" {
		if t, ok := redisq.EntryTime(w.Entry); ok {
			return t
		}
	}
	return w.Queued
}

// allLocker is a Locker that can take several leases in one step when
// they are all free (the Redis store).
type allLocker interface {
	TryLockAll(ctx context.Context, keys []string) ([]job.Lease, bool, error)
}

// leasesFromQueue reports whether the Locker is the Redis work queue's
// store, so a job's leases can be released with its entry's
// acknowledgement.
func (s *Server) leasesFromQueue() bool {
	rs, ok := s.deps.Locker.(*redisq.Store)
	return ok && rs == s.deps.Queue
}

// holding takes the leases on keys in order (retrying store errors until
// ctx ends: the delivery was acknowledged, so it is never run unlocked or
// dropped early) and adds them to jc.held after its first `outer` entries
// (leases an enclosing call holds and renews), renews them every third of
// the TTL while fn runs, cancels fn if one is lost, and releases them after.
func (s *Server) holding(ctx context.Context, jc *jobCtx, keys []string, outer int, fn func(context.Context) error) error {
	log := jc.log
	defer func() {
		if jc.keep && outer == 0 {
			jc.kept = append(jc.kept, jc.held...)
			return
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
		defer cancel()
		for _, l := range jc.held[outer:] {
			if err := l.Release(rctx); err != nil {
				log.Warn("lease release", "key", l.Key, "err", err)
			}
		}
	}()
	if al, ok := s.deps.Locker.(allLocker); ok && len(keys) > 1 {
		// All free (the usual case): one round trip. Otherwise, or when the
		// store fails, one at a time, waiting and retrying as below.
		if ls, ok, err := al.TryLockAll(ctx, keys); err == nil && ok {
			jc.held = append(jc.held, ls...)
			keys = nil
		}
	}
	for _, key := range keys {
		l, err := s.lockRetry(ctx, key, log)
		if err != nil {
			return err
		}
		jc.held = append(jc.held, l)
	}
	own := jc.held[outer:]
	if len(own) == 0 {
		return fn(ctx)
	}

	fnCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := make(chan struct{})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		s.renewLeases(fnCtx, own, stop, cancel, log)
	}()
	err := fn(fnCtx)
	close(stop)
	<-renewed
	if cause := context.Cause(fnCtx); cause != nil && !errors.Is(cause, context.Canceled) &&
		(err == nil || errors.Is(err, context.Canceled)) {
		err = cause // say why the job was cancelled
	}
	return err
}

// renewLeases renews the leases every third of the TTL until stop closes.
// A lease another owner took (ErrLeaseLost), or one not renewed for a whole
// TTL because the store is away, cancels the job: it may no longer be the
// only one working on the issue.
func (s *Server) renewLeases(ctx context.Context, leases []job.Lease, stop <-chan struct{}, cancel context.CancelCauseFunc, log *slog.Logger) {
	t := time.NewTicker(max(s.cfg.LockTTL/3, time.Millisecond))
	defer t.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		var failed error
		for _, l := range leases {
			if err := l.Renew(ctx); err != nil {
				failed = err
				if errors.Is(err, job.ErrLeaseLost) {
					break
				}
			}
		}
		switch {
		case ctx.Err() != nil:
			return
		case failed == nil:
			lastOK = time.Now()
		case errors.Is(failed, job.ErrLeaseLost) || time.Since(lastOK) >= s.cfg.LockTTL:
			log.Error("lease lost; cancelling job", "err", failed)
			cancel(fmt.Errorf("lease: %w", failed))
			return
		default:
			log.Warn("lease renewal failed; retrying", "err", failed)
		}
	}
}

// lockRetry takes key's lease, retrying store errors with backoff (100ms
// doubling to 5s) until ctx ends.
func (s *Server) lockRetry(ctx context.Context, key string, log *slog.Logger) (job.Lease, error) {
	wait := 100 * time.Millisecond
	for {
		l, err := s.deps.Locker.Lock(ctx, key)
		if err == nil {
			return l, nil
		}
		if ctx.Err() != nil {
			return job.Lease{}, fmt.Errorf("lock %s: %w", key, ctx.Err())
		}
		s.noteStore(err)
		log.Warn("lock failed; retrying", "key", key, "err", err, "in", wait)
		if !job.Sleep(ctx, wait) {
			return job.Lease{}, fmt.Errorf("lock %s: %w", key, ctx.Err())
		}
		wait = min(2*wait, 5*time.Second)
	}
}
