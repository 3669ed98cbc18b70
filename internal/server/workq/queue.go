// Package workq is the App server's in-process queue: bounded, FIFO per
// key, at most one job per key running at a time, and fair between
// installations and between the keys (issues) of one installation.
package workq

import (
	"cmp"
	"context"
	"slices"
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
// Which key runs next is fair: a free worker takes from the installation
// running the fewest jobs now (ties: the one that started a job longest
// ago, then the one queued first), and within it the key that has waited longest to be ready; a key
// whose job finished goes behind the keys already waiting. So a flood on
// one issue holds one worker, and a flood on one installation, however
// many issues it spans, cannot keep another installation's work waiting
// for more than one job to finish.
//
// Capacity is reserved before a job is committed, so intake can refuse
// (503) before it records the delivery as seen, and a committed job always
// has a place: commit never blocks and never drops. Entries read from the
// Redis work queue are pushed past the limit (at most `extra` of them at
// once: the reader holds no more than that), since Redis bounds them.
type Queue struct {
	limit   int
	avail   chan struct{} // one value per ready key: keys with waiting jobs and no running job
	closing chan struct{} // closed when intake has stopped for good
	depth   func(int)     // observer of the waiting count

	mu      sync.Mutex
	pending int // reserved + waiting jobs
	keys    map[string]*keyJobs
	// tenants are the installations with ready keys or running jobs.
	tenants map[int64]*tenant
	starts  uint64 // jobs handed out, to order the tenants' last starts
	joins   uint64 // tenants created, to order tenants that never started a job
	closed  bool
}

type keyJobs struct {
	jobs    []Work
	running bool
	ready   bool  // in its tenant's ready list
	tenant  int64 // the installation of its jobs
}

// tenant is one installation's share of the queue.
type tenant struct {
	ready     []string // its ready keys, longest ready first
	running   int
	lastStart uint64
	joined    uint64
}

// Installation is the installation w belongs to: the one swept, or the
// delivery's (0 when it names none).
func (w Work) Installation() int64 {
	if w.Sweep != 0 {
		return w.Sweep
	}
	if w.Job.Event != nil {
		return w.Job.Event.Installation
	}
	return 0
}

// New is a queue of limit jobs, plus room for extra pushed ones; depth
// observes the waiting count.
func New(limit, extra int, depth func(int)) *Queue {
	if depth == nil {
		depth = func(int) {}
	}
	return &Queue{
		limit:   limit,
		avail:   make(chan struct{}, limit+extra),
		closing: make(chan struct{}),
		depth:   depth,
		keys:    make(map[string]*keyJobs),
		tenants: make(map[int64]*tenant),
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
		kj = &keyJobs{tenant: w.Installation()}
		q.keys[w.Key] = kj
	}
	kj.jobs = append(kj.jobs, w)
	if len(kj.jobs) == 1 && !kj.running {
		q.makeReady(w.Key, kj)
	}
}

// makeReady puts key behind its installation's ready keys; q.mu held.
func (q *Queue) makeReady(key string, kj *keyJobs) {
	t := q.tenants[kj.tenant]
	if t == nil {
		q.joins++
		t = &tenant{joined: q.joins}
		q.tenants[kj.tenant] = t
	}
	t.ready = append(t.ready, key)
	kj.ready = true
	// At most one value per ready key and pending >= ready keys, so this
	// send never blocks.
	q.avail <- struct{}{}
}

// pick takes the next ready key (see Queue) off its tenant's list: "" when
// none is ready (the value taken from avail was for a key TakeEntries
// emptied). q.mu held.
func (q *Queue) pick() (string, *tenant) {
	var best *tenant
	for _, t := range q.tenants {
		if len(t.ready) == 0 {
			continue
		}
		if best == nil || cmp.Or(cmp.Compare(t.running, best.running), cmp.Compare(t.lastStart, best.lastStart),
			cmp.Compare(t.joined, best.joined)) < 0 {
			best = t
		}
	}
	if best == nil {
		return "", nil
	}
	key := best.ready[0]
	best.ready[0] = ""
	best.ready = best.ready[1:]
	return key, best
}

// dropTenant forgets an installation with nothing ready or running; q.mu
// held.
func (q *Queue) dropTenant(id int64) {
	if t := q.tenants[id]; t != nil && t.running == 0 && len(t.ready) == 0 {
		delete(q.tenants, id)
	}
}

// Take waits for the next job whose key is free. It returns false once ctx
// ends, or once the queue is closed and nothing is ready.
func (q *Queue) Take(ctx context.Context) (Work, bool) {
	if ctx.Err() != nil {
		return Work{}, false
	}
	for {
		select {
		case <-q.avail:
		default:
			select {
			case <-q.avail:
			case <-q.closing:
				// A key may have become ready since; take it before giving up.
				select {
				case <-q.avail:
				default:
					return Work{}, false
				}
			case <-ctx.Done():
				return Work{}, false
			}
		}
		q.mu.Lock()
		key, t := q.pick()
		if key == "" {
			// Its key was emptied by TakeEntries.
			q.mu.Unlock()
			continue
		}
		kj := q.keys[key]
		w := kj.jobs[0]
		kj.jobs[0] = Work{}
		kj.jobs = kj.jobs[1:]
		kj.running, kj.ready = true, false
		q.starts++
		t.running++
		t.lastStart = q.starts
		q.pending--
		q.depth(q.pending)
		q.mu.Unlock()
		return w, true
	}
}

// TakeEntries removes the Redis queue entries waiting (not running) and
// returns them, for a replica shutting down to hand them back. A key left
// with no job leaves its installation's ready list (its value in avail
// stays; Take skips it).
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
		if len(kj.jobs) == 0 && kj.ready {
			t := q.tenants[kj.tenant]
			t.ready = slices.DeleteFunc(t.ready, func(k string) bool { return k == key })
			kj.ready = false
			q.dropTenant(kj.tenant)
		}
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
	q.tenants[kj.tenant].running--
	if len(kj.jobs) > 0 {
		q.makeReady(key, kj)
		return
	}
	delete(q.keys, key)
	q.dropTenant(kj.tenant)
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
