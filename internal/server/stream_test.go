package server

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/metrics"
	"github.com/autopilot-dev/autopilot/internal/server/redisq"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
)

// streamServer starts a server whose work queue is a Redis stream under
// prefix (each call a new replica, with its own consumer).
func streamServer(t *testing.T, u, prefix string, cfg settings.Config, rec *recorder) (*Server, running, *redisq.Store) {
	t.Helper()
	store := servertest.OpenRedis(t, redisq.New, u, redisq.Options{Prefix: prefix, LockTTL: cfg.LockTTL, PollMax: 5 * time.Millisecond})
	s, srv := start(t, cfg, Deps{Processor: rec, Deduper: store, Locker: store, Queue: store})
	return s, srv, store
}

// rawRedis is a client of the test Redis, to play a replica that died
// mid-job.
func rawRedis(t *testing.T, u string) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(o)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// streamStats reads the queue's stats through store.
func streamStats(t *testing.T, store *redisq.Store) metrics.QueueStats {
	t.Helper()
	st, err := store.QueueStats(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestStreamEntryRoundTrip: every vendored example the intake queues comes
// back from its stream entry as the same job, with the event the job reads
// (redisq.JobView: the texts it does not read dropped).
func TestStreamEntryRoundTrip(t *testing.T) {
	dir, err := servertest.Dir()
	if err != nil {
		t.Fatal(err)
	}
	ps, err := servertest.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	store := servertest.OpenRedis(t, redisq.New, u, redisq.Options{Prefix: prefix})
	ctx := context.Background()
	if err := store.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]job.Job{}
	for i, p := range ps {
		if !routedEvents[p.Event] {
			continue
		}
		ev, err := ghevent.DecodeFast(p.Event, p.Body)
		if err != nil {
			continue // not decodable: never queued
		}
		job := job.Job{Delivery: fmt.Sprintf("rt-%d", i), Event: ev, Received: time.UnixMilli(time.Now().UnixMilli())}
		if res, err := store.Enqueue(ctx, job, 1000); err != nil || res != redisq.EnqueuedOK {
			t.Fatalf("%s: enqueue = %d, %v", p.Name, res, err)
		}
		want[job.Delivery] = job
	}
	es, _, err := store.Read(ctx, len(want)+1, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != len(want) {
		t.Fatalf("read %d entries, want %d", len(es), len(want))
	}
	for _, e := range es {
		if e.Bad != nil {
			t.Fatalf("entry %s: %v", e.ID, e.Bad)
		}
		w := want[e.Job.Delivery]
		if !reflect.DeepEqual(e.Job.Event, redisq.JobView(w.Event)) || !e.Job.Received.Equal(w.Received) {
			t.Errorf("%s (%s): event changed through the stream:\n got %+v\nwant %+v", e.Job.Delivery, w.Event.Name, e.Job.Event, w.Event)
		}
	}
}

// TestStreamQueueProcessesEachOnceAndAcknowledges: deliveries through the
// Redis queue are processed exactly once, a redelivered id is a duplicate,
// and the stream is empty (acknowledged and deleted) afterwards.
func TestStreamQueueProcessesEachOnceAndAcknowledges(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	rec := newRecorder()
	s, srv, store := streamServer(t, u, prefix, testConfig(), rec)
	const n = 40
	for i := range n {
		if code, _ := issueDelivery(t, fmt.Sprintf("s-%d", i), 1+i%7).send(t, srv.url); code != http.StatusAccepted {
			t.Fatalf("delivery %d = %d, want 202", i, code)
		}
	}
	if code, _ := issueDelivery(t, "s-3", 4).send(t, srv.url); code != http.StatusOK {
		t.Fatalf("redelivered id = %d, want 200", code)
	}
	rec.waitDone(t, n)
	eventually(t, "acknowledged", func() bool { return value(t, s.metrics, "autopilot_queue_acked_total") == n })
	for i := range n {
		if c := rec.count(fmt.Sprintf("s-%d", i)); c != 1 {
			t.Errorf("s-%d processed %d times", i, c)
		}
	}
	if rec.overlaps != 0 {
		t.Errorf("%d overlapping jobs on one issue", rec.overlaps)
	}
	if st := streamStats(t, store); st.Length != 0 || st.Pending != 0 {
		t.Errorf("stream after the run: %+v, want empty", st)
	}
	_, body := get(t, srv.url, "/metrics")
	for _, want := range []string{"autopilot_queue_stream_length 0", "autopilot_queue_pending 0",
		"autopilot_queue_oldest_pending_age_seconds 0", "autopilot_queue_acked_total 40", "autopilot_queue_claims_total 0"} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestStreamQueueFullRefusesAndReadyzFails: at QUEUE_MAX entries not yet
// acknowledged (running ones included) intake answers 503 with Retry-After
// and /readyz fails; once jobs finish both recover and the refused delivery
// is accepted when sent again.
func TestStreamQueueFullRefusesAndReadyzFails(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	rec := newRecorder()
	rec.gate = make(chan struct{})
	cfg := testConfig()
	cfg.QueueMax, cfg.Workers = 3, 2
	_, srv, _ := streamServer(t, u, prefix, cfg, rec)
	for i := range 3 {
		if code, _ := issueDelivery(t, fmt.Sprintf("f-%d", i), 1+i).send(t, srv.url); code != http.StatusAccepted {
			t.Fatalf("delivery %d = %d, want 202", i, code)
		}
	}
	code, retry := issueDelivery(t, "f-over", 9).send(t, srv.url)
	if code != http.StatusServiceUnavailable || retry == "" {
		t.Fatalf("delivery over QUEUE_MAX = %d Retry-After %q, want 503 with Retry-After", code, retry)
	}
	if code, body := get(t, srv.url, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "queue full") {
		t.Fatalf("readyz at QUEUE_MAX = %d %q, want 503 queue full", code, body)
	}
	close(rec.gate)
	rec.waitDone(t, 3)
	eventually(t, "readyz after the queue drained", func() bool { c, _ := get(t, srv.url, "/readyz"); return c == http.StatusOK })
	if code, _ := issueDelivery(t, "f-over", 9).send(t, srv.url); code != http.StatusAccepted {
		t.Fatalf("refused delivery sent again = %d, want 202 (a 503 must record nothing)", code)
	}
	rec.waitDone(t, 1)
}

// TestStreamQueueClaimsWhatADeadConsumerLeft: entries read by a consumer
// that then stops (no renewal, no acknowledgement) are claimed by a live
// replica once idle for QUEUE_CLAIM_IDLE, and processed once each.
func TestStreamQueueClaimsWhatADeadConsumerLeft(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	dead := servertest.OpenRedis(t, redisq.New, u, redisq.Options{Prefix: prefix, Owner: "dead"})
	ctx := context.Background()
	if err := dead.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 5
	for i := range n {
		ev := mustDecode(t, "issues", issueDelivery(t, "x", 1+i).body)
		if res, err := dead.Enqueue(ctx, job.Job{Delivery: fmt.Sprintf("dead-%d", i), Event: ev, Received: time.Now()}, 100); err != nil || res != redisq.EnqueuedOK {
			t.Fatalf("enqueue = %d, %v", res, err)
		}
	}
	if es, _, err := dead.Read(ctx, n, -1); err != nil || len(es) != n {
		t.Fatalf("the dead consumer read %d entries (%v), want %d", len(es), err, n)
	}
	rec := newRecorder()
	cfg := testConfig()
	cfg.QueueClaimIdle = 300 * time.Millisecond
	began := time.Now()
	s, _, store := streamServer(t, u, prefix, cfg, rec)
	rec.waitDone(t, n)
	took := time.Since(began)
	if took < cfg.QueueClaimIdle {
		t.Errorf("claimed after %s, before QUEUE_CLAIM_IDLE %s", took, cfg.QueueClaimIdle)
	}
	t.Logf("entries left by a dead consumer processed %s after the replica started (claim idle %s)", took, cfg.QueueClaimIdle)
	eventually(t, "acknowledged", func() bool { return value(t, s.metrics, "autopilot_queue_acked_total") == n })
	for i := range n {
		if c := rec.count(fmt.Sprintf("dead-%d", i)); c != 1 {
			t.Errorf("dead-%d processed %d times, want 1", i, c)
		}
	}
	if got := value(t, s.metrics, "autopilot_queue_claims_total"); got != n {
		t.Errorf("claims = %v, want %d", got, n)
	}
	if st := streamStats(t, store); st.Length != 0 || st.Pending != 0 {
		t.Errorf("stream after the claims: %+v, want empty", st)
	}
}

// TestStreamQueueSlowJobIsNotClaimed: a job running far longer than
// QUEUE_CLAIM_IDLE keeps its entry (renewed), so a second replica never
// runs it too.
func TestStreamQueueSlowJobIsNotClaimed(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	rec := newRecorder()
	rec.delay = 1500 * time.Millisecond
	cfg := testConfig()
	cfg.QueueClaimIdle, cfg.LockTTL = 200*time.Millisecond, 5*time.Second
	a, srv, _ := streamServer(t, u, prefix, cfg, rec)
	if code, _ := issueDelivery(t, "slow", 1).send(t, srv.url); code != http.StatusAccepted {
		t.Fatalf("delivery = %d", code)
	}
	eventually(t, "the slow job to start", func() bool { return value(t, a.metrics, "autopilot_jobs_in_flight") == 1 })
	b, _, _ := streamServer(t, u, prefix, cfg, rec)
	rec.waitDone(t, 1)
	time.Sleep(3 * cfg.QueueClaimIdle)
	if c := rec.count("slow"); c != 1 {
		t.Fatalf("slow job processed %d times, want 1", c)
	}
	if got := value(t, b.metrics, "autopilot_queue_claims_total"); got != 0 {
		t.Fatalf("the second replica claimed %v entries of a live one", got)
	}
}

// TestStreamQueueShutdownHandsBackWaitingEntries: at shutdown a replica
// finishes its running job and gives the entries it holds but has not
// started back to the group, where another replica takes them at once
// (long before QUEUE_CLAIM_IDLE).
func TestStreamQueueShutdownHandsBackWaitingEntries(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	rec := newRecorder()
	rec.gate = make(chan struct{})
	cfg := testConfig()
	cfg.Workers, cfg.QueueClaimIdle = 2, time.Minute
	a, srv, _ := streamServer(t, u, prefix, cfg, rec)
	// Two jobs on one issue: one runs (held at the gate), one waits behind it.
	for _, id := range []string{"h-1", "h-2"} {
		if code, _ := issueDelivery(t, id, 1).send(t, srv.url); code != http.StatusAccepted {
			t.Fatalf("%s = %d", id, code)
		}
	}
	eventually(t, "one running, one waiting", func() bool {
		return value(t, a.metrics, "autopilot_jobs_in_flight") == 1 && a.queue.Len() == 1
	})
	stopped := make(chan error, 1)
	go func() { stopped <- srv.stop() }()
	eventually(t, "the waiting entry handed back", func() bool { return value(t, a.metrics, "autopilot_queue_handed_back_total") == 1 })
	rec.gate <- struct{}{} // the running job finishes within the deadline
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	rec.waitDone(t, 1)
	close(rec.gate)
	began := time.Now()
	_, _, store := streamServer(t, u, prefix, cfg, rec)
	rec.waitDone(t, 1)
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("the handed-back entry ran %s after the next replica started; want at once", took)
	}
	for _, id := range []string{"h-1", "h-2"} {
		if c := rec.count(id); c != 1 {
			t.Errorf("%s processed %d times, want 1", id, c)
		}
	}
	eventually(t, "stream empty", func() bool { st := streamStats(t, store); return st.Length == 0 && st.Pending == 0 })
}

// TestStreamQueueRedisAway: with the queue's Redis unreachable, deliveries
// get 503 with Retry-After and /readyz fails; when it returns, work resumes.
func TestStreamQueueRedisAway(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	px := startProxy(t, u)
	rec := newRecorder()
	_, srv, _ := streamServer(t, px.url, prefix, testConfig(), rec)
	if code, _ := issueDelivery(t, "a-1", 1).send(t, srv.url); code != http.StatusAccepted {
		t.Fatalf("delivery with Redis up = %d", code)
	}
	rec.waitDone(t, 1)
	px.down()
	if code, _ := get(t, srv.url, "/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("readyz with Redis away = %d, want 503", code)
	}
	if code, retry := issueDelivery(t, "a-2", 2).send(t, srv.url); code != http.StatusServiceUnavailable || retry == "" {
		t.Fatalf("delivery with Redis away = %d Retry-After %q, want 503 with Retry-After", code, retry)
	}
	px.up()
	eventually(t, "readyz after Redis returns", func() bool { c, _ := get(t, srv.url, "/readyz"); return c == http.StatusOK })
	if code, _ := issueDelivery(t, "a-2", 2).send(t, srv.url); code != http.StatusAccepted {
		t.Fatalf("delivery after Redis returned = %d, want 202", code)
	}
	rec.waitDone(t, 1)
}

// TestStreamQueueTwoReplicasUnderLoad: two replicas reading one stream,
// deliveries spread over few issues sent to either: each processed exactly
// once, never two jobs on one issue at once, and both replicas worked.
func TestStreamQueueTwoReplicasUnderLoad(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	rec := newRecorder()
	rec.delay = 3 * time.Millisecond
	cfg := testConfig()
	cfg.Workers = 4
	var servers []*Server
	var urls []string
	for range 2 {
		s, srv, _ := streamServer(t, u, prefix, cfg, rec)
		servers, urls = append(servers, s), append(urls, srv.url)
	}
	const n, issues = 300, 6
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if code, _ := issueDelivery(t, fmt.Sprintf("l-%d", i), 1+i%issues).send(t, urls[i%2]); code != http.StatusAccepted {
				t.Errorf("l-%d = %d", i, code)
			}
		})
	}
	wg.Wait()
	eventually(t, "every delivery processed", func() bool { return rec.total() >= n })
	time.Sleep(100 * time.Millisecond)
	for i := range n {
		if c := rec.count(fmt.Sprintf("l-%d", i)); c != 1 {
			t.Errorf("l-%d processed %d times, want 1", i, c)
		}
	}
	rec.mu.Lock()
	overlaps := rec.overlaps
	rec.mu.Unlock()
	if overlaps != 0 {
		t.Errorf("%d times a job started on an issue another job was running on", overlaps)
	}
	for i, s := range servers {
		if got := value(t, s.metrics, "autopilot_queue_acked_total"); got == 0 {
			t.Errorf("replica %d acknowledged nothing: the stream was not shared", i)
		}
	}
}

