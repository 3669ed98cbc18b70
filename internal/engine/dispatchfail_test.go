package engine

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
)

// TestDispatchFailureClasses pins what a dispatch's outcome means: a
// transient failure (5xx, timeout, a cancelled request) or a rate limit is
// not the step's, so the dispatch waits in the outbox and the pass notes
// why; any other failure is the step's and reaches the engine with the run
// id, like a success.
func TestDispatchFailureClasses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		class  ErrClass
		err    string
		want   events.Dispatched
		note   string
		settle bool
	}{
		{"sent", ErrNone, "", events.Dispatched{Session: "s1", RunID: 77}, "", true},
		{"5xx or timeout", ErrTransient, "HTTP 502", events.Dispatched{}, "dispatch deferred: HTTP 502", false},
		{"rate limit", ErrRateLimited, "rate limited until 10:00", events.Dispatched{}, "dispatch deferred: rate limited until 10:00", false},
		{"refused: the step's failure", ErrRefused, "HTTP 422: workflow has no dispatch trigger", events.Dispatched{Session: "s1", RunID: 0, Err: "HTTP 422: workflow has no dispatch trigger"}, "", true},
	} {
		id := int64(0)
		if tc.class == ErrNone {
			id = 77
		}
		ev, note, ok := DispatchSent("s1", id, tc.class, tc.err)
		if ev != tc.want || note != tc.note || ok != tc.settle {
			t.Errorf("%s: DispatchSent = %+v, %q, %v; want %+v, %q, %v", tc.name, ev, note, ok, tc.want, tc.note, tc.settle)
		}
	}
}

// TestErrClassDefers: only transient failures and rate limits are tried
// again later (a dispatch stays pending, a PR check is marked pending).
func TestErrClassDefers(t *testing.T) {
	for c, want := range map[ErrClass]bool{ErrNone: false, ErrTransient: true, ErrRateLimited: true, ErrRefused: false} {
		if c.Defers() != want {
			t.Errorf("%v.Defers() = %v, want %v", c, c.Defers(), want)
		}
	}
}

// TestDispatchRef pins the ref a dispatch runs at: the configured one,
// else the repository's default branch, else (a forge that cannot tell
// it, the sandbox) main.
func TestDispatchRef(t *testing.T) {
	for _, tc := range []struct {
		configured, def string
		known           bool
		want            string
	}{
		{"release", "trunk", true, "release"},
		{"release", "", false, "release"},
		{"", "trunk", true, "trunk"},
		{"", "", false, "main"},
	} {
		if got := DispatchRef(tc.configured, tc.def, tc.known); got != tc.want {
			t.Errorf("DispatchRef(%q, %q, %v) = %q, want %q", tc.configured, tc.def, tc.known, got, tc.want)
		}
	}
	if DispatchNeedsDefaultBranch("release") || !DispatchNeedsDefaultBranch("") {
		t.Error("the default branch is read only when no ref is configured")
	}
}

// TestDispatchRetried pins what looking for the run of a dispatch sent
// again shows: the runs could not be listed (it waits in the outbox), a run
// carrying its session token (adopted, not sent twice), or none (send it).
func TestDispatchRetried(t *testing.T) {
	for _, tc := range []struct {
		name     string
		id       int64
		found    bool
		listErr  string
		want     events.Dispatched
		note     string
		ok, done bool
	}{
		{"runs not listed", 0, false, "HTTP 502", events.Dispatched{}, "dispatch pending: HTTP 502", false, true},
		{"run found", 88, true, "", events.Dispatched{Session: "s1", RunID: 88}, "", true, true},
		{"no run: send", 0, false, "", events.Dispatched{}, "", false, false},
	} {
		ev, note, ok, done := DispatchRetried("s1", tc.id, tc.found, tc.listErr)
		if ev != tc.want || note != tc.note || ok != tc.ok || done != tc.done {
			t.Errorf("%s: DispatchRetried = %+v, %q, %v, %v", tc.name, ev, note, ok, done)
		}
	}
}
