package server

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/redisq"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
	"github.com/autopilot-dev/autopilot/internal/server/tracing"
	"github.com/autopilot-dev/autopilot/internal/server/tracing/tracingtest"
)

// spans is a replica's Tracer and the spans it ended.
type spans struct {
	*tracingtest.Recorder
	tracer *tracing.Tracer
}

func newSpans(t *testing.T) spans {
	r := tracingtest.New(t)
	return spans{Recorder: r, tracer: r.Tracer}
}

// one waits for a span called name to end and returns it, failing the
// test unless exactly one did.
func (s spans) one(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	eventually(t, "one "+name+" span", func() bool { return len(s.Named(name)) >= 1 })
	return s.One(t, name)
}

// jobContexts records the span context each job ran under.
type jobContexts struct {
	mu   sync.Mutex
	seen map[string]trace.SpanContext
}

func (j *jobContexts) hook(ctx context.Context, jb job.Job) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.seen == nil {
		j.seen = map[string]trace.SpanContext{}
	}
	j.seen[jb.Delivery] = trace.SpanContextFromContext(ctx)
	return nil
}

func (j *jobContexts) of(delivery string) trace.SpanContext {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.seen[delivery]
}

// checkDeliveryTrace checks the span tree of one accepted delivery: the
// delivery span (root, server kind, the event and the answer) with the
// verify and the queueing step under it, the queue wait and the job under
// it in the same trace, and the processor running under the job span.
func checkDeliveryTrace(t *testing.T, at, ran spans, queued string, jc *jobContexts, id string) {
	t.Helper()
	root := at.one(t, tracing.SpanDelivery)
	if root.Parent().IsValid() || root.SpanKind() != trace.SpanKindServer {
		t.Errorf("delivery span: parent %v kind %v, want a server root", root.Parent(), root.SpanKind())
	}
	a := tracingtest.Attrs(root)
	for k, v := range map[string]string{"github.event": "issues", "github.action": "labeled", "github.delivery": id,
		"http.response.status_code": "202", "autopilot.outcome": OutcomeAccepted} {
		if a[k] != v {
			t.Errorf("delivery span %s = %q, want %q (all: %v)", k, a[k], v, a)
		}
	}
	trace := root.SpanContext().TraceID()
	under := func(s sdktrace.ReadOnlySpan) {
		t.Helper()
		if s.SpanContext().TraceID() != trace || s.Parent().SpanID() != root.SpanContext().SpanID() {
			t.Errorf("%s: trace %s parent %s, want trace %s under the delivery span %s", s.Name(),
				s.SpanContext().TraceID(), s.Parent().SpanID(), trace, root.SpanContext().SpanID())
		}
	}
	under(at.one(t, tracing.SpanVerify))
	under(at.one(t, queued))
	wait, run := ran.one(t, tracing.SpanQueueWait), ran.one(t, tracing.SpanJob)
	under(wait)
	under(run)
	if wait.EndTime().After(run.StartTime()) {
		t.Errorf("queue wait ends %s, after the job starts %s", wait.EndTime(), run.StartTime())
	}
	if a := tracingtest.Attrs(run); a["autopilot.outcome"] != "ok" || a["github.delivery"] != id {
		t.Errorf("job span attrs %v, want outcome ok for %s", a, id)
	}
	if got := jc.of(id); got.SpanID() != run.SpanContext().SpanID() || got.TraceID() != trace {
		t.Errorf("the processor ran under span %s of trace %s, want the job's %s", got.SpanID(), got.TraceID(), run.SpanContext().SpanID())
	}
}

// TestADeliveryIsOneTraceThroughTheInProcessQueue: with a Tracer, one
// accepted delivery through the in-process queue is one trace: intake,
// its verify and dedupe steps, the queue wait and the job, whose context
// the processor's calls inherit.
func TestADeliveryIsOneTraceThroughTheInProcessQueue(t *testing.T) {
	sp := newSpans(t)
	jc := &jobContexts{}
	rec := newRecorder()
	rec.hook = jc.hook
	_, srv := start(t, testConfig(), Deps{Processor: rec, Tracer: sp.tracer})
	if code, _ := issueDelivery(t, "tr-1", 4).send(t, srv.url); code != http.StatusAccepted {
		t.Fatalf("code %d", code)
	}
	rec.waitDone(t, 1)
	checkDeliveryTrace(t, sp, sp, tracing.SpanDedupe, jc, "tr-1")
	// A duplicate is a trace of its own that ends at the intake.
	if code, _ := issueDelivery(t, "tr-1", 4).send(t, srv.url); code != http.StatusOK {
		t.Fatalf("duplicate code %d", code)
	}
	eventually(t, "the duplicate's span", func() bool { return len(sp.Named(tracing.SpanDelivery)) == 2 })
	if len(sp.Named(tracing.SpanJob)) != 1 {
		t.Error("the duplicate ran a job")
	}
}

// TestADeliveryIsOneTraceThroughTheRedisStream: the same through the
// Redis work queue: the trace context travels in the stream entry.
func TestADeliveryIsOneTraceThroughTheRedisStream(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	sp := newSpans(t)
	jc := &jobContexts{}
	rec := newRecorder()
	rec.hook = jc.hook
	store := servertest.OpenRedis(t, redisq.New, u, redisq.Options{Prefix: prefix, LockTTL: testConfig().LockTTL, PollMax: 5 * time.Millisecond})
	_, srv := start(t, testConfig(), Deps{Processor: rec, Deduper: store, Locker: store, Queue: store, Tracer: sp.tracer})
	if code, _ := issueDelivery(t, "tr-r", 4).send(t, srv.url); code != http.StatusAccepted {
		t.Fatalf("code %d", code)
	}
	rec.waitDone(t, 1)
	checkDeliveryTrace(t, sp, sp, tracing.SpanEnqueue, jc, "tr-r")
}

