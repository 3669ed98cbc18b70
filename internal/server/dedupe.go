package server

import "context"

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
