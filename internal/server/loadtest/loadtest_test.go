package loadtest

import (
	"context"
	"testing"
	"time"
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

func bench(b *testing.B, o Options) {
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
	if res.Lost != 0 || res.Duplicated != 0 || res.Other != 0 {
		b.Fatalf("lost %d duplicated %d other %d: %v", res.Lost, res.Duplicated, res.Other, res)
	}
}
