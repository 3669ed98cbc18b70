package loadtest

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/autopilot-dev/autopilot/internal/budget"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
)

// simPair is the simulation's fake GitHub with two replicas' clients on
// one Redis: installation 1 floods (one issue), 2 and 3 have two issues.
func simPair(t *testing.T) (g *simFake, a, b *simClients, holds *holdCounter) {
	t.Helper()
	rs := servertest.StartOwnRedis(t)
	opts, err := redis.ParseURL(rs.URL())
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	g, err = newSimFake(SimOptions{Installations: 3, IssuesPer: 2, Flood: 1}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.fake.Close)
	holds = &holdCounter{}
	prefix := fmt.Sprintf("autopilot-simtest:%d:", time.Now().UnixNano())
	if a, err = g.replica(rdb, prefix, holds, nil); err != nil {
		t.Fatal(err)
	}
	if b, err = g.replica(rdb, prefix, holds, nil); err != nil {
		t.Fatal(err)
	}
	return g, a, b, holds
}

// TestSimRepeatedReadIsA304FromTheOtherReplicasCache: the simulation's
// jobs read through the shared cache, so a read one replica made is a 304
// (not charged) when the other makes it, and a 200 again once a person
// commented.
func TestSimRepeatedReadIsA304FromTheOtherReplicasCache(t *testing.T) {
	g, a, b, _ := simPair(t)
	ctx := context.Background()
	read := []call{{op: "comments", n: 1}}
	for i, r := range []*simClients{a, b} {
		if err := r.job(ctx, 2, "chatter", read); err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
	}
	st := g.fake.LimitStats().ByInstallation[2]
	if st.Requests != 2 || st.NotModified != 1 {
		t.Fatalf("installation 2: %d requests, %d answered 304; want 2 and 1 (replica b's read revalidated replica a's)", st.Requests, st.NotModified)
	}
	g.touch(2, 1)
	if err := b.job(ctx, 2, "chatter", read); err != nil {
		t.Fatal(err)
	}
	if st := g.fake.LimitStats().ByInstallation[2]; st.Requests != 3 || st.NotModified != 1 {
		t.Errorf("after a person's comment: %d requests, %d answered 304; want 3 and 1 (the new comment is a 200)", st.Requests, st.NotModified)
	}
}

// TestSimOverBudgetIsHeldByTheBudgetNotRefused: an installation near the
// end of its hourly budget has its background reads held by the budget on
// every replica (the fake never answers them), interactive reads go on
// into the reserve, and once the budget is spent the other replica holds
// the interactive read too: no primary-limit answer, and the other
// installation is not held at all.
func TestSimOverBudgetIsHeldByTheBudgetNotRefused(t *testing.T) {
	g, a, b, holds := simPair(t)
	ctx := context.Background()
	bg := budget.WithClass(ctx, budget.Background)
	reset := time.Now().Add(time.Hour)
	// 1,002 of 5,000 left: one more answer puts it at the reserve (1,000).
	if err := g.fake.SetInstallationRateLimit(2, 5000, 1002, reset); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.job(bg, 2, "sweep", []call{{op: "issue", n: 1}, {op: "issue", n: 2}}))
	must(b.job(bg, 2, "sweep", []call{{op: "issue", n: 1}}))
	st := g.fake.LimitStats()
	if in := st.ByInstallation[2]; in.Requests != 2 || in.Primary != 0 {
		t.Errorf("installation 2 after 3 background reads at the reserve: %d requests reached GitHub, %d primary-limit answers; want 2 and 0", in.Requests, in.Primary)
	}
	if h := holds.get(budget.Background); h.Requests != 1 {
		t.Errorf("background holds %d, want 1 (replica b's read, told by replica a's answers)", h.Requests)
	}
	if k := g.byKind["sweep"]; k == nil || k.failed != 1 {
		t.Errorf("sweep calls that failed: %+v, want 1 (the held one)", k)
	}
	// Interactive work spends the reserve, down to nothing left.
	must(g.fake.SetInstallationRateLimit(2, 5000, 1, reset))
	// GitHub never drops a budget by a thousand within a second (its
	// secondary limits allow about 15 reads a second): let the replicas'
	// copies of the record (trusted for budget.DefaultFresh while far from
	// the end) age, as they would have while the reserve was spent.
	time.Sleep(budget.DefaultFresh)
	// (Reads not made before: the sweep's are 304s now, which GitHub does
	// not charge and the budget lets through.)
	must(a.job(ctx, 2, "answer", []call{{op: "comments", n: 1}, {op: "comments", n: 2}}))
	must(b.job(ctx, 2, "answer", []call{{op: "permission"}}))
	must(b.job(ctx, 3, "answer", []call{{op: "issue", n: 1}}))
	st = g.fake.LimitStats()
	if st.Primary != 0 || st.Secondary != 0 {
		t.Errorf("limit answers: primary %d, secondary %d; want 0 and 0 (the budget held them)", st.Primary, st.Secondary)
	}
	if in := st.ByInstallation[2]; in.Requests != 3 {
		t.Errorf("installation 2: %d requests reached GitHub, want 3 (the interactive read that spent the last one; the other two held)", in.Requests)
	}
	// Replica a's own transport saw remaining 0 and does not send; replica
	// b knows it only from the shared budget, which holds its read.
	if h := holds.get(budget.Interactive); h.Requests != 1 || h.Wait < 50*time.Minute {
		t.Errorf("interactive holds %+v, want 1 (replica b's read) held until the reset (about an hour)", h)
	}
	if k := g.byKind["answer"]; k == nil || k.failed != 2 {
		t.Errorf("answer calls that failed: %+v, want 2 (the two not sent)", k)
	}
	if in := st.ByInstallation[3]; in.Requests != 1 || in.Primary != 0 {
		t.Errorf("installation 3: %+v, want its read answered (budgets are per installation)", in)
	}
}

