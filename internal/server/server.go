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
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/memstore"
	"github.com/autopilot-dev/autopilot/internal/server/metrics"
	"github.com/autopilot-dev/autopilot/internal/server/redelivery"
	"github.com/autopilot-dev/autopilot/internal/server/redisq"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
	"github.com/autopilot-dev/autopilot/internal/server/tracing"
	"github.com/autopilot-dev/autopilot/internal/server/workq"
)

// Processor turns a job into "reconcile issue N" (implemented by the
// reconcile package).
type Processor interface {
	Process(ctx context.Context, job job.Job) error
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
	// Queue is the Redis work queue: deliveries are appended to its stream
	// before they are answered 202 and read back by every replica sharing
	// it (PRODUCT §11). It defaults to a RedisStore on Config.RedisURL when
	// that is set; without one, deliveries queue in process (one replica).
	// With a Queue, a delivery id is recorded by the Queue's store in the
	// same step as the delivery is queued; Deduper then only claims sweeps.
	Queue *redisq.Store
	// Deduper defaults to a RedisStore on Config.RedisURL when it is set
	// (closed when Serve returns), else a memstore.Deduper with Config.DedupeTTL.
	Deduper Deduper
	// Locker defaults to that RedisStore, else a memstore.Locker.
	Locker Locker
	// Clock defaults to time.Now.
	Clock func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// BotLogin is the App's own bot ("<slug>[bot]"); its deliveries are
	// ignored (200), except the events ghevent's kinds table marks OwnWrites (ghevent.FromSelf).
	// Empty: no sender is ignored.
	BotLogin string
	// Metrics defaults to NewMetrics().
	Metrics *metrics.Metrics
	// OnInstallation, when set, is told about every verified installation
	// and installation_repositories delivery (after it is logged, before it
	// is answered 200): e.g. to drop an uninstalled installation's cached
	// clients. It must return quickly and make no API call.
	OnInstallation func(ev *ghevent.Event)
	// Admin, when set, serves every ADMIN_ADDR path the server does not
	// (the dashboard); never the webhook port.
	Admin http.Handler
	// Tracer records a trace per delivery (intake, queue wait, job); nil:
	// traces are off.
	Tracer *tracing.Tracer
}

// Server is the webhook server. Build it with New, mount Handler (or call
// Run / Serve, which also run the workers and timers).
type Server struct {
	cfg     settings.Config
	deps    Deps
	log     *slog.Logger
	now     func() time.Time
	metrics *metrics.Metrics
	secret  []byte
	queue   *workq.Queue
	stream  *redisq.Replica // nil without a Redis work queue
	handler http.Handler
	pingers []Pinger
	owned   *redisq.Store // opened from Config.RedisURL; closed by Serve

	prefixOK    atomic.Bool   // this App is recorded as the one using REDIS_PREFIX
	secretFP    string        // SecretFingerprint of the webhook secret
	secretEvery time.Duration // secretCheckEvery when the server was built
	// secretMismatch describes webhook secrets found to differ across
	// the replicas ("" or nil: none found).
	secretMismatch atomic.Pointer[string]
	draining       atomic.Bool
	storeDown      atomic.Bool // last store check failed
	fullWarned     atomic.Bool // "queue full" logged since the last accepted delivery

	bodies      sync.Pool       // *[]byte request body buffers, see readBody
	redeliverer *redelivery.Job // nil without Deps.Deliveries

	instMu sync.Mutex
	seen   map[int64]struct{} // installations seen in deliveries
}

