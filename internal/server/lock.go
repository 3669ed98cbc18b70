package server

import (
	"context"
	"fmt"
	"sync"

	"github.com/autopilot-dev/autopilot/internal/server/job"
)

// ErrLeaseLost is returned by Renew and Release when the lease expired or
// was taken over: the holder must stop writing.
var ErrLeaseLost = job.ErrLeaseLost

// Locker hands out exclusive leases on keys ("owner/repo#12"), so that two
// jobs for the same issue never run at once, across replicas when the
// Locker is shared.
type Locker interface {
	// Lock blocks until the lease on key is held, ctx ends, or the store
	// fails (an error other than ctx's).
	Lock(ctx context.Context, key string) (Lease, error)
}

// Lease is a held lock (package job, shared with the Redis store).
type Lease = job.Lease

// MemoryLocker is an in-process Locker for a single replica. Its leases do
// not expire (a holder that dies takes the process with it).
type MemoryLocker struct {
	mu    sync.Mutex
	held  map[string]*memHold
	fence int64
}

type memHold struct {
	token    int64
	released chan struct{}
}

// NewMemoryLocker returns an empty MemoryLocker.
func NewMemoryLocker() *MemoryLocker {
	return &MemoryLocker{held: make(map[string]*memHold)}
}

// Lock implements Locker.
func (m *MemoryLocker) Lock(ctx context.Context, key string) (Lease, error) {
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
			return Lease{}, fmt.Errorf("lock %s: %w", key, ctx.Err())
		}
	}
}

// RenewLease implements job.Holder.
func (m *MemoryLocker) RenewLease(_ context.Context, l Lease) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h := m.held[l.Key]; h == nil || h.token != l.Token {
		return fmt.Errorf("renew %s: %w", l.Key, ErrLeaseLost)
	}
	return nil
}

// ReleaseLease implements job.Holder.
func (m *MemoryLocker) ReleaseLease(_ context.Context, l Lease) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.held[l.Key]
	if h == nil || h.token != l.Token {
		return fmt.Errorf("release %s: %w", l.Key, ErrLeaseLost)
	}
	delete(m.held, l.Key)
	close(h.released)
	return nil
}
