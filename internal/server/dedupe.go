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

// MemoryDeduper is an in-process Deduper for a single replica. Entries
// expire after the TTL given to NewMemoryDeduper; it forgets everything on
// restart, which the comment-id ledger in the state makes harmless.
type MemoryDeduper struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	seen    map[string]time.Time // id -> expiry
	lastGC  time.Time
	gcEvery time.Duration
}

// NewMemoryDeduper returns a MemoryDeduper remembering ids for ttl; now is
// the clock (nil: time.Now).
func NewMemoryDeduper(ttl time.Duration, now func() time.Time) *MemoryDeduper {
	if now == nil {
		now = time.Now
	}
	if ttl <= 0 {
		ttl = MinDedupeTTL
	}
	return &MemoryDeduper{ttl: ttl, now: now, seen: make(map[string]time.Time), gcEvery: time.Minute}
}

// Seen implements Deduper.
func (d *MemoryDeduper) Seen(_ context.Context, id string) (bool, error) {
	now := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if now.Sub(d.lastGC) >= d.gcEvery {
		for k, exp := range d.seen {
			if !now.Before(exp) {
				delete(d.seen, k)
			}
		}
		d.lastGC = now
	}
	if exp, ok := d.seen[id]; ok && now.Before(exp) {
		return true, nil
	}
	d.seen[id] = now.Add(d.ttl)
	return false, nil
}

// Len is the number of ids remembered (expired ones may linger until the
// next sweep of the map).
func (d *MemoryDeduper) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.seen)
}
