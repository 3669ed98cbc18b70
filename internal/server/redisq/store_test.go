package redisq

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
	"github.com/redis/go-redis/v9"
)

func TestRedisDedupeIsSharedAcrossInstances(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	a := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "a"})
	b := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "b"})
	ctx := context.Background()
	if seen, err := a.Seen(ctx, "d-1"); err != nil || seen {
		t.Fatalf("first Seen on a = %v, %v; want false", seen, err)
	}
	if seen, err := b.Seen(ctx, "d-1"); err != nil || !seen {
		t.Fatalf("Seen of the same id on b = %v, %v; want true", seen, err)
	}
	ttl, err := a.rdb.TTL(ctx, prefix+"delivery:d-1").Result()
	if err != nil || ttl < 71*time.Hour {
		t.Fatalf("dedupe key TTL = %s (%v), want at least 72h", ttl, err)
	}
}

func TestRedisLeaseExpiresUnlessRenewed(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	ttl := 300 * time.Millisecond
	a := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "a", LockTTL: ttl})
	b := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "b", LockTTL: ttl, PollMax: 10 * time.Millisecond})
	ctx := context.Background()
	la, err := a.Lock(ctx, "o/r#9")
	if err != nil {
		t.Fatal(err)
	}
	// Renewed past several TTLs, the lease stays a's.
	for range 6 {
		time.Sleep(ttl / 3)
		if err := la.Renew(ctx); err != nil {
			t.Fatalf("Renew: %v", err)
		}
	}
	short, cancel := context.WithTimeout(ctx, ttl/2)
	defer cancel()
	if _, err := b.Lock(short, "o/r#9"); err == nil {
		t.Fatal("b took a lease that was being renewed")
	}
	// Left alone, it expires and b takes it over with a larger token.
	time.Sleep(ttl + 50*time.Millisecond)
	lb, err := b.Lock(ctx, "o/r#9")
	if err != nil {
		t.Fatal(err)
	}
	if lb.Token <= la.Token {
		t.Fatalf("takeover token %d not above %d", lb.Token, la.Token)
	}
	if err := la.Renew(ctx); !errors.Is(err, job.ErrLeaseLost) {
		t.Fatalf("Renew after takeover: err = %v, want job.ErrLeaseLost", err)
	}
	if err := la.Release(ctx); !errors.Is(err, job.ErrLeaseLost) {
		t.Fatalf("Release after takeover: err = %v, want job.ErrLeaseLost", err)
	}
	owner, err := b.rdb.Get(ctx, b.lockKey("o/r#9")).Result()
	if err != nil || owner != lb.Owner {
		t.Fatalf("lock value = %q (%v), want b's owner id %q: a's stale release must not delete it", owner, err, lb.Owner)
	}
	if err := lb.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestStreamDropsOnlyIdleConsumersHoldingNothing: consumers of stopped
// replicas are removed from the group once idle, unless they still hold
// entries (removing them would drop those entries from the group).
func TestStreamDropsOnlyIdleConsumersHoldingNothing(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	ctx := context.Background()
	stores := map[string]*Store{}
	for _, name := range []string{"live", "empty", "holding"} {
		stores[name] = servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: name})
	}
	if err := stores["live"].EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	ev := &ghevent.Event{Name: "issues", Action: "opened"}
	if _, err := stores["live"].Enqueue(ctx, job.Job{Delivery: "held", Event: ev, Received: time.Now()}, 10); err != nil {
		t.Fatal(err)
	}
	if es, _, err := stores["holding"].Read(ctx, 1, -1); err != nil || len(es) != 1 {
		t.Fatalf("holding read %d (%v)", len(es), err)
	}
	if _, _, err := stores["empty"].Read(ctx, 1, -1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if err := stores["live"].DropGoneConsumers(ctx, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	cs, err := stores["live"].rdb.XInfoConsumers(ctx, stores["live"].streamKey(), streamGroup).Result()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	if len(names) != 1 || names[0] != "holding" {
		t.Fatalf("consumers after the clean-up: %v, want only [holding] (live never read)", names)
	}
	if st, err := stores["live"].QueueStats(ctx, time.Now()); err != nil || st.Pending != 1 {
		t.Fatalf("pending %d (%v) after the clean-up, want 1 (holding's entry kept)", st.Pending, err)
	}
}

// TestTryLockAllTakesAllOrNone: free keys are all leased in one step with
// increasing tokens; with one of them held, none is taken.
func TestTryLockAllTakesAllOrNone(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	a := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "a"})
	b := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "b"})
	ctx := context.Background()
	ls, ok, err := a.TryLockAll(ctx, []string{"o/r#1", "o/r#2", "o/r#3"})
	if err != nil || !ok || len(ls) != 3 {
		t.Fatalf("TryLockAll on free keys = %d leases, %v, %v", len(ls), ok, err)
	}
	for i := 1; i < len(ls); i++ {
		if ls[i].Token <= ls[i-1].Token {
			t.Errorf("tokens %d then %d: not increasing", ls[i-1].Token, ls[i].Token)
		}
	}
	if _, ok, err := b.TryLockAll(ctx, []string{"o/r#3", "o/r#4"}); err != nil || ok {
		t.Fatalf("TryLockAll with o/r#3 held = %v, %v; want none taken", ok, err)
	}
	if n, _ := a.rdb.Exists(ctx, a.lockKey("o/r#4")).Result(); n != 0 {
		t.Error("o/r#4 was leased although o/r#3 was held")
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := b.Lock(short, "o/r#2"); err == nil {
		t.Fatal("b took o/r#2 while a's lease from TryLockAll held it")
	}
	for _, l := range ls {
		if err := l.Release(ctx); err != nil {
			t.Fatalf("release %s: %v", l.Key, err)
		}
	}
	if l, err := b.Lock(ctx, "o/r#2"); err != nil || l.Token <= ls[2].Token {
		t.Fatalf("after release b.Lock = %+v, %v; want a lease with a larger token", l, err)
	}
}

