package redisq

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
)

// scriptGate counts the scripts the store sends and holds the first one
// sent after it is armed until release is closed.
type scriptGate struct {
	scripts atomic.Int32
	armed   atomic.Bool
	held    chan struct{} // closed once the held script is waiting
	release chan struct{}
	once    sync.Once
}

func (g *scriptGate) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (g *scriptGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := strings.ToLower(cmd.Name()); name == "evalsha" || name == "eval" {
			g.scripts.Add(1)
			if g.armed.CompareAndSwap(true, false) {
				g.once.Do(func() { close(g.held) })
				<-g.release
			}
		}
		return next(ctx, cmd)
	}
}

func (g *scriptGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestEnqueueCommitsConcurrentDeliveriesTogether: deliveries queued while
// an append is on its way to Redis go together in the next round trip (one
// script for the lot), each caller answered only once its own batch came
// back, duplicates in one batch answered as such.
func TestEnqueueCommitsConcurrentDeliveriesTogether(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	s := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "a"})
	gate := &scriptGate{held: make(chan struct{}), release: make(chan struct{})}
	s.rdb.AddHook(gate)
	ctx := context.Background()
	ev := &ghevent.Event{Name: "issues", Action: "opened", Repo: "o/r", Issue: 1}
	mk := func(id string) job.Job { return job.Job{Delivery: id, Event: ev, Received: time.Now()} }
	// Warm the script cache: the first run of a script may take two calls
	// (EVALSHA answered NOSCRIPT, then EVAL).
	if res, err := s.Enqueue(ctx, mk("warm"), 1000); err != nil || res != EnqueuedOK {
		t.Fatalf("warm-up enqueue = %d, %v", res, err)
	}
	gate.scripts.Store(0)
	gate.armed.Store(true)

	type answer struct {
		id  string
		res int
		err error
	}
	answers := make(chan answer, 64)
	enqueue := func(id string) {
		res, err := s.Enqueue(ctx, mk(id), 1000)
		answers <- answer{id, res, err}
	}
	go enqueue("first")
	<-gate.held // "first" is on its way to Redis, held there
	const n = 40
	for i := range n {
		go enqueue(fmt.Sprintf("d-%d", i))
	}
	go enqueue("d-0") // the same delivery again, in the same batch
	waitFor(t, func() bool { return s.waitingEnqueues() == n+1 })
	select {
	case a := <-answers:
		t.Fatalf("%s answered (%d, %v) before its append came back from Redis", a.id, a.res, a.err)
	default:
	}
	close(gate.release)
	got := map[int]int{}
	for range n + 2 {
		a := <-answers
		if a.err != nil {
			t.Fatalf("%s: %v", a.id, a.err)
		}
		got[a.res]++
	}
	if got[EnqueuedOK] != n+1 || got[EnqueuedDuplicate] != 1 {
		t.Errorf("answers %v, want %d queued and 1 duplicate", got, n+1)
	}
	if c := gate.scripts.Load(); c != 2 {
		t.Errorf("%d scripts sent for %d deliveries, want 2 (the held one, then one for the %d that queued behind it)", c, n+2, n+1)
	}
	if l, err := s.QueueLen(ctx); err != nil || l != n+2 {
		t.Errorf("stream length %d (%v), want %d (warm-up, first, d-0..d-%d)", l, err, n+2, n-1)
	}
	// The append statistics count the batches and every delivery they
	// carried, the duplicate included (it travelled in its batch).
	if a := s.Appends(); a.Batches != 3 || a.Deliveries != n+3 || a.RoundTrips <= 0 {
		t.Errorf("Appends() = %+v, want 3 batches (warm-up, first, the rest) carrying %d deliveries, and their time", a, n+3)
	}
}