// TestSimulationSmallest runs the whole simulation at its smallest: every
// delivery accepted, every answer's job ended, calls counted per kind from
// the fake's answers, no limit answer.
func TestSimulationSmallest(t *testing.T) {
	rs := servertest.StartOwnRedis(t)
	res, err := Simulate(context.Background(), SimOptions{Installations: 4, IssuesPer: 2, Flood: 10,
		Window: 200 * time.Millisecond, PerRequest: time.Millisecond, Workers: 4, RedisURL: rs.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	if res.Accepted != res.Deliveries || res.Answer.N != 3 {
		t.Errorf("accepted %d of %d, %d answers ended; want all and 3", res.Accepted, res.Deliveries, int(res.Answer.N))
	}
	if res.Primary != 0 || res.Secondary != 0 {
		t.Errorf("limit answers: primary %d, secondary %d; want 0", res.Primary, res.Secondary)
	}
	if k := res.ByKind["answer"]; k.jobs != 3 || k.calls != 18 || k.failed != 0 {
		t.Errorf("answers: %+v, want 3 jobs of 6 calls, none failed", k)
	}
	if res.Tokens < 3 {
		t.Errorf("installation tokens minted: %d, want at least one per installation that answered", res.Tokens)
	}
}

// BenchmarkSimulation is issue 31's load simulation: installations on two
// replicas sharing one Redis (appendfsync always), one installation
// backfilling its issues while every other one answers, chats, pushes and
// reviews, against the fake GitHub (internal/fake/fakegithub over HTTP)
// enforcing each installation's primary and secondary limits, reached
// through the bot's client stack: App installation tokens, the budget and
// the conditional-request cache shared in the same Redis, the App's 1 s
// spacing of one installation's writes. It reports the limit answers (from
// the fake's counts), the answers' latency (from sending to the end of the
// job) while the flood runs, the 304 share, the budget's holds, calls per
// event kind and Redis's memory. Run it once; the default is the
// small size CI runs (100 installations, 1,000 issues, a 1,000-issue
// backfill, 20 ms per request); AUTOPILOT_SIM=full runs the full size
// (1,000 installations, 10,000 issues, a 10,000-issue backfill, 50 ms):
//
//	AUTOPILOT_SIM=full go test -run '^$' -bench Simulation -benchtime 1x -timeout 30m -v ./internal/server/loadtest/
func BenchmarkSimulation(b *testing.B) {
	rs := servertest.StartOwnRedis(b)
	o := SimOptions{Installations: 100, Flood: 1000, Window: 5 * time.Second, PerRequest: 20 * time.Millisecond}
	if os.Getenv("AUTOPILOT_SIM") == "full" {
		o = SimOptions{}
	}
	// Installation 2 starts just above the interactive reserve (its sweep
	// is held), installation 3 with 10 requests left (its deliveries need
	// about 26: the rest are held, not sent to be refused).
	o.Budgets = map[int64]int{2: 1005, 3: 10}
	o.RedisURL = rs.URL()
	// AUTOPILOT_MUTATION_GAP as the App reads it ("0s": no spacing).
	if v := os.Getenv("AUTOPILOT_MUTATION_GAP"); v != "" {
		gap, err := time.ParseDuration(v)
		if err != nil || gap < 0 {
			b.Fatalf("AUTOPILOT_MUTATION_GAP=%q: want a duration such as 1s, or 0s for none", v)
		}
		o.MutationGap = gap
		if gap == 0 {
			o.MutationGap = -1
		}
	}
	// WORKERS as the App reads it: each replica's workers.
	if v := os.Getenv("WORKERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("WORKERS=%q: want a positive number", v)
		}
		o.Workers = n
	}
	for range b.N {
		res, err := Simulate(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Primary), "primary-limited")
		b.ReportMetric(float64(res.Secondary), "secondary-limited")
		b.ReportMetric(res.Answer.P95.Seconds(), "answer-p95-s")
		b.ReportMetric(100*float64(res.NotModified)/float64(max(res.Calls, 1)), "304-%")
		for _, line := range strings.Split(res.String(), "\n") {
			b.Log(line)
		}
	}
}