// New checks the configuration and dependencies and builds a Server.
func New(cfg settings.Config, deps Deps) (*Server, error) {
	if deps.Processor == nil {
		return nil, errors.New("server: Deps.Processor is required")
	}
	if cfg.WebhookSecret == "" {
		return nil, errors.New("server: WEBHOOK_SECRET is required")
	}
	cfg = cfg.WithDefaults()
	deps, owned, err := deps.withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:         cfg,
		deps:        deps,
		log:         deps.Logger,
		now:         deps.Clock,
		metrics:     deps.Metrics,
		secret:      []byte(cfg.WebhookSecret),
		secretFP:    SecretFingerprint(cfg.WebhookSecret),
		secretEvery: secretCheckEvery,
		seen:        make(map[int64]struct{}),
		owned:       owned,
	}
	if deps.Deliveries != nil {
		s.redeliverer = redelivery.New(s.redeliveryOptions())
	}
	s.queue = workq.New(cfg.QueueSize, s.metrics.SetLocalQueue)
	s.queue.SetWorkers(cfg.Workers)
	if deps.Queue != nil {
		s.stream = redisq.NewReplica(deps.Queue, redisq.ReplicaOptions{
			Idle: cfg.QueueClaimIdle, Workers: cfg.Workers, Queue: s.queue, Keys: jobKeys,
			NoteInstallation: s.noteInstallation, NoteStore: s.noteStore, Log: s.log, Metrics: s.metrics,
		})
		stats := func(ctx context.Context) (metrics.QueueStats, error) { return deps.Queue.QueueStats(ctx, time.Now()) }
		s.metrics.SetQueueStats(stats)
	}
	s.pingers = pingersOf(deps.Deduper, deps.Locker, deps.Queue)
	s.handler = s.routes()
	return s, nil
}

// withDefaults fills in the missing dependencies: the stores from a Redis
// opened on Config.RedisURL when one is set (returned, for Serve to close),
// else in memory.
func (deps Deps) withDefaults(cfg settings.Config) (Deps, *redisq.Store, error) {
	if deps.Clock == nil {
		deps.Clock = time.Now
	}
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.Metrics == nil {
		deps.Metrics = metrics.New()
	}
	var owned *redisq.Store
	if cfg.RedisURL != "" && (deps.Deduper == nil || deps.Locker == nil || deps.Queue == nil) {
		rs, err := redisq.New(cfg.RedisURL, redisq.Options{Prefix: cfg.RedisPrefix, AppID: cfg.AppID, DedupeTTL: cfg.DedupeTTL, LockTTL: cfg.LockTTL})
		if err != nil {
			return deps, nil, err
		}
		owned = rs
		if deps.Deduper == nil {
			deps.Deduper = rs
		}
		if deps.Locker == nil {
			deps.Locker = rs
		}
		if deps.Queue == nil {
			deps.Queue = rs
		}
	}
	if deps.Deduper == nil {
		deps.Deduper = memstore.NewDeduper(cfg.DedupeTTL, deps.Clock)
	}
	if deps.Locker == nil {
		deps.Locker = memstore.NewLocker()
	}
	return deps, owned, nil
}

// pingersOf lists the stores /readyz checks, each once.
func pingersOf(deduper Deduper, locker Locker, queue *redisq.Store) []Pinger {
	stores := []any{deduper, locker}
	if queue != nil {
		stores = append(stores, queue)
	}
	var out []Pinger
	for _, c := range stores {
		if p, ok := c.(Pinger); ok && !containsPinger(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// routes mounts the webhook path, health, readiness and metrics.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST "+s.cfg.WebhookPath, http.HandlerFunc(s.intake))
	mux.HandleFunc(s.cfg.WebhookPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed: deliveries are POSTed", http.StatusMethodNotAllowed)
	})
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	if s.cfg.AdminAddr == "" || s.cfg.MetricsOnWebhookPort {
		mux.Handle("GET /metrics", s.metrics.Handler())
	}
	return mux
}

// AdminHandler serves what operators read, on ADMIN_ADDR: /metrics,
// /healthz and /readyz, and Deps.Admin (the dashboard) on every other path.
func (s *Server) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /metrics", s.metrics.Handler())
	if s.deps.Admin != nil {
		mux.Handle("/", s.deps.Admin)
	}
	return mux
}

func containsPinger(ps []Pinger, p Pinger) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// Handler serves the webhook path, /healthz and /readyz, and /metrics when
// Config.AdminAddr is empty or Config.MetricsOnWebhookPort asks for it.
// Jobs it queues run only while Run or Serve is running.
func (s *Server) Handler() http.Handler { return s.handler }

