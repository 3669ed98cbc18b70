package engine

import "github.com/autopilot-dev/autopilot/internal/engine/events"

// ErrClass is what a failed API call means for the run, as the edge maps
// it from the error (engine code never sees the error's type).
type ErrClass int

const (
	// ErrNone: the call succeeded.
	ErrNone ErrClass = iota
	// ErrTransient: 5xx, a timeout, a cancelled request: not the step's
	// failure.
	ErrTransient
	// ErrRateLimited: a primary or secondary rate limit.
	ErrRateLimited
	// ErrRefused: any other failure (e.g. 403, 404, 422): the call will not
	// succeed by trying again.
	ErrRefused
)

func (c ErrClass) String() string {
	switch c {
	case ErrNone:
		return "none"
	case ErrTransient:
		return "transient"
	case ErrRateLimited:
		return "rate-limited"
	case ErrRefused:
		return "refused"
	}
	return "unknown"
}

// Defers reports a failure that is tried again later rather than decided
// now: a transient one or a rate limit.
func (c ErrClass) Defers() bool { return c == ErrTransient || c == ErrRateLimited }

// DispatchSent decides what sending the dispatch of session showed: a
// deferred failure (ErrClass.Defers) keeps it in the outbox (ok false)
// with a note saying why, and the next run or the sweep sends it after
// looking for its run; anything else settles it (ok true): run id on
// success, the error as the step's failure otherwise.
func DispatchSent(session string, runID int64, class ErrClass, err string) (ev events.Dispatched, note string, ok bool) {
	if class.Defers() {
		return ev, "dispatch deferred: " + err, false
	}
	ev = events.Dispatched{Session: session, RunID: runID}
	if class != ErrNone {
		ev.Err = err
	}
	return ev, "", true
}

// DispatchNeedsDefaultBranch reports whether a dispatch at the configured
// ref needs the repository's default branch read first (none configured).
func DispatchNeedsDefaultBranch(configured string) bool { return configured == "" }

// DispatchRef is the git ref a dispatch runs at: the configured ref, else
// the repository's default branch when the forge can tell it (known),
// else "main" (the sandbox forge). A failed read of the default branch is
// the edge's error: dispatching at a guessed branch could run the wrong
// workflow file.
func DispatchRef(configured, defaultBranch string, known bool) string {
	switch {
	case configured != "":
		return configured
	case known:
		return defaultBranch
	}
	return "main"
}

// DispatchRetried decides what looking for the run of a dispatch of
// session sent again showed (an earlier send may have committed although
// its answer was lost): the runs could not be listed (listErr) — it waits
// in the outbox (done, not ok) with a note; a run carrying the session
// token was found — it is adopted instead of sent twice (done, ok);
// otherwise it is sent (not done).
func DispatchRetried(session string, runID int64, found bool, listErr string) (ev events.Dispatched, note string, ok, done bool) {
	switch {
	case listErr != "":
		return ev, "dispatch pending: " + listErr, false, true
	case found:
		return events.Dispatched{Session: session, RunID: runID}, "", true, true
	}
	return ev, "", false, false
}