// value reads the counter or gauge named name from m's registry.
func value(t *testing.T, m *metrics.Metrics, name string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("gathering: %v", err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		if len(f.GetMetric()) != 1 {
			t.Fatalf("%s has %d series, want 1", name, len(f.GetMetric()))
		}
		m := f.GetMetric()[0]
		if m.GetCounter() != nil {
			return m.GetCounter().GetValue()
		}
		return m.GetGauge().GetValue()
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestStreamQueueGivesUpAnEntryThatKillsEveryReplica: an entry handed out
// more than redisq.MaxDeliveries times (each replica running it died) is not run
// again but dropped to the sweep, counted as lost; a fresh one next to it
// is run.
func TestStreamQueueGivesUpAnEntryThatKillsEveryReplica(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	dead := servertest.OpenRedis(t, redisq.New, u, redisq.Options{Prefix: prefix, Owner: "dead"})
	ctx := context.Background()
	if err := dead.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"poison", "fresh"} {
		ev := mustDecode(t, "issues", issueDelivery(t, "x", 1+i).body)
		if res, err := dead.Enqueue(ctx, job.Job{Delivery: id, Event: ev, Received: time.Now()}, 100); err != nil || res != redisq.EnqueuedOK {
			t.Fatalf("enqueue = %d, %v", res, err)
		}
	}
	es, _, err := dead.Read(ctx, 2, -1)
	if err != nil || len(es) != 2 {
		t.Fatalf("read %d entries (%v)", len(es), err)
	}
	rdb := rawRedis(t, u)
	for range redisq.MaxDeliveries { // replicas that claimed it and died
		if err := rdb.XClaim(ctx, &redis.XClaimArgs{Stream: prefix + "queue", Group: "workers",
			Consumer: "dead", Messages: []string{es[0].ID}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rec := newRecorder()
	cfg := testConfig()
	cfg.QueueClaimIdle = 200 * time.Millisecond
	s, _, store := streamServer(t, u, prefix, cfg, rec)
	rec.waitDone(t, 1)
	eventually(t, "the poison entry dropped", func() bool { return value(t, s.metrics, "autopilot_queue_lost_total") == 1 })
	if rec.count("poison") != 0 || rec.count("fresh") != 1 {
		t.Fatalf("poison ran %d times, fresh %d; want 0 and 1", rec.count("poison"), rec.count("fresh"))
	}
	eventually(t, "stream empty", func() bool { st := streamStats(t, store); return st.Length == 0 && st.Pending == 0 })
}
