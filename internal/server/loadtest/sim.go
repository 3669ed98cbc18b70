package loadtest

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/autopilot-dev/autopilot/internal/budget"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/server"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
)

// SimOptions shape one load simulation (issue 31): many installations on
// replicas sharing one Redis, a mix of deliveries, one installation
// flooding, and a simulated GitHub enforcing each installation's limits.
// Zero values take the full size noted.
type SimOptions struct {
	// Installations (default 1,000), each with IssuesPer issues (default
	// 10) in a repository of its own.
	Installations int
	IssuesPer     int
	// Flood is how many issues the flooding installation backfills: one
	// issues.labeled delivery each, sent at once before the rest (default
	// 10,000).
	Flood int
	// Per installation, spread over Window (default 30s): Answers (a
	// maintainer's answer to a Choose block; default 1), Chatter (other
	// comments; 3), Pushes (pull_request.synchronize; 1), Reviews (1).
	Answers, Chatter, Pushes, Reviews int
	Window                            time.Duration
	// PerRequest is the simulated GitHub latency of one request (default
	// 50 ms, like BenchmarkAnswerBehindFlood).
	PerRequest time.Duration
	// MutationGap spaces one installation's writes on a replica, as
	// AUTOPILOT_MUTATION_GAP does in the App (0: its default of 1 s,
	// GitHub's guidance; negative: none).
	MutationGap time.Duration
	// Replicas (default 2) with Workers each (default 128).
	Replicas, Workers int
	// SweepInterval is the catch-up sweep's period (default an hour: one
	// sweep of every installation, at start): each sweep lists an
	// installation's open issues and reads each one.
	SweepInterval time.Duration
	// Budgets starts some installations' hourly budgets low: installation →
	// requests remaining of 5,000 until an hour from the start (the budget
	// holds their background work at the reserve, then everything at 0).
	Budgets map[int64]int
	// RedisURL is the Redis every replica shares (required).
	RedisURL string
}

// SimResult is what one simulation measured.
type SimResult struct {
	Deliveries, Accepted, Refused, Other int
	// FloodRun is how many of the flood's jobs ran before the interactive
	// deliveries were all done (the rest were cut).
	FloodRun int
	// Answer is the latency of the answers, from sending the delivery to the
	// end of its job; AnswerWorst is the slowest installation's answer.
	Answer, Interactive Percentiles
	AnswerWorst         time.Duration
	// What the fake GitHub answered (fakegithub.LimitStats): every
	// request, the 304s, the primary- and secondary-limit answers, and
	// InsideRetryAfter, requests sent inside an announced retry-after.
	Calls, NotModified, Primary, Secondary, InsideRetryAfter int
	// Tokens is how many installation tokens were minted (App requests).
	Tokens int
	// LimitedInstallations is how many installations got a limit answer;
	// FloodCalls and FloodNotModified are the flooder's requests and 304s.
	LimitedInstallations         int
	FloodCalls, FloodNotModified int
	ByKind                       map[string]kindCalls
	// Held is what the replicas' budget gates held, interactive and
	// background apart.
	HeldInteractive, HeldBackground Holds
	// Budgeted is what GitHub answered the installations of
	// SimOptions.Budgets, by installation.
	Budgeted map[int64]fakegithub.InstallationStats
	// Redis memory (INFO memory) at the end and at its peak, in bytes.
	RedisMemory, RedisMemoryPeak int64
	Elapsed                      time.Duration
	// Warnings counts the replicas' warnings and errors by message.
	Warnings map[string]int
}

// Percentiles of a latency distribution.
type Percentiles struct{ N, P50, P95, P99 time.Duration }

