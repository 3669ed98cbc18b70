package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	gogh "github.com/google/go-github/v60/github"
	"github.com/redis/go-redis/v9"

	"github.com/autopilot-dev/autopilot/internal/appmode"
	"github.com/autopilot-dev/autopilot/internal/budget"
	"github.com/autopilot-dev/autopilot/internal/dashboard"
	"github.com/autopilot-dev/autopilot/internal/dashboard/store"
	"github.com/autopilot-dev/autopilot/internal/ghcache"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server"
	"github.com/autopilot-dev/autopilot/internal/server/appauth"
	"github.com/autopilot-dev/autopilot/internal/server/metrics"
	"github.com/autopilot-dev/autopilot/internal/server/redisq"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
	"github.com/autopilot-dev/autopilot/internal/server/tracing"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/wiring"
)

// appStartAttempts bounds the GET /app tries at start when GitHub is
// unreachable or answers 5xx (1s, 2s, 4s, 8s apart).
const appStartAttempts = 5

// runServe starts the GitHub App webhook server (PRODUCT §11) and serves
// until ctx ends (SIGTERM), then drains. Exit codes: 0 after a clean
// shutdown, 1 when serving failed, 2 for a configuration error.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	// Every line serve writes is a JSON log line: its own, the standard
	// library's log package's and the Redis client's.
	errs := dashboard.NewErrorLog(20) // the dashboard's recent errors
	log := slog.New(errs.Handler(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	slog.SetDefault(log)
	redis.SetLogger(redisLog{log: log})
	fail := func(code int, err error) int {
		msg := "serve failed"
		if code == 2 {
			msg = "serve: configuration error"
		}
		log.Error(msg, "err", err.Error(), "exit_code", code)
		return code
	}

	cfg, err := settings.Load(args, getenv)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, strings.TrimPrefix(err.Error(), flag.ErrHelp.Error()+"\n"))
		return 0
	}
	if err != nil {
		return fail(2, err)
	}
	w, err := wiring.Load(getenv, wiring.AppPrefix)
	if err != nil {
		var ie *wiring.InputError
		if errors.As(err, &ie) {
			err = fmt.Errorf("AUTOPILOT_%s: %s", strings.ToUpper(ie.Field), ie.Msg)
		}
		return fail(2, err)
	}
	if w.Now, err = testClock(getenv, log); err != nil {
		return fail(2, err)
	}

	// Traces: off (nil, no exporter) unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
	tracer, flush, err := tracing.FromEnv(ctx, getenv, version)
	if err != nil {
		return fail(2, err)
	}
	defer func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := flush(fctx); err != nil {
			log.Warn("traces not all exported at shutdown", "err", err)
		}
	}()
	metrics := metrics.New()
	auth, err := appauth.New(appauth.Config{AppID: cfg.AppID, PrivateKey: cfg.PrivateKey, BaseURL: cfg.GitHubAPIURL, Observe: metrics.ObserveResponse,
		Transport: tracer.Transport(http.DefaultTransport, tracing.GitHub)})
	if err != nil {
		return fail(2, err)
	}
	bot, code, err := botLogin(ctx, auth, log)
	if err != nil {
		return fail(code, err)
	}
	adopt := strings.TrimSpace(getenv("AUTOPILOT_BOT_LOGIN"))
	if strings.EqualFold(adopt, bot) {
		adopt = ""
	}
	if adopt != "" {
		log.Warn("migration window: state comments of the legacy bot are adopted; remove AUTOPILOT_BOT_LOGIN once every open run has been reconciled",
			"legacy_bot", adopt, "bot", bot, "state_key_set", w.Inputs.StateKey != "")
	}
	// The conditional-read cache and the API budgets: in memory, or with
	// Redis shared by the replicas.
	var caches appmode.Caches
	var budgetStore budget.Store = budget.NewMemory()
	if cfg.RedisURL != "" {
		c, err := ghcache.Open(cfg.RedisURL, ghcache.Options{Prefix: cfg.WithDefaults().RedisPrefix})
		if err != nil {
			return fail(2, err)
		}
		defer c.Close()
		b, err := budget.OpenRedis(cfg.RedisURL, budget.RedisOptions{Prefix: cfg.WithDefaults().RedisPrefix})
		if err != nil {
			return fail(2, err)
		}
		defer b.Close()
		caches, budgetStore = c, b
	}
	budgets := budget.New(budgetStore, budget.Options{Reserve: cfg.InteractiveReserve})
	rows, dash, err := newDashboard(cfg, metrics, errs, log, budgetWaits(budgets), budgetHeld(budgets))
	if err != nil {
		return fail(2, err)
	}
	defer rows.Close()
	app, err := appmode.New(appmode.Options{
		Clients: auth, BaseURL: cfg.GitHubAPIURL, AppID: cfg.AppID, BotLogin: bot, Wiring: w, AdoptFrom: adopt,
		Metrics: metrics, Logger: log, Sink: store.Updater{Store: rows, Log: log, WebURL: dashboard.WebURLFor(cfg.GitHubAPIURL)},
		Tracer: tracer,
		Cache:  caches, Budget: budgets, Holds: rows,
	})
	if err != nil {
		return fail(2, err)
	}
	srv, err := server.New(cfg, server.Deps{
		Processor: app, Sweeper: app, Installations: auth, Deliveries: auth, BotLogin: bot, Metrics: metrics, Logger: log, Admin: dash,
		Tracer: tracer,
		OnInstallation: func(ev *ghevent.Event) {
			switch ev.Action {
			case "deleted", "suspend", "removed":
				// Uninstalled, suspended, or repositories taken away: drop
				// the cached token and clients; they are rebuilt on demand.
				app.Forget(ev.Installation)
				auth.Forget(ev.Installation)
			}
		},
	})
	if err != nil {
		return fail(2, err)
	}
	log.Info("autopilot App server starting", "version", version, "app_id", cfg.AppID, "bot", bot,
		"github_api_url", cfg.GitHubAPIURL, "redis", cfg.RedisURL != "", "sweep_interval", cfg.SweepInterval.String(),
		"redelivery_interval", cfg.RedeliveryInterval.String(), "admin_addr", cfg.AdminAddr,
		"metrics_on_webhook_port", cfg.MetricsOnWebhookPort, "traces", tracer != nil)
	if err := srv.Run(ctx); err != nil {
		var taken *redisq.PrefixTakenError
		if errors.As(err, &taken) {
			return fail(2, err) // a settings error: REDIS_PREFIX
		}
		return fail(1, err)
	}
	return 0
}

