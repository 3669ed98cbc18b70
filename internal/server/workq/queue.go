// Package workq is the App server's in-process queue: bounded, FIFO per
// key, at most one job per key running at a time, and fair between
// installations and between the keys (issues) of one installation.
package workq

import (
	"cmp"
	"context"
	"math"
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
// Deliveries (interactive work) go before background work (sweeps): a
// free worker takes a ready delivery first; a sweep starts only when no
// delivery is ready, and at most half the workers (at least one, see
// SetWorkers) sweep at once, so a long sweep never holds every worker when
// answers arrive. A sweep still makes progress under steady deliveries:
// once one has waited BackgroundWait, the next free worker takes it, one
// such sweep at a time.
//
// One installation runs at most half the workers' jobs at once, at least
// two and at most TenantMax (see SetWorkers), so a flood queued before anyone else's work cannot take
// every worker while its jobs wait on its pacer.
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
// Redis work queue are pushed past the limit, since Redis bounds them (the
// reader holds at most redisq.Held of them), and so are sweeps (Background:
// at most one waiting per installation).
type Queue struct {
	limit   int
	closing chan struct{} // closed when intake has stopped for good
	depth   func(int)     // observer of the waiting count
	now     func() time.Time

	mu      sync.Mutex
	pending int // reserved + waiting jobs
	// background work waiting (part of pending, outside limit) and
	// running, and the most that may run at once.
	bgWaiting, bgRunning, bgMax int
	// tenantMax is the most jobs one installation runs at once.
	tenantMax int
	// waiters are the idle workers, each woken by one value.
	waiters []chan struct{}
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
	// background: its jobs are sweeps; since: when it became ready.
	background bool
	since      time.Time
}

// tenant is one installation's share of the queue.
type tenant struct {
	ready     []string // its ready delivery keys, longest ready first
	bgReady   []string // its ready background keys, likewise
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

// TenantMax is the most jobs of one installation a replica runs at once,
// however many workers it has: GitHub answers more than 100 requests of one
// installation in flight with a secondary limit, and a job has at most one
// in flight, so six replicas stay under it; and since an installation's
// writes go out one a second, more of its jobs at once would only wait.
const TenantMax = 16

// BackgroundWait is how long background work waits behind deliveries
// before the next free worker takes it anyway (one such job at a time).
const BackgroundWait = 30 * time.Second

// New is a queue of limit deliveries; depth observes the waiting count.
// Deliveries pushed past limit (read from Redis, which bounds them) and
// background work are not bounded here: sweeps by SetWorkers.
func New(limit int, depth func(int)) *Queue {
	if depth == nil {
		depth = func(int) {}
	}
	return &Queue{
		limit:   limit,
		closing: make(chan struct{}),
		depth:   depth,
		now:     time.Now,
		bgMax:   math.MaxInt,
		// Unbounded until SetWorkers.
		tenantMax: math.MaxInt,
		keys:      make(map[string]*keyJobs),
		tenants:   make(map[int64]*tenant),
	}
}

// SetWorkers bounds background work to half of the workers workers taking
// from the queue (at least one), and each installation's jobs to half of
// them (at least two, so that one installation's issues still run side by
// side on a small server) and to TenantMax. An
// installation's writes go out one at a time through its pacer (one a
// second), so its jobs beyond that share would mostly wait on it, holding
// workers another installation's answer needs.
func (q *Queue) SetWorkers(workers int) {
	q.mu.Lock()
	q.bgMax = max(1, workers/2)
	q.tenantMax = min(TenantMax, max(2, workers/2))
	q.mu.Unlock()
}

// Waiting reports whether a job with key waits (not runs).
func (q *Queue) Waiting(key string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	kj := q.keys[key]
	return kj != nil && len(kj.jobs) > 0
}

// Background queues background work (a sweep) outside the deliveries'
// room; false when a job with its key already waits (not runs): one
// waiting sweep covers the installation.
func (q *Queue) Background(w Work) bool {
	q.mu.Lock()
	if kj := q.keys[w.Key]; kj != nil && len(kj.jobs) > 0 {
		q.mu.Unlock()
		return false
	}
	q.pending++
	q.depth(q.pending)
	q.mu.Unlock()
	q.Commit(w)
	return true
}

// Reserve claims room for one job; false when the queue is full.
func (q *Queue) Reserve() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending-q.bgWaiting >= q.limit || q.closed {
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
		kj = &keyJobs{tenant: w.Installation(), background: w.Sweep != 0}
		q.keys[w.Key] = kj
	}
	if kj.background {
		q.bgWaiting++
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
	if kj.background {
		t.bgReady = append(t.bgReady, key)
		kj.since = q.now()
	} else {
		t.ready = append(t.ready, key)
	}
	kj.ready = true
	q.wakeOne()
}

// wakeOne wakes one idle worker, if any; q.mu held.
func (q *Queue) wakeOne() {
	if len(q.waiters) == 0 {
		return
	}
	ch := q.waiters[0]
	q.waiters[0] = nil
	q.waiters = q.waiters[1:]
	ch <- struct{}{} // buffered 1, sent to once
}

// pick takes the next ready key (see Queue) off its tenant's list: ""
// when none may start now. q.mu held.
func (q *Queue) pick() (string, *tenant) {
	first := func(t, best *tenant) bool {
		return best == nil || cmp.Or(cmp.Compare(t.running, best.running), cmp.Compare(t.lastStart, best.lastStart),
			cmp.Compare(t.joined, best.joined)) < 0
	}
	var best, bestBg, oldestBg *tenant
	var oldest time.Time
	for _, t := range q.tenants {
		if t.running >= q.tenantMax {
			continue // its share of the workers is taken
		}
		if len(t.ready) > 0 && first(t, best) {
			best = t
		}
		if len(t.bgReady) > 0 {
			if first(t, bestBg) {
				bestBg = t
			}
			if since := q.keys[t.bgReady[0]].since; oldestBg == nil || since.Before(oldest) {
				oldestBg, oldest = t, since
			}
		}
	}
	switch {
	case oldestBg != nil && q.bgRunning == 0 && q.now().Sub(oldest) >= BackgroundWait:
		return popKey(&oldestBg.bgReady), oldestBg
	case best != nil:
		return popKey(&best.ready), best
	case bestBg != nil && q.bgRunning < q.bgMax:
		return popKey(&bestBg.bgReady), bestBg
	}
	return "", nil
}

// popKey takes the first key off list.
func popKey(list *[]string) string {
	key := (*list)[0]
	(*list)[0] = ""
	*list = (*list)[1:]
	return key
}

// dropTenant forgets an installation with nothing ready or running; q.mu
// held.
func (q *Queue) dropTenant(id int64) {
	if t := q.tenants[id]; t != nil && t.running == 0 && len(t.ready) == 0 && len(t.bgReady) == 0 {
		delete(q.tenants, id)
	}
}

// Take waits for the next job whose key is free. It returns false once ctx
// ends, or once the queue is closed and nothing may start.
func (q *Queue) Take(ctx context.Context) (Work, bool) {
	for {
		if ctx.Err() != nil {
			return Work{}, false
		}
		q.mu.Lock()
		if w, ok := q.start(); ok {
			q.mu.Unlock()
			return w, true
		}
		if q.closed {
			// A worker still running loops back for what its job readies.
			q.mu.Unlock()
			return Work{}, false
		}
		wake := make(chan struct{}, 1)
		q.waiters = append(q.waiters, wake)
		q.mu.Unlock()
		select {
		case <-wake:
		case <-q.closing:
			q.leave(wake)
		case <-ctx.Done():
			q.leave(wake)
			return Work{}, false
		}
	}
}

// leave takes an idle worker's wake channel off the list; a wake it was
// sent meanwhile is passed on to another.
func (q *Queue) leave(wake chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if i := slices.Index(q.waiters, wake); i >= 0 {
		q.waiters = slices.Delete(q.waiters, i, i+1)
		return
	}
	q.wakeOne()
}

// tryTake is Take without waiting.
func (q *Queue) tryTake() (Work, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.start()
}

// start hands out the next job that may start now; q.mu held.
func (q *Queue) start() (Work, bool) {
	key, t := q.pick()
	if key == "" {
		return Work{}, false
	}
	kj := q.keys[key]
	w := kj.jobs[0]
	kj.jobs[0] = Work{}
	kj.jobs = kj.jobs[1:]
	kj.running, kj.ready = true, false
	if kj.background {
		q.bgWaiting--
		q.bgRunning++
	}
	q.starts++
	t.running++
	t.lastStart = q.starts
	q.pending--
	q.depth(q.pending)
	return w, true
}

// TakeEntries removes the Redis queue entries waiting (not running) and
// returns them, for a replica shutting down to hand them back. A key left
// with no job leaves its installation's ready list.
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
	t := q.tenants[kj.tenant]
	if t.running == q.tenantMax && len(t.ready)+len(t.bgReady) > 0 {
		q.wakeOne() // it was at its share: its ready work may start now
	}
	t.running--
	if kj.background {
		q.bgRunning--
		q.wakeOne() // a held sweep may start now
	}
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