// TestAHandedBackDeliveryContinuesItsTraceOnTheNextReplica: replica A
// takes a delivery, and at shutdown hands it back unstarted; replica B
// (its own tracer) claims it, and its queue wait and job continue the
// trace A's intake began.
func TestAHandedBackDeliveryContinuesItsTraceOnTheNextReplica(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	spA, spB := newSpans(t), newSpans(t)
	jc := &jobContexts{}
	rec := newRecorder()
	rec.gate = make(chan struct{})
	rec.hook = jc.hook
	cfg := testConfig()
	cfg.Workers, cfg.QueueClaimIdle = 2, time.Minute
	storeA := servertest.OpenRedis(t, redisq.New, u, redisq.Options{Prefix: prefix, LockTTL: cfg.LockTTL, PollMax: 5 * time.Millisecond})
	a, srvA := start(t, cfg, Deps{Processor: rec, Deduper: storeA, Locker: storeA, Queue: storeA, Tracer: spA.tracer})
	// Two jobs on one issue: h-1 runs (held at the gate), h-2 waits behind it.
	for _, id := range []string{"h-1", "h-2"} {
		if code, _ := issueDelivery(t, id, 1).send(t, srvA.url); code != http.StatusAccepted {
			t.Fatalf("%s = %d", id, code)
		}
	}
	eventually(t, "one running, one waiting", func() bool {
		return value(t, a.metrics, "autopilot_jobs_in_flight") == 1 && a.queue.Len() == 1
	})
	stopped := make(chan error, 1)
	go func() { stopped <- srvA.stop() }()
	eventually(t, "the waiting entry handed back", func() bool { return value(t, a.metrics, "autopilot_queue_handed_back_total") == 1 })
	rec.gate <- struct{}{}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	rec.waitDone(t, 1)
	close(rec.gate)
	storeB := servertest.OpenRedis(t, redisq.New, u, redisq.Options{Prefix: prefix, LockTTL: cfg.LockTTL, PollMax: 5 * time.Millisecond})
	start(t, cfg, Deps{Processor: rec, Deduper: storeB, Locker: storeB, Queue: storeB, Tracer: spB.tracer})
	rec.waitDone(t, 1)

	var intake sdktrace.ReadOnlySpan
	for _, s := range spA.Named(tracing.SpanDelivery) {
		if tracingtest.Attrs(s)["github.delivery"] == "h-2" {
			intake = s
		}
	}
	if intake == nil {
		t.Fatal("no delivery span for h-2 on replica A")
	}
	run := spB.one(t, tracing.SpanJob)
	wait := spB.one(t, tracing.SpanQueueWait)
	for _, s := range []sdktrace.ReadOnlySpan{run, wait} {
		if s.SpanContext().TraceID() != intake.SpanContext().TraceID() || s.Parent().SpanID() != intake.SpanContext().SpanID() {
			t.Errorf("replica B's %s: trace %s parent %s, want A's delivery trace %s span %s", s.Name(),
				s.SpanContext().TraceID(), s.Parent().SpanID(), intake.SpanContext().TraceID(), intake.SpanContext().SpanID())
		}
	}
	if len(spA.Named(tracing.SpanJob)) != 1 {
		t.Errorf("replica A ran %d jobs, want 1 (h-1)", len(spA.Named(tracing.SpanJob)))
	}
	if got := jc.of("h-2"); got.TraceID() != intake.SpanContext().TraceID() {
		t.Errorf("h-2's processor ran in trace %s, want %s", got.TraceID(), intake.SpanContext().TraceID())
	}
}

// TestASweepIsATraceOfItsOwn: a timer sweep of an installation is a trace
// of its own, rooted at a sweep span naming the installation, and the
// sweeper runs under it (its calls are the sweep's spans).
func TestASweepIsATraceOfItsOwn(t *testing.T) {
	sp := newSpans(t)
	var mu sync.Mutex
	var ran trace.SpanContext
	sw := sweeperFunc(func(ctx context.Context, id int64) error {
		mu.Lock()
		defer mu.Unlock()
		ran = trace.SpanContextFromContext(ctx)
		return nil
	})
	s, _ := start(t, testConfig(), Deps{Processor: newRecorder(), Sweeper: sw, Tracer: sp.tracer,
		Installations: listerFunc(func(context.Context) ([]int64, error) { return []int64{7}, nil })})
	s.sweepAll(context.Background())
	sweep := sp.one(t, tracing.SpanSweep)
	if sweep.Parent().IsValid() || tracingtest.Attrs(sweep)["github.installation_id"] != "7" || tracingtest.Attrs(sweep)["autopilot.outcome"] != "ok" {
		t.Errorf("sweep span: parent %v attrs %v, want a root naming installation 7, outcome ok", sweep.Parent(), tracingtest.Attrs(sweep))
	}
	mu.Lock()
	defer mu.Unlock()
	if ran.SpanID() != sweep.SpanContext().SpanID() {
		t.Errorf("the sweeper ran under span %s, want the sweep's %s", ran.SpanID(), sweep.SpanContext().SpanID())
	}
}
