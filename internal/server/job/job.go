// Package job holds the types the App server and its Redis store share: an
// accepted delivery (Job) and a held per-issue lock (Lease).
package job

import (
	"context"
	"errors"
	"time"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
)

// Job is one accepted delivery.
type Job struct {
	Delivery string
	Event    *ghevent.Event
	Received time.Time
	// Trace is the W3C traceparent of the delivery's intake span ("" when
	// traces are off): the replica that runs the job continues that trace.
	Trace string
}

// ErrLeaseLost is returned by Renew and Release when the lease expired or
// was taken over: the holder must stop writing.
var ErrLeaseLost = errors.New("lease lost")

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

	h Holder
}

// Holder is the store side of a lease: the Locker that granted it.
type Holder interface {
	RenewLease(ctx context.Context, l Lease) error
	ReleaseLease(ctx context.Context, l Lease) error
}

// NewLease is the lease on key granted by h.
func NewLease(key string, token int64, owner string, h Holder) Lease {
	return Lease{Key: key, Token: token, Owner: owner, h: h}
}

// Renew extends the lease by the Locker's TTL; ErrLeaseLost when it is no
// longer held by this owner.
func (l Lease) Renew(ctx context.Context) error {
	if l.h == nil {
		return nil
	}
	return l.h.RenewLease(ctx, l)
}

// Release gives the lease up. Only its owner can release it: after a
// takeover, Release returns ErrLeaseLost and leaves the new holder alone.
func (l Lease) Release(ctx context.Context) error {
	if l.h == nil {
		return nil
	}
	return l.h.ReleaseLease(ctx, l)
}

// Every calls f every d until ctx ends (the server's and a replica's
// periodic work: sweeps, probes, lease renewal).
func Every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

// Sleep waits for d; false when ctx ended first.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
