package loadtest

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/servertest"
)

// TestNoAcknowledgedDeliveryIsLostAtSaturation drives the server past what
// a slow processor can take: some deliveries must be refused with 503, and
// every one acknowledged with 202 must be processed exactly once.
func TestNoAcknowledgedDeliveryIsLostAtSaturation(t *testing.T) {
	res, err := Run(context.Background(), Options{
		Deliveries: 2000, Concurrency: 16, Workers: 2, QueueSize: 32, Delay: 2 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	if res.Refused == 0 {
		t.Errorf("no delivery was refused: the run did not saturate the queue")
	}
	if res.Lost != 0 || res.Duplicated != 0 {
		t.Errorf("lost %d, duplicated %d: want 0 and 0", res.Lost, res.Duplicated)
	}
	if res.Other != 0 {
		t.Errorf("%d deliveries got an unexpected answer", res.Other)
	}
	if res.Accepted+res.Ignored+res.Refused != res.Sent || res.Processed != res.Accepted {
		t.Errorf("accounting: %v", res)
	}
}

// TestRedisQueueLosesNothingAtSaturation is the same with the Redis work
// queue (QUEUE_MAX 32) on a Redis syncing every write to disk: some
// deliveries refused, every acknowledged one processed exactly once.
func TestRedisQueueLosesNothingAtSaturation(t *testing.T) {
	rs := servertest.StartOwnRedis(t)
	res, err := Run(context.Background(), Options{
		Deliveries: 2000, Concurrency: 16, Workers: 2, QueueMax: 32, Delay: 2 * time.Millisecond, RedisURL: rs.URL(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res)
	if res.Refused == 0 {
		t.Errorf("no delivery was refused: the run did not fill the stream")
	}
	if res.Lost != 0 || res.Duplicated != 0 || res.Other != 0 {
		t.Errorf("lost %d, duplicated %d, other %d: want 0", res.Lost, res.Duplicated, res.Other)
	}
	if res.Processed != res.Accepted {
		t.Errorf("accounting: %v", res)
	}
}

// BenchmarkModes runs the same load (no-op processor, 8 workers) against a
// bare handler that only checks the HMAC, the server with its in-process
// queue (1,000), and the server with the Redis work queue (its own
// redis-server, appendfsync always; QUEUE_MAX above the run, so every
// delivery takes the XADD path), in one run, and logs each one's
// deliveries/s and ack p99 as a ratio of the bare handler's. A fourth
// mode, redis-everysec, runs the Redis queue on a redis-server that syncs
// its append-only file once a second instead of before each answer — not
// the durable setting docs/app.md asks for, but the same code without the
// wait for the disk, so the two Redis rows tell the disk's share of the
// cost from the code's. Each mode runs at 32 client connections, and the
// bare handler, the in-process queue and the durable Redis queue again at
// 128 (GitHub delivers over many connections at once; the ratios are
// taken at the same count). Run with -v to see the ratios.
func BenchmarkModes(b *testing.B) {
	rs := servertest.StartOwnRedis(b)
	lazy := servertest.StartOwnRedisFsync(b, "everysec")
	base := Options{Concurrency: 32, Workers: 8, QueueSize: 1000}
	type mode struct {
		name    string
		o       Options
		rs      *servertest.OwnRedis
		clients int
	}
	modes := []mode{
		{"bare-hmac", Options{Bare: true}, nil, 32},
		{"in-process", Options{}, nil, 32},
		{"redis", Options{RedisURL: rs.URL(), QueueMax: 1 << 22}, rs, 32},
		{"redis-everysec", Options{RedisURL: lazy.URL(), QueueMax: 1 << 22}, lazy, 32},
		{"bare-hmac-c128", Options{Bare: true}, nil, 128},
		{"in-process-c128", Options{}, nil, 128},
		{"redis-c128", Options{RedisURL: rs.URL(), QueueMax: 1 << 22}, rs, 128},
	}
	results := map[string]Result{}
	redisCPU := map[string]time.Duration{}
	calls := map[string]map[string]float64{}
	script := map[string]time.Duration{} // redis-server's mean time in one script (EVALSHA)
	for _, m := range modes {
		o := base
		o.Bare, o.RedisURL, o.QueueMax, o.Concurrency = m.o.Bare, m.o.RedisURL, m.o.QueueMax, m.clients
		b.Run(m.name, func(b *testing.B) {
			if m.rs == nil {
				results[m.name] = bench(b, o)
				return
			}
			cpu0 := m.rs.CPUTime()
			calls0, usec0 := servertest.CommandCalls(b, o.RedisURL), servertest.CommandTime(b, o.RedisURL)
			results[m.name] = bench(b, o)
			redisCPU[m.name] = (m.rs.CPUTime() - cpu0) / time.Duration(max(b.N, 1))
			calls[m.name] = perDelivery(servertest.CommandCalls(b, o.RedisURL), calls0, max(b.N, 1))
			if n := calls[m.name]["evalsha"]; n > 0 {
				us := perDelivery(servertest.CommandTime(b, o.RedisURL), usec0, max(b.N, 1))["evalsha"]
				script[m.name] = time.Duration(us / n * float64(time.Microsecond))
			}
		})
	}
	bareAt := map[int]Result{}
	for _, m := range modes {
		if m.o.Bare {
			bareAt[m.clients] = results[m.name]
		}
	}
	for _, m := range modes {
		r, bare := results[m.name], bareAt[m.clients]
		if bare.PerSecond == 0 || r.PerSecond == 0 {
			continue // not run (-bench filtered it out)
		}
		b.Logf("%-16s %3d clients %7.0f deliveries/s (%.2f of bare), ack p50 %s, p99 %s (%.2fx bare), %s CPU each (%.0f%% of the process's %d CPUs busy), %.0f jobs/s",
			m.name, m.clients, r.PerSecond, r.PerSecond/bare.PerSecond, r.AckP50, r.AckP99,
			float64(r.AckP99)/float64(max(bare.AckP99, 1)), r.CPUPerDelivery, 100*r.Busy(), runtime.GOMAXPROCS(0), r.ProcessedPerSecond)
	}
	for _, m := range modes {
		if m.rs != nil && results[m.name].PerSecond > 0 {
			b.Logf("%s: redis-server used %s CPU per delivery on top (queue, dedupe, leases, acknowledgement); a script (append or workers' batch) ran %s in it on average",
				m.name, redisCPU[m.name], script[m.name].Round(time.Microsecond))
			if a := results[m.name].Appends; a.Batches > 0 {
				b.Logf("%s: appends: %.1f deliveries per round trip to Redis, %s a round trip as this process saw it (Redis's work and sync, and the wait for the goroutine to run)",
					m.name, float64(a.Deliveries)/float64(a.Batches), (a.RoundTrips / time.Duration(a.Batches)).Round(time.Microsecond))
			}
			b.Logf("%s: redis commands per delivery (a script's own calls counted too): %s", m.name, formatCalls(calls[m.name]))
		}
	}
}

// perDelivery is the calls between two readings per delivery.
func perDelivery(after, before map[string]int64, deliveries int) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d > 0 && k != "info" {
			out[k] = float64(d) / float64(deliveries)
		}
	}
	return out
}

// formatCalls lists calls per delivery, most frequent first.
func formatCalls(calls map[string]float64) string {
	names := slices.Collect(maps.Keys(calls))
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(calls[b], calls[a]) })
	var sb strings.Builder
	total := 0.0
	for _, n := range names {
		fmt.Fprintf(&sb, "%s %.2f, ", n, calls[n])
		total += calls[n]
	}
	fmt.Fprintf(&sb, "total %.2f", total)
	return sb.String()
}

