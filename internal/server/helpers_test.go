package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
)

const testSecret = "test webhook secret"

// testConfig is a valid Config for tests, small queue, fast timers.
func testConfig() settings.Config {
	return settings.Config{
		WebhookSecret:   testSecret,
		AppID:           1,
		WebhookPath:     settings.DefaultWebhookPath,
		QueueSize:       64,
		Workers:         4,
		ShutdownTimeout: 5 * time.Second,
		LockTTL:         time.Second,
		DedupeTTL:       settings.MinDedupeTTL,
	}
}

// quietLogger drops everything below Error unless -v shows it is wanted.
func quietLogger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// recorder is a Processor that records what ran: how often each delivery
// ran, and any overlap of two jobs on the same issue.
type recorder struct {
	delay time.Duration
	gate  chan struct{}                                // when set, each job waits for a token
	hook  func(ctx context.Context, job job.Job) error // optional extra behaviour
	notes func(delivery string, start, end time.Time)  // optional timeline

	mu        sync.Mutex
	runs      map[string]int // delivery -> times processed
	active    map[string]int // issue key -> jobs running now
	overlaps  int            // times a job started while another ran on its issue
	maxActive int            // most jobs running at once overall
	running   int
	done      chan string
}

func newRecorder() *recorder {
	return &recorder{runs: map[string]int{}, active: map[string]int{}, done: make(chan string, 10000)}
}

func (r *recorder) Process(ctx context.Context, job job.Job) error {
	key := fmt.Sprintf("%s#%d", job.Event.Repo, job.Event.Issue)
	start := time.Now()
	r.mu.Lock()
	if r.active[key] > 0 {
		r.overlaps++
	}
	r.active[key]++
	r.running++
	r.maxActive = max(r.maxActive, r.running)
	r.mu.Unlock()

	var err error
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if r.delay > 0 && err == nil {
		select {
		case <-time.After(r.delay):
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if r.hook != nil && err == nil {
		err = r.hook(ctx, job)
	}

	r.mu.Lock()
	r.active[key]--
	r.running--
	r.runs[job.Delivery]++
	r.mu.Unlock()
	if r.notes != nil {
		r.notes(job.Delivery, start, time.Now())
	}
	r.done <- job.Delivery
	return err
}

func (r *recorder) count(delivery string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[delivery]
}

func (r *recorder) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.runs {
		n += c
	}
	return n
}

// waitDone waits until n jobs finished.
func (r *recorder) waitDone(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for i := 0; i < n; i++ {
		select {
		case <-r.done:
		case <-deadline:
			t.Fatalf("only %d of %d jobs finished", i, n)
		}
	}
}

// running is a server being served on a loopback listener.
type running struct {
	url  string
	stop func() error
}

// serve runs s on 127.0.0.1 until the test ends or stop is called.
func serve(t *testing.T, s *Server) running {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx, ln) }()
	var once sync.Once
	var serr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case serr = <-errc:
			case <-time.After(30 * time.Second):
				serr = fmt.Errorf("Serve did not return")
			}
		})
		return serr
	}
	t.Cleanup(func() { _ = stop() })
	return running{url: "http://" + ln.Addr().String(), stop: stop}
}

// delivery is a webhook request to send.
type delivery struct {
	event, id string
	body      []byte
	header    http.Header // overrides; a key with empty value removes it
}

// request builds a signed POST of d to base+path.
func (d delivery) request(t testing.TB, base string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+settings.DefaultWebhookPath, bytes.NewReader(d.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", d.event)
	req.Header.Set("X-GitHub-Delivery", d.id)
	req.Header.Set("X-Hub-Signature-256", Sign([]byte(testSecret), d.body))
	req.Header.Set("User-Agent", "GitHub-Hookshot/test")
	for k, vs := range d.header {
		if len(vs) == 0 || vs[0] == "" {
			req.Header.Del(k)
			continue
		}
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	return req
}

// send posts d and returns the status and Retry-After.
func (d delivery) send(t testing.TB, base string) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(d.request(t, base))
	if err != nil {
		t.Fatalf("post %s: %v", d.id, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

var (
	payloadsOnce sync.Once
	payloadsAll  []servertest.Payload
	payloadsErr  error
)

// payload returns the vendored example called name.
func payload(t testing.TB, name string) servertest.Payload {
	t.Helper()
	payloadsOnce.Do(func() {
		dir, err := servertest.Dir()
		if err != nil {
			payloadsErr = err
			return
		}
		payloadsAll, payloadsErr = servertest.Load(dir)
	})
	if payloadsErr != nil {
		t.Fatal(payloadsErr)
	}
	p, err := servertest.Find(payloadsAll, name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// issueDelivery is a labeled-issue delivery for issue n.
func issueDelivery(t testing.TB, id string, n int) delivery {
	t.Helper()
	p := payload(t, "issues.labeled")
	body, err := servertest.WithIssue(p.Body, n)
	if err != nil {
		t.Fatal(err)
	}
	return delivery{event: p.Event, id: id, body: body}
}

// get fetches base+path and returns status and body.
func get(t testing.TB, base, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// eventually polls cond every 10ms for up to 10s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// mustDecode decodes a payload as the intake does.
func mustDecode(t testing.TB, event string, body []byte) *ghevent.Event {
	t.Helper()
	ev, err := ghevent.Decode(event, body)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// payloadWithBody returns the example with its pull_request.body set.
func payloadWithBody(t testing.TB, name, prBody string) []byte {
	t.Helper()
	b, err := servertest.Edit(payload(t, name).Body, func(m map[string]any) {
		m["pull_request"].(map[string]any)["body"] = prBody
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// start builds a server (quiet logger unless one is given) and serves it.
func start(t *testing.T, cfg settings.Config, deps Deps) (*Server, running) {
	t.Helper()
	if deps.Logger == nil {
		deps.Logger = quietLogger(t)
	}
	s, err := New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	return s, serve(t, s)
}

// deliverDuringSweep starts a server whose sweep holds issue 5's lease
// until release is closed (the sweeper closes entered once it holds it),
// sends a delivery on issue 5 meanwhile, checks that the job waits for the
// lease, releases it and waits for the job. It returns the running server.
func deliverDuringSweep(t *testing.T, deps Deps, rec *recorder, entered, release chan struct{}) running {
	t.Helper()
	s, srv := start(t, testConfig(), deps)
	s.noteInstallation(1)
	s.sweepAll(context.Background())
	<-entered
	issueDelivery(t, "during-sweep", 5).send(t, srv.url)
	time.Sleep(50 * time.Millisecond)
	if rec.count("during-sweep") != 0 {
		t.Fatal("job on the issue ran while the sweep held its lease")
	}
	close(release)
	eventually(t, "job after the sweep", func() bool { return rec.count("during-sweep") == 1 })
	return srv
}