// TestRenewingHeldEntriesIsOneClaimPerBatch: renewing the entries a
// replica holds resets their idle time with one XCLAIM for the batch, not
// one per entry (a replica may hold thousands, parked ones included).
func TestRenewingHeldEntriesIsOneClaimPerBatch(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	a := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "a"})
	ctx := context.Background()
	if err := a.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 100
	for i := range n {
		ev := &ghevent.Event{Name: "issues", Action: "labeled", Repo: "o/r", Issue: i + 1, Installation: 7}
		if res, err := a.Enqueue(ctx, job.Job{Delivery: fmt.Sprintf("d-%d", i), Event: ev, Received: time.Now()}, 1000); err != nil || res != EnqueuedOK {
			t.Fatalf("enqueue d-%d = %d, %v", i, res, err)
		}
	}
	es, _, err := a.Read(ctx, n, -1)
	if err != nil || len(es) != n {
		t.Fatalf("read %d entries (%v), want %d", len(es), err, n)
	}
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.ID
	}
	// Another consumer claims one entry in the middle: it is no longer
	// ours, reported lost and left with its new owner.
	b := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "b"})
	taken := ids[n/2]
	if err := b.rdb.XClaim(ctx, &redis.XClaimArgs{Stream: b.streamKey(), Group: streamGroup, Consumer: b.Consumer(),
		Messages: []string{taken}}).Err(); err != nil {
		t.Fatal(err)
	}
	ids = append(ids, "1-1") // not ours: reported lost
	before := servertest.CommandCalls(t, u)
	lost, err := a.RenewEntries(ctx, ids)
	if err != nil || !slices.Equal(slices.Sorted(slices.Values(lost)), []string{"1-1", taken}) {
		t.Fatalf("renew: lost %v (%v), want [1-1 %s]", lost, err, taken)
	}
	after := servertest.CommandCalls(t, u)
	if got := after["xclaim"] - before["xclaim"]; got != 1 {
		t.Fatalf("%d XCLAIM calls to renew %d entries, want 1", got, n)
	}
	// Ownership is read from the consumer's pending list a range at a
	// time, not entry by entry.
	if got := after["xpending"] - before["xpending"]; got > 2 {
		t.Fatalf("%d XPENDING calls to renew %d entries, want at most 2", got, n)
	}
	if ps, err := b.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: b.streamKey(), Group: streamGroup, Start: taken, End: taken,
		Count: 1}).Result(); err != nil || len(ps) != 1 || ps[0].Consumer != b.Consumer() {
		t.Fatalf("the entry b claimed: %+v (%v), want it still b's", ps, err)
	}
	ps, err := a.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: a.streamKey(), Group: streamGroup, Start: "-", End: "+", Count: 2 * n}).Result()
	if err != nil || len(ps) != n {
		t.Fatalf("pending %d (%v), want %d", len(ps), err, n)
	}
	for _, p := range ps {
		if p.ID == taken {
			continue // b's claim counted a delivery
		}
		if p.RetryCount != 1 {
			t.Fatalf("entry %s handed out %d times after a renewal, want 1 (a renewal is not a delivery)", p.ID, p.RetryCount)
		}
	}
}