// BenchmarkIntake measures verified deliveries per second and ack latency
// with a no-op processor. Run with e.g. -benchtime=20000x.
func BenchmarkIntake(b *testing.B) {
	bench(b, Options{Concurrency: 32, Workers: 8, QueueSize: 1000})
}

// BenchmarkIntakeSaturated measures the same against a slow processor
// (2ms per job, 4 workers, queue of 256): the queue fills, the overflow is
// refused with 503, and nothing acknowledged is lost.
func BenchmarkIntakeSaturated(b *testing.B) {
	bench(b, Options{Concurrency: 32, Workers: 4, QueueSize: 256, Delay: 2 * time.Millisecond})
}

func bench(b *testing.B, o Options) Result {
	o.Deliveries = max(b.N, 1)
	b.ResetTimer()
	res, err := Run(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(res.PerSecond, "deliveries/s")
	b.ReportMetric(float64(res.AckP50.Microseconds())/1000, "ack-p50-ms")
	b.ReportMetric(float64(res.AckP99.Microseconds())/1000, "ack-p99-ms")
	b.ReportMetric(float64(res.CPUPerDelivery.Microseconds()), "cpu-µs/delivery")
	b.ReportMetric(float64(res.Refused), "refused")
	b.ReportMetric(float64(res.Lost), "lost")
	if res.ProcessedPerSecond > 0 {
		b.ReportMetric(res.ProcessedPerSecond, "jobs/s")
	}
	if res.Lost != 0 || res.Duplicated != 0 || res.Other != 0 {
		b.Fatalf("lost %d duplicated %d other %d: %v", res.Lost, res.Duplicated, res.Other, res)
	}
	return res
}

// BenchmarkAnswerBehindFlood measures issue 31's fairness figure: how long
// one answer takes, from its acknowledgement to the end of its job, when
// 40 comments arrived just before it — on one issue of its installation,
// or on 40 issues of another installation — with 8 workers and jobs of 8
// GitHub requests at 50 ms and at 200 ms each (a job alone: 0.4 s and
// 1.6 s), with the in-process queue and with the Redis work queue. It
// reports answer-s; it asserts nothing about time. Run it once:
//
//	go test -run '^$' -bench AnswerBehindFlood -benchtime 1x ./internal/server/loadtest/
func BenchmarkAnswerBehindFlood(b *testing.B) {
	rs := servertest.StartOwnRedis(b)
	for _, flood := range []struct {
		name string
		o    FloodOptions
	}{
		{"one-issue", FloodOptions{FloodIssues: 1}},
		{"other-installation", FloodOptions{FloodIssues: 40, OtherInstallation: true}},
	} {
		for _, per := range []time.Duration{50 * time.Millisecond, 200 * time.Millisecond} {
			for _, mode := range []string{"in-process", "redis"} {
				b.Run(fmt.Sprintf("%s/%s/%s", flood.name, per, mode), func(b *testing.B) {
					o := flood.o
					o.PerRequest = per
					if mode == "redis" {
						o.RedisURL = rs.URL()
					}
					var total time.Duration
					for range b.N {
						d, err := AnswerBehindFlood(context.Background(), o)
						if err != nil {
							b.Fatal(err)
						}
						total += d
					}
					b.ReportMetric((total / time.Duration(b.N)).Seconds(), "answer-s")
				})
			}
		}
	}
}
