// Package server is autopilot's GitHub App webhook server machinery: it
// verifies deliveries (HMAC over the raw body, before any parsing), refuses
// what it cannot take (413, 400, 503 with Retry-After), dedupes delivery ids,
// queues accepted deliveries in a bounded queue and runs them on a worker
// pool with per-issue serialisation (in process and, through Locker leases,
// across replicas), sweeps installations on a timer, asks GitHub to
// redeliver deliveries that failed (the redelivery subpackage), and serves
// health, readiness and Prometheus metrics.
//
// It must never parse a body whose signature did not verify, answer 2xx for a
// delivery it then drops, run two jobs for the same issue at once, or call
// the GitHub API itself beyond the deliveries API of Deps.Deliveries: what
// a job means is the Processor's business.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server/redelivery"
)

// Job is one accepted delivery.
type Job struct {
	Delivery string
	Event    *ghevent.Event
	Received time.Time
}

// Processor turns a job into "reconcile issue N" (implemented by the
// reconcile package).
type Processor interface {
	Process(ctx context.Context, job Job) error
}

// Sweeper reconciles every open autopilot issue of an installation
// (periodic catch-up). It should wrap each issue in WithIssueLock.
type Sweeper interface {
	Sweep(ctx context.Context, installation int64) error
}

// InstallationLister lists the App's installations for the sweep timer
// (appauth.Auth implements it). Without one, the timer sweeps the
// installations seen in deliveries since start.
type InstallationLister interface {
	Installations(ctx context.Context) ([]int64, error)
}

// Deps are the server's collaborators. Processor is required; the rest
// default to single-replica, in-process implementations.
type Deps struct {
	Processor Processor
	// Sweeper runs the timer's catch-up; nil turns the timer off.
	Sweeper Sweeper
	// Installations feeds the sweep timer (optional).
	Installations InstallationLister
	// Deliveries is GitHub's webhook deliveries API for the redelivery job
	// (appauth.Auth implements it); nil turns the job off.
	Deliveries redelivery.API
	// Deduper defaults to a RedisStore on Config.RedisURL when it is set
	// (closed when Serve returns), else a MemoryDeduper with Config.DedupeTTL.
	Deduper Deduper
	// Locker defaults to that RedisStore, else a MemoryLocker.
	Locker Locker
	// Clock defaults to time.Now.
	Clock func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// BotLogin is the App's own bot ("<slug>[bot]"); its deliveries are
	// ignored (200). Empty: no sender is ignored.
	BotLogin string
	// Metrics defaults to NewMetrics().
	Metrics *Metrics
	// OnInstallation, when set, is told about every verified installation
	// and installation_repositories delivery (after it is logged, before it
	// is answered 200): e.g. to drop an uninstalled installation's cached
	// clients. It must return quickly and make no API call.
	OnInstallation func(ev *ghevent.Event)
}

// Server is the webhook server. Build it with New, mount Handler (or call
// Run / Serve, which also run the workers and timers).
type Server struct {
	cfg     Config
	deps    Deps
	log     *slog.Logger
	now     func() time.Time
	metrics *Metrics
	secret  []byte
	queue   *queue
	handler http.Handler
	pingers []Pinger
	owned   *RedisStore // opened from Config.RedisURL; closed by Serve

	draining   atomic.Bool
	storeDown  atomic.Bool // last store check failed
	fullWarned atomic.Bool // "queue full" logged since the last accepted delivery

	bodies      sync.Pool       // *[]byte request body buffers, see readBody
	redeliverer *redelivery.Job // nil without Deps.Deliveries

	instMu sync.Mutex
	seen   map[int64]struct{} // installations seen in deliveries
}

