package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/memstore"
	"github.com/autopilot-dev/autopilot/internal/server/metrics"
)

func TestNewRequiresProcessorAndSecret(t *testing.T) {
	if _, err := New(testConfig(), Deps{}); err == nil || !strings.Contains(err.Error(), "Processor") {
		t.Fatalf("New without processor: err = %v", err)
	}
	cfg := testConfig()
	cfg.WebhookSecret = ""
	if _, err := New(cfg, Deps{Processor: newRecorder()}); err == nil || !strings.Contains(err.Error(), "WEBHOOK_SECRET") {
		t.Fatalf("New without secret: err = %v", err)
	}
}

func TestNewRefusesBadRedisURL(t *testing.T) {
	cfg := testConfig()
	cfg.RedisURL = "http://not-redis:6379"
	if _, err := New(cfg, Deps{Processor: newRecorder()}); err == nil || !strings.Contains(err.Error(), "REDIS_URL") {
		t.Fatalf("err = %v, want it to name REDIS_URL", err)
	}
}

func TestShutdownDrainsQueuedJobsAndRefusesNewOnes(t *testing.T) {
	cfg := testConfig()
	cfg.Workers = 1
	rec := newRecorder()
	rec.gate = make(chan struct{})
	s, srv := start(t, cfg, Deps{Processor: rec})
	for i, id := range []string{"dr-1", "dr-2", "dr-3"} {
		if code, _ := issueDelivery(t, id, 30+i).send(t, srv.url); code != http.StatusAccepted {
			t.Fatalf("%s = %d", id, code)
		}
	}
	stopped := make(chan error, 1)
	go func() { stopped <- srv.stop() }()
	eventually(t, "draining", s.draining.Load)

	// While draining: intake 503 and readyz fails, but healthz is alive.
	h := s.Handler()
	if code := serveLocal(h, issueDelivery(t, "dr-late", 40).request(t, "")); code != http.StatusServiceUnavailable {
		t.Fatalf("delivery while draining = %d, want 503", code)
	}
	if code := serveLocal(h, mustGet(t, "/readyz")); code != http.StatusServiceUnavailable {
		t.Fatalf("readyz while draining = %d, want 503", code)
	}
	if code := serveLocal(h, mustGet(t, "/healthz")); code != http.StatusOK {
		t.Fatalf("healthz while draining = %d, want 200", code)
	}
	close(rec.gate)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"dr-1", "dr-2", "dr-3"} {
		if n := rec.count(id); n != 1 {
			t.Errorf("%s processed %d times during drain, want 1", id, n)
		}
	}
	if rec.count("dr-late") != 0 {
		t.Error("a delivery refused while draining was processed")
	}
}

func TestShutdownDeadlineCancelsStuckJobs(t *testing.T) {
	cfg := testConfig()
	cfg.Workers, cfg.ShutdownTimeout = 1, 200*time.Millisecond
	rec := newRecorder()
	rec.gate = make(chan struct{}) // never opened: the job waits for ctx
	s, srv := start(t, cfg, Deps{Processor: rec})
	for _, id := range []string{"stuck-1", "stuck-2"} {
		if code, _ := issueDelivery(t, id, 50).send(t, srv.url); code != http.StatusAccepted {
			t.Fatalf("%s = %d", id, code)
		}
	}
	eventually(t, "first job running", func() bool { return s.queue.Len() == 1 })
	start := time.Now()
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Serve returned after %s, want about the %s deadline", took, cfg.ShutdownTimeout)
	}
	if rec.count("stuck-1") != 1 {
		t.Fatal("the running job was not cancelled and returned")
	}
	if rec.count("stuck-2") != 0 {
		t.Fatal("a job still queued at the deadline was started")
	}
}

func TestProcessorPanicIsRecoveredAndCounted(t *testing.T) {
	rec := newRecorder()
	rec.hook = func(_ context.Context, job job.Job) error {
		if job.Delivery == "boom" {
			panic("processor bug")
		}
		return nil
	}
	_, srv := start(t, testConfig(), Deps{Processor: rec})
	issueDelivery(t, "boom", 1).send(t, srv.url)
	issueDelivery(t, "after", 1).send(t, srv.url)
	eventually(t, "job after the panic", func() bool { return rec.count("after") == 1 })
	_, body := get(t, srv.url, "/metrics")
	if !strings.Contains(body, `autopilot_jobs_total{event="issues",outcome="panic"} 1`) {
		t.Fatalf("panic not counted in metrics:\n%s", grepLines(body, "autopilot_jobs_total"))
	}
}