// Metrics returns the server's metrics, for the API and Jira setters.
func (s *Server) Metrics() *metrics.Metrics { return s.metrics }

// Run listens on Config.Addr, and on Config.AdminAddr when set (serving
// AdminHandler there until Serve returns), and serves until ctx ends
// (SIGTERM), then drains: see Serve.
func (s *Server) Run(ctx context.Context) error {
	var admin net.Listener
	if s.cfg.AdminAddr != "" {
		var err error
		if admin, err = net.Listen("tcp", s.cfg.AdminAddr); err != nil {
			return fmt.Errorf("ADMIN_ADDR: listen %s: %w", s.cfg.AdminAddr, err)
		}
	}
	ln, err := net.Listen("tcp", s.cfg.Addr())
	if err != nil {
		if admin != nil {
			_ = admin.Close()
		}
		return fmt.Errorf("listen %s: %w", s.cfg.Addr(), err)
	}
	if admin == nil {
		return s.Serve(ctx, ln)
	}
	as := &http.Server{
		Handler:           s.AdminHandler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	adminDone := make(chan struct{})
	go func() {
		defer close(adminDone)
		if err := as.Serve(admin); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("admin server stopped", "addr", admin.Addr().String(), "err", err)
		}
	}()
	s.log.Info("serving metrics", "addr", admin.Addr().String(), "metrics_on_webhook_port", s.cfg.MetricsOnWebhookPort)
	err = s.Serve(ctx, ln)
	_ = as.Close() // /metrics stays up through the drain, then goes
	<-adminDone
	return err
}

// Serve serves HTTP on ln and runs the workers, the store probe and the
// sweep timer (and, with the Redis work queue, its reader, renewer and
// acker) until ctx ends. Then it stops taking deliveries (503, /readyz
// fails), lets in-flight HTTP requests finish, stops reading the Redis
// queue and hands the entries it holds but has not started back to the
// other replicas, runs the running (and in-process queued) jobs until
// Config.ShutdownTimeout, cancels what is still running, and returns.
// In-process jobs left over are logged and left to the next sweep; Redis
// entries left over stay pending and are claimed by another replica.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := s.claimPrefix(ctx); err != nil {
		var taken *redisq.PrefixTakenError
		if errors.As(err, &taken) {
			if ln != nil {
				_ = ln.Close()
			}
			return err
		}
		s.log.Warn("could not check that no other App uses REDIS_PREFIX; checking again once Redis answers", "err", err)
	}
	if n := s.secretStore(); n != nil {
		s.checkSecrets(ctx, n)
	}
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
	bg := s.startTimers(bgCtx)
	loops := s.startStream(ctx)
	defer loops.cancel()

	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	s.log.Info("serving webhooks", "addr", ln.Addr().String(), "path", s.cfg.WebhookPath,
		"workers", s.cfg.Workers, "queue", s.queueName(), "webhook_secret_fingerprint", s.secretFP)

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
		s.log.Error("http server stopped", "err", serveErr)
	}

	// Drain: refuse new deliveries, finish requests in flight, then jobs.
	s.draining.Store(true)
	deadline := time.AfterFunc(s.cfg.ShutdownTimeout, func() { stopWork(); loops.stopAck() })
	defer deadline.Stop()
	shutCtx, cancelShut := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	if err := hs.Shutdown(shutCtx); err != nil {
		s.log.Warn("http shutdown", "err", err)
	}
	cancelShut()
	s.stopReading(loops)
	stopBG()
	bg.Wait()
	s.queue.Close()
	workers.Wait()
	s.stopStream(loops)
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

