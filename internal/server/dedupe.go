package server

import (
	"context"
	"sync"
	"time"
)

// Deduper remembers which deliveries were accepted, so a redelivered
// X-GitHub-Delivery is answered 200 and not processed twice.
type Deduper interface {
	// Seen atomically records id and reports whether it had already been
	// recorded (by this or any other replica sharing the store). The server
	// calls it only once the delivery's queue slot is reserved, so a
	// delivery refused with 503 is never recorded.
	Seen(ctx context.Context, id string) (bool, error)
}

// Pinger is implemented by a Deduper or Locker backed by a remote store;
// /readyz and intake refuse work while Ping fails.
type Pinger interface {
	Ping(ctx context.Context) error
}

// MemoryDeduper is an in-process Deduper for a single replica. Ids are kept
// in generations of TTL/8, so each id is remembered for at least the TTL and
// at most 9/8 of it, and expiry drops whole generations instead of scanning.
// Past maxIDs entries the oldest generation goes early, bounding memory; a
// restart forgets everything. Both are harmless: the comment-id ledger in the
// state keeps a redelivered decision from being applied twice.
type MemoryDeduper struct {
	ttl, span time.Duration
	maxIDs    int
	now       func() time.Time

	mu    sync.Mutex
	gens  []generation // oldest first
	count int
}

type generation struct {
	start time.Time
	ids   map[string]struct{}
}

// DefaultMaxDedupeIDs bounds a MemoryDeduper (about 100 MB of ids).
const DefaultMaxDedupeIDs = 1_000_000

// NewMemoryDeduper returns a MemoryDeduper remembering ids for ttl (at least
// MinDedupeTTL is advised); now is the clock (nil: time.Now).
func NewMemoryDeduper(ttl time.Duration, now func() time.Time) *MemoryDeduper {
	if now == nil {
		now = time.Now
	}
	if ttl <= 0 {
		ttl = MinDedupeTTL
	}
	return &MemoryDeduper{ttl: ttl, span: max(ttl/8, time.Nanosecond), maxIDs: DefaultMaxDedupeIDs, now: now}
}

// Seen implements Deduper.
func (d *MemoryDeduper) Seen(_ context.Context, id string) (bool, error) {
	now := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.gens) > 0 && !now.Before(d.gens[0].start.Add(d.span+d.ttl)) {
		d.dropOldest()
	}
	for _, g := range d.gens {
		if _, ok := g.ids[id]; ok {
			return true, nil
		}
	}
	if n := len(d.gens); n == 0 || !now.Before(d.gens[n-1].start.Add(d.span)) {
		d.gens = append(d.gens, generation{start: now, ids: make(map[string]struct{})})
	}
	d.gens[len(d.gens)-1].ids[id] = struct{}{}
	d.count++
	for d.count > d.maxIDs && len(d.gens) > 1 {
		d.dropOldest()
	}
	return false, nil
}

func (d *MemoryDeduper) dropOldest() {
	d.count -= len(d.gens[0].ids)
	d.gens[0] = generation{}
	d.gens = d.gens[1:]
}

// Len is the number of ids remembered.
func (d *MemoryDeduper) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.count
}
