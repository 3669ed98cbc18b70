package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Group is the Actions concurrency setting a Scheduler emulates for
// Action-mode runs.
type Group int

const (
	// NoGroup: every delivery starts its own run at once; runs may overlap.
	NoGroup Group = iota
	// GroupSingle is a concurrency group with GitHub's default queue: one
	// run in progress and one pending; a newer pending run cancels the
	// older pending one.
	GroupSingle
	// GroupMax is a concurrency group with queue: max: pending runs wait
	// and run in order, none is cancelled.
	GroupMax
)

func (g Group) String() string {
	switch g {
	case GroupSingle:
		return "group(queue:single)"
	case GroupMax:
		return "group(queue:max)"
	}
	return "no-group"
}

// Fault is what the network does to one delivery.
type Fault struct {
	// Drop loses the delivery (GitHub does not retry failed deliveries).
	Drop bool
	// Duplicate sends that many extra copies with the same delivery id: a
	// redelivery, or a re-run of the same Actions event.
	Duplicate int
	// ReEmit sends that many extra copies with new delivery ids.
	ReEmit int
	// Delay holds the first copy back; copies follow within Spread.
	Delay  time.Duration
	Spread time.Duration
}

// Policy is how often a Scheduler draws each fault.
type Policy struct {
	Drop, Duplicate, ReEmit float64
	// MaxDelay bounds a random delay (which is what reorders deliveries).
	MaxDelay time.Duration
}

// Scheduler turns deliveries into runs under faults, seeded for replay.
// In Action mode each arrival is a run (World.ActionRun) subject to the
// concurrency Group; in App mode each arrival is POSTed to the webhook
// server. Time only moves forward: an arrival is processed at its time, or
// later when a run (which takes fake time) is still going.
type Scheduler struct {
	w   *World
	rnd *rand.Rand
	// Group is the Actions concurrency rule (Action mode).
	Group Group
	// Overlap, with NoGroup, runs deliveries arriving within Overlap of
	// each other at the same time (goroutines): the real concurrency of
	// parallel Actions runs.
	Overlap time.Duration
	Policy  Policy
	// Trace logs every decision, for a failing seed's report.
	Trace []string

	queue     []arrival
	seq       int
	busyUntil time.Time
	pending   []Delivery
}

type arrival struct {
	at  time.Time
	seq int
	d   Delivery
}

// NewScheduler returns a scheduler for w whose random choices come from seed.
func NewScheduler(w *World, seed uint64) *Scheduler {
	return &Scheduler{w: w, rnd: rand.New(rand.NewPCG(seed, 0x5eed))}
}

func (s *Scheduler) tracef(format string, args ...any) {
	s.Trace = append(s.Trace, s.w.Clock.Now().Format("15:04:05")+" "+fmt.Sprintf(format, args...))
}

// Send schedules d under fault f.
func (s *Scheduler) Send(d Delivery, f Fault) {
	if f.Drop {
		s.tracef("drop %s", d)
		return
	}
	at := s.w.Clock.Now().Add(f.Delay)
	s.enqueue(at, d)
	for range f.Duplicate {
		s.enqueue(at.Add(s.spread(f.Spread)), d)
	}
	for range f.ReEmit {
		c := d
		c.ID = s.w.deliveryID()
		c.What += " (re-emitted)"
		s.enqueue(at.Add(s.spread(f.Spread)), c)
	}
	s.tracef("send %s delay=%s dup=%d reemit=%d", d, f.Delay, f.Duplicate, f.ReEmit)
}

func (s *Scheduler) spread(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(s.rnd.Int64N(int64(d)))
}

// Random draws a fault from the policy; droppable false never drops (for
// deliveries nothing else recovers, see docs/reliability.md).
func (s *Scheduler) Random(droppable bool) Fault {
	p := s.Policy
	f := Fault{}
	if droppable && s.rnd.Float64() < p.Drop {
		f.Drop = true
		return f
	}
	if s.rnd.Float64() < p.Duplicate {
		f.Duplicate = 1
	}
	if s.rnd.Float64() < p.ReEmit {
		f.ReEmit = 1
	}
	if p.MaxDelay > 0 && s.rnd.IntN(2) == 0 {
		f.Delay = time.Duration(s.rnd.Int64N(int64(p.MaxDelay)))
	}
	f.Spread = p.MaxDelay
	return f
}

