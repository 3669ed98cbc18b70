// Package loadtest measures the webhook server under load: a real listener
// on 127.0.0.1, keep-alive clients sending signed real payloads (the
// vendored @octokit/webhooks-examples in testdata/webhooks/) with unique
// delivery ids, and a processor that records every job. It reports
// deliveries per second, acknowledgement latency, how many were refused
// (503) and how many were acknowledged (202) but never processed, which must
// be none. The server queues in process, or in a Redis stream
// (Options.RedisURL); a bare handler that only checks the signature
// (Options.Bare) gives the baseline the server is compared with.
//
// It only ever talks to the loopback listener it starts, sends a bounded
// number of requests, and stops by itself.
package loadtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/redisq"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
)

// Options shape one run. Zero values take the defaults noted.
type Options struct {
	// Deliveries is how many requests are sent (default 10,000).
	Deliveries int
	// Concurrency is the number of client goroutines, each reusing its
	// keep-alive connection (default 32).
	Concurrency int
	// Workers and QueueSize configure the server (defaults 8 and 1,000).
	Workers   int
	QueueSize int
	// Delay is the processor's time per job: 0 is a no-op processor, a few
	// milliseconds saturates the queue.
	Delay time.Duration
	// Issues is how many distinct issues the deliveries spread over
	// (default 64).
	Issues int
	// Payloads are the examples sent round-robin (default: all of
	// testdata/webhooks/).
	Payloads []servertest.Payload
	// Logger receives the server's logs (default: discarded).
	Logger *slog.Logger
	// RedisURL, when set, makes Redis the server's work queue, dedupe and
	// lock store, under a key prefix of the run's own.
	RedisURL string
	// QueueMax bounds the Redis work queue (default 1,000, like QueueSize).
	QueueMax int
	// Bare replaces the server with a handler that reads the body, checks
	// its HMAC and answers 202: the cost of the network, HTTP and the
	// signature alone. Nothing is processed.
	Bare bool
}

// Result is what one run measured.
type Result struct {
	Sent      int // requests sent
	Accepted  int // 202
	Ignored   int // 200: ping, unhandled event, own bot
	Refused   int // 503 (queue full)
	Other     int // any other status or a transport error
	Processed int // jobs the processor ran
	// Lost counts deliveries answered 202 that were never processed.
	Lost int
	// Duplicated counts deliveries processed more than once.
	Duplicated int
	Elapsed    time.Duration
	// CPUPerDelivery is the process's CPU time (client and server together)
	// per delivery: unlike PerSecond, it does not depend on what else the
	// machine is running. Zero where it is not measured.
	CPUPerDelivery time.Duration
	// PerSecond is verified deliveries answered (202, 200 or 503) per second.
	PerSecond float64
	// ProcessedPerSecond is jobs run per second, from the first request to
	// the last job (0 for the bare handler, which runs none).
	ProcessedPerSecond     float64
	AckP50, AckP99, AckMax time.Duration
	// Appends is what the Redis queue's append batches came to during the
	// send (zero without Redis).
	Appends redisq.AppendStats
}

// String is a one-line summary.
func (r Result) String() string {
	return fmt.Sprintf("%d sent in %s: %.0f/s (%s CPU each), ack p50 %s p99 %s max %s, accepted %d ignored %d refused %d other %d, processed %d (%.0f/s), lost %d, duplicated %d",
		r.Sent, r.Elapsed.Round(time.Millisecond), r.PerSecond, r.CPUPerDelivery, r.AckP50, r.AckP99, r.AckMax,
		r.Accepted, r.Ignored, r.Refused, r.Other, r.Processed, r.ProcessedPerSecond, r.Lost, r.Duplicated)
}

const secret = "loadtest secret"

// request is one prepared delivery body with its signature.
type request struct {
	event, sig string
	body       []byte
}

// Busy is the share of the process's CPUs (GOMAXPROCS) the send kept
// busy: near 1, the run was bound by CPU; well below, by waiting (for
// Redis, in a durable run).
func (r Result) Busy() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.CPUPerDelivery) * float64(r.Sent) / float64(r.Elapsed) / float64(runtime.GOMAXPROCS(0))
}

// Run starts a server, sends the deliveries, drains the server and returns
// the measurements.
func Run(ctx context.Context, o Options) (Result, error) {
	o = withDefaults(o)
	reqs, err := requests(o)
	if err != nil {
		return Result{}, err
	}
	if o.Bare {
		return runBare(ctx, o, reqs)
	}
	proc := &countingProcessor{delay: o.Delay, runs: make([]atomic.Int32, o.Deliveries)}
	var store *redisq.Store
	srv, closeStore, err := newServerOn(o, proc, fmt.Sprintf("autopilot-loadtest:%d:", time.Now().UnixNano()),
		func(_ *settings.Config, d *server.Deps) { store = d.Queue })
	if err != nil {
		return Result{}, err
	}
	defer closeStore()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Result{}, fmt.Errorf("loadtest listen: %w", err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(serveCtx, ln) }()

	var before redisq.AppendStats
	if store != nil {
		before = store.Appends()
	}
	m := sendAll(ctx, o, ln, reqs)
	if store != nil {
		after := store.Appends()
		m.appends = redisq.AppendStats{Batches: after.Batches - before.Batches,
			Deliveries: after.Deliveries - before.Deliveries, RoundTrips: after.RoundTrips - before.RoundTrips}
	}
	waitProcessed(proc, m.codes)
	drained := time.Since(m.start)
	stop()
	if err := <-served; err != nil {
		return Result{}, err
	}
	res := m.result(proc)
	res.ProcessedPerSecond = float64(res.Processed) / drained.Seconds()
	return res, nil
}

