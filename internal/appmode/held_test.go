package appmode

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/budget"
	"github.com/autopilot-dev/autopilot/internal/dashboard"
	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
	"github.com/autopilot-dev/autopilot/internal/dashboard/store"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/server"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// reserveWhen is a budget store whose installations sit at the
// interactive reserve (until reset) while held() says so.
type reserveWhen struct {
	*budget.Memory
	held  func() bool
	reset time.Time
}

func (s reserveWhen) Load(ctx context.Context, id int64) (budget.Record, error) {
	if s.held() {
		at := budget.Bucket{Limit: 5000, Remaining: 900, Reset: s.reset}
		return budget.Record{Core: at, GraphQL: at}, nil
	}
	return s.Memory.Load(ctx, id)
}

// lockedBuffer is a log sink safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestASweepHeldByTheBudgetIsShownAndRecordedWithoutACallOfItsOwn: the
// sweep's pass of an issue is cut at the interactive reserve. At once,
// with no pass and no GitHub call, the dashboard shows every issue of the
// installation waiting, and the log names the installation, the reason
// and the until. The issue's next interactive event records the wait in
// its state with the write it makes anyway — as many requests as the
// same answer on an issue not held — and the next sweep, the budget back,
// clears it.
func TestASweepHeldByTheBudgetIsShownAndRecordedWithoutACallOfItsOwn(t *testing.T) {
	g := apptest.New(t, repo)
	reset := time.Now().Add(45 * time.Minute).Truncate(time.Second).UTC()
	var from atomic.Int64 // the request log's length when the sweep starts
	armed := atomic.Bool{}
	configRead := func() bool {
		reqs := g.Requests()
		for _, q := range reqs[min(int(from.Load()), len(reqs)):] {
			if strings.Contains(q.Path, "/contents/") {
				return true
			}
		}
		return false
	}
	b := budget.New(reserveWhen{Memory: budget.NewMemory(), reset: reset, held: func() bool {
		// Held once the sweep read the configuration: its first issue's
		// pass is the one cut.
		return armed.Load() && configRead()
	}}, budget.Options{})
	rows := store.NewMemory()
	logs := &lockedBuffer{}
	r := newRigAt(t, g, g.SweepURL, func(o *Options) {
		o.Budget, o.Sink, o.Holds = b, store.Updater{Store: rows}, rows
		o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	var issues []int
	for range 2 {
		n := r.gh.Issue(repo, "Sweep me")
		r.mustProcess(r.gh.Labeled(repo, n, apptest.Maintainer, "autopilot"))
		issues = append(issues, n)
	}

	from.Store(int64(len(g.Requests())))
	armed.Store(true)
	err := r.app.Sweep(context.Background(), apptest.Installation)
	var rl *forge.RateLimitError
	if !errors.As(err, &rl) || !rl.Held {
		t.Fatalf("sweep: %v, want held by the budget", err)
	}
	if !errors.Is(err, server.ErrHeld) {
		t.Fatalf("sweep: %v, not marked server.ErrHeld (the server would count it a failed job)", err)
	}
	var held, free int
	for _, n := range issues {
		if _, ok, _ := rows.Held(context.Background(), model.Key(repo, n)); ok {
			held = n
		} else {
			free = n
		}
	}
	if held == 0 || free == 0 {
		for _, q := range r.gh.Requests()[len(r.gh.Requests())-12:] {
			t.Logf("%s %s %d", q.Method, q.Path, q.Status)
		}
		t.Log(logs.String())
		t.Fatalf("held #%d, not held #%d: want the sweep's first issue held", held, free)
	}
	line := logs.String()
	if !strings.Contains(line, "sweep waits for the GitHub budget") || !strings.Contains(line, "installation=") ||
		!strings.Contains(line, `reason="interactive reserve"`) || !strings.Contains(line, "until="+reset.Format(time.RFC3339)) {
		t.Errorf("log lacks the wait, its installation, reason and until:\n%s", line)
	}

	// The dashboard, at once: every issue of the installation.
	d, err := dashboard.New(dashboard.Options{Store: rows, Logger: quietLogger(),
		Held: func(ctx context.Context, ids []int64) ([]dashboard.BudgetWait, error) {
			hs, err := b.Held(ctx, ids)
			var out []dashboard.BudgetWait
			for _, h := range hs {
				out = append(out, dashboard.BudgetWait{Installation: h.Installation, Until: h.Until, Why: h.Why, Reason: state.HoldReason(h.Reason.String())})
			}
			return out, err
		}})
	if err != nil {
		t.Fatal(err)
	}
	page := func() string {
		rec := httptest.NewRecorder()
		d.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		return rec.Body.String()
	}
	wait := "⏳ sync waits for GitHub budget until " + reset.Format("15:04") + " UTC (interactive reserve)"
	if n := strings.Count(page(), wait); n != 2 {
		t.Errorf("%d rows say %q, want 2", n, wait)
	}

	// The next interactive event on each issue: the same requests (but
	// the repository's new step label, set up once), and only the held
	// issue's write records the wait.
	cost := map[int]int{}
	for _, n := range []int{free, held} {
		from := len(r.gh.Requests())
		r.mustProcess(r.gh.Say(repo, n, apptest.Maintainer, "/autopilot done problem"))
		for _, q := range r.gh.AppRequests(from) {
			if !strings.HasPrefix(q.Path, "/repos/"+repo+"/labels/") { // the new step label's colour: the first answer's
				cost[n]++
			}
		}
	}
	if cost[held] != cost[free] {
		t.Errorf("the held issue's answer took %d requests, the other's %d: recording the wait cost calls", cost[held], cost[free])
	}
	st := r.gh.State(repo, held)
	if h := st.BackgroundHeld; h == nil || !h.Until.Equal(reset) || h.Reason != state.HeldAtReserve || st.Slug != "research" {
		t.Fatalf("held issue's state: step %s, hold %+v", st.Slug, st.BackgroundHeld)
	}
	if r.gh.State(repo, free).BackgroundHeld != nil {
		t.Error("the issue the sweep never reached records a hold")
	}
	if body := lastState(r.gh, held); !strings.Contains(body, "Held:    background sync of this issue was held by the GitHub budget (interactive reserve) until "+reset.Format("15:04")+" UTC") {
		t.Errorf("the banner does not say it:\n%s", body)
	}

	// The budget is back: the next sweep runs and clears it.
	armed.Store(false)
	if err := r.app.Sweep(context.Background(), apptest.Installation); err != nil {
		t.Fatalf("sweep with the budget back: %v", err)
	}
	if h := r.gh.State(repo, held).BackgroundHeld; h != nil {
		t.Errorf("a completed sweep left the hold %+v", h)
	}
	if _, ok, _ := rows.Held(context.Background(), model.Key(repo, held)); ok {
		t.Error("a completed sweep left the issue held")
	}
	if strings.Contains(page(), "⏳") {
		t.Error("the dashboard still shows a wait")
	}
}

// lastState is the body of the issue's newest state comment.
func lastState(g *apptest.GitHub, n int) string {
	cs := g.States(repo, n)
	if len(cs) == 0 {
		return ""
	}
	return cs[len(cs)-1].Body
}
