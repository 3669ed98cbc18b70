package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/redisq"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
)

// blockingProcessor records the order jobs start in and holds each until
// released: the tests count starts, they never time them.
type blockingProcessor struct {
	started chan string
	release chan struct{}
}

func newBlockingProcessor() *blockingProcessor {
	return &blockingProcessor{started: make(chan string, 1000), release: make(chan struct{}, 1000)}
}

func (p *blockingProcessor) Process(ctx context.Context, j job.Job) error {
	p.started <- j.Delivery
	select {
	case <-p.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// next is the delivery of the next job to start.
func (p *blockingProcessor) next(t *testing.T, after string) string {
	t.Helper()
	select {
	case d := <-p.started:
		return d
	case <-time.After(10 * time.Second):
		t.Fatalf("no job started %s", after)
		return ""
	}
}

// installationDelivery is an issues.labeled delivery on issue n of
// installation inst.
func installationDelivery(t testing.TB, id string, n int, inst int64) delivery {
	t.Helper()
	d := issueDelivery(t, id, n)
	body, err := servertest.WithInstallation(d.body, inst)
	if err != nil {
		t.Fatal(err)
	}
	d.body = body
	return d
}

// fairnessServer starts a server on the in-process queue, or on the Redis
// work queue when redis is set, running p with workers workers.
func fairnessServer(t *testing.T, redis bool, workers int, p Processor) (*Server, running) {
	t.Helper()
	cfg := testConfig()
	cfg.Workers = workers
	cfg.QueueSize = 200
	deps := Deps{Processor: p}
	if redis {
		u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
		store := servertest.OpenRedis(t, redisq.New, u, redisq.Options{Prefix: prefix, LockTTL: cfg.LockTTL, PollMax: 5 * time.Millisecond})
		deps.Queue, deps.Deduper, deps.Locker = store, store, store
	}
	return start(t, cfg, deps)
}

// awaitHeld waits until the replica holds d's job (read from the stream,
// not started): a 202 means stored in Redis, and the replica reads it a
// moment later. The ordering tests free a worker only after that, so they
// test the scheduler's choice, not the reader's race with the release.
func awaitHeld(t *testing.T, s *Server, d delivery) {
	t.Helper()
	ev, err := ghevent.Decode(d.event, d.body)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := jobKeys(ev)
	eventually(t, d.id+" held by the replica", func() bool { return s.queue.Waiting(key) })
}

func sendAccepted(t *testing.T, d delivery, url string) {
	t.Helper()
	if code, _ := d.send(t, url); code != http.StatusAccepted {
		t.Fatalf("%s answered %d, want 202", d.id, code)
	}
}

// TestFloodOnOneIssueDoesNotHoldTheWorkers: 40 deliveries on issue 1, then
// one on issue 2 of the same installation, 2 workers, the first job held:
// the answer on issue 2 is the second job to start, in process and with
// the Redis work queue (which reads past the workers' count into per-issue
// lanes instead of holding only as many entries as it has workers).
func TestFloodOnOneIssueDoesNotHoldTheWorkers(t *testing.T) {
	for _, mode := range []string{"in-process", "redis"} {
		t.Run(mode, func(t *testing.T) {
			p := newBlockingProcessor()
			_, srv := fairnessServer(t, mode == "redis", 2, p)
			t.Cleanup(func() { close(p.release) })
			for i := range 40 {
				sendAccepted(t, issueDelivery(t, fmt.Sprintf("flood-%d", i), 1), srv.url)
			}
			sendAccepted(t, issueDelivery(t, "answer", 2), srv.url)
			if first := p.next(t, "at all"); first != "flood-0" {
				t.Fatalf("first job %s, want flood-0", first)
			}
			// flood-0 is held: the other worker must take the answer, not
			// wait behind issue 1.
			if second := p.next(t, "while flood-0 runs (the answer on issue 2 waits behind issue 1's flood)"); second != "answer" {
				t.Fatalf("second job %s, want answer", second)
			}
		})
	}
}

// TestFloodOnOneInstallationDoesNotDelayAnother: 40 deliveries on 40
// issues of installation 1, then one of installation 2, 2 workers each job
// held: once a worker is free, the next job to start is installation 2's
// (the installation running the fewest jobs goes first), in process and
// with the Redis work queue.
func TestFloodOnOneInstallationDoesNotDelayAnother(t *testing.T) {
	for _, mode := range []string{"in-process", "redis"} {
		t.Run(mode, func(t *testing.T) {
			const workers = 2
			p := newBlockingProcessor()
			s, srv := fairnessServer(t, mode == "redis", workers, p)
			t.Cleanup(func() { close(p.release) })
			for i := range 40 {
				sendAccepted(t, installationDelivery(t, fmt.Sprintf("flood-%d", i), 1+i, 1), srv.url)
			}
			other := installationDelivery(t, "other", 100, 2)
			sendAccepted(t, other, srv.url)
			var order []string
			for !slices.Contains(order, "other") {
				if len(order) > workers {
					t.Fatalf("start order %v: installation 2's delivery not among the first %d jobs", order, workers+1)
				}
				if len(order) == workers {
					awaitHeld(t, s, other)
					p.release <- struct{}{} // free one worker
				}
				order = append(order, p.next(t, fmt.Sprintf("after %v", order)))
			}
		})
	}
}

// TestBacklogAtTheStreamsFrontDoesNotHoldAnother: 2,000 deliveries of
// installation 1 at the front of the Redis stream, then one of
// installation 2, 2 workers, each job held: installation 2's delivery
// starts among the first workers+1 jobs, though it sits far past the
// replica's read-ahead (Held) in the stream: the reader reads past one
// installation's backlog, keeping only the ids of what it cannot hold.
func TestBacklogAtTheStreamsFrontDoesNotHoldAnother(t *testing.T) {
	const workers, flood = 2, 2000
	p := newBlockingProcessor()
	cfg := testConfig()
	cfg.Workers = workers
	cfg.QueueSize = flood + 10
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	store := servertest.OpenRedis(t, redisq.New, u, redisq.Options{Prefix: prefix, LockTTL: cfg.LockTTL, PollMax: 5 * time.Millisecond})
	s, srv := start(t, cfg, Deps{Processor: p, Queue: store, Deduper: store, Locker: store})
	t.Cleanup(func() { close(p.release) })
	for i := range flood {
		sendAccepted(t, installationDelivery(t, fmt.Sprintf("flood-%d", i), 1+i, 1), srv.url)
	}
	other := installationDelivery(t, "other", flood+100, 2)
	sendAccepted(t, other, srv.url)
	var order []string
	for !slices.Contains(order, "other") {
		if len(order) > workers {
			t.Fatalf("start order %v: installation 2's delivery, behind %d of installation 1 in the stream, not among the first %d jobs",
				order, flood, workers+1)
		}
		if len(order) == workers {
			awaitHeld(t, s, other)
			p.release <- struct{}{} // free one worker
		}
		order = append(order, p.next(t, fmt.Sprintf("after %v", order)))
	}
}

// sweepStarts is a Sweeper that reports each sweep's start to the
// blocking processor's start list ("sweep") and holds it like a job.
type sweepStarts struct{ p *blockingProcessor }

func (s sweepStarts) Sweep(ctx context.Context, _ int64) error {
	return s.p.Process(ctx, job.Job{Delivery: "sweep"})
}

type listed []int64

func (l listed) Installations(context.Context) ([]int64, error) { return l, nil }

// TestSweepsAtStartDoNotHoldAnAnswer: 200 installations' sweeps are
// queued at start, each held once it starts; an answer sent after starts
// at once on a free worker (sweeps take at most half of the 4 workers),
// though no sweep finished.
func TestSweepsAtStartDoNotHoldAnAnswer(t *testing.T) {
	p := newBlockingProcessor()
	cfg := testConfig()
	cfg.Workers = 4
	cfg.SweepInterval = time.Hour
	ids := make(listed, 200)
	for i := range ids {
		ids[i] = int64(i + 10)
	}
	_, srv := start(t, cfg, Deps{Processor: p, Sweeper: sweepStarts{p}, Installations: ids})
	t.Cleanup(func() { close(p.release) })
	for range 2 {
		if got := p.next(t, "at start"); got != "sweep" {
			t.Fatalf("started %s, want a sweep", got)
		}
	}
	sendAccepted(t, installationDelivery(t, "answer", 1, 3), srv.url)
	if got := p.next(t, "after the answer (held behind the start's sweeps)"); got != "answer" {
		t.Fatalf("started %s with two sweeps running and 198 waiting, want the answer", got)
	}
}