// TestEnqueueBatchRespectsQueueMax: within one batch, the room left is
// counted entry by entry.
func TestEnqueueBatchRespectsQueueMax(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	s := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "a"})
	gate := &scriptGate{held: make(chan struct{}), release: make(chan struct{})}
	s.rdb.AddHook(gate)
	ctx := context.Background()
	ev := &ghevent.Event{Name: "issues", Action: "opened", Repo: "o/r", Issue: 1}
	if res, err := s.Enqueue(ctx, job.Job{Delivery: "warm", Event: ev, Received: time.Now()}, 1000); err != nil || res != EnqueuedOK {
		t.Fatalf("warm-up enqueue = %d, %v", res, err)
	}
	gate.armed.Store(true)
	res := make(chan int, 16)
	enqueue := func(id string) {
		r, err := s.Enqueue(ctx, job.Job{Delivery: id, Event: ev, Received: time.Now()}, 5)
		if err != nil {
			t.Error(err)
		}
		res <- r
	}
	go enqueue("first")
	<-gate.held
	for i := range 8 {
		go enqueue(fmt.Sprintf("d-%d", i))
	}
	waitFor(t, func() bool { return s.waitingEnqueues() == 8 })
	close(gate.release)
	got := map[int]int{}
	for range 9 {
		got[<-res]++
	}
	// warm-up and first fill 2 of 5: three more fit.
	if got[EnqueuedOK] != 4 || got[EnqueuedFull] != 5 {
		t.Errorf("answers %v, want 4 queued (first + 3) and 5 refused as full", got)
	}
}

// waitFor polls cond (a state, not a time) for up to 10s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(end) {
			t.Fatal("condition not reached in 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFinishCommitsConcurrentJobsTogether: the ends of jobs that finish
// while one end is on its way to Redis (their leases released, their
// entries acknowledged and deleted) go together in the next round trip,
// each caller answered once its own batch came back, and a lease another
// owner holds by then is reported lost to its caller alone.
func TestFinishCommitsConcurrentJobsTogether(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	s := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "a"})
	ctx := context.Background()
	const n = 12
	es := readNew(t, s, n+2)
	// Warm the script cache (a script's first run may take two calls:
	// EVALSHA answered NOSCRIPT, then EVAL) with the last entry.
	if _, err := s.FinishEntry(ctx, es[n+1].ID, nil); err != nil {
		t.Fatalf("warm-up finish: %v", err)
	}
	leases := make([][]job.Lease, n+1)
	for i := range n + 1 {
		ls, ok, err := s.TryLockAll(ctx, []string{fmt.Sprintf("o/r#%d", i), fmt.Sprintf("o/r#%d", 100+i)})
		if err != nil || !ok {
			t.Fatalf("lock %d: %v %v", i, ok, err)
		}
		leases[i] = ls
	}
	// Job 3's second lease expired and another replica took it.
	if err := s.rdb.Set(ctx, s.lockKey("o/r#103"), "someone-else", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	gate := &scriptGate{held: make(chan struct{}), release: make(chan struct{})}
	s.rdb.AddHook(gate)
	gate.armed.Store(true)
	type answer struct {
		i    int
		lost []string
		err  error
	}
	answers := make(chan answer, n+1)
	finish := func(i int) {
		lost, err := s.FinishEntry(ctx, es[i].ID, leases[i])
		answers <- answer{i, lost, err}
	}
	go finish(n) // on its way to Redis, held there
	<-gate.held
	for i := range n {
		go finish(i)
	}
	waitFor(t, func() bool { return s.waitingFinishes() == n })
	select {
	case a := <-answers:
		t.Fatalf("job %d answered (%v, %v) before its end came back from Redis", a.i, a.lost, a.err)
	default:
	}
	close(gate.release)
	for range n + 1 {
		a := <-answers
		if a.err != nil {
			t.Fatalf("job %d: %v", a.i, a.err)
		}
		want := 0
		if a.i == 3 {
			want = 1
		}
		if len(a.lost) != want || (want == 1 && a.lost[0] != "o/r#103") {
			t.Errorf("job %d: lost leases %v, want %d (o/r#103 for job 3)", a.i, a.lost, want)
		}
	}
	if c := gate.scripts.Load(); c != 2 {
		t.Errorf("%d scripts sent for %d job ends, want 2 (the held one, then one for the %d that finished behind it)", c, n+1, n)
	}
	if l, err := s.QueueLen(ctx); err != nil || l != 0 {
		t.Errorf("stream length %d (%v), want 0: every entry acknowledged and deleted", l, err)
	}
	if k, err := s.rdb.Keys(ctx, s.lockKey("*")).Result(); err != nil || len(k) != 1 {
		t.Errorf("lease keys left %v (%v), want only the other replica's o/r#103", k, err)
	}
}