// requests signs the run's payloads (by default every example in
// testdata/webhooks/).
func requests(o Options) ([]request, error) {
	if o.Payloads == nil {
		dir, err := servertest.Dir()
		if err != nil {
			return nil, err
		}
		if o.Payloads, err = servertest.Load(dir); err != nil {
			return nil, err
		}
	}
	return prepare(o.Payloads, o.Issues)
}

// newServer builds the webhook server around proc, on Redis when the run
// names one; the returned func closes what it opened.
func newServer(o Options, proc server.Processor) (*server.Server, func(), error) {
	return newServerOn(o, proc, fmt.Sprintf("autopilot-loadtest:%d:", time.Now().UnixNano()), nil)
}

// newServerOn is newServer on the Redis key prefix given (replicas share
// one), with edit (when set) changing the configuration and dependencies.
func newServerOn(o Options, proc server.Processor, prefix string, edit func(*settings.Config, *server.Deps)) (*server.Server, func(), error) {
	cfg := settings.Config{
		WebhookSecret:   secret,
		AppID:           1,
		WebhookPath:     settings.DefaultWebhookPath,
		QueueSize:       o.QueueSize,
		QueueMax:        o.QueueMax,
		Workers:         o.Workers,
		ShutdownTimeout: 5 * time.Minute, // drain everything: lost must mean lost
		LockTTL:         settings.DefaultLockTTL,
		DedupeTTL:       settings.MinDedupeTTL,
	}
	deps := server.Deps{Processor: proc, Logger: o.Logger, BotLogin: "octocoders-linter[bot]"}
	closeStore := func() {}
	if o.RedisURL != "" {
		store, err := redisq.New(o.RedisURL, redisq.Options{
			Prefix: prefix, LockTTL: cfg.LockTTL})
		if err != nil {
			return nil, nil, err
		}
		closeStore = func() { store.Close() }
		deps.Queue, deps.Deduper, deps.Locker = store, store, store
	}
	if edit != nil {
		edit(&cfg, &deps)
	}
	srv, err := server.New(cfg, deps)
	if err != nil {
		closeStore()
		return nil, nil, err
	}
	return srv, closeStore, nil
}

// waitProcessed lets the workers finish what was acknowledged before the
// server stops: a replica stopping hands queued Redis entries to the others
// (there are none here), which would read as lost. It waits for each
// acknowledged delivery by name: a delivery answered 503 because Redis
// answered late may still have been queued and run, so a count of jobs
// could reach the count of 202s with one acknowledged delivery not yet run.
func waitProcessed(proc *countingProcessor, codes []int) {
	wait := time.Now().Add(2 * time.Minute)
	for i, c := range codes {
		for c == http.StatusAccepted && proc.runs[i].Load() == 0 && time.Now().Before(wait) {
			time.Sleep(time.Millisecond)
		}
	}
}

// sending is what the clients measured: each delivery's status code and
// acknowledgement time, and the wall and CPU time of the whole send.
type sending struct {
	codes        []int
	acks         []time.Duration
	start        time.Time
	elapsed, cpu time.Duration
	appends      redisq.AppendStats
}

// sendAll sends every delivery to the webhook path on ln.
func sendAll(ctx context.Context, o Options, ln net.Listener, reqs []request) sending {
	url := "http://" + ln.Addr().String() + settings.DefaultWebhookPath
	m := sending{codes: make([]int, o.Deliveries), acks: make([]time.Duration, o.Deliveries)}
	var cpu0 time.Duration
	m.start, cpu0 = time.Now(), processCPU()
	send(ctx, o, url, reqs, m.codes, m.acks)
	m.elapsed, m.cpu = time.Since(m.start), processCPU()-cpu0
	return m
}

// result sums up the send against what the processor ran.
func (m sending) result(p *countingProcessor) Result {
	res := summarise(m.codes, m.acks, p, m.elapsed)
	res.CPUPerDelivery = m.cpu / time.Duration(res.Sent)
	res.Appends = m.appends
	return res
}

