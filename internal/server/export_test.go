package server

import (
	"context"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/redelivery"
)

// Test hooks for the external tests (package server_test), which can import
// appauth and the fake GitHub without an import cycle.

// RedeliveryTick runs one tick of the redelivery job, as its timer does:
// claim the interval, then run a pass.
func (s *Server) RedeliveryTick(ctx context.Context) { s.redeliveryTick(ctx) }

// SetRedeliveryLimits overrides the pass bounds: the gap between two
// redelivery requests (negative: none), the page size, the pages read and
// the requests made per pass. It starts the job afresh.
func (s *Server) SetRedeliveryLimits(gap time.Duration, perPage, maxPages, maxPosts int) {
	o := s.redeliveryOptions()
	o.Gap, o.PerPage, o.MaxPages, o.MaxPosts = gap, perPage, maxPages, maxPosts
	s.redeliverer = redelivery.New(o)
}
