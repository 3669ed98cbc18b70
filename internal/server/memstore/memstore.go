// Package memstore holds the App server's in-process stores, for a single
// replica: delivery dedupe and per-issue leases.
package memstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
)

// Deduper is an in-process delivery Deduper for a single replica. Ids are kept
// in generations of TTL/8, so each id is remembered for at least the TTL and
// at most 9/8 of it, and expiry drops whole generations instead of scanning.
// Past maxIDs entries the oldest generation goes early, bounding memory; a
// restart forgets everything. Both are harmless: the comment-id ledger in the
// state keeps a redelivered decision from being applied twice.
type Deduper struct {
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

// DefaultMaxIDs bounds a Deduper (about 100 MB of ids).
const DefaultMaxIDs = 1_000_000

// NewDeduper returns a Deduper remembering ids for ttl (at least
// settings.MinDedupeTTL is advised); now is the clock (nil: time.Now).
func NewDeduper(ttl time.Duration, now func() time.Time) *Deduper {
	if now == nil {
		now = time.Now
	}
	if ttl <= 0 {
		ttl = settings.MinDedupeTTL
	}
	return &Deduper{ttl: ttl, span: max(ttl/8, time.Nanosecond), maxIDs: DefaultMaxIDs, now: now}
}

// Seen implements the server's Deduper.
func (d *Deduper) Seen(_ context.Context, id string) (bool, error) {
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

func (d *Deduper) dropOldest() {
	d.count -= len(d.gens[0].ids)
	d.gens[0] = generation{}
	d.gens = d.gens[1:]
}

// Len is the number of ids remembered.
func (d *Deduper) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.count
}

// Locker is an in-process Locker of per-issue leases for a single replica. Its leases do
// not expire (a holder that dies takes the process with it).
type Locker struct {
	mu    sync.Mutex
	held  map[string]*memHold
	fence int64
}

type memHold struct {
	token    int64
	released chan struct{}
}

// NewLocker returns an empty Locker.
func NewLocker() *Locker {
	return &Locker{held: make(map[string]*memHold)}
}

// Lock implements the server's Locker.
func (m *Locker) Lock(ctx context.Context, key string) (job.Lease, error) {
	for {
		m.mu.Lock()
		h, busy := m.held[key]
		if !busy {
			m.fence++
			h = &memHold{token: m.fence, released: make(chan struct{})}
			m.held[key] = h
			m.mu.Unlock()
			return job.NewLease(key, h.token, fmt.Sprint(h.token), m), nil
		}
		wait := h.released
		m.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return job.Lease{}, fmt.Errorf("lock %s: %w", key, ctx.Err())
		}
	}
}

// RenewLease implements job.Holder.
func (m *Locker) RenewLease(_ context.Context, l job.Lease) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h := m.held[l.Key]; h == nil || h.token != l.Token {
		return fmt.Errorf("renew %s: %w", l.Key, job.ErrLeaseLost)
	}
	return nil
}

// ReleaseLease implements job.Holder.
func (m *Locker) ReleaseLease(_ context.Context, l job.Lease) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.held[l.Key]
	if h == nil || h.token != l.Token {
		return fmt.Errorf("release %s: %w", l.Key, job.ErrLeaseLost)
	}
	delete(m.held, l.Key)
	close(h.released)
	return nil
}
