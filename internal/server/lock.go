package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrLeaseLost is returned by Renew and Release when the lease expired or
// was taken over: the holder must stop writing.
var ErrLeaseLost = errors.New("lease lost")

// Locker hands out exclusive leases on keys ("owner/repo#12"), so that two
// jobs for the same issue never run at once, across replicas when the
// Locker is shared.
type Locker interface {
	// Lock blocks until the lease on key is held, ctx ends, or the store
	// fails (an error other than ctx's).
	Lock(ctx context.Context, key string) (Lease, error)
}

// Lease is a held lock. Token is a fencing token: it grows with every lease
// granted, so a write stamped with it can be refused when a later holder
// has written already.
type Lease struct {
	// Key is the locked key.
	Key string
	// Token is the fencing token, strictly increasing across all leases of
	// the Locker's store.
	Token int64
	// Owner identifies this holder in the store.
	Owner string

	h leaseHandle
}

// leaseHandle is the store side of a lease.
type leaseHandle interface {
	renew(ctx context.Context, l Lease) error
	release(ctx context.Context, l Lease) error
}

// Renew extends the lease by the Locker's TTL; ErrLeaseLost when it is no
// longer held by this owner.
func (l Lease) Renew(ctx context.Context) error {
	if l.h == nil {
		return nil
	}
	return l.h.renew(ctx, l)
}

// Release gives the lease up. Only its owner can release it: after a
// takeover, Release returns ErrLeaseLost and leaves the new holder alone.
func (l Lease) Release(ctx context.Context) error {
	if l.h == nil {
		return nil
	}
	return l.h.release(ctx, l)
}

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
			return Lease{Key: key, Token: h.token, Owner: fmt.Sprint(h.token), h: m}, nil
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

func (m *MemoryLocker) renew(_ context.Context, l Lease) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h := m.held[l.Key]; h == nil || h.token != l.Token {
		return fmt.Errorf("renew %s: %w", l.Key, ErrLeaseLost)
	}
	return nil
}

func (m *MemoryLocker) release(_ context.Context, l Lease) error {
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
