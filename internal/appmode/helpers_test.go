package appmode

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server"
	"github.com/autopilot-dev/autopilot/internal/server/appauth"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/memstore"
	"github.com/autopilot-dev/autopilot/internal/server/metrics"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
	"github.com/autopilot-dev/autopilot/internal/wiring"
)

// rig is an App wired as `bot serve` wires it, against a fake GitHub.
type rig struct {
	t       *testing.T
	gh      *apptest.GitHub
	auth    *appauth.Auth
	metrics *metrics.Metrics
	app     *App
	bot     string
}

// quietLogger discards logs unless APPMODE_LOG is set.
func quietLogger() *slog.Logger {
	if os.Getenv("APPMODE_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// newRig builds the App on a fresh fake; edit adjusts the options.
func newRig(t *testing.T, edit func(*Options), repos ...string) *rig {
	t.Helper()
	g := apptest.New(t, repos...)
	return newRigOn(t, g, edit)
}

// newRigOn builds another App (another replica, or the same App after a
// configuration change) on an existing fake.
func newRigOn(t *testing.T, g *apptest.GitHub, edit func(*Options)) *rig {
	t.Helper()
	return newRigAt(t, g, g.URL, edit)
}

// newRigAt builds the App with base as GITHUB_API_URL (g.SweepURL for a
// sweep).
func newRigAt(t *testing.T, g *apptest.GitHub, base string, edit func(*Options)) *rig {
	t.Helper()
	m := metrics.New()
	auth, err := appauth.New(appauth.Config{AppID: apptest.AppID, PrivateKey: g.KeyPEM, BaseURL: base, Observe: m.ObserveResponse})
	if err != nil {
		t.Fatal(err)
	}
	bot, err := auth.BotLogin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AUTOPILOT_STATE_KEY": apptest.StateKey}
	in, err := wiring.LoadInputs(func(k string) string { return env[k] }, "AUTOPILOT_")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{
		Clients: auth, BaseURL: base, AppID: apptest.AppID, BotLogin: bot,
		Wiring:  wiring.Wiring{Inputs: in, Knobs: wiring.Knobs{MutationGap: -1}},
		Metrics: m, Logger: quietLogger(),
	}
	if edit != nil {
		edit(&o)
	}
	app, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, gh: g, auth: auth, metrics: m, app: app, bot: bot}
}

// process runs a delivery through the App as a server job would (outside a
// server, so without leases).
func (r *rig) process(d apptest.Delivery) error {
	r.t.Helper()
	ev, err := ghevent.Decode(d.Event, d.Body)
	if err != nil {
		r.t.Fatalf("decode %s: %v", d.Event, err)
	}
	return r.app.Process(context.Background(), job.Job{Delivery: d.ID, Event: ev, Received: time.Now()})
}

// mustProcess fails the test when the delivery's job fails.
func (r *rig) mustProcess(d apptest.Delivery) {
	r.t.Helper()
	if err := r.process(d); err != nil {
		r.t.Fatalf("%s delivery: %v", d.Event, err)
	}
}

// metric returns the /metrics lines containing sub.
func (r *rig) metric(sub string) string {
	r.t.Helper()
	rec := &lineRecorder{header: http.Header{}}
	req, _ := http.NewRequest(http.MethodGet, "/metrics", nil)
	r.metrics.Handler().ServeHTTP(rec, req)
	var out []string
	for _, l := range strings.Split(rec.body.String(), "\n") {
		if strings.Contains(l, sub) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// lineRecorder is a minimal http.ResponseWriter.
type lineRecorder struct {
	header http.Header
	body   strings.Builder
}

func (l *lineRecorder) Header() http.Header         { return l.header }
func (l *lineRecorder) Write(b []byte) (int, error) { return l.body.Write(b) }
func (l *lineRecorder) WriteHeader(int)             {}

// start runs a server with the App as processor and sweeper on loopback.
func (r *rig) start(cfg settings.Config, locker server.Locker) string {
	r.t.Helper()
	cfg.WebhookSecret = apptest.Secret
	cfg.AppID = apptest.AppID
	srv, err := server.New(cfg, server.Deps{
		Processor: r.app, Sweeper: r.app, Installations: r.auth, BotLogin: r.bot,
		Metrics: r.metrics, Logger: quietLogger(), Locker: locker, Tracer: r.app.o.Tracer,
	})
	if err != nil {
		r.t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	r.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			r.t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// recordingLocker is a memstore.Locker that records every key locked and
// whether a lease was requested while another one taken before it was
// still held (the sweep must hold one lease at a time).
type recordingLocker struct {
	*memstore.Locker

	mu      sync.Mutex
	keys    []string
	overlap []string
}

func newRecordingLocker() *recordingLocker {
	return &recordingLocker{Locker: memstore.NewLocker()}
}

func (l *recordingLocker) Lock(ctx context.Context, key string) (job.Lease, error) {
	l.mu.Lock()
	earlier := slices.Clone(l.keys)
	l.mu.Unlock()
	slices.Sort(earlier)
	for _, k := range slices.Compact(earlier) {
		if k == key {
			continue
		}
		probe, cancel := context.WithCancel(ctx)
		cancel() // granted only if free right now
		if lease, err := l.Locker.Lock(probe, k); err == nil {
			_ = lease.Release(ctx)
		} else {
			l.mu.Lock()
			l.overlap = append(l.overlap, k+" held while locking "+key)
			l.mu.Unlock()
		}
	}
	lease, err := l.Locker.Lock(ctx, key)
	if err == nil {
		l.mu.Lock()
		l.keys = append(l.keys, key)
		l.mu.Unlock()
	}
	return lease, err
}

func (l *recordingLocker) locked() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.keys)
}

func (l *recordingLocker) overlaps() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.overlap)
}

// eventually polls cond every 10ms for up to 15s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
