package loadtest

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/servertest"
)

// TestSimGitHubAnswersAsGitHubDoes pins the simulated GitHub's rules: a
// conditional read of an unchanged resource is 304 and not charged, a
// write makes the next read 200, an installation past its hourly budget
// gets primary-limit answers, one creating content past 80 a minute or 500
// an hour gets secondary-limit answers, and each installation has its own
// budget.
func TestSimGitHubAnswersAsGitHubDoes(t *testing.T) {
	ctx := context.Background()
	g := newSimGitHub(0, 1)
	read, write := call{resource: "r"}, call{write: true, resource: "r"}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(g.job(ctx, 0, 1, "k", []call{read, read, write, read}))
	if g.notModified != 1 || g.inst[1].hour != 3 {
		t.Errorf("304s %d, charged %d: want 1 and 3 (read 200, read 304, write, read 200)", g.notModified, g.inst[1].hour)
	}
	g.inst[1].hour = primaryPerHour
	must(g.job(ctx, 0, 1, "k", []call{{resource: "other"}}))
	must(g.job(ctx, 0, 2, "k", []call{{resource: "other"}}))
	if g.primary != 1 {
		t.Errorf("primary-limit answers %d, want 1 (installation 1 only)", g.primary)
	}
	var creates []call
	for range contentPerMinute + 5 {
		creates = append(creates, call{write: true, creates: true, resource: "c"})
	}
	must(g.job(ctx, 0, 3, "k", creates[:contentPerMinute]))
	if g.secondary != 0 {
		t.Errorf("secondary-limit answers %d after %d creations, want 0", g.secondary, contentPerMinute)
	}
	must(g.job(ctx, 0, 4, "k", creates))
	if g.secondary != 5 {
		t.Errorf("secondary-limit answers %d after %d creations, want 5", g.secondary, len(creates))
	}
	// 500 creations an hour, even when each minute stays under 80.
	g.inst[5] = &instUse{created: contentPerHour}
	must(g.job(ctx, 0, 5, "k", creates[:1]))
	if g.secondary != 6 {
		t.Errorf("secondary-limit answers %d after the hour's %d creations, want 6", g.secondary, contentPerHour+1)
	}
}

// BenchmarkSimulation is issue 31's load simulation: installations on two
// replicas sharing one Redis (appendfsync always), one installation
// backfilling its issues while every other one answers, chats, pushes and
// reviews, against a simulated GitHub enforcing each installation's primary
// and secondary limits. It reports the limit answers, the answers' latency
// (from sending to the end of the job) while the flood runs, the 304 share,
// calls per event kind and Redis's memory. Run it once; the default is the
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
	o.RedisURL = rs.URL()
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
	fmt.Fprintf(&sb, "GitHub calls %d: 304 %d (%.1f%%), primary-limit answers %d, secondary-limit answers %d, to %d installations\n",
		r.Calls, r.NotModified, 100*float64(r.NotModified)/float64(max(r.Calls, 1)), r.Primary, r.Secondary, r.LimitedInstallations)
	kinds := slices.Collect(maps.Keys(r.ByKind))
	slices.SortFunc(kinds, func(a, b string) int { return cmp.Compare(a, b) })
	for _, k := range kinds {
		c := r.ByKind[k]
		fmt.Fprintf(&sb, "  %-8s %6d jobs, %.1f calls each (%.1f answered 304)\n", k, c.jobs,
			float64(c.calls)/float64(max(c.jobs, 1)), float64(c.notModified)/float64(max(c.jobs, 1)))
	}
	msgs := slices.Collect(maps.Keys(r.Warnings))
	slices.Sort(msgs)
	for _, m := range msgs {
		fmt.Fprintf(&sb, "  logged %d×: %s\n", r.Warnings[m], m)
	}
	fmt.Fprintf(&sb, "redis memory: %.1f MiB at the end, %.1f MiB peak", float64(r.RedisMemory)/(1<<20), float64(r.RedisMemoryPeak)/(1<<20))
	return sb.String()
}
