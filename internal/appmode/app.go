// Package appmode is autopilot's GitHub App mode behind `bot serve`: it turns
// each delivery the server accepted into the reconcile the Action runs, with
// the token of the installation named in the payload and the App's own bot
// as the trusted identity, and sweeps every repository of an installation
// when the server's timer asks. It implements server.Processor and
// server.Sweeper.
//
// It must never decide anything about a run itself (reconcile does), never
// reconcile an issue without holding that issue's lease, and never trust a
// state comment written by anyone but the App's bot — except, during an
// explicit migration window, the legacy bot named by AUTOPILOT_BOT_LOGIN,
// whose comments it reads but never edits.
package appmode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/autopilot-dev/autopilot/internal/budget"
	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
	"github.com/autopilot-dev/autopilot/internal/dashboard/store"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	gh "github.com/autopilot-dev/autopilot/internal/github"
	"github.com/autopilot-dev/autopilot/internal/github/transport"
	"github.com/autopilot-dev/autopilot/internal/reconcile"
	"github.com/autopilot-dev/autopilot/internal/reconcile/route"
	"github.com/autopilot-dev/autopilot/internal/server"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/metrics"
	"github.com/autopilot-dev/autopilot/internal/server/tracing"
	"github.com/autopilot-dev/autopilot/internal/wiring"
)

// Clients hands out an installation's authenticated HTTP client
// (appauth.Auth implements it).
type Clients interface {
	ClientFor(installationID int64) *http.Client
}

// Options configures an App.
type Options struct {
	// Clients authenticates as each installation (required).
	Clients Clients
	// BaseURL is the REST root (GITHUB_API_URL); empty means github.com.
	BaseURL string
	// AppID is the App's id: a trusted state comment must carry it as
	// performed_via_github_app.id (required).
	AppID int64
	// BotLogin is the App's bot, "<slug>[bot]" from GET /app (required).
	BotLogin string
	// Wiring is what the App shares with the Action: the inputs read from
	// AUTOPILOT_<INPUT> (GitHubToken and TelemetryPath are not used), the
	// knobs, the clock and the tracker. New gives it the App's identity
	// (AppID and BotLogin above).
	Wiring wiring.Wiring
	// AdoptFrom, when set, is a legacy bot (the Action's
	// "github-actions[bot]") whose comments are read as the App's own during
	// a migration: its state comment is adopted (verified with the state
	// key when one is set) and the next version is written as the App's
	// bot in a new comment. Empty after the migration.
	AdoptFrom string
	// Metrics receives the Jira outbox size (optional).
	Metrics *metrics.Metrics
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// MaxClients bounds the cached per-repository clients (default 1024).
	MaxClients int
	// Sink, when set, is told the state every pass left (the dashboard's
	// read model).
	Sink Sink
	// Tracer, when set, makes each Jira call a span of the job's trace
	// (unless Wiring.NewTracker builds the tracker). GitHub's calls are
	// traced under Clients (appauth.Config.Transport).
	Tracer *tracing.Tracer
	// Cache keeps conditional reads per installation, shared by its
	// repository clients (and by the replicas: internal/ghcache on
	// REDIS_URL); default a memory cache (8,192 entries, 64 MiB).
	Cache Caches
	// ObserveAPI, when set, is told each GitHub answer's status and whether
	// it was a 304 served from the cache.
	ObserveAPI func(status int, cached bool)
	// Budget is every installation's API budget, shared by the replicas
	// on Redis (budget.OpenRedis); default one in memory with the default
	// reserve. Sweeps are background work: they wait at the reserve.
	Budget *budget.Budget
	// Holds remembers the issues whose sweep pass the budget cut (the
	// dashboard's store, shared by the replicas on Redis); default in
	// this process.
	Holds Holds
}

// Caches hands out one installation's conditional-read cache.
type Caches interface {
	For(installation int64) transport.Cache
}

// App runs deliveries and sweeps. Safe for concurrent use; the server's
// leases keep two jobs off one issue.
type App struct {
	o      Options
	log    *slog.Logger
	forges *forgeCache
	outbox *outboxGauge
	// remints counts installation tokens minted again after a 401.
	remints prometheus.Counter

	// pacers space mutations per installation token (shared by the
	// installation's repository clients).
	pacersMu sync.Mutex
	pacers   map[int64]*transport.Pacer
}

// pacer returns the installation's shared mutation pacer.
func (a *App) pacer(installation int64) *transport.Pacer {
	a.pacersMu.Lock()
	defer a.pacersMu.Unlock()
	if a.pacers == nil {
		a.pacers = map[int64]*transport.Pacer{}
	}
	p, ok := a.pacers[installation]
	if !ok {
		p = transport.NewPacer()
		a.pacers[installation] = p
	}
	return p
}

var (
	_ server.Processor = (*App)(nil)
	_ server.Sweeper   = (*App)(nil)
)

