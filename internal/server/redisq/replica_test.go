package redisq

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/metrics"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
	"github.com/autopilot-dev/autopilot/internal/server/workq"
)

// TestReaderReadsInChunksUnderABacklog: while a replica holds entries
// enough to keep its workers busy, the reader waits until a worker's worth
// of room is free instead of reading one entry per finished job (each read
// is a write to Redis).
func TestReaderReadsInChunksUnderABacklog(t *testing.T) {
	const workers = 4
	q := NewReplica(nil, ReplicaOptions{Workers: workers})
	for range Held(workers) {
		q.tokens <- struct{}{}
	}
	<-q.tokens // one job finished
	got := make(chan int, 1)
	go func() {
		n, _ := q.takeTokens(context.Background())
		got <- n
	}()
	for range workers - 1 { // three more finish
		<-q.tokens
	}
	if n := <-got; n != workers {
		t.Fatalf("reader read room for %d entries with %d held, want %d (a worker's worth)", n, Held(workers)-workers, workers)
	}
}

// TestReaderReadsAtOnceWithoutABacklog: with fewer entries held than keep
// the workers busy, the reader reads as soon as there is room.
func TestReaderReadsAtOnceWithoutABacklog(t *testing.T) {
	const workers = 4
	q := NewReplica(nil, ReplicaOptions{Workers: workers})
	for range workers {
		q.tokens <- struct{}{}
	}
	if n, ok := q.takeTokens(context.Background()); !ok || n != streamBatch {
		t.Fatalf("takeTokens = %d, %v with %d held; want %d at once", n, ok, workers, streamBatch)
	}
}

// TestReadAheadEntriesAreClaimedAfterACrash: a replica whose one worker is
// busy reads entries past its workers into its lanes; they are pending
// with its consumer, so when it dies (stops renewing) another replica
// claims every one of them, none lost.
func TestReadAheadEntriesAreClaimedAfterACrash(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	a := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "a"})
	b := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "b"})
	ctx := context.Background()
	if err := a.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := range n {
		ev := &ghevent.Event{Name: "issues", Action: "labeled", Repo: "o/r", Issue: 1, Installation: 7}
		if res, err := a.Enqueue(ctx, job.Job{Delivery: fmt.Sprintf("d-%d", i), Event: ev, Received: time.Now()}, 100); err != nil || res != EnqueuedOK {
			t.Fatalf("enqueue d-%d = %d, %v", i, res, err)
		}
	}
	local := workq.New(10, nil)
	ra := testReplica(a, time.Minute, local, nil)
	readCtx, stopReading := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); ra.ReadLoop(readCtx) }()
	waitFor(t, func() bool { return local.Len() == n })
	stopReading() // replica a dies: no renewal, no hand-back
	<-done
	if _, ok := local.Take(ctx); !ok {
		t.Fatal("nothing to start")
	}
	// One started, nineteen waiting behind it on issue 1: all pending with
	// a. b claims whatever is pending at all (idle 0 stands in for
	// QUEUE_CLAIM_IDLE having passed).
	es, _, _, err := b.Claim(ctx, "0-0", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != n {
		t.Fatalf("replica b claimed %d entries, want all %d read by a (started or not)", len(es), n)
	}
}

// TestParkedEntriesAreClaimedAfterACrash: a replica whose one worker is
// busy reads one installation's backlog past InstallationAhead: the entries
// it keeps only the ids of (parked) are pending with its consumer too, so
// when it dies another replica claims every one, none lost; and the
// installation behind the backlog in the stream is read and queued.
func TestParkedEntriesAreClaimedAfterACrash(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	a := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "a"})
	b := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "b"})
	ctx := context.Background()
	if err := a.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 500 // of installation 7, past Held(1), then one of installation 8
	enqueue := func(i int, inst int64) {
		ev := &ghevent.Event{Name: "issues", Action: "labeled", Repo: "o/r", Issue: i + 1, Installation: inst}
		if res, err := a.Enqueue(ctx, job.Job{Delivery: fmt.Sprintf("d-%d", i), Event: ev, Received: time.Now()}, 1000); err != nil || res != EnqueuedOK {
			t.Fatalf("enqueue d-%d = %d, %v", i, res, err)
		}
	}
	for i := range n {
		enqueue(i, 7)
	}
	enqueue(n, 8)
	local := workq.New(10, nil)
	ra := testReplica(a, time.Minute, local, nil)
	readCtx, stopReading := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); ra.ReadLoop(readCtx) }()
	// Installation 7 holds 1+InstallationAhead, installation 8 its one.
	waitFor(t, func() bool { return local.Len() == 1+InstallationAhead+1 })
	waitFor(t, func() bool { return ra.parkedLen() == n-1-InstallationAhead })
	stopReading() // replica a dies: no renewal, no hand-back
	<-done
	es, _, _, err := b.Claim(ctx, "0-0", 0, 2*n)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != n+1 {
		t.Fatalf("replica b claimed %d entries, want all %d read by a (queued or parked)", len(es), n+1)
	}
}

