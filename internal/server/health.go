package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/redisq"
)

// storeProbeInterval is how often the shared store is pinged in the
// background, so intake stops and resumes promptly with it.
const storeProbeInterval = time.Second

// healthz answers 200 while the process is alive.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "ok\n")
}

// readyz answers 200 when the server takes work: not draining, the shared
// store (when configured) answers, and the Redis work queue (when
// configured) is below QUEUE_MAX — all checked now.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if s.draining.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "draining\n")
		return
	}
	if err := s.checkStore(r.Context()); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "store unavailable: "+err.Error()+"\n")
		return
	}
	if s.stream != nil {
		ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
		n, err := s.deps.Queue.QueueLen(ctx)
		cancel()
		switch {
		case err != nil:
			s.noteStore(err)
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "store unavailable: "+err.Error()+"\n")
			return
		case n >= int64(s.cfg.QueueMax):
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = fmt.Fprintf(w, "queue full: %d deliveries not yet acknowledged (QUEUE_MAX %d)\n", n, s.cfg.QueueMax)
			return
		}
	}
	_, _ = io.WriteString(w, "ready\n"+s.secretDetail())
}

// checkStore pings every store and records the result.
func (s *Server) checkStore(ctx context.Context) error {
	if len(s.pingers) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	var errs []error
	for _, p := range s.pingers {
		if err := p.Ping(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	err := errors.Join(errs...)
	if err == nil {
		// A start while Redis was away could not check the prefix.
		err = s.claimPrefix(ctx)
	}
	if err != nil {
		s.noteStore(err)
		return err
	}
	if s.storeDown.Swap(false) {
		s.log.Info("store reachable again; taking deliveries")
	}
	s.metrics.SetStoreUp(true)
	return nil
}

// noteStore records a store failure: intake answers 503 until a probe
// succeeds.
func (s *Server) noteStore(err error) {
	if !s.storeDown.Swap(true) {
		var taken *redisq.PrefixTakenError
		if errors.As(err, &taken) {
			s.log.Error("another App uses this REDIS_PREFIX; refusing deliveries with 503", "err", err)
		} else {
			s.log.Error("store unreachable; refusing deliveries with 503", "err", err)
		}
	}
	s.metrics.SetStoreUp(false)
}

// probeStore pings the store every storeProbeInterval until ctx ends.
func (s *Server) probeStore(ctx context.Context) {
	job.Every(ctx, storeProbeInterval, func() { _ = s.checkStore(ctx) })
}