// closingStore is the dashboard's store, closed when serve returns.
type closingStore interface {
	store.Store
	Close() error
}

type memoryStore struct{ *store.Memory }

func (memoryStore) Close() error { return nil }

// newDashboard builds the dashboard's read model (in Redis when REDIS_URL
// is set, shared by the replicas) and its pages for ADMIN_ADDR.
func newDashboard(cfg settings.Config, metrics *metrics.Metrics, errs *dashboard.ErrorLog, log *slog.Logger, waiting func() []dashboard.BudgetWait,
	held func(context.Context, []int64) ([]dashboard.BudgetWait, error)) (closingStore, http.Handler, error) {
	var rows closingStore = memoryStore{store.NewMemory()}
	if cfg.RedisURL != "" {
		r, err := store.OpenRedis(cfg.RedisURL, cfg.WithDefaults().RedisPrefix)
		if err != nil {
			return nil, nil, err
		}
		rows = r
	}
	metrics.SetOpenIssues(dashboard.OpenIssueFigures(rows, time.Now))
	o := dashboard.Options{
		Store: rows, Health: &dashboard.Health{Metrics: metrics.Registry(), Errors: errs, Waiting: waiting}, Held: held,
		Exposed: cfg.AdminAddr != "" && !dashboard.Loopback(cfg.AdminAddr), Logger: log,
	}
	if cfg.DashboardClientID != "" {
		o.SignIn = &dashboard.SignIn{ClientID: cfg.DashboardClientID, ClientSecret: cfg.DashboardClientSecret,
			WebURL: dashboard.WebURLFor(cfg.GitHubAPIURL), APIURL: cfg.GitHubAPIURL}
	}
	if o.Exposed && o.SignIn == nil {
		log.Warn("the dashboard refuses every request: ADMIN_ADDR is not a loopback address and DASHBOARD_CLIENT_ID is not set", "admin_addr", cfg.AdminAddr)
	}
	d, err := dashboard.New(o)
	if err != nil {
		_ = rows.Close()
		return nil, nil, err
	}
	return rows, d, nil
}

// budgetWaits shows the health page which installations' background work
// waits for the API budget on this replica.
func budgetWaits(b *budget.Budget) func() []dashboard.BudgetWait {
	return func() []dashboard.BudgetWait {
		var out []dashboard.BudgetWait
		for _, w := range b.Waiting() {
			out = append(out, dashboard.BudgetWait{Installation: w.Installation, Until: w.Until, Why: w.Why})
		}
		return out
	}
}

// budgetHeld tells the dashboard's issues which installations' background
// sync waits for the API budget, from the shared record (budget.Held).
func budgetHeld(b *budget.Budget) func(context.Context, []int64) ([]dashboard.BudgetWait, error) {
	return func(ctx context.Context, ids []int64) ([]dashboard.BudgetWait, error) {
		hs, err := b.Held(ctx, ids)
		out := make([]dashboard.BudgetWait, 0, len(hs))
		for _, h := range hs {
			out = append(out, dashboard.BudgetWait{Installation: h.Installation, Until: h.Until, Why: h.Why, Reason: state.HoldReason(h.Reason.String())})
		}
		return out, err
	}
}

// redisLog carries the Redis client's own log lines (failed dials, pool
// trouble) into serve's JSON log, as warnings.
type redisLog struct{ log *slog.Logger }

func (r redisLog) Printf(ctx context.Context, format string, v ...any) {
	r.log.WarnContext(ctx, strings.TrimSpace(fmt.Sprintf(format, v...)), "source", "redis")
}

// botLogin reads the App's bot login once (GET /app with the App's JWT),
// retrying while GitHub is unreachable or failing. A refusal (401, 403,
// 404: wrong APP_ID or key) is a configuration error: exit code 2.
func botLogin(ctx context.Context, auth *appauth.Auth, log *slog.Logger) (string, int, error) {
	wait := time.Second
	for attempt := 1; ; attempt++ {
		bot, err := auth.BotLogin(ctx)
		if err == nil {
			return bot, 0, nil
		}
		var er *gogh.ErrorResponse
		if errors.As(err, &er) && er.Response != nil {
			switch er.Response.StatusCode {
			case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
				return "", 2, fmt.Errorf("GitHub refused the App's credentials (%w): check APP_ID, the private key and GITHUB_API_URL", err)
			}
		}
		if attempt == appStartAttempts || ctx.Err() != nil {
			return "", 1, fmt.Errorf("reading the App's identity: %w", err)
		}
		log.Warn("GET /app failed; retrying", "err", err, "in", wait.String())
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return "", 1, fmt.Errorf("reading the App's identity: %w", ctx.Err())
		}
		wait *= 2
	}
}
