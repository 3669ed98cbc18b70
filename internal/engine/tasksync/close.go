package tasksync

import (
	"fmt"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// CloseFailure is one issue the tracker would not move to done.
type CloseFailure struct {
	Key string
	Err string
}

// String summarises a failure for logs and notes.
func (f CloseFailure) String() string { return f.Key + ": " + f.Err }

// CloseResult is the outcome of one Close. The caller persists Tasks.
type CloseResult struct {
	// Tasks are the input tasks, Done set on each one moved to done.
	Tasks []state.Task
	// Closed counts the issues moved to done (or found done).
	Closed int
	// Failures are the issues the tracker refused to move (no transition
	// to done, a required field); the next pass tries again.
	Failures []CloseFailure
	// Left counts the closable tasks still not done, failures included.
	Left int
	// Paused is PausedAuth when the tracker refused the credentials.
	Paused string
	// RetryAt, when set, is the earliest time the next request may be sent.
	RetryAt time.Time
	// Requests counts requests sent, retries included.
	Requests int
	// Note says, for people, why work was left over.
	Note string
}

// Notes are what the close says for people, name being the tracker's
// name: every issue it would not move, and why work was left over.
func (r CloseResult) Notes(name string) []string {
	var notes []string
	for _, f := range r.Failures {
		notes = append(notes, name+": "+f.String())
	}
	switch {
	case r.Paused == PausedAuth:
		notes = append(notes, name+": transition on close paused: authentication failed")
	case r.Left > len(r.Failures):
		notes = append(notes, fmt.Sprintf("%s: %d issue(s) left to move to done: %s", name, r.Left-len(r.Failures), r.Note))
	}
	return notes
}

// Close is the close policy (the GitHub issue closed): the issue of every
// closable task is moved to done, in task order, with the same politeness
// as Sync: no request before NotBefore; a 401/403 stops at once (Paused);
// a 429 is waited out while short, otherwise it stops with RetryAt and the
// rest is left for a later pass; a transient error is retried with backoff
// (moving to done is safe to repeat). A refusal of one issue is recorded
// in Failures and the next one is tried; an issue gone is recorded on its
// task alone.
type Close struct {
	core
	tasks []state.Task
	res   CloseResult
	next  int
}

// NewClose starts the close policy over tasks (not modified).
func NewClose(tasks []state.Task, o Options) *Close {
	o = o.withDefaults()
	c := &Close{core: core{o: o, now: o.Now}, tasks: Clone(tasks)}
	if c.now.Before(o.NotBefore) {
		// Inside a retry window: nothing is sent and the window stays.
		c.retryAt = o.NotBefore
		if anyClosable(c.tasks) {
			c.note("%s asked us to wait until %s", o.Name, stamp(o.NotBefore))
		}
		c.done = true
	}
	return c
}

// Next is the op to perform now; nil when the close is over.
func (c *Close) Next() Op {
	for !c.done {
		if op := c.pending(); op != nil {
			return op
		}
		c.step()
	}
	return nil
}

// Apply feeds the outcome of the op Next returned.
func (c *Close) Apply(o Outcome) {
	if c.cur != nil {
		c.answer(o)
	}
}

func (c *Close) step() {
	for c.next < len(c.tasks) && !c.tasks[c.next].Closable() {
		c.next++
	}
	if c.next >= len(c.tasks) {
		c.done = true
		return
	}
	t := &c.tasks[c.next]
	c.next++
	key := t.Key
	c.send(CloseIssue{Key: key}, true, func(o Outcome, halted bool) {
		e := o.Err
		switch {
		case e == nil:
			t.Done = true
			c.res.Closed++
		case e.Class == Gone:
			t.Gone = e.Gone
			c.note("%s not moved to done: %v", key, e.Msg)
		case halted:
			// Credentials, rate limit, outage or cancellation: the rest
			// waits for a later pass (the rules noted why).
			c.done = true
		default:
			c.res.Failures = append(c.res.Failures, CloseFailure{Key: key, Err: e.Msg})
			c.note("%s not moved to done: %v", key, e.Msg)
		}
	})
}

// Result ends the close with what the tracker remembers and returns its
// outcome.
func (c *Close) Result(x Extras) CloseResult {
	for _, t := range c.tasks {
		if t.Closable() {
			c.res.Left++
		}
	}
	c.limited(x.LimitedUntil)
	c.res.Tasks, c.res.Paused, c.res.RetryAt, c.res.Requests = c.tasks, c.paused, c.retryAt, c.requests
	c.res.Note = strings.Join(c.notes, "; ")
	return c.res
}

func anyClosable(ts []state.Task) bool {
	for _, t := range ts {
		if t.Closable() {
			return true
		}
	}
	return false
}