// runBare measures the bare handler: read the body, check the HMAC, 202.
func runBare(ctx context.Context, o Options, reqs []request) (Result, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Result{}, fmt.Errorf("loadtest listen: %w", err)
	}
	hs := &http.Server{Handler: bareHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	m := sendAll(ctx, o, ln, reqs)
	// Every delivery counts as processed: nothing is queued.
	proc := &countingProcessor{runs: make([]atomic.Int32, o.Deliveries)}
	for i, c := range m.codes {
		if c == http.StatusAccepted {
			proc.runs[i].Store(1)
		}
	}
	return m.result(proc), nil
}

// bareHandler answers 202 to every delivery with a good signature and does
// nothing else.
func bareHandler() http.Handler {
	key := []byte(secret)
	h := http.NewServeMux()
	h.HandleFunc("POST "+settings.DefaultWebhookPath, func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, server.MaxBody))
		if err != nil {
			http.Error(w, "could not read body", http.StatusBadRequest)
			return
		}
		if !server.VerifySignature(key, body, r.Header.Get("X-Hub-Signature-256")) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	return h
}

func withDefaults(o Options) Options {
	if o.Deliveries <= 0 {
		o.Deliveries = 10000
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 32
	}
	if o.Workers <= 0 {
		o.Workers = 8
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 1000
	}
	if o.QueueMax <= 0 {
		o.QueueMax = o.QueueSize
	}
	if o.Issues <= 0 {
		o.Issues = 64
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// prepare signs every example once per issue number (examples about no
// issue once), so requests vary like real traffic at no per-request cost,
// and interleaves them so consecutive requests are different examples.
func prepare(ps []servertest.Payload, issues int) ([]request, error) {
	var perExample [][]request
	total := 0
	for _, p := range ps {
		bodies := [][]byte{p.Body}
		if p.Event == "issues" || p.Event == "issue_comment" || p.Event == "pull_request" || p.Event == "pull_request_review" {
			bodies = bodies[:0]
			for n := 1; n <= issues; n++ {
				b, err := servertest.WithIssue(p.Body, n)
				if err != nil {
					return nil, err
				}
				bodies = append(bodies, b)
			}
		}
		var rs []request
		for _, b := range bodies {
			rs = append(rs, request{event: p.Event, body: b, sig: server.Sign([]byte(secret), b)})
		}
		perExample = append(perExample, rs)
		total += len(rs)
	}
	if total == 0 {
		return nil, fmt.Errorf("loadtest: no payloads")
	}
	out := make([]request, 0, total)
	for i := 0; len(out) < total; i++ {
		for _, rs := range perExample {
			if i < len(rs) {
				out = append(out, rs[i])
			}
		}
	}
	return out, nil
}

// send runs the client goroutines until every delivery got an answer.
func send(ctx context.Context, o Options, url string, reqs []request, codes []int, acks []time.Duration) {
	tr := &http.Transport{
		MaxIdleConns:        o.Concurrency,
		MaxIdleConnsPerHost: o.Concurrency,
		MaxConnsPerHost:     o.Concurrency,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range o.Concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(codes) || ctx.Err() != nil {
					return
				}
				r := reqs[i%len(reqs)]
				t0 := time.Now()
				codes[i] = post(ctx, client, url, r, "lt-"+strconv.Itoa(i))
				acks[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
}

func post(ctx context.Context, c *http.Client, url string, r request, id string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(r.body))
	if err != nil {
		return -1
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", r.event)
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-Hub-Signature-256", r.sig)
	resp, err := c.Do(req)
	if err != nil {
		return -1
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func summarise(codes []int, acks []time.Duration, p *countingProcessor, elapsed time.Duration) Result {
	res := Result{Sent: len(codes), Elapsed: elapsed}
	for i, c := range codes {
		switch c {
		case http.StatusAccepted:
			res.Accepted++
			if p.runs[i].Load() == 0 {
				res.Lost++
			}
		case http.StatusOK:
			res.Ignored++
		case http.StatusServiceUnavailable:
			res.Refused++
		default:
			res.Other++
		}
	}
	for i := range p.runs {
		n := int(p.runs[i].Load())
		res.Processed += n
		if n > 1 {
			res.Duplicated++
		}
	}
	res.PerSecond = float64(res.Accepted+res.Ignored+res.Refused) / elapsed.Seconds()
	sorted := slices.Clone(acks)
	slices.Sort(sorted)
	if len(sorted) > 0 {
		res.AckP50 = sorted[len(sorted)*50/100]
		res.AckP99 = sorted[min(len(sorted)-1, len(sorted)*99/100)]
		res.AckMax = sorted[len(sorted)-1]
	}
	return res
}

// countingProcessor records how often each delivery ("lt-<i>") ran.
type countingProcessor struct {
	delay time.Duration
	runs  []atomic.Int32
}

func (p *countingProcessor) Process(ctx context.Context, job job.Job) error {
	if p.delay > 0 {
		t := time.NewTimer(p.delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	i, err := strconv.Atoi(job.Delivery[len("lt-"):])
	if err != nil || i < 0 || i >= len(p.runs) {
		return fmt.Errorf("unknown delivery %q", job.Delivery)
	}
	p.runs[i].Add(1)
	return nil
}