// SendRandom schedules d under a fault drawn from the policy.
func (s *Scheduler) SendRandom(d Delivery, droppable bool) { s.Send(d, s.Random(droppable)) }

func (s *Scheduler) enqueue(at time.Time, d Delivery) {
	s.seq++
	s.queue = append(s.queue, arrival{at: at, seq: s.seq, d: d})
	slices.SortStableFunc(s.queue, func(a, b arrival) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.seq - b.seq
	})
}

// Until processes every arrival due by now+d (moving the clock to each),
// plus the runs they leave pending.
func (s *Scheduler) Until(d time.Duration) {
	limit := s.w.Clock.Now().Add(d)
	for s.step(limit, false) {
	}
	s.w.Clock.AdvanceTo(limit)
}

// Drain processes everything scheduled, however far ahead, and waits for
// the App server to go idle.
func (s *Scheduler) Drain() {
	for s.step(time.Time{}, true) {
	}
	if s.w.app != nil {
		s.w.app.idle(s.w.tb)
	}
}

// step processes one arrival or pending run; false when nothing is due.
func (s *Scheduler) step(limit time.Time, all bool) bool {
	if len(s.pending) > 0 && (len(s.queue) == 0 || !s.queue[0].at.Before(s.busyUntil) || !all && s.queue[0].at.After(limit)) {
		d := s.pending[0]
		s.pending = s.pending[1:]
		s.tracef("start pending %s", d)
		s.runOne(d)
		return true
	}
	if len(s.queue) == 0 || !all && s.queue[0].at.After(limit) {
		return false
	}
	a := s.queue[0]
	s.queue = s.queue[1:]
	s.w.Clock.AdvanceTo(a.at)
	if s.w.app != nil {
		s.w.app.deliver(s, a.d)
		return true
	}
	if s.Group != NoGroup && a.at.Before(s.busyUntil) {
		if s.Group == GroupSingle && len(s.pending) > 0 {
			old := s.pending[0]
			s.tracef("cancel pending %s (superseded by %s)", old, a.d)
			s.w.cancelled(old)
			s.pending = s.pending[:0]
		}
		s.tracef("queue %s behind the running run", a.d)
		s.pending = append(s.pending, a.d)
		return true
	}
	if s.Group == NoGroup && s.Overlap > 0 {
		batch := []Delivery{a.d}
		for len(s.queue) > 0 && !s.queue[0].at.After(a.at.Add(s.Overlap)) {
			batch = append(batch, s.queue[0].d)
			s.queue = s.queue[1:]
		}
		if len(batch) > 1 {
			s.runConcurrently(batch)
			return true
		}
	}
	s.runOne(a.d)
	return true
}

func (s *Scheduler) runOne(d Delivery) {
	r := s.w.ActionRun(context.Background(), d)
	s.busyUntil = s.w.Clock.Now()
	s.tracef("ran %d for %s: %s", r.ID, d, r.summary())
}

// runConcurrently runs deliveries at the same time, as parallel Actions
// runs without a concurrency group.
func (s *Scheduler) runConcurrently(ds []Delivery) {
	var wg sync.WaitGroup
	runs := make([]Run, len(ds))
	for i, d := range ds {
		wg.Go(func() { runs[i] = s.w.ActionRun(context.Background(), d) })
	}
	wg.Wait()
	s.busyUntil = s.w.Clock.Now()
	for _, r := range runs {
		s.tracef("ran %d (concurrently) for %s: %s", r.ID, r.Delivery, r.summary())
	}
}

// cancelled records a run the concurrency group cancelled before it started.
func (w *World) cancelled(d Delivery) {
	id := w.newRun()
	now := w.Clock.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.runs = append(w.runs, Run{ID: id, Delivery: d, Start: now, End: now, Cancelled: true, Err: errCancelled})
}
