package tracker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// Closer is implemented by trackers that can move an issue to a status in
// the "done" category (jira.transition_on_close). It is optional: a Tracker
// without it leaves its issues alone when the GitHub issue closes.
type Closer interface {
	// CloseIssue moves the issue to done. An issue already done is success
	// with nothing sent. It returns the Tracker error types; an issue whose
	// workflow offers no way to done is a *ValidationError naming it.
	CloseIssue(ctx context.Context, key string) error
}

// Closable reports whether CloseTasks would transition t (state.Task.Closable).
func Closable(t state.Task) bool { return t.Closable() }

// CloseFailure is one issue the tracker would not move to done.
type CloseFailure struct {
	Key string
	Err error
}

// String summarises a failure for logs and notes.
func (f CloseFailure) String() string { return fmt.Sprintf("%s: %v", f.Key, f.Err) }

// CloseResult is the outcome of one CloseTasks. The caller persists Tasks.
type CloseResult struct {
	// Tasks are the input tasks, Done set on each one moved to done.
	Tasks []state.Task
	// Closed counts the issues moved to done (or found done) by this call.
	Closed int
	// Failures are the issues the tracker refused to move (no transition
	// to done, a required field, a deleted issue); the next pass tries again.
	Failures []CloseFailure
	// Left counts the closable tasks still not done afterwards, failures
	// included.
	Left int
	// Paused is PausedAuth when the tracker refused the credentials.
	Paused string
	// RetryAt, when set, is the earliest time the next request may be sent.
	RetryAt time.Time
	// Requests counts calls made to the tracker, retries included.
	Requests int
	// Note says, for people, why work was left over (empty when none was).
	Note string
}

// CloseTasks moves the tracker issue of every closable task to done, in task
// order, with the same politeness as Sync (opts.Persist is not used): no
// request before opts.NotBefore; a 401/403 stops at once (Paused); a 429 is
// waited out while short and otherwise stops with RetryAt set, leaving the
// rest for a later pass; a transient error is retried with backoff (a
// CloseIssue is safe to repeat: it reads the status before it transitions).
// A refusal of one issue is recorded in Failures and the next one is tried.
// CloseTasks never fails; the input is not modified.
func CloseTasks(ctx context.Context, c Closer, tasks []state.Task, opts SyncOptions) CloseResult {
	s := &syncer{o: opts.withDefaults(), res: SyncResult{Tasks: cloneTasks(tasks)}}
	var out CloseResult
	if now := s.o.Now(); now.Before(s.o.NotBefore) {
		// Inside a Retry-After window: nothing is sent and the window stays.
		s.res.RetryAt = s.o.NotBefore
		if anyClosable(s.res.Tasks) {
			s.note("%s asked us to wait until %s", s.o.Name, s.o.NotBefore.UTC().Format(time.RFC3339))
		}
	} else {
		for i := range s.res.Tasks {
			t := &s.res.Tasks[i]
			if !Closable(*t) {
				continue
			}
			key := t.Key
			err := s.call(ctx, true, func(ctx context.Context) error { return c.CloseIssue(ctx, key) })
			if err == nil {
				t.Done = true
				out.Closed++
				continue
			}
			var h *haltError
			var gone *GoneError
			if errors.As(err, &gone) {
				// That task's alone: recorded, and the others go on.
				t.Gone = gone.Gone
				s.note("%s not moved to done: %v", key, gone)
				continue
			}
			if errors.As(err, &h) {
				// Credentials, rate limit, outage or cancellation: the rest
				// waits for a later pass (call noted why).
				break
			}
			out.Failures = append(out.Failures, CloseFailure{Key: key, Err: err})
			s.note("%s not moved to done: %v", key, err)
		}
	}
	for _, t := range s.res.Tasks {
		if Closable(t) {
			out.Left++
		}
	}
	s.limited(c)
	out.Tasks, out.Paused, out.RetryAt, out.Requests = s.res.Tasks, s.res.Paused, s.res.RetryAt, s.res.Requests
	out.Note = strings.Join(s.notes, "; ")
	return out
}

func anyClosable(ts []state.Task) bool {
	for _, t := range ts {
		if Closable(t) {
			return true
		}
	}
	return false
}
