// Package workq is the App server's in-process queue: bounded, FIFO per
// key, at most one job per key running at a time.
package workq

import (
	"context"
	"sync"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/job"
)

// Work is one queued unit: a delivery to process, or a sweep of an
// installation (Sweep != 0).
type Work struct {
	Job    job.Job
	Key    string   // serialisation key: jobs with equal keys never run at once
	Locks  []string // lease keys held while the job runs, sorted
	Sweep  int64    // installation to sweep; 0 for a delivery
	Entry  string   // Redis stream entry id, "" for in-process work
	Queued time.Time
}

// Queue is a bounded FIFO of work that hands out at most one job per key at a
// time, so jobs for one issue run in arrival order and never concurrently,
// while jobs for different issues run side by side.
//
// Capacity is reserved before a job is committed, so intake can refuse
// (503) before it records the delivery as seen, and a committed job always
// has a place: commit never blocks and never drops. Entries read from the
// Redis work queue are pushed past the limit (at most `extra` of them at
// once: the reader holds no more than that), since Redis bounds them.
type Queue struct {
	limit   int
	ready   chan string   // keys with waiting jobs and no running job
	closing chan struct{} // closed when intake has stopped for good
	depth   func(int)     // observer of the waiting count

	mu      sync.Mutex
	pending int // reserved + waiting jobs
	keys    map[string]*keyJobs
	closed  bool
}

type keyJobs struct {
	jobs    []Work
	running bool
}

// New is a queue of limit jobs, plus room for extra pushed ones; depth
// observes the waiting count.
func New(limit, extra int, depth func(int)) *Queue {
	if depth == nil {
		depth = func(int) {}
	}
	return &Queue{
		limit:   limit,
		ready:   make(chan string, limit+extra),
		closing: make(chan struct{}),
		depth:   depth,
		keys:    make(map[string]*keyJobs),
	}
}

// Reserve claims room for one job; false when the queue is full.
func (q *Queue) Reserve() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending >= q.limit || q.closed {
		return false
	}
	q.pending++
	q.depth(q.pending)
	return true
}

// Unreserve gives back a reservation that will not be committed.
func (q *Queue) Unreserve() {
	q.mu.Lock()
	q.pending--
	q.depth(q.pending)
	q.mu.Unlock()
}

// Push places w without a reservation (see queue).
func (q *Queue) Push(w Work) {
	q.mu.Lock()
	q.pending++
	q.depth(q.pending)
	q.mu.Unlock()
	q.Commit(w)
}

// Commit places w into a reserved slot.
func (q *Queue) Commit(w Work) {
	q.mu.Lock()
	defer q.mu.Unlock()
	kj := q.keys[w.Key]
	if kj == nil {
		kj = &keyJobs{}
		q.keys[w.Key] = kj
	}
	kj.jobs = append(kj.jobs, w)
	if len(kj.jobs) == 1 && !kj.running {
		// At most one ready entry per key and pending >= ready entries, so
		// this send never blocks.
		q.ready <- w.Key
	}
}

// Take waits for the next job whose key is free. It returns false once ctx
// ends, or once the queue is closed and nothing is ready.
func (q *Queue) Take(ctx context.Context) (Work, bool) {
	if ctx.Err() != nil {
		return Work{}, false
	}
	for {
		var key string
		select {
		case key = <-q.ready:
		default:
			select {
			case key = <-q.ready:
			case <-q.closing:
				// A key may have become ready since; take it before giving up.
				select {
				case key = <-q.ready:
				default:
					return Work{}, false
				}
			case <-ctx.Done():
				return Work{}, false
			}
		}
		q.mu.Lock()
		kj := q.keys[key]
		if kj == nil || kj.running || len(kj.jobs) == 0 {
			// Stale: its jobs were taken out by takeEntries.
			q.mu.Unlock()
			continue
		}
		w := kj.jobs[0]
		kj.jobs[0] = Work{}
		kj.jobs = kj.jobs[1:]
		kj.running = true
		q.pending--
		q.depth(q.pending)
		q.mu.Unlock()
		return w, true
	}
}

// TakeEntries removes the Redis queue entries waiting (not running) and
// returns them, for a replica shutting down to hand them back. Their keys
// may stay in ready; take skips them.
func (q *Queue) TakeEntries() []Work {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []Work
	for key, kj := range q.keys {
		kept := kj.jobs[:0]
		for _, w := range kj.jobs {
			if w.Entry != "" {
				out = append(out, w)
				q.pending--
				continue
			}
			kept = append(kept, w)
		}
		clear(kj.jobs[len(kept):])
		kj.jobs = kept
		if len(kj.jobs) == 0 && !kj.running {
			delete(q.keys, key)
		}
	}
	q.depth(q.pending)
	return out
}

// Done marks the running job of key finished and readies the key's next job.
// The caller loops back into take, so a key readied here is never stranded
// when the queue is closing.
func (q *Queue) Done(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	kj := q.keys[key]
	kj.running = false
	if len(kj.jobs) > 0 {
		q.ready <- key
		return
	}
	delete(q.keys, key)
}

// Close stops reservations; workers return once nothing is left.
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		close(q.closing)
	}
}

// Len is the number of reserved and waiting jobs.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending
}
