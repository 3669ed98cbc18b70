package server

import (
	"context"
	"fmt"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/redelivery"
)

// redeliveryOptions configure the redelivery job on the server's
// collaborators: GitHub's API, the store (one count per lost event across
// replicas), clock, logger and metrics.
func (s *Server) redeliveryOptions() redelivery.Options {
	return redelivery.Options{
		API: s.deps.Deliveries, Claims: s.deps.Deduper, Clock: s.now, Logger: s.log,
		Metrics: s.metrics.Redelivery(),
	}
}

// redeliveryTimer runs a pass at start (deliveries may have failed while no
// replica was up) and then every Config.RedeliveryInterval until ctx ends.
func (s *Server) redeliveryTimer(ctx context.Context) {
	s.redeliveryTick(ctx)
	job.Every(ctx, s.cfg.RedeliveryInterval, func() { s.redeliveryTick(ctx) })
}

// redeliveryTick runs this interval's pass, unless another replica sharing
// the store claimed the interval first.
func (s *Server) redeliveryTick(ctx context.Context) {
	bucket := s.now().UnixNano() / int64(max(s.cfg.RedeliveryInterval, time.Second))
	cctx, cancel := context.WithTimeout(ctx, storeTimeout)
	taken, err := s.deps.Deduper.Seen(cctx, fmt.Sprintf("redelivery:%d", bucket))
	cancel()
	switch {
	case err != nil:
		s.log.Warn("redelivery pass not claimed", "err", err)
		return
	case taken:
		// The replica running this interval reports the age.
		s.metrics.RedeliverySkipped()
		return
	}
	outcome := "ok"
	if err := s.redeliverer.Pass(ctx); err != nil {
		if ctx.Err() != nil {
			return // shutting down
		}
		outcome = "error"
		s.log.Warn("redelivery pass stopped; the next pass retries", "err", err)
	}
	s.metrics.RedeliveryPass(outcome)
}