func percentiles(ds []time.Duration) Percentiles {
	if len(ds) == 0 {
		return Percentiles{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(p int) time.Duration { return s[min(len(s)-1, len(s)*p/100)] }
	return Percentiles{N: time.Duration(len(s)), P50: at(50), P95: at(95), P99: at(99)}
}

func (o SimOptions) withDefaults() SimOptions {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Installations, 1000)
	def(&o.IssuesPer, 10)
	def(&o.Flood, 10000)
	def(&o.Answers, 1)
	def(&o.Chatter, 3)
	def(&o.Pushes, 1)
	def(&o.Reviews, 1)
	def(&o.Replicas, 2)
	// Workers from the offered load: each installation's interactive jobs
	// make 20 calls (answer 6, chatter 3×2, push 4, review 4) of 50 ms and
	// wait for its writes' 1 s spacing (an answer's two writes, a push's
	// and a review's behind them): about 3 worker-seconds an installation,
	// so 1,000 installations over the 30 s window keep ~100 workers busy;
	// 2 replicas × 128 leave room for the flood's share (16 a replica) and
	// the sweeps.
	def(&o.Workers, 128)
	if o.Window <= 0 {
		o.Window = 30 * time.Second
	}
	if o.PerRequest <= 0 {
		o.PerRequest = 50 * time.Millisecond
	}
	if o.SweepInterval <= 0 {
		o.SweepInterval = time.Hour
	}
	return o
}

// The flooding installation; the others are 1..Installations.
const floodInst = 1

// simEvent is one delivery of the simulation.
type simEvent struct {
	kind  string // flood, answer, chatter, push, review
	inst  int64
	issue int
	req   request
	touch bool // a person commented on the issue (GitHub's copy changed)
	sent  time.Time
	ended atomic.Int64 // UnixNano of the job's end
}

// jobCalls are the requests one job of kind makes on issue n of
// installation inst: what the bot reads (conditionally) and writes.
func jobCalls(kind string, n int) []call {
	r := func(op string) call { return call{op: op, n: n} }
	switch kind {
	case "flood": // a run's start: read, post the state comment, label
		return []call{r("issue"), r("comments"), r("config"), r("permission"), r("comment"), r("label")}
	case "answer": // read the thread, edit the state, reply
		return []call{r("comments"), r("issue"), r("permission"), r("config"), r("edit"), r("comment")}
	case "chatter":
		return []call{r("comments"), r("issue")}
	case "push": // the PR, its checks, the config; the check run
		return []call{r("pull"), r("checks"), r("config"), r("check")}
	case "review":
		return []call{r("pull"), r("reviews"), r("comments"), r("comment")}
	}
	return nil
}

// simProcessor runs a replica's jobs against the fake GitHub.
type simProcessor struct {
	gh     *simClients
	events map[string]*simEvent
	cut    chan struct{}
	issues int
}

func (p *simProcessor) Process(ctx context.Context, j job.Job) error {
	e := p.events[j.Delivery]
	if e == nil {
		return fmt.Errorf("unknown delivery %q", j.Delivery)
	}
	ctx, cancel := p.cutCtx(ctx)
	defer cancel()
	err := p.gh.job(ctx, e.inst, e.kind, jobCalls(e.kind, e.issue))
	if err == nil {
		e.ended.Store(time.Now().UnixNano())
	}
	return err
}

// Sweep lists the installation's open issues and reads each one's
// comments, as background work (it leaves the interactive reserve).
func (p *simProcessor) Sweep(ctx context.Context, inst int64) error {
	ctx, cancel := p.cutCtx(ctx)
	defer cancel()
	ctx = budget.WithClass(ctx, budget.Background)
	calls := []call{{op: "open"}}
	n := p.issues
	if inst == floodInst {
		n = 0 // its backfill is the flood
	}
	for i := 1; i <= n; i++ {
		calls = append(calls, call{op: "comments", n: i})
	}
	return p.gh.job(ctx, inst, "sweep", calls)
}

// cutCtx ends with ctx or once the simulation is cut.
func (p *simProcessor) cutCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-p.cut:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

type simInstallations struct{ n int }

func (l simInstallations) Installations(context.Context) ([]int64, error) {
	ids := make([]int64, l.n)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	return ids, nil
}

// Simulate runs one simulation: it starts the replicas on one Redis prefix,
// sends the flood at once, then every other delivery spread over the
// window (each replica receiving every other one, like a load balancer),
// waits until every accepted interactive delivery's job ended, cuts the
// flood's rest, and reports.
func Simulate(ctx context.Context, o SimOptions) (SimResult, error) {
	o = o.withDefaults()
	if o.RedisURL == "" {
		return SimResult{}, fmt.Errorf("loadtest: the simulation needs a Redis (SimOptions.RedisURL)")
	}
	flood, interactive, err := simEvents(o)
	if err != nil {
		return SimResult{}, err
	}
	all := append(slices.Clone(flood), interactive...)
	byID := make(map[string]*simEvent, len(all))
	for i, e := range all {
		byID["sim-"+strconv.Itoa(i)] = e
	}
	g, err := newSimFake(o)
	if err != nil {
		return SimResult{}, err
	}
	defer g.fake.Close()
	ropts, err := redis.ParseURL(o.RedisURL)
	if err != nil {
		return SimResult{}, err
	}
	rdb := redis.NewClient(ropts)
	defer rdb.Close()
	holds := &holdCounter{}
	ghTransport := &http.Transport{MaxIdleConnsPerHost: 256}
	defer ghTransport.CloseIdleConnections()
	warnings := &warnCounter{n: map[string]int{}}
	cut := make(chan struct{})
	prefix := fmt.Sprintf("autopilot-sim:%d:", time.Now().UnixNano())
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	var urls []string
	var served []chan error
	for range o.Replicas {
		clients, err := g.replica(rdb, prefix, holds, ghTransport)
		if err != nil {
			return SimResult{}, err
		}
		p := &simProcessor{gh: clients, events: byID, cut: cut, issues: o.IssuesPer}
		lo := withDefaults(Options{Workers: o.Workers, RedisURL: o.RedisURL, QueueMax: 4 * len(all),
			Logger: slog.New(warnings)})
		srv, closeStore, err := newServerOn(lo, p, prefix, func(cfg *settings.Config, deps *server.Deps) {
			cfg.SweepInterval, cfg.ShutdownTimeout = o.SweepInterval, time.Second
			deps.Sweeper, deps.Installations = p, simInstallations{o.Installations}
		})
		if err != nil {
			return SimResult{}, err
		}
		defer closeStore()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return SimResult{}, fmt.Errorf("loadtest listen: %w", err)
		}
		urls = append(urls, "http://"+ln.Addr().String()+settings.DefaultWebhookPath)
		done := make(chan error, 1)
		served = append(served, done)
		go func() { done <- srv.Serve(serveCtx, ln) }()
	}

	start := time.Now()
	codes := make([]int, len(all))
	tr := &http.Transport{MaxIdleConnsPerHost: 32}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	sendOne := func(i int) {
		e := all[i]
		if e.touch {
			g.touch(e.inst, e.issue)
		}
		e.sent = time.Now()
		codes[i] = post(ctx, client, urls[i%len(urls)], e.req, "sim-"+strconv.Itoa(i))
	}
	// The flood at once, then the rest at its pace.
	sendPaced(len(flood), 32, func(int) time.Time { return time.Time{} }, sendOne)
	t0 := time.Now()
	step := o.Window / time.Duration(max(len(interactive), 1))
	sendPaced(len(interactive), 64, func(i int) time.Time { return t0.Add(time.Duration(i) * step) },
		func(i int) { sendOne(len(flood) + i) })

	// Wait for every accepted interactive delivery's job.
	deadline := time.Now().Add(10 * time.Minute)
	for i, e := range interactive {
		for codes[len(flood)+i] == http.StatusAccepted && e.ended.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	res := SimResult{Deliveries: len(all), Elapsed: time.Since(start), ByKind: map[string]kindCalls{}, Warnings: warnings.counts()}
	res.RedisMemory, res.RedisMemoryPeak = redisMemory(ctx, o.RedisURL)
	close(cut)
	stop()
	for _, d := range served {
		if err := <-d; err != nil {
			return SimResult{}, err
		}
	}
	for i, e := range all {
		switch codes[i] {
		case http.StatusAccepted:
			res.Accepted++
		case http.StatusServiceUnavailable:
			res.Refused++
		default:
			res.Other++
		}
		if e.kind == "flood" && e.ended.Load() != 0 {
			res.FloodRun++
		}
	}
	var answers, others []time.Duration
	worst := map[int64]time.Duration{}
	for _, e := range interactive {
		end := e.ended.Load()
		if end == 0 {
			continue
		}
		d := time.Unix(0, end).Sub(e.sent)
		if e.kind == "answer" {
			answers = append(answers, d)
			worst[e.inst] = max(worst[e.inst], d)
		} else {
			others = append(others, d)
		}
	}
	res.Answer, res.Interactive = percentiles(answers), percentiles(others)
	for _, d := range worst {
		res.AnswerWorst = max(res.AnswerWorst, d)
	}
	g.mu.Lock()
	for k, v := range g.byKind {
		res.ByKind[k] = *v
	}
	g.mu.Unlock()
	st := g.fake.LimitStats()
	res.Budgeted = map[int64]fakegithub.InstallationStats{}
	for inst := range o.Budgets {
		res.Budgeted[inst] = st.ByInstallation[inst]
	}
	res.NotModified, res.Primary, res.Secondary, res.InsideRetryAfter = st.NotModified, st.Primary, st.Secondary, st.InsideRetryAfter
	for inst, in := range st.ByInstallation {
		res.Calls += in.Requests
		if inst == 0 {
			res.Tokens = in.Requests // the App's own: token mints
		}
		if in.Primary+in.Secondary > 0 {
			res.LimitedInstallations++
		}
		if inst == floodInst {
			res.FloodCalls, res.FloodNotModified = in.Requests, in.NotModified
		}
	}
	res.HeldInteractive, res.HeldBackground = holds.get(budget.Interactive), holds.get(budget.Background)
	return res, nil
}

// warnCounter is a slog handler counting warnings and errors by message.
type warnCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (w *warnCounter) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w *warnCounter) Handle(_ context.Context, r slog.Record) error {
	w.mu.Lock()
	w.n[r.Message]++
	w.mu.Unlock()
	return nil
}
func (w *warnCounter) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnCounter) WithGroup(string) slog.Handler      { return w }

