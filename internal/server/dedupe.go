package server

import (
	"context"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/memstore"
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

// The in-process stores live in package memstore; these names spare the
// callers that build a single-replica Server an import of memstore.
type (
	// MemoryDeduper is an in-process Deduper for a single replica.
	MemoryDeduper = memstore.Deduper
	// MemoryLocker is an in-process Locker for a single replica.
	MemoryLocker = memstore.Locker
)

// NewMemoryDeduper returns a MemoryDeduper remembering ids for ttl (at least
// MinDedupeTTL is advised); now is the clock (nil: time.Now).
func NewMemoryDeduper(ttl time.Duration, now func() time.Time) *MemoryDeduper {
	return memstore.NewDeduper(ttl, now)
}

// NewMemoryLocker returns an empty MemoryLocker.
func NewMemoryLocker() *MemoryLocker { return memstore.NewLocker() }
