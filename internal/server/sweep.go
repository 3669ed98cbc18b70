package server

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/workq"
)

// sweepTimer queues a sweep of every installation at start and then every
// Config.SweepInterval, until ctx ends.
func (s *Server) sweepTimer(ctx context.Context) {
	s.sweepAll(ctx)
	job.Every(ctx, s.cfg.SweepInterval, func() { s.sweepAll(ctx) })
}

// sweepAll queues one sweep job per installation, as background work: it
// takes no room from deliveries and starts only when no delivery is ready
// (see workq.Queue), so queueing every installation's sweep at once holds
// no answer back. Each installation's sweep is claimed in the Deduper under
// its interval's number, so among replicas sharing a store only the first
// to claim an interval sweeps it; an installation whose previous sweep
// still waits is not queued again.
func (s *Server) sweepAll(ctx context.Context) {
	ids := s.installations(ctx)
	bucket := s.now().UnixNano() / int64(max(s.cfg.SweepInterval, time.Second))
	for _, id := range ids {
		key := "sweep:" + strconv.FormatInt(id, 10)
		if s.queue.Waiting(key) {
			continue // the sweep queued last interval has not started yet: it covers this one
		}
		cctx, cancel := context.WithTimeout(ctx, storeTimeout)
		taken, err := s.deps.Deduper.Seen(cctx, fmt.Sprintf("sweep:%d:%d", id, bucket))
		cancel()
		if err != nil || taken {
			if err != nil {
				s.log.Warn("sweep not claimed", "installation", id, "err", err)
			}
			continue
		}
		s.queue.Background(workq.Work{Key: key, Sweep: id, Queued: time.Now()})
	}
}

// installations lists the installations to sweep: from the lister when
// there is one and it answers, else those seen in deliveries.
func (s *Server) installations(ctx context.Context) []int64 {
	if s.deps.Installations != nil {
		ids, err := s.deps.Installations.Installations(ctx)
		if err == nil {
			return ids
		}
		s.log.Warn("listing installations failed; sweeping those seen in deliveries", "err", err)
	}
	s.instMu.Lock()
	defer s.instMu.Unlock()
	ids := make([]int64, 0, len(s.seen))
	for id := range s.seen {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