func (w *warnCounter) counts() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.n)
}

// sendPaced sends n deliveries with c goroutines, delivery i not before
// at(i).
func sendPaced(n, c int, at func(int) time.Time, send func(int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if d := time.Until(at(i)); d > 0 {
					time.Sleep(d) // pacing the sender, not timing a result
				}
				send(i)
			}
		})
	}
	wg.Wait()
}

// simEvents builds the flood (installation floodInst backfilling Flood
// issues) and every installation's interactive deliveries, interleaved so
// installations take turns, each signed.
func simEvents(o SimOptions) (flood, interactive []*simEvent, err error) {
	dir, err := servertest.Dir()
	if err != nil {
		return nil, nil, err
	}
	ps, err := servertest.Load(dir)
	if err != nil {
		return nil, nil, err
	}
	examples := map[string]servertest.Payload{}
	for kind, name := range map[string]string{"flood": "issues.labeled", "answer": "issue_comment.created",
		"chatter": "issue_comment.created", "push": "pull_request.synchronize", "review": "pull_request_review.submitted"} {
		if examples[kind], err = servertest.Find(ps, name); err != nil {
			return nil, nil, err
		}
	}
	mk := func(kind string, inst int64, issue int) (*simEvent, error) {
		p := examples[kind]
		body, err := servertest.Edit(p.Body, func(m map[string]any) {
			for _, k := range []string{"issue", "pull_request"} {
				if obj, ok := m[k].(map[string]any); ok {
					obj["number"] = issue
				}
			}
			if _, ok := m["number"]; ok {
				m["number"] = issue
			}
			m["installation"] = map[string]any{"id": inst}
			if repo, ok := m["repository"].(map[string]any); ok {
				repo["full_name"] = fmt.Sprintf("inst%d/repo", inst)
			}
		})
		if err != nil {
			return nil, err
		}
		e := &simEvent{kind: kind, inst: inst, issue: issue,
			req: request{event: p.Event, body: body, sig: server.Sign([]byte(secret), body)}}
		e.touch = strings.HasPrefix(p.Event, "issue_comment")
		return e, nil
	}
	for n := 1; n <= o.Flood; n++ {
		e, err := mk("flood", floodInst, n)
		if err != nil {
			return nil, nil, err
		}
		flood = append(flood, e)
	}
	per := []struct {
		kind string
		n    int
	}{{"answer", o.Answers}, {"chatter", o.Chatter}, {"push", o.Pushes}, {"review", o.Reviews}}
	for round := 0; ; round++ {
		added := false
		for _, k := range per {
			if round >= k.n {
				continue
			}
			added = true
			for inst := 2; inst <= o.Installations; inst++ {
				n := 1 + (round*7+inst)%o.IssuesPer
				if k.kind == "push" || k.kind == "review" {
					n = o.IssuesPer + 1 // the repository's pull request
				}
				e, err := mk(k.kind, int64(inst), n)
				if err != nil {
					return nil, nil, err
				}
				interactive = append(interactive, e)
			}
		}
		if !added {
			// Installations and kinds take turns at random (a fixed seed:
			// every run sends the same sequence).
			rnd := rand.New(rand.NewPCG(31, 1000))
			rnd.Shuffle(len(interactive), func(i, j int) { interactive[i], interactive[j] = interactive[j], interactive[i] })
			return flood, interactive, nil
		}
	}
}

// redisMemory reads used_memory and used_memory_peak (INFO memory).
func redisMemory(ctx context.Context, url string) (used, peak int64) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return 0, 0
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		return 0, 0
	}
	for line := range strings.Lines(info) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "used_memory":
			used = n
		case "used_memory_peak":
			peak = n
		}
	}
	return used, peak
}
