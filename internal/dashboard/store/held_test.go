package store

import (
	"context"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestHoldsAreKeptPerIssueUntilTheyEnd: the issue whose sweep pass the
// budget cut is remembered (the key's repository in any case), a later
// hold replaces it, a release (a sweep pass of the issue) forgets it, a
// hold already over is not kept, and the issue's removal forgets it.
func TestHoldsAreKeptPerIssueUntilTheyEnd(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		until := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
		h := model.Hold{Installation: 1, Repo: "Octo-Org/hello-world", Issue: 12, Until: until, Reason: state.HeldAtReserve}
		if err := s.Hold(ctx, h); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Held(ctx, model.Key("octo-org/hello-world", 12))
		if err != nil || !ok || !got.Until.Equal(until) || got.Reason != state.HeldAtReserve || got.Installation != 1 {
			t.Fatalf("held = %+v %v %v", got, ok, err)
		}
		if _, ok, _ := s.Held(ctx, model.Key("octo-org/hello-world", 13)); ok {
			t.Fatal("another issue is held")
		}
		h.Reason, h.Until = state.HeldRetryAfter, until.Add(time.Minute)
		_ = s.Hold(ctx, h)
		if got, _, _ := s.Held(ctx, h.Key()); got.Reason != state.HeldRetryAfter {
			t.Fatalf("a later hold did not replace: %+v", got)
		}
		if err := s.Release(ctx, h.Key()); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := s.Held(ctx, h.Key()); ok {
			t.Fatal("a released hold is still kept")
		}
		_ = s.Hold(ctx, h)
		over := model.Hold{Installation: 1, Repo: "octo-org/x", Issue: 1, Until: time.Now().Add(-time.Second), Reason: state.HeldSpent}
		_ = s.Hold(ctx, over)
		if _, ok, _ := s.Held(ctx, over.Key()); ok {
			t.Fatal("a hold already over was kept")
		}
		if err := s.Remove(ctx, h.Key(), 3); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := s.Held(ctx, h.Key()); ok {
			t.Fatal("a removed issue is still held")
		}
	})
}