// startTimers starts the store probe, the sweep timer and the redelivery
// timer (those configured) until ctx ends.
func (s *Server) startTimers(ctx context.Context) *sync.WaitGroup {
	var bg sync.WaitGroup
	if len(s.pingers) > 0 {
		s.checkStore(ctx)
		bg.Go(func() { s.probeStore(ctx) })
	}
	if s.deps.Sweeper != nil && s.cfg.SweepInterval > 0 {
		bg.Go(func() { s.sweepTimer(ctx) })
	}
	if n := s.secretStore(); n != nil {
		bg.Go(func() { s.secretTimer(ctx, n) })
	}
	if s.redeliverer != nil && s.cfg.RedeliveryInterval > 0 {
		bg.Go(func() { s.redeliveryTimer(ctx) })
	}
	return &bg
}

// streamLoops are the Redis queue's reader, acker and renewer. At shutdown
// the reader stops first, the acker once every worker is done, the renewer
// last; each has its own context for that order.
type streamLoops struct {
	stopRead, stopAck, stopRenew context.CancelFunc
	reader, acker, renewer       sync.WaitGroup
}

func (l *streamLoops) cancel() { l.stopRead(); l.stopAck(); l.stopRenew() }

// startStream starts the Redis queue's loops (none without the queue).
func (s *Server) startStream(ctx context.Context) *streamLoops {
	l := &streamLoops{}
	readCtx, stopRead := context.WithCancel(context.WithoutCancel(ctx))
	ackCtx, stopAck := context.WithCancel(context.WithoutCancel(ctx))
	renewCtx, stopRenew := context.WithCancel(context.WithoutCancel(ctx))
	l.stopRead, l.stopAck, l.stopRenew = stopRead, stopAck, stopRenew
	if s.stream == nil {
		return l
	}
	gctx, cancel := context.WithTimeout(ctx, storeTimeout)
	if err := s.deps.Queue.EnsureGroup(gctx); err != nil {
		s.noteStore(err) // the reader creates it once Redis answers
	}
	cancel()
	l.reader.Go(func() { s.stream.ReadLoop(readCtx) })
	l.acker.Go(func() { s.stream.AckLoop(ackCtx) })
	l.renewer.Go(func() { s.stream.RenewLoop(renewCtx) })
	return l
}

// stopReading stops the Redis reader and hands the entries read but not
// started (queued or parked) to the other replicas, which run them now;
// within ShutdownTimeout.
func (s *Server) stopReading(l *streamLoops) {
	l.stopRead()
	l.reader.Wait()
	if s.stream == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	s.stream.HandBack(ctx, s.queue.TakeEntries())
}

// stopStream, once the workers are done, sends the last acknowledgements,
// stops renewing and leaves the consumer group; it logs the in-process jobs
// the deadline left to the sweep.
func (s *Server) stopStream(l *streamLoops) {
	if s.stream != nil {
		s.stream.CloseAcks()
		l.acker.Wait()
		l.stopRenew()
		l.renewer.Wait()
		s.stream.Leave()
	}
	if left := s.queue.Len(); left > 0 {
		s.log.Warn("shutdown deadline reached; jobs left to the sweep (Redis queue entries to the other replicas)", "left", left)
	}
}

// prefixClaimer is a store on Redis that records the App using its prefix.
type prefixClaimer interface {
	ClaimPrefix(ctx context.Context) error
}

// claimPrefix records this App as the one using REDIS_PREFIX in every
// Redis store (once it succeeded, it does nothing): a *PrefixTakenError
// when another App is recorded there.
func (s *Server) claimPrefix(ctx context.Context) error {
	if s.prefixOK.Load() {
		return nil
	}
	for _, p := range s.pingers {
		c, ok := p.(prefixClaimer)
		if !ok {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, storeTimeout)
		err := c.ClaimPrefix(cctx)
		cancel()
		if err != nil {
			return err
		}
	}
	s.prefixOK.Store(true)
	return nil
}

// queueName describes the work queue for the start-up log line.
func (s *Server) queueName() string {
	if s.stream != nil {
		return fmt.Sprintf("redis stream (max %d, claim idle %s)", s.cfg.QueueMax, s.cfg.QueueClaimIdle)
	}
	return fmt.Sprintf("in process (size %d, one replica)", s.cfg.QueueSize)
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