// New checks the options and builds an App. It makes no request.
func New(o Options) (*App, error) {
	switch {
	case o.Clients == nil:
		return nil, errors.New("appmode: Options.Clients is required")
	case o.AppID <= 0:
		return nil, errors.New("appmode: Options.AppID is required")
	case !strings.HasSuffix(o.BotLogin, "[bot]"):
		return nil, fmt.Errorf("appmode: bot login %q is not an App bot (\"<slug>[bot]\")", o.BotLogin)
	}
	if strings.EqualFold(o.AdoptFrom, o.BotLogin) {
		o.AdoptFrom = ""
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Wiring.Now == nil {
		o.Wiring.Now = time.Now
	}
	if o.MaxClients <= 0 {
		o.MaxClients = 1024
	}
	if o.Budget == nil {
		o.Budget = budget.New(budget.NewMemory(), budget.Options{})
	}
	if o.Holds == nil {
		o.Holds = store.NewMemory()
	}
	if o.Cache == nil {
		o.Cache = transport.NewMemoryCache(8192, 64<<20)
	}
	if o.Wiring.Inputs.TriggerLabel == "" {
		o.Wiring.Inputs.TriggerLabel = "autopilot"
	}
	if o.Tracer != nil && o.Wiring.NewTracker == nil {
		o.Wiring.NewTracker = wiring.JiraTrackerOver(&http.Client{Transport: o.Tracer.Transport(nil, tracing.Jira)})
	}
	o.Wiring = o.Wiring.ForApp(o.AppID, o.BotLogin)
	a := &App{o: o, log: o.Logger, outbox: newOutboxGauge(o.Metrics), remints: newRemintCounter(o.Metrics)}
	a.forges = newForgeCache(o.MaxClients, a.newClient)
	return a, nil
}

// Process implements server.Processor: it reconciles the issues the
// delivery concerns. A workflow_run names its issue only through the
// session token in the run's title; that issue's lease is taken here.
func (a *App) Process(ctx context.Context, job job.Job) error {
	ev := job.Event
	if ev == nil || !ev.Handled || ev.Repo == "" {
		return nil
	}
	log := a.log.With("delivery", job.Delivery, "event", ev.Name, "action", ev.Action,
		"installation", ev.Installation, "repo", ev.Repo)
	if ev.Installation == 0 {
		return fmt.Errorf("delivery %s carries no installation id, so it cannot be authenticated (is this an App webhook?)", job.Delivery)
	}
	if ev.Name == "workflow_run" {
		n, ok := SessionIssue(ev)
		if !ok {
			log.Debug("workflow run without an autopilot session token; ignored")
			return nil
		}
		return server.WithIssueLock(ctx, ev.Repo, n, func(ctx context.Context) error {
			return a.handle(ctx, ev, log)
		})
	}
	return a.handle(ctx, ev, log)
}

// handle runs the shared reconcile for one event. (The issue goes into the
// log lines of each outcome; the server's own job log carries it too.) A
// token GitHub refuses (401: revoked, or rotated before its hour was up) is
// re-minted once and the reconcile run again (it is idempotent); refused
// again, the job fails and the sweep takes the issue up later.
//
// An installation GitHub does not know (its token request answered 404) is
// final: its cached clients are dropped and the error is server.ErrDropped,
// which the server logs once and counts, with no retry.
func (a *App) handle(ctx context.Context, ev *ghevent.Event, log *slog.Logger) error {
	err := a.checkInstallation(ctx, ev.Installation)
	if err == nil {
		err = a.handleOnce(ctx, ev, log)
	}
	if errors.Is(err, forge.ErrNoInstallation) {
		a.forgetClients(ev.Installation)
		return fmt.Errorf("%w: installation %d is unknown to GitHub (uninstalled, or another App's): %w",
			server.ErrDropped, ev.Installation, err)
	}
	if errors.Is(err, forge.ErrUnauthorized) && a.remint(ev.Installation, log) {
		err = a.handleOnce(ctx, ev, log)
	}
	return err
}

// checkInstallation asks the Clients, when they can tell, whether the
// installation can be authenticated (its token minted, or cached): only
// forge.ErrNoInstallation is returned, any other failure is left to the
// job's own calls, which retry what is transient.
func (a *App) checkInstallation(ctx context.Context, installation int64) error {
	c, ok := a.o.Clients.(interface {
		CheckInstallation(context.Context, int64) error
	})
	if !ok {
		return nil
	}
	if err := c.CheckInstallation(ctx, installation); errors.Is(err, forge.ErrNoInstallation) {
		return err
	}
	return nil
}

// forgetClients drops the installation's token and cached clients.
func (a *App) forgetClients(installation int64) {
	if f, ok := a.o.Clients.(interface{ Forget(int64) }); ok {
		f.Forget(installation)
	}
	a.forges.forget(installation)
}

func (a *App) handleOnce(ctx context.Context, ev *ghevent.Event, log *slog.Logger) error {
	f, client, err := a.forge(ev.Installation, ev.Repo)
	if err != nil {
		return err
	}
	rec, err := a.reconciler(f, client, log)
	if err != nil {
		return err
	}
	outs, err := rec.Handle(ctx, ev)
	logOutcomes(log, outs)
	if err != nil {
		return fmt.Errorf("reconcile %s: %w", ev.Repo, err)
	}
	a.passed(ctx, ev.Installation, ev.Repo, outs...)
	return nil
}

// remint drops the installation's token and clients so the next request
// mints a new token, and counts it; false when the Clients cannot.
func (a *App) remint(installation int64, log *slog.Logger) bool {
	f, ok := a.o.Clients.(interface{ Forget(int64) })
	if !ok {
		return false
	}
	log.Warn("GitHub refused the installation token (401); minting a new one and running the job again")
	f.Forget(installation)
	a.forges.forget(installation)
	a.remints.Inc()
	return true
}

// Forget drops an installation's cached clients (it was uninstalled or
// suspended); the next delivery builds them again.
func (a *App) Forget(installation int64) { a.forges.forget(installation) }

// forge returns the job's view of the installation's repository: the cached
// adapter, wrapped to adopt legacy comments and watch the Jira outbox.
func (a *App) forge(installation int64, repo string) (forge.Forge, *gh.Client, error) {
	c, err := a.forges.get(installation, repo)
	if err != nil {
		return nil, nil, fmt.Errorf("installation %d: %w", installation, err)
	}
	return a.wrap(c), c, nil
}

// newClient builds the go-github adapter for one repository of an
// installation. It makes no request.
func (a *App) newClient(installation int64, repo string) (*gh.Client, error) {
	o := a.o.Wiring.GitHub(repo)
	o.HTTPClient, o.BaseURL, o.Pacer = a.o.Clients.ClientFor(installation), a.o.BaseURL, a.pacer(installation)
	o.Cache, o.ObserveAPI, o.Gate = a.o.Cache.For(installation), a.o.ObserveAPI, a.o.Budget.For(installation)
	o.Logger = a.log.With("installation", installation, "repo", repo)
	return gh.New(o)
}

// reconciler builds the reconcile for one job (or one repository's sweep):
// the same options as the Action, with the App's identity.
func (a *App) reconciler(f forge.Forge, client *gh.Client, log *slog.Logger) (*reconcile.Reconciler, error) {
	o := a.o.Wiring.Reconcile(f, client, log, func(s string) { log.Info(s) })
	// A deployment protection-rule request's issue is known once routed:
	// its reconcile takes the issue's lease then, as every job on the
	// issue does (else it races them: duplicate answers and notes).
	repo := f.Repo()
	o.Lease = func(ctx context.Context, issue int, fn func(context.Context) error) error {
		return server.WithIssueLock(ctx, repo, issue, fn)
	}
	o.Carry = a.carry(repo) // a sweep pass the budget cut (held.go)
	rec, err := reconcile.New(o)
	if err != nil {
		return nil, fmt.Errorf("reconcile: %w", err)
	}
	return rec, nil
}

// passed tells the Sink what each pass of a job (or a sweep's issue) that
// ended without error left: Outcome.State is nil when there is no run.
func (a *App) passed(ctx context.Context, installation int64, repo string, outs ...route.Outcome) {
	if a.o.Sink == nil {
		return
	}
	for _, o := range outs {
		if o.Issue > 0 {
			a.o.Sink.Passed(ctx, model.Pass{Installation: installation, Repo: repo, Issue: o.Issue, State: o.State, Listed: o.Listed, URL: o.URL})
		}
	}
}

// logOutcomes logs what each reconcile did, and its notes as warnings.
func logOutcomes(log *slog.Logger, outs []route.Outcome) {
	for _, o := range outs {
		if o.Issue == 0 {
			for _, n := range o.Notes {
				log.Warn(n)
			}
			continue
		}
		l := log.With("issue", o.Issue)
		l.Info("reconciled", "flow", o.Flow, "step", o.Step, "status", o.Status,
			"decision", o.Decision, "version", o.Version, "wrote", o.Wrote, "stop", o.Stop)
		for _, n := range o.Notes {
			l.Warn(n)
		}
	}
}

// newRemintCounter registers autopilot_installation_token_remints_total on
// the server's registry (once; Apps sharing one registry share it), or
// returns an unregistered counter without Metrics.
func newRemintCounter(m *metrics.Metrics) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "autopilot_installation_token_remints_total",
		Help: "Installation tokens minted again because GitHub answered 401 to the cached one.",
	})
	if m == nil {
		return c
	}
	if err := m.Registry().Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(prometheus.Counter); ok {
				return existing
			}
		}
	}
	return c
}

// Sink is told about every pass that ended without error, with the state
// it left (the dashboard's store.Updater implements it). It must return
// quickly and never fail the pass.
type Sink interface {
	Passed(ctx context.Context, p model.Pass)
}
