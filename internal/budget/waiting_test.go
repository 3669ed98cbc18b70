package budget

import (
	"context"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/servertest"
)

// TestHeldReadsTheSharedRecordForEveryInstallation: whether each
// installation's background work waits is read from the shared record —
// so a replica that never made a request of that installation knows it —
// with the typed reason the dashboard and the state show, in one read.
func TestHeldReadsTheSharedRecordForEveryInstallation(t *testing.T) {
	url, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	now := t0
	clock := func() time.Time { return now }
	a := New(servertest.OpenRedis(t, OpenRedis, url, RedisOptions{Prefix: prefix}), Options{Now: clock})
	b := New(servertest.OpenRedis(t, OpenRedis, url, RedisOptions{Prefix: prefix}), Options{Now: clock})
	ctx := context.Background()
	reset := t0.Add(40 * time.Minute)
	a.For(1).Observe(ctx, headers(5000, 900, reset, "core"), time.Time{})  // at the reserve
	a.For(2).Observe(ctx, headers(5000, 0, reset, "graphql"), time.Time{}) // GraphQL spent
	a.For(3).Observe(ctx, nil, t0.Add(90*time.Second))                     // Retry-After
	a.For(4).Observe(ctx, headers(5000, 4000, reset, "core"), time.Time{}) // runs
	got, err := b.Held(ctx, []int64{1, 2, 3, 4, 5})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]Hold{
		1: {Installation: 1, Until: reset, Reason: HeldAtReserve},
		2: {Installation: 2, Until: reset, Reason: HeldSpent},
		3: {Installation: 3, Until: t0.Add(90 * time.Second), Reason: HeldRetryAfter},
	}
	if len(got) != len(want) {
		t.Fatalf("held %+v, want %+v", got, want)
	}
	for _, h := range got {
		w := want[h.Installation]
		if !h.Until.Equal(w.Until) || h.Reason != w.Reason || h.Why == "" {
			t.Errorf("installation %d: %+v, want %+v", h.Installation, h, w)
		}
	}
	now = reset.Add(time.Second)
	if got, _ := b.Held(ctx, []int64{1, 2, 3}); len(got) != 0 {
		t.Fatalf("after the reset: %+v", got)
	}
}

// TestHeldInMemory: the memory store answers the same question.
func TestHeldInMemory(t *testing.T) {
	b := New(NewMemory(), Options{Now: func() time.Time { return t0 }})
	ctx := context.Background()
	b.For(7).Observe(ctx, headers(5000, 1000, t0.Add(time.Hour), "core"), time.Time{})
	got, err := b.Held(ctx, []int64{7, 8})
	if err != nil || len(got) != 1 || got[0].Reason != HeldAtReserve || got[0].Reason.String() != "reserve" {
		t.Fatalf("held %+v, %v", got, err)
	}
}

// BenchmarkHeldThousandInstallations is the dashboard list's one budget
// read with 1,000 installations listed (Redis; skipped without it).
func BenchmarkHeldThousandInstallations(b *testing.B) {
	s := servertest.OpenRedis(b, OpenRedis, servertest.RedisURL(b), RedisOptions{Prefix: servertest.Prefix(b)})
	bud := New(s, Options{Now: func() time.Time { return t0 }})
	ctx := context.Background()
	ids := make([]int64, 1000)
	for i := range ids {
		ids[i] = int64(i + 1)
		bud.For(ids[i]).Observe(ctx, headers(5000, 900+i, t0.Add(time.Hour), "core"), time.Time{})
	}
	for b.Loop() {
		if _, err := bud.Held(ctx, ids); err != nil {
			b.Fatal(err)
		}
	}
}