func TestReadyzAndIntakeFollowTheStore(t *testing.T) {
	store := &flakyStore{Deduper: memstore.NewDeduper(time.Hour, nil)}
	rec := newRecorder()
	_, srv := start(t, testConfig(), Deps{Processor: rec, Deduper: store})
	if code, _ := get(t, srv.url, "/readyz"); code != http.StatusOK {
		t.Fatalf("readyz = %d with the store up", code)
	}
	store.down.Store(true)
	if code, body := get(t, srv.url, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "store") {
		t.Fatalf("readyz = %d %q with the store down, want 503 naming the store", code, body)
	}
	code, retry := issueDelivery(t, "st-1", 1).send(t, srv.url)
	if code != http.StatusServiceUnavailable || retry == "" {
		t.Fatalf("delivery with the store down = %d Retry-After %q, want 503 with Retry-After", code, retry)
	}
	store.down.Store(false)
	eventually(t, "readyz recovering", func() bool { c, _ := get(t, srv.url, "/readyz"); return c == http.StatusOK })
	if code, _ := issueDelivery(t, "st-1", 1).send(t, srv.url); code != http.StatusAccepted {
		t.Fatalf("redelivery after recovery = %d, want 202", code)
	}
	rec.waitDone(t, 1)
}

func TestDedupeFailureRefusesWithoutRecording(t *testing.T) {
	store := &flakyStore{Deduper: memstore.NewDeduper(time.Hour, nil)}
	store.failSeen.Store(true)
	rec := newRecorder()
	s, err := New(testConfig(), Deps{Processor: rec, Deduper: store, Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler() // no Serve: no probe flips the store back
	if code := serveLocal(h, issueDelivery(t, "df-1", 1).request(t, "")); code != http.StatusServiceUnavailable {
		t.Fatalf("delivery when dedupe fails = %d, want 503", code)
	}
	if s.queue.Len() != 0 {
		t.Fatalf("queue holds %d jobs after a refused delivery", s.queue.Len())
	}
	if store.Len() != 0 {
		t.Fatal("a refused delivery was recorded as seen")
	}
}

func TestMetricsCountDeliveriesAndSetters(t *testing.T) {
	m := metrics.New()
	_, srv := start(t, testConfig(), Deps{Processor: newRecorder(), Metrics: m})
	issueDelivery(t, "m-1", 1).send(t, srv.url)
	issueDelivery(t, "m-1", 1).send(t, srv.url)
	bad := issueDelivery(t, "m-2", 1)
	bad.header = http.Header{"X-Hub-Signature-256": {""}}
	bad.send(t, srv.url)
	m.SetJiraOutbox(3)
	m.ObserveResponse(42, &http.Response{Header: http.Header{"X-Ratelimit-Remaining": {"4990"}}})
	m.ObserveAPICall(42)

	_, body := get(t, srv.url, "/metrics")
	for _, want := range []string{
		`autopilot_webhook_deliveries_total{event="issues",outcome="accepted"} 1`,
		`autopilot_webhook_deliveries_total{event="issues",outcome="duplicate"} 1`,
		`autopilot_webhook_deliveries_total{event="unverified",outcome="unauthorized"} 1`,
		`autopilot_jira_outbox_size 3`,
		`autopilot_github_api_calls_total{installation="42"} 2`,
		`autopilot_github_rate_limit_remaining{installation="42",resource="core"} 4990`,
		`autopilot_queue_depth`,
		`autopilot_job_duration_seconds_bucket`,
		`autopilot_webhook_ack_seconds_count 3`,
		`autopilot_queue_wait_seconds_count`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestSweepIsQueuedOncePerIntervalAcrossReplicas(t *testing.T) {
	shared := memstore.NewDeduper(time.Hour, nil)
	sw := &sweepRecorder{}
	fixed := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var servers []*Server
	for range 2 {
		cfg := testConfig()
		cfg.SweepInterval = time.Minute
		s, err := New(cfg, Deps{
			Processor: newRecorder(), Sweeper: sw, Deduper: shared, Logger: quietLogger(t),
			Installations: listerFunc(func(context.Context) ([]int64, error) { return []int64{7, 8}, nil }),
			Clock:         func() time.Time { return fixed },
		})
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, s)
	}
	for _, s := range servers {
		serve(t, s) // each sweeps at start
	}
	eventually(t, "sweeps", func() bool { return sw.count() >= 2 })
	time.Sleep(50 * time.Millisecond)
	if got := sw.sorted(); got != "7,8" {
		t.Fatalf("sweeps = %s, want each installation once in the interval", got)
	}
}

func TestSweepFallsBackToInstallationsSeenInDeliveries(t *testing.T) {
	sw := &sweepRecorder{}
	cfg := testConfig()
	s, srv := start(t, cfg, Deps{Processor: newRecorder(), Sweeper: sw,
		Installations: listerFunc(func(context.Context) ([]int64, error) { return nil, errors.New("no JWT") })})
	// issue_comment.created carries installation 1.
	d := delivery{event: "issue_comment", id: "inst-1", body: payload(t, "issue_comment.created").Body}
	if code, _ := d.send(t, srv.url); code != http.StatusAccepted {
		t.Fatalf("delivery = %d", code)
	}
	s.sweepAll(context.Background())
	eventually(t, "sweep of installation 1", func() bool { return sw.sorted() == "1" })
}

func TestLockIssueSerialisesSweepWithJobsAndIsReentrant(t *testing.T) {
	locker := memstore.NewLocker()
	entered := make(chan struct{})
	release := make(chan struct{})
	var sweepHeld atomic.Bool
	rec := newRecorder()
	rec.hook = func(ctx context.Context, job job.Job) error {
		if sweepHeld.Load() {
			return errors.New("job ran while the sweep held the issue")
		}
		l, err := LockIssue(ctx, job.Event.Repo, job.Event.Issue)
		if err != nil {
			return err
		}
		if held, ok := LeaseFor(ctx, job.Event.Repo, job.Event.Issue); !ok || held.Token != l.Token {
			return errors.New("LockIssue inside a job did not return the job's own lease")
		}
		return l.Release(ctx)
	}
	sw := sweeperFunc(func(ctx context.Context, _ int64) error {
		l, err := LockIssue(ctx, "Codertocat/Hello-World", 5)
		if err != nil {
			return err
		}
		sweepHeld.Store(true)
		close(entered)
		<-release
		sweepHeld.Store(false)
		return l.Release(ctx)
	})
	srv := deliverDuringSweep(t, Deps{Processor: rec, Sweeper: sw, Locker: locker}, rec, entered, release)
	_, body := get(t, srv.url, "/metrics")
	if !strings.Contains(body, `autopilot_jobs_total{event="issues",outcome="ok"} 1`) {
		t.Fatalf("job did not succeed:\n%s", grepLines(body, "autopilot_jobs_total"))
	}
}

func TestLeaseRenewalFailuresCancelTheJobOnlyWhenTheLeaseIsGone(t *testing.T) {
	var calls atomic.Int32
	tests := []struct {
		name       string
		renew      func() error
		wantCancel bool
	}{
		{"taken over", func() error { return job.ErrLeaseLost }, true},
		{"store away for longer than the TTL", func() error { return errors.New("i/o timeout") }, true},
		{"store blip shorter than the TTL", func() error {
			if calls.Add(1) <= 1 {
				return errors.New("i/o timeout")
			}
			return nil
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls.Store(0)
			cfg := testConfig()
			cfg.LockTTL = 300 * time.Millisecond // renewed every 100ms
			rec := newRecorder()
			rec.delay = 700 * time.Millisecond
			_, srv := start(t, cfg, Deps{Processor: rec, Locker: &scriptedLocker{Locker: memstore.NewLocker(), renew: tt.renew}})
			issueDelivery(t, "renew", 3).send(t, srv.url)
			rec.waitDone(t, 1)
			// The job's outcome is counted just after Process returns.
			var body string
			eventually(t, "the job's outcome in /metrics", func() bool {
				_, body = get(t, srv.url, "/metrics")
				return strings.Contains(body, `autopilot_jobs_total{event="issues",outcome=`)
			})
			cancelled := strings.Contains(body, `autopilot_jobs_total{event="issues",outcome="error"} 1`)
			if cancelled != tt.wantCancel {
				t.Fatalf("job cancelled = %v, want %v:\n%s", cancelled, tt.wantCancel, grepLines(body, "autopilot_jobs_total"))
			}
		})
	}
}

// flakyStore is a Deduper and Pinger that can be switched off.
type flakyStore struct {
	*memstore.Deduper
	down     atomic.Bool
	failSeen atomic.Bool
}

func (f *flakyStore) Ping(context.Context) error {
	if f.down.Load() {
		return errors.New("connection refused")
	}
	return nil
}

func (f *flakyStore) Seen(ctx context.Context, id string) (bool, error) {
	if f.down.Load() || f.failSeen.Load() {
		return false, errors.New("connection refused")
	}
	return f.Deduper.Seen(ctx, id)
}

// scriptedLocker grants in-memory leases whose Renew answers renew().
type scriptedLocker struct {
	*memstore.Locker
	renew func() error
}

func (l *scriptedLocker) Lock(ctx context.Context, key string) (job.Lease, error) {
	lease, err := l.Locker.Lock(ctx, key)
	return job.NewLease(lease.Key, lease.Token, lease.Owner, scriptedHandle{l}), err
}

type scriptedHandle struct{ l *scriptedLocker }

func (h scriptedHandle) RenewLease(context.Context, job.Lease) error { return h.l.renew() }
func (h scriptedHandle) ReleaseLease(ctx context.Context, l job.Lease) error {
	return h.l.Locker.ReleaseLease(ctx, l)
}

type sweepRecorder struct {
	mu  sync.Mutex
	ids []int64
}

func (s *sweepRecorder) Sweep(_ context.Context, id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids = append(s.ids, id)
	return nil
}

func (s *sweepRecorder) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ids)
}

func (s *sweepRecorder) sorted() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := slices.Clone(s.ids)
	slices.Sort(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ",")
}

type listerFunc func(context.Context) ([]int64, error)

func (f listerFunc) Installations(ctx context.Context) ([]int64, error) { return f(ctx) }

type sweeperFunc func(context.Context, int64) error

func (f sweeperFunc) Sweep(ctx context.Context, id int64) error { return f(ctx, id) }

// serveLocal runs one request through h in process and returns the status.
func serveLocal(h http.Handler, req *http.Request) int {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Code
}

func mustGet(t testing.TB, path string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
