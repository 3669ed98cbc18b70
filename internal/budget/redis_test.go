package budget

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/redisurl"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
	"github.com/redis/go-redis/v9"
)

// countingHook counts the round trips a client makes: each command but a
// new connection's set-up, and each pipeline once.
type countingHook struct{ n atomic.Int64 }

func (h *countingHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n != "hello" && n != "client" { // a connection's set-up
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h *countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}

// countedRedis is a Redis store on the test Redis whose round trips are
// counted, on the clock now.
func countedRedis(t *testing.T, url, prefix string, now func() time.Time) (*Redis, *countingHook) {
	t.Helper()
	rdb, err := redisurl.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	h := &countingHook{}
	rdb.AddHook(h)
	return NewRedis(rdb, RedisOptions{Prefix: prefix, Now: now}), h
}

// TestOneRedisRoundTripPerGitHubRequest: a replica making an
// installation's requests asks Redis once per request (the answer's
// merge), not twice (a read before it too): the merge script answers the
// merged record, and the next Admit reads that while it is fresh.
func TestOneRedisRoundTripPerGitHubRequest(t *testing.T) {
	url, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	now := t0
	s, calls := countedRedis(t, url, prefix, func() time.Time { return now })
	g := New(s, Options{Now: func() time.Time { return now }}).For(7)
	ctx := context.Background()
	reset := t0.Add(time.Hour)
	const requests = 100
	for i := range requests {
		if wait, why := g.Admit(ctx, false); wait != 0 {
			t.Fatalf("request %d waits %v (%s)", i, wait, why)
		}
		g.Observe(ctx, headers(5000, 4000-i, reset, "core"), time.Time{})
		now = now.Add(200 * time.Millisecond) // a job's requests, 200 ms apart
	}
	// One read before the first request, the script's first run (EVALSHA,
	// then EVAL on NOSCRIPT), then one merge per request.
	if n := calls.n.Load(); n > requests+2 {
		t.Fatalf("%d Redis round trips for %d GitHub requests, want at most %d", n, requests, requests+2)
	}
	t.Logf("%d Redis round trips for %d GitHub requests", calls.n.Load(), requests)
}

// TestAReplicaLearnsOfAnothersRetryAfterWithinTheStalenessBound: replica
// b read the record just before replica a was told to wait; b sees the
// wait at the latest once its copy is older than the bound (1 s), and at
// once when one of its own answers merges.
func TestAReplicaLearnsOfAnothersRetryAfterWithinTheStalenessBound(t *testing.T) {
	url, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	now := t0
	clock := func() time.Time { return now }
	sa, _ := countedRedis(t, url, prefix, clock)
	sb, _ := countedRedis(t, url, prefix, clock)
	a, b := New(sa, Options{Now: clock}).For(7), New(sb, Options{Now: clock}).For(7)
	ctx := context.Background()
	if wait, _ := b.Admit(ctx, false); wait != 0 {
		t.Fatalf("b before any answer waits %v", wait)
	}
	a.Observe(ctx, nil, t0.Add(30*time.Second))
	now = t0.Add(DefaultFresh)
	wait, why := b.Admit(ctx, false)
	if wait != 30*time.Second-DefaultFresh || !strings.Contains(why, "secondary") {
		t.Fatalf("b after the bound: wait %v, why %q", wait, why)
	}

	// Installation 8: b's own answer brings a's hold with it.
	now = t0
	if wait, _ := b.b.For(8).Admit(ctx, false); wait != 0 {
		t.Fatalf("installation 8 waits %v", wait)
	}
	a.b.For(8).Observe(ctx, nil, t0.Add(10*time.Second))
	b.b.For(8).Observe(ctx, headers(5000, 4000, t0.Add(time.Hour), "core"), time.Time{})
	if wait, _ := b.b.For(8).Admit(ctx, false); wait != 10*time.Second {
		t.Fatalf("b after its own answer: wait %v, want a's 10s", wait)
	}
}

// TestAnAnswerThatChangesNothingCostsNoRoundTrip: an answer whose figures
// the replica's fresh copy already holds (a 304, which GitHub does not
// charge, or an older answer arriving late) is not written again.
func TestAnAnswerThatChangesNothingCostsNoRoundTrip(t *testing.T) {
	url, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	now := t0
	s, calls := countedRedis(t, url, prefix, func() time.Time { return now })
	g := New(s, Options{Now: func() time.Time { return now }}).For(7)
	ctx := context.Background()
	reset := t0.Add(time.Hour)
	g.Observe(ctx, headers(5000, 4000, reset, "core"), time.Time{})
	before := calls.n.Load()
	g.Observe(ctx, headers(5000, 4000, reset, "core"), time.Time{}) // a 304: not charged
	g.Observe(ctx, headers(5000, 4100, reset, "core"), time.Time{}) // an older answer, late
	if n := calls.n.Load() - before; n != 0 {
		t.Fatalf("%d round trips for answers that change nothing, want 0", n)
	}
	g.Observe(ctx, headers(5000, 3999, reset, "core"), time.Time{})
	if n := calls.n.Load() - before; n != 1 {
		t.Fatalf("%d round trips for an answer that lowers remaining, want 1", n)
	}
	now = now.Add(DefaultFresh) // a stale copy says nothing of Redis: written
	g.Observe(ctx, headers(5000, 3999, reset, "core"), time.Time{})
	if n := calls.n.Load() - before; n != 2 {
		t.Fatalf("%d round trips after the copy went stale, want 2", n)
	}
}

// TestNearItsEndABudgetIsReadFromRedisEveryTime: a replica's fresh copy
// showing few requests left is not trusted: another replica may have spent
// the last one within the second, and a request sent then is answered with
// a primary-limit 403. So b, whose copy says 5 left, reads Redis and waits
// once a spent them all.
func TestNearItsEndABudgetIsReadFromRedisEveryTime(t *testing.T) {
	url, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	now := t0
	clock := func() time.Time { return now }
	sa, _ := countedRedis(t, url, prefix, clock)
	sb, _ := countedRedis(t, url, prefix, clock)
	a, b := New(sa, Options{Now: clock}).For(7), New(sb, Options{Now: clock}).For(7)
	ctx := context.Background()
	reset := t0.Add(time.Hour)
	b.Observe(ctx, headers(5000, 5, reset, "core"), time.Time{})
	a.Observe(ctx, headers(5000, 0, reset, "core"), time.Time{})
	if wait, why := b.Admit(ctx, false); wait == 0 {
		t.Fatalf("b admitted a request on its copy (5 left) after a spent the budget, want a wait until the reset (%q)", why)
	}
}
