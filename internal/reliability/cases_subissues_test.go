package reliability

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/github"
	"github.com/autopilot-dev/autopilot/internal/idem"
	"github.com/autopilot-dev/autopilot/internal/reconcile/trackersync"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
	"github.com/autopilot-dev/autopilot/internal/tracker/subissues"
)

// The sub-issue tracker (tracker: github) under faults, at the effect
// layer: the GitHub client against the fake GitHub, one trackersync.Outbox per
// run, the tasks persisted between runs exactly as Persist saw them.
// Measure: I2 (exactly one issue per idempotency key, from the issues'
// markers), every task a linked sub-issue, no request inside a retry
// window.

const subRepo = "octo/tasks"

type subWorld struct {
	t     *testing.T
	gh    *fakegithub.Server
	clock *fakeclock.Clock
	root  int
	tasks []state.Task
	// retryAt is the state's tracker window (SyncResult.RetryAt).
	retryAt time.Time
	runs    int
	// trust, when set, is our own bot: only its task issues are adopted.
	trust string
}

func newSubWorld(t *testing.T, n int) *subWorld {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC))
	s := fakegithub.New(fakegithub.Options{Clock: clock.Now})
	t.Cleanup(s.Close)
	if err := s.AddRepo(subRepo); err != nil {
		t.Fatal(err)
	}
	s.AddToken("tok-bot", fakegithub.Identity{Login: "autopilot[bot]", Type: "Bot"})
	s.SetContentLimits(80, 500)
	root, err := s.CreateIssue(subRepo, "maria", "Ship the exporter", "", []string{"autopilot"})
	if err != nil {
		t.Fatal(err)
	}
	w := &subWorld{t: t, gh: s, clock: clock, root: root}
	w.tasks = append(w.tasks, state.Task{ID: "01", Kind: state.KindEpic, Title: "Exporter",
		IdemKey: idem.Key(subRepo, root, "01"), Sync: state.SyncPending})
	for i := 2; i <= n; i++ {
		id := fmt.Sprintf("%02d", i)
		w.tasks = append(w.tasks, state.Task{ID: id, Kind: state.KindTask, Title: "Step " + id, Epic: "01",
			Points: 2, IdemKey: idem.Key(subRepo, root, id), Sync: state.SyncPending})
	}
	return w
}

// run is one run: a fresh client (as an Action run has) and tracker. With
// crash set, the run dies after the create of that many issues: its result
// is lost and only what Persist wrote survives.
func (w *subWorld) run(crashAfterCreates int) tasksync.Result {
	w.t.Helper()
	w.runs++
	c, err := github.New(github.Options{Repo: subRepo, Token: "tok-bot", BaseURL: w.gh.URL(), Now: w.clock.Now,
		Sleep: func(_ context.Context, d time.Duration) error { w.clock.Advance(d); return nil }})
	if err != nil {
		w.t.Fatal(err)
	}
	var persisted []state.Task
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var api tracker.SubIssueAPI = c
	if crashAfterCreates > 0 {
		api = &crashAPI{SubIssueAPI: c, left: crashAfterCreates, cancel: cancel}
	}
	tr := subissues.New(api, w.root, w.tasks, w.clock.Now)
	if w.trust != "" {
		tr.Trust(w.trust, 0)
	}
	res, err := trackersync.Outbox(ctx, tr, w.tasks, trackersync.Options{
		Now: w.clock.Now, MaxWait: -1, NotBefore: w.retryAt, SearchLag: 30 * time.Second,
		Sleep:   func(_ context.Context, d time.Duration) error { w.clock.Advance(d); return nil },
		Persist: func(ts []state.Task) error { persisted = ts; return nil },
	})
	if err != nil && crashAfterCreates == 0 {
		w.t.Fatalf("run %d: %v", w.runs, err)
	}
	if crashAfterCreates > 0 {
		if persisted != nil {
			w.tasks = persisted
		}
		return res
	}
	w.tasks, w.retryAt = res.Tasks, res.RetryAt
	return res
}

// crashAPI kills the run (cancels its context) right after the left-th
// issue create succeeded, before the create's link is sent.
type crashAPI struct {
	tracker.SubIssueAPI
	left   int
	cancel context.CancelFunc
}

func (a *crashAPI) CreateIssue(ctx context.Context, title, body string, labels []string) (tracker.GHIssue, error) {
	is, err := a.SubIssueAPI.CreateIssue(ctx, title, body, labels)
	if err == nil {
		if a.left--; a.left == 0 {
			a.cancel()
		}
	}
	return is, err
}

// untilDone runs every minute (or at the window's end) until no task waits.
func (w *subWorld) untilDone(max int) {
	w.t.Helper()
	for i := 0; i < max; i++ {
		next := w.clock.Now().Add(time.Minute)
		if w.retryAt.After(next) {
			next = w.retryAt
		}
		w.clock.AdvanceTo(next)
		if res := w.run(0); res.Waiting == 0 {
			return
		}
	}
	w.t.Fatalf("tasks still waiting after %d runs", max)
}