// TestLeasesAndJobEndsShareARoundTrip: workers taking leases for their next
// jobs while another job's end is on its way to Redis go together with the
// ends that queued meanwhile, in one script: the leases are granted (all or
// none per job, with increasing tokens) after the ends in the same batch
// released theirs, so a job taking an issue another job just finished with
// gets it at once.
func TestLeasesAndJobEndsShareARoundTrip(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	s := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "a"})
	ctx := context.Background()
	es := readNew(t, s, 3)
	// Warm the script cache with a lease and the third entry's end.
	warm, ok, err := s.TryLockAll(ctx, []string{"o/r#9", "o/r#10"})
	if err != nil || !ok {
		t.Fatalf("warm-up lock: %v %v", ok, err)
	}
	if _, err := s.FinishEntry(ctx, es[2].ID, warm); err != nil {
		t.Fatalf("warm-up finish: %v", err)
	}
	held, ok, err := s.TryLockAll(ctx, []string{"o/r#1", "o/r#2"})
	if err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	gate := &scriptGate{held: make(chan struct{}), release: make(chan struct{})}
	s.rdb.AddHook(gate)
	gate.armed.Store(true)
	done := make(chan error, 8)
	go func() { _, err := s.FinishEntry(ctx, es[0].ID, nil); done <- err }() // held on its way
	<-gate.held
	go func() { _, err := s.FinishEntry(ctx, es[1].ID, held); done <- err }()
	type got struct {
		ls []job.Lease
		ok bool
	}
	locks := make(chan got, 4)
	for _, keys := range [][]string{{"o/r#2", "o/r#3"}, {"o/r#4", "o/r#5"}} {
		go func() {
			ls, ok, err := s.TryLockAll(ctx, keys)
			if err != nil {
				t.Error(err)
			}
			locks <- got{ls, ok}
		}()
	}
	single := make(chan job.Lease, 1)
	go func() {
		l, err := s.Lock(ctx, "o/r#1")
		if err != nil {
			t.Error(err)
		}
		single <- l
	}()
	waitFor(t, func() bool { return s.waitingFinishes() == 4 })
	close(gate.release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		g := <-locks
		if !g.ok || len(g.ls) != 2 || g.ls[1].Token <= g.ls[0].Token {
			t.Errorf("TryLockAll = %+v, %v; want both leases, tokens increasing", g.ls, g.ok)
		}
	}
	if l := <-single; l.Token <= held[1].Token {
		t.Errorf("Lock(o/r#1) = %+v; want a lease with a token above %d", l, held[1].Token)
	}
	if c := gate.scripts.Load(); c != 2 {
		t.Errorf("%d scripts sent, want 2: the held end, then the other end and the three leases together", c)
	}
}

// readNew queues n deliveries on s and reads their entries.
func readNew(t *testing.T, s *Store, n int) []Entry {
	t.Helper()
	ctx := context.Background()
	if err := s.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	ev := &ghevent.Event{Name: "issues", Action: "opened", Repo: "o/r", Issue: 1}
	for i := range n {
		if res, err := s.Enqueue(ctx, job.Job{Delivery: fmt.Sprintf("d-%d", i), Event: ev, Received: time.Now()}, 1000); err != nil || res != EnqueuedOK {
			t.Fatalf("enqueue %d = %d, %v", i, res, err)
		}
	}
	es, _, err := s.Read(ctx, n, -1)
	if err != nil || len(es) != n {
		t.Fatalf("read %d entries (%v), want %d", len(es), err, n)
	}
	return es
}