// TestParkedEntriesRunOnceInStreamOrder: 400 entries on one issue of
// installation 7 (most of them parked), then one of installation 8, one
// worker whose first job is held until the reader has read the whole
// stream: installation 8's entry is the second to start, and every entry
// runs once, issue 1's in stream order.
func TestParkedEntriesRunOnceInStreamOrder(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	a := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "a", LockTTL: time.Minute})
	ctx := context.Background()
	if err := a.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 400
	enqueue := func(d string, issue int, inst int64) {
		ev := &ghevent.Event{Name: "issues", Action: "labeled", Repo: "o/r", Issue: issue, Installation: inst}
		if res, err := a.Enqueue(ctx, job.Job{Delivery: d, Event: ev, Received: time.Now()}, 1000); err != nil || res != EnqueuedOK {
			t.Fatalf("enqueue %s = %d, %v", d, res, err)
		}
	}
	for i := range n {
		enqueue(fmt.Sprintf("d-%d", i), 1, 7)
	}
	enqueue("other", 2, 8)
	local := workq.New(10, nil)
	ra := testReplica(a, time.Minute, local, nil)
	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	go ra.ReadLoop(readCtx)
	go ra.AckLoop(readCtx)
	var order []string
	for first := true; len(order) < n+1; first = false {
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		w, ok := local.Take(tctx)
		cancel()
		if !ok {
			t.Fatalf("nothing to start after %d jobs", len(order))
		}
		order = append(order, w.Job.Delivery)
		if first {
			// The whole stream read: issue 1's rest parked, and installation
			// 8's entry held (read last, it may come a read after the parking).
			waitFor(t, func() bool { return ra.parkedLen() == n-1-InstallationAhead && local.Waiting("o/r#2") })
		}
		ra.Finish(ctx, w, nil)
		local.Done(w.Key)
	}
	if i := slices.Index(order, "other"); i < 0 || i > 1 {
		t.Fatalf("installation 8's entry started %dth, want among the first 2", i+1)
	}
	order = slices.DeleteFunc(order, func(d string) bool { return d == "other" })
	for i, d := range order {
		if d != fmt.Sprintf("d-%d", i) {
			t.Fatalf("job %d of issue 1 was %s, want d-%d (stream order, each once)", i, d, i)
		}
	}
}

// TestParkedEntriesClaimedByAnotherReplicaAreDropped: a replica too slow
// to renew its parked entries, which another replica claimed, drops them
// when its renewal finds them gone rather than run them a second time.
func TestParkedEntriesClaimedByAnotherReplicaAreDropped(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	a := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "a"})
	b := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "b"})
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
	local := workq.New(10, nil)
	ra := testReplica(a, 30*time.Millisecond, local, nil)
	readCtx, stopReading := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); ra.ReadLoop(readCtx) }()
	waitFor(t, func() bool { return ra.parkedLen() == n-1-InstallationAhead })
	stopReading()
	<-done
	if _, _, _, err := b.Claim(ctx, "0-0", 0, 2*n); err != nil {
		t.Fatal(err)
	}
	renewCtx, stopRenewing := context.WithCancel(ctx)
	defer stopRenewing()
	go ra.RenewLoop(renewCtx)
	waitFor(t, func() bool { return ra.parkedLen() == 0 })
}