var subMarkerRE = regexp.MustCompile(`<!-- autopilot:task (autopilot-[0-9a-f]{10}) parent=`)

// checkI2 asserts exactly one issue per key, each in the sub-issue tree,
// and the state's key pointing at it.
func (w *subWorld) checkI2() {
	w.t.Helper()
	bodies, err := w.gh.IssueBodies(subRepo)
	if err != nil {
		w.t.Fatal(err)
	}
	per := map[string][]int{}
	for n, b := range bodies {
		for _, m := range subMarkerRE.FindAllStringSubmatch(b, -1) {
			per[m[1]] = append(per[m[1]], n)
		}
	}
	tree := map[int]bool{}
	queue := []int{w.root}
	for len(queue) > 0 {
		kids, _ := w.gh.SubIssues(subRepo, queue[0])
		queue = queue[1:]
		for _, k := range kids {
			tree[k] = true
			queue = append(queue, k)
		}
	}
	for _, t := range w.tasks {
		got := per[t.IdemKey]
		if len(got) != 1 {
			w.t.Errorf("I2: task %s (%s) has %d issues %v", t.ID, t.IdemKey, len(got), got)
			continue
		}
		if t.Sync != state.SyncCreated || t.Key != "#"+strconv.Itoa(got[0]) {
			w.t.Errorf("task %s: state says %s %q, the issue is #%d", t.ID, t.Sync, t.Key, got[0])
		}
		if !tree[got[0]] {
			w.t.Errorf("task %s: #%d is not linked under #%d", t.ID, got[0], w.root)
		}
	}
}

// case33: a create commits and its answer is lost (the connection drops).
// The task stays "sending"; the next run finds the issue by its marker
// (labelled autopilot/task, consistent list read), links it and adopts it.
func case33(t *testing.T) {
	w := newSubWorld(t, 5)
	w.gh.Script("POST", "/repos/*/*/issues", fakegithub.Step{Pass: true}, fakegithub.Step{Pass: true}, fakegithub.AfterCommit(0))
	w.run(0)
	sending := 0
	for _, tk := range w.tasks {
		if tk.Sync == state.SyncSending {
			sending++
		}
	}
	if sending != 1 {
		t.Fatalf("after the lost answer %d tasks are sending, want 1", sending)
	}
	w.untilDone(10)
	w.checkI2()
	if got := w.gh.Count("POST /repos/*/*/issues"); got != 5 {
		t.Errorf("%d issue creates for 5 tasks, want 5 (the lost one adopted, not re-created)", got)
	}
}

// case34: the run dies between an issue's create and its link to the
// parent. The issue exists, unlinked; the state says "sending". The next
// run finds it among the autopilot/task issues by its marker, links it to
// the parent the marker names, and creates nothing twice.
func case34(t *testing.T) {
	w := newSubWorld(t, 6)
	w.run(3) // epic and one task linked; the third create's link never sent
	w.clock.Advance(time.Minute)
	w.untilDone(10)
	w.checkI2()
	if got := w.gh.Count("POST /repos/*/*/issues"); got != 6 {
		t.Errorf("%d issue creates for 6 tasks, want 6", got)
	}
}

// case35: a storm of secondary limits (403 with retry-after 60) on creates
// and links, on top of GitHub's 80/min budget. Every window is honoured (no
// request of any kind inside it), the flow never waits (each run returns at
// once with the window recorded), and the outbox drains without a duplicate.
func case35(t *testing.T) {
	w := newSubWorld(t, 30)
	storm := []fakegithub.Step{fakegithub.Step{Pass: true}, fakegithub.SecondaryRateLimit(60 * time.Second)}
	for i := 0; i < 4; i++ {
		w.gh.Script("POST", "/repos/*/*/issues", storm...)
		w.gh.Script("POST", "/repos/*/*/issues/*/sub_issues", fakegithub.Step{Pass: true}, fakegithub.Step{Pass: true}, fakegithub.SecondaryRateLimit(60*time.Second))
	}
	w.run(0)
	w.untilDone(40)
	w.checkI2()
	// No request inside any announced window: scripted (60 s) or the fake's own.
	reqs := w.gh.Requests()
	inside := 0
	for i, r := range reqs {
		if r.Status != 403 {
			continue
		}
		for _, later := range reqs[i+1:] {
			if later.Time.Before(r.Time.Add(60 * time.Second)) {
				inside++
			}
		}
	}
	hits, fakeInside := w.gh.ContentLimitStats()
	t.Logf("storm: %d runs, %d requests, %d scripted/real 403s, fake limit hits %d", w.runs, len(reqs), countStatus(reqs, 403), hits)
	if inside+fakeInside != 0 {
		t.Errorf("%d requests inside a retry-after window", inside+fakeInside)
	}
}

func countStatus(rs []fakegithub.Request, status int) int {
	n := 0
	for _, r := range rs {
		if r.Status == status {
			n++
		}
	}
	return n
}
