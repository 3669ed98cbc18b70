package tasksync

import (
	"fmt"
	"time"
)

// Defaults of Options.
const (
	DefaultSearchLag  = 90 * time.Second
	DefaultMaxWait    = 60 * time.Second
	DefaultAttempts   = 3
	DefaultBackoff    = 2 * time.Second
	DefaultRetryAfter = 60 * time.Second // when a 429 names no Retry-After
	// MaxBulk is the largest number of items one Create may carry (Jira's
	// limit for a bulk create).
	MaxBulk = 50
)

// PausedAuth is Result.Paused after the tracker refused the credentials.
const PausedAuth = "auth"

// maxRateWaits bounds how often one request waits out a 429 inside one sync.
const maxRateWaits = 3

// Options bound one sync or close. Zero values take the defaults above.
type Options struct {
	// Name is the tracker's name in notes: "Jira", "GitHub"; default "Tracker".
	Name string
	// Now is the time the sync starts; each Outcome brings the time on.
	Now time.Time
	// NotBefore is the end of a retry window an earlier sync reported: no
	// request is sent before it.
	NotBefore time.Time
	// SearchLag is how long a created issue may stay invisible to lookups;
	// a create whose answer was lost is sent again only after it.
	SearchLag time.Duration
	// MaxWait is the longest single wait sat out inside a sync; longer
	// ones stop it with RetryAt. Negative: never wait.
	MaxWait time.Duration
	// Attempts is how often an idempotent request is tried on transient
	// errors; creates are never re-sent on one (they are looked up).
	Attempts int
	// Backoff is the first retry delay, doubled per attempt, with jitter.
	Backoff time.Duration
	// DependencyLinks: the tracker records dependencies as links of its
	// own, sent once both issues exist (a capability).
	DependencyLinks bool
}

func (o Options) withDefaults() Options {
	if o.SearchLag <= 0 {
		o.SearchLag = DefaultSearchLag
	}
	if o.MaxWait == 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.Attempts <= 0 {
		o.Attempts = DefaultAttempts
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.Name == "" {
		o.Name = "Tracker"
	}
	return o
}

// core is what Sync and Close share: the clock as the outcomes bring it,
// the notes, the retry window and the request being sent.
type core struct {
	o        Options
	now      time.Time
	notes    []string
	paused   string
	retryAt  time.Time
	requests int
	cur      *request
	done     bool
}

// request is one tracker request in flight with the politeness rules: a
// 401/403 pauses at once; a 429 is waited out while short and the request
// sent again (it was not processed); a transient error is retried with
// jittered exponential backoff only when the request is idempotent. raw
// requests (dependency links) get none of this: their handler sees every
// refusal.
type request struct {
	op         Op
	idempotent bool
	raw        bool
	attempt    int
	rateWaits  int
	wait       *Wait
	waitFor    *Refusal
	// on handles the outcome; halted says the politeness rules stopped
	// the sync already (and noted why).
	on func(o Outcome, halted bool)
}

func (c *core) note(format string, args ...any) {
	c.notes = append(c.notes, fmt.Sprintf(format, args...))
}

func (c *core) send(op Op, idempotent bool, on func(Outcome, bool)) {
	c.cur = &request{op: op, idempotent: idempotent, attempt: 1, on: on}
}

func (c *core) sendRaw(op Op, on func(Outcome, bool)) {
	c.cur = &request{op: op, raw: true, attempt: 1, on: on}
}

// pending is the op to perform now, nil when none is in flight.
func (c *core) pending() Op {
	if c.cur == nil {
		return nil
	}
	if c.cur.wait != nil {
		return *c.cur.wait
	}
	return c.cur.op
}

// answer takes the outcome of the op in flight. It reports whether the
// request is finished (its handler ran).
func (c *core) answer(o Outcome) {
	if !o.At.IsZero() {
		c.now = o.At
	}
	r := c.cur
	if r.wait != nil {
		r.wait = nil
		if o.Err != nil {
			c.cur = nil
			if r.waitFor.Class == RateLimited {
				c.note("stopped while waiting out a %s rate limit: %v", c.o.Name, o.Err.Msg)
			} else {
				c.note("stopped while backing off from %s: %v", c.o.Name, o.Err.Msg)
			}
			r.on(Outcome{Err: r.waitFor}, true)
		}
		return // the request goes again
	}
	if _, persist := r.op.(Persist); !persist {
		c.requests++
	}
	e := o.Err
	if e == nil || r.raw {
		c.cur = nil
		r.on(o, false)
		return
	}
	halt := func() {
		c.cur = nil
		r.on(o, true)
	}
	switch {
	case e.Class == Auth:
		c.paused = PausedAuth
		c.note("%s authentication failed (HTTP %d); sync paused until `/autopilot tasks retry`", c.o.Name, e.Status)
		halt()
	case e.Class == RateLimited:
		wait := e.RetryAfter
		if wait <= 0 {
			wait = DefaultRetryAfter
		}
		if wait > c.o.MaxWait || r.rateWaits >= maxRateWaits {
			c.retryAt = c.now.Add(wait)
			c.note("%s rate limit%s; next request not before %s", c.o.Name, reasonSuffix(e.Reason), stamp(c.retryAt))
			halt()
			return
		}
		r.rateWaits++
		r.wait, r.waitFor = &Wait{D: wait}, e
	case e.Class == Transient && r.idempotent && r.attempt < c.o.Attempts:
		wait := c.backoff(r.attempt, o.Jitter)
		if e.RetryAfter > wait {
			wait = e.RetryAfter
		}
		if wait > c.o.MaxWait {
			c.retryAt = c.now.Add(wait)
			c.note("%s unavailable (%v); next request not before %s", c.o.Name, e.Msg, stamp(c.retryAt))
			halt()
			return
		}
		r.attempt++
		r.wait, r.waitFor = &Wait{D: wait}, e
	case e.Class == Transient:
		if e.RetryAfter > 0 {
			c.retryAt = c.now.Add(e.RetryAfter)
		}
		if r.idempotent {
			c.note("%s unavailable after %d attempts (%v); tasks kept for the next sync", c.o.Name, r.attempt, e.Msg)
		}
		halt()
	case e.Class == Canceled:
		c.note("stopped: %v", e.Msg)
		halt()
	default:
		c.cur = nil
		r.on(o, false)
	}
}

// backoff is the delay before retry number attempt (1-based):
// Backoff·2^(n-1), with "equal jitter" (between half and all of it).
func (c *core) backoff(attempt int, jitter float64) time.Duration {
	d := c.o.Backoff << (attempt - 1)
	if d <= 0 || d > 5*time.Minute {
		d = 5 * time.Minute
	}
	half := d / 2
	return half + time.Duration(jitter*float64(half))
}

// limited reports a limit window the tracker met as the retry time, also
// when the call that met it had no way to say so.
func (c *core) limited(until time.Time) {
	if until.After(c.retryAt) && until.After(c.now) {
		c.retryAt = until
		c.note("tracker rate limit; next request not before %s", stamp(until))
	}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func reasonSuffix(reason string) string {
	if reason == "" {
		return ""
	}
	return " (" + reason + ")"
}