// TestParkedEntriesAreHandedBackAtShutdown: a replica that parked most of
// one installation's backlog stops: it hands back the entries it queued and
// the ones it parked, so another replica reads every one of them at once
// (long before QUEUE_CLAIM_IDLE, a minute here), none left pending with
// the stopped replica, each issue's entries still in stream order.
func TestParkedEntriesAreHandedBackAtShutdown(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	a := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "a"})
	b := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "b"})
	ctx := context.Background()
	if err := a.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	const n, issues = 600, 3 // of installation 7, past Held(1)
	for i := range n {
		ev := &ghevent.Event{Name: "issues", Action: "labeled", Repo: "o/r", Issue: i%issues + 1, Installation: 7}
		if res, err := a.Enqueue(ctx, job.Job{Delivery: fmt.Sprintf("d-%d", i), Event: ev, Received: time.Now()}, 1000); err != nil || res != EnqueuedOK {
			t.Fatalf("enqueue d-%d = %d, %v", i, res, err)
		}
	}
	local := workq.New(10, nil)
	m := metrics.New()
	ra := testReplica(a, time.Minute, local, m)
	readCtx, stopReading := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); ra.ReadLoop(readCtx) }()
	waitFor(t, func() bool { return ra.parkedLen() == n-1-InstallationAhead })
	stopReading()
	<-done
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	ra.HandBack(hctx, local.TakeEntries())
	cancel()
	if ids := ra.heldIDs(); len(ids) > 0 {
		t.Errorf("replica a still holds %d entries after handing back", len(ids))
	}
	var es []Entry
	for {
		got, _, err := b.Read(ctx, streamBatch, -1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			break
		}
		es = append(es, got...)
	}
	if len(es) != n {
		t.Fatalf("replica b read %d entries at once, want all %d handed back (queued and parked)", len(es), n)
	}
	last := map[int]int{}
	for _, e := range es {
		var i int
		if _, err := fmt.Sscanf(e.Job.Delivery, "d-%d", &i); err != nil {
			t.Fatal(err)
		}
		if p, ok := last[e.Job.Event.Issue]; ok && p > i {
			t.Fatalf("issue %d: d-%d handed back after d-%d, want stream order", e.Job.Event.Issue, p, i)
		}
		last[e.Job.Event.Issue] = i
	}
	if st, err := a.QueueStats(ctx, time.Now()); err != nil || st.Pending != n {
		t.Fatalf("pending = %d, %v; want the %d entries b read, none left with a", st.Pending, err, n)
	}
}

// TestParkedEntriesAreNotDecodedUntilTheyRun: the reader parks an entry
// from its installation field alone; its event (JSON) is decoded only
// when it is read back to run, once, not when it is parked as well.
func TestParkedEntriesAreNotDecodedUntilTheyRun(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	a := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "a"})
	ctx := context.Background()
	if err := a.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 500
	for i := range n {
		ev := &ghevent.Event{Name: "issues", Action: "labeled", Repo: "o/r", Issue: i + 1, Installation: 7}
		if res, err := a.Enqueue(ctx, job.Job{Delivery: fmt.Sprintf("d-%d", i), Event: ev, Received: time.Now()}, 1000); err != nil || res != EnqueuedOK {
			t.Fatalf("enqueue d-%d = %d, %v", i, res, err)
		}
	}
	local := workq.New(10, nil)
	ra := testReplica(a, time.Minute, local, nil)
	before := entryDecodes.Load()
	readCtx, stopReading := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); ra.ReadLoop(readCtx) }()
	waitFor(t, func() bool { return ra.parkedLen() == n-1-InstallationAhead })
	stopReading()
	<-done
	if got, want := entryDecodes.Load()-before, int64(1+InstallationAhead); got != want {
		t.Fatalf("%d events decoded while reading %d entries, %d of them parked; want %d (the queued ones)", got, n, n-1-InstallationAhead, want)
	}
}

// testReplica is a one-worker replica of store that reads into local,
// keys jobs by issue and logs nowhere (m nil: metrics of its own).
func testReplica(store *Store, idle time.Duration, local *workq.Queue, m *metrics.Metrics) *Replica {
	if m == nil {
		m = metrics.New()
	}
	return NewReplica(store, ReplicaOptions{
		Idle: idle, Workers: 1, Queue: local,
		Keys:             func(ev *ghevent.Event) (string, []string) { return fmt.Sprintf("%s#%d", ev.Repo, ev.Issue), nil },
		NoteInstallation: func(int64) {}, NoteStore: func(error) {},
		Log: slog.New(slog.DiscardHandler), Metrics: m,
	})
}