// New checks the configuration and dependencies and builds a Server.
func New(cfg Config, deps Deps) (*Server, error) {
	if deps.Processor == nil {
		return nil, errors.New("server: Deps.Processor is required")
	}
	if cfg.WebhookSecret == "" {
		return nil, errors.New("server: WEBHOOK_SECRET is required")
	}
	if cfg.WebhookPath == "" {
		cfg.WebhookPath = DefaultWebhookPath
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = DefaultQueueSize
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	if cfg.LockTTL <= 0 {
		cfg.LockTTL = DefaultLockTTL
	}
	if cfg.DedupeTTL <= 0 {
		cfg.DedupeTTL = MinDedupeTTL
	}
	if deps.Clock == nil {
		deps.Clock = time.Now
	}
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.Metrics == nil {
		deps.Metrics = NewMetrics()
	}
	var owned *RedisStore
	if cfg.RedisURL != "" && (deps.Deduper == nil || deps.Locker == nil) {
		rs, err := NewRedisStore(cfg.RedisURL, RedisOptions{DedupeTTL: cfg.DedupeTTL, LockTTL: cfg.LockTTL})
		if err != nil {
			return nil, err
		}
		owned = rs
		if deps.Deduper == nil {
			deps.Deduper = rs
		}
		if deps.Locker == nil {
			deps.Locker = rs
		}
	}
	if deps.Deduper == nil {
		deps.Deduper = NewMemoryDeduper(cfg.DedupeTTL, deps.Clock)
	}
	if deps.Locker == nil {
		deps.Locker = NewMemoryLocker()
	}
	s := &Server{
		cfg:     cfg,
		deps:    deps,
		log:     deps.Logger,
		now:     deps.Clock,
		metrics: deps.Metrics,
		secret:  []byte(cfg.WebhookSecret),
		seen:    make(map[int64]struct{}),
		owned:   owned,
	}
	if deps.Deliveries != nil {
		s.redeliverer = redelivery.New(s.redeliveryOptions())
	}
	s.queue = newQueue(cfg.QueueSize, func(n int) { s.metrics.queueDepth.Set(float64(n)) })
	for _, c := range []any{deps.Deduper, deps.Locker} {
		if p, ok := c.(Pinger); ok && !containsPinger(s.pingers, p) {
			s.pingers = append(s.pingers, p)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("POST "+cfg.WebhookPath, http.HandlerFunc(s.intake))
	mux.HandleFunc(cfg.WebhookPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed: deliveries are POSTed", http.StatusMethodNotAllowed)
	})
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /metrics", s.metrics.Handler())
	s.handler = mux
	return s, nil
}

func containsPinger(ps []Pinger, p Pinger) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// Handler serves the webhook path, /healthz, /readyz and /metrics. Jobs it
// queues run only while Run or Serve is running.
func (s *Server) Handler() http.Handler { return s.handler }

// Metrics returns the server's metrics, for the API and Jira setters.
func (s *Server) Metrics() *Metrics { return s.metrics }

// Run listens on Config.Addr and serves until ctx ends (SIGTERM), then
// drains: see Serve.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr())
	if err != nil {
		return fmt.Errorf("listen %s: %w", s.cfg.Addr(), err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves HTTP on ln and runs the workers, the store probe and the
// sweep timer until ctx ends. Then it stops taking deliveries (503, /readyz
// fails), lets in-flight HTTP requests finish, runs the queued and running
// jobs until Config.ShutdownTimeout, cancels what is still running, and
// returns; jobs left over are logged and left to the next sweep.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()

	var workers sync.WaitGroup
	for range s.cfg.Workers {
		workers.Go(func() { s.work(workCtx) })
	}
	bgCtx, stopBG := context.WithCancel(ctx)
	defer stopBG()
	var bg sync.WaitGroup
	if len(s.pingers) > 0 {
		s.checkStore(bgCtx)
		bg.Go(func() { s.probeStore(bgCtx) })
	}
	if s.deps.Sweeper != nil && s.cfg.SweepInterval > 0 {
		bg.Go(func() { s.sweepTimer(bgCtx) })
	}
	if s.redeliverer != nil && s.cfg.RedeliveryInterval > 0 {
		bg.Go(func() { s.redeliveryTimer(bgCtx) })
	}

	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	s.log.Info("serving webhooks", "addr", ln.Addr().String(), "path", s.cfg.WebhookPath,
		"workers", s.cfg.Workers, "queue", s.cfg.QueueSize)

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
		s.log.Error("http server stopped", "err", serveErr)
	}

	// Drain: refuse new deliveries, finish requests in flight, then jobs.
	s.draining.Store(true)
	deadline := time.AfterFunc(s.cfg.ShutdownTimeout, stopWork)
	defer deadline.Stop()
	shutCtx, cancelShut := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	if err := hs.Shutdown(shutCtx); err != nil {
		s.log.Warn("http shutdown", "err", err)
	}
	cancelShut()
	stopBG()
	bg.Wait()
	s.queue.close()
	workers.Wait()
	if left := s.queue.len(); left > 0 {
		s.log.Warn("shutdown deadline reached; jobs left to the sweep", "left", left)
	}
	if s.owned != nil {
		if err := s.owned.Close(); err != nil {
			s.log.Warn("closing redis", "err", err)
		}
	}
	s.log.Info("server stopped")
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", serveErr)
	}
	return nil
}

// noteInstallation remembers an installation for the sweep timer.
func (s *Server) noteInstallation(id int64) {
	if id == 0 {
		return
	}
	s.instMu.Lock()
	s.seen[id] = struct{}{}
	s.instMu.Unlock()
}
