package server

import (
	"context"

	"github.com/autopilot-dev/autopilot/internal/server/job"
)

// Locker hands out exclusive leases on keys ("owner/repo#12"), so that two
// jobs for the same issue never run at once, across replicas when the
// Locker is shared.
type Locker interface {
	// Lock blocks until the lease on key is held, ctx ends, or the store
	// fails (an error other than ctx's).
	Lock(ctx context.Context, key string) (job.Lease, error)
}
