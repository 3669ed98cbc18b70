package reliability

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
)

// WebhookSecret signs App-mode deliveries.
const WebhookSecret = "reliability-webhook-secret"

// Ack is the server's answer to one App-mode delivery.
type Ack struct {
	Delivery string
	Status   int
	// Took is the real time the webhook answer took (I6: under 1 s).
	Took time.Duration
}

// AppOptions tunes the App server of an App-mode world.
type AppOptions struct {
	QueueSize, Workers int
	// Hold, when set, blocks every job until it is closed (to fill the queue).
	Hold chan struct{}
}

// appServer is the webhook server of an App-mode world, serving on a
// loopback port with a processor that runs the real reconcile.
type appServer struct {
	srv    *server.Server
	url    string
	stop   context.CancelFunc
	served chan error
	hold   chan struct{}

	stopOnce sync.Once

	mu        sync.Mutex
	cond      *sync.Cond
	accepted  int
	processed int
	acks      []Ack
	// redeliver holds deliveries answered 503, for the redelivery job.
	redeliver []Delivery
}

// StartApp starts the App webhook server of an App-mode world; the test's
// cleanup stops it.
func (w *World) StartApp(o AppOptions) {
	w.tb.Helper()
	if w.opts.Mode != ModeApp {
		w.tb.Fatal("StartApp needs Options.Mode ModeApp")
	}
	w.appOpts = o
	if o.Workers <= 0 {
		o.Workers = 2
	}
	a := &appServer{served: make(chan error, 1), hold: o.Hold}
	a.cond = sync.NewCond(&a.mu)
	srv, err := server.New(settings.Config{WebhookSecret: WebhookSecret, QueueSize: o.QueueSize, Workers: o.Workers, ShutdownTimeout: 5 * time.Second},
		server.Deps{Processor: &processor{w: w, a: a}, Clock: w.Clock.Now, Logger: slog.New(slog.DiscardHandler), BotLogin: AppBot})
	must(w.tb, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(w.tb, err)
	ctx, cancel := context.WithCancel(context.Background())
	a.srv, a.url, a.stop = srv, "http://"+ln.Addr().String()+settings.DefaultWebhookPath, cancel
	go func() { a.served <- srv.Serve(ctx, ln) }()
	w.app = a
	w.tb.Cleanup(a.shutdown)
}

func (a *appServer) shutdown() {
	a.stopOnce.Do(func() {
		if a.hold != nil {
			select {
			case <-a.hold:
			default:
				close(a.hold)
			}
		}
		a.stop()
		<-a.served
	})
}

// RestartApp stops the App server (after its accepted work is done) and
// starts a new one: its in-memory delivery dedupe starts empty, as after a
// redeploy without Redis. The answers recorded so far are kept.
func (w *World) RestartApp() {
	w.tb.Helper()
	old := w.app
	old.idle(w.tb)
	old.shutdown()
	w.StartApp(w.appOpts)
	w.app.acks = append(old.acks, w.app.acks...)
}

// processor is the App's job handler: a fresh installation token, adapter
// and reconciler per job (the App caches clients; a fresh one keeps every
// job independent, which is the stricter test).
type processor struct {
	w *World
	a *appServer
}

func (p *processor) Process(ctx context.Context, job job.Job) error {
	defer p.a.done()
	if p.a.hold != nil {
		select {
		case <-p.a.hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	w := p.w
	id := w.newRun()
	token := w.token(id)
	ru := Run{ID: id, Delivery: Delivery{ID: job.Delivery, Event: job.Event.Name, What: "app job"}, Start: w.Clock.Now(), wallStart: time.Now()}
	ru.Outcomes, ru.Err = w.reconcile(ctx, id, token, job.Event)
	ru.End, ru.wallEnd = w.Clock.Now(), time.Now()
	w.finish(ru)
	return ru.Err
}

func (a *appServer) done() {
	a.mu.Lock()
	a.processed++
	a.mu.Unlock()
	a.cond.Broadcast()
}

// deliver POSTs d, signed, and records the answer; a 503 is kept for the
// redelivery job (Scheduler.Redeliver).
func (a *appServer) deliver(s *Scheduler, d Delivery) {
	code, took := a.post(d, server.Sign([]byte(WebhookSecret), d.Payload), "application/json")
	a.mu.Lock()
	a.acks = append(a.acks, Ack{Delivery: d.ID, Status: code, Took: took})
	switch code {
	case http.StatusAccepted:
		a.accepted++
	case http.StatusServiceUnavailable:
		a.redeliver = append(a.redeliver, d)
	}
	a.mu.Unlock()
	s.tracef("posted %s: %d in %s", d, code, took)
}

// post sends one delivery with the given signature and content type.
func (a *appServer) post(d Delivery, sig, contentType string) (int, time.Duration) {
	req, err := http.NewRequest(http.MethodPost, a.url, bytes.NewReader(d.Payload))
	if err != nil {
		return 0, 0
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-GitHub-Event", d.Event)
	req.Header.Set("X-GitHub-Delivery", d.ID)
	if sig != "" {
		req.Header.Set("X-Hub-Signature-256", sig)
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	took := time.Since(start)
	if err != nil {
		return 0, took
	}
	_ = resp.Body.Close()
	return resp.StatusCode, took
}

// idle waits until every accepted delivery has been processed.
func (a *appServer) idle(tb testing.TB) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	stop := time.AfterFunc(30*time.Second, a.cond.Broadcast)
	defer stop.Stop()
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.processed < a.accepted {
		if time.Now().After(deadline) {
			tb.Fatalf("app server: %d of %d accepted deliveries processed after 30s", a.processed, a.accepted)
		}
		a.cond.Wait()
	}
}

// Acks returns the answers to every App-mode delivery so far.
func (w *World) Acks() []Ack {
	if w.app == nil {
		return nil
	}
	w.app.mu.Lock()
	defer w.app.mu.Unlock()
	return append([]Ack(nil), w.app.acks...)
}

// PostRaw sends a delivery with an explicit signature header ("" for none)
// and content type, for the bad-input cases; it returns the status.
func (w *World) PostRaw(d Delivery, sig, contentType string) int {
	code, took := w.app.post(d, sig, contentType)
	w.app.mu.Lock()
	w.app.acks = append(w.app.acks, Ack{Delivery: d.ID, Status: code, Took: took})
	if code == http.StatusAccepted {
		w.app.accepted++
	}
	w.app.mu.Unlock()
	return code
}

// Redeliver re-sends (same delivery id) every delivery the server refused
// with 503, as a redelivery job using GitHub's deliveries API would.
func (s *Scheduler) Redeliver() int {
	a := s.w.app
	a.mu.Lock()
	ds := a.redeliver
	a.redeliver = nil
	a.mu.Unlock()
	for _, d := range ds {
		s.enqueue(s.w.Clock.Now(), d)
		s.tracef("redeliver %s", d)
	}
	return len(ds)
}