// String is the report, one fact a line.
func (r SimResult) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "deliveries %d: accepted %d, refused %d, other %d; %s\n", r.Deliveries, r.Accepted, r.Refused, r.Other, r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(&sb, "flood jobs run before the last interactive job ended: %d\n", r.FloodRun)
	fmt.Fprintf(&sb, "answers (%d): p50 %s p95 %s p99 %s; slowest installation's answer %s\n", int(r.Answer.N),
		r.Answer.P50.Round(time.Millisecond), r.Answer.P95.Round(time.Millisecond), r.Answer.P99.Round(time.Millisecond), r.AnswerWorst.Round(time.Millisecond))
	fmt.Fprintf(&sb, "chatter, pushes, reviews (%d): p50 %s p95 %s p99 %s\n", int(r.Interactive.N),
		r.Interactive.P50.Round(time.Millisecond), r.Interactive.P95.Round(time.Millisecond), r.Interactive.P99.Round(time.Millisecond))
	fmt.Fprintf(&sb, "GitHub requests %d (%d token mints): 304 %d (%.1f%%), primary-limit answers %d, secondary-limit answers %d (%d sent inside a retry-after), to %d installations\n",
		r.Calls, r.Tokens, r.NotModified, 100*float64(r.NotModified)/float64(max(r.Calls, 1)), r.Primary, r.Secondary, r.InsideRetryAfter, r.LimitedInstallations)
	fmt.Fprintf(&sb, "  the flooder: %d requests, %d answered 304\n", r.FloodCalls, r.FloodNotModified)
	for _, inst := range slices.Sorted(maps.Keys(r.Budgeted)) {
		in := r.Budgeted[inst]
		fmt.Fprintf(&sb, "  installation %d (budget set low): %d requests answered, %d primary-limit, %d secondary-limit; %d of its hour used\n",
			inst, in.Requests, in.Primary, in.Secondary, in.Used)
	}
	fmt.Fprintf(&sb, "budget holds: interactive %d (%s in all), background %d (%s in all)\n",
		r.HeldInteractive.Requests, r.HeldInteractive.Wait.Round(time.Millisecond), r.HeldBackground.Requests, r.HeldBackground.Wait.Round(time.Millisecond))
	kinds := slices.Collect(maps.Keys(r.ByKind))
	slices.SortFunc(kinds, func(a, b string) int { return cmp.Compare(a, b) })
	for _, k := range kinds {
		c := r.ByKind[k]
		fmt.Fprintf(&sb, "  %-8s %6d jobs, %.1f calls each, %d calls failed (held past MaxWait or refused)\n", k, c.jobs,
			float64(c.calls)/float64(max(c.jobs, 1)), c.failed)
	}
	msgs := slices.Collect(maps.Keys(r.Warnings))
	slices.Sort(msgs)
	for _, m := range msgs {
		fmt.Fprintf(&sb, "  logged %d×: %s\n", r.Warnings[m], m)
	}
	fmt.Fprintf(&sb, "redis memory: %.1f MiB at the end, %.1f MiB peak", float64(r.RedisMemory)/(1<<20), float64(r.RedisMemoryPeak)/(1<<20))
	return sb.String()
}
