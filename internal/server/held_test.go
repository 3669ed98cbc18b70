package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// heldSweeper is a Sweeper whose sweeps GitHub's budget holds, each
// reported on done.
type heldSweeper struct{ done chan int64 }

func (h heldSweeper) Sweep(_ context.Context, inst int64) error {
	defer func() { h.done <- inst }()
	return fmt.Errorf("sweep o/r: %w", errors.Join(ErrHeld, errors.New("github: interactive reserve until 09:40")))
}

// TestASweepHeldByTheBudgetIsNotAFailedJob: a sweep the GitHub budget
// holds (its error marked ErrHeld) is counted with outcome "held", not
// "error" (which the job-error alert counts), logs no "job failed" line,
// and leaves the last completed sweep's time as it was.
func TestASweepHeldByTheBudgetIsNotAFailedJob(t *testing.T) {
	logs := &syncBuffer{}
	sw := heldSweeper{done: make(chan int64, 1)}
	cfg := testConfig()
	cfg.SweepInterval = time.Hour
	s, _ := start(t, cfg, Deps{Processor: newRecorder(), Sweeper: sw, Installations: listed{7},
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	select {
	case <-sw.done:
	case <-time.After(10 * time.Second):
		t.Fatal("no sweep ran")
	}
	metric := func(name string) string {
		rec := httptest.NewRecorder()
		s.AdminHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		for line := range strings.Lines(rec.Body.String()) {
			if strings.HasPrefix(line, name+" ") {
				return strings.TrimSpace(line)
			}
		}
		return ""
	}
	eventually(t, "the held sweep counted", func() bool {
		return metric(`autopilot_jobs_total{event="sweep",outcome="held"}`) != ""
	})
	if m := metric(`autopilot_jobs_total{event="sweep",outcome="error"}`); m != "" {
		t.Errorf("the held sweep also counted as an error: %s", m)
	}
	if m := metric(`autopilot_last_sweep_timestamp_seconds{installation="7"}`); m != "" {
		t.Errorf("a held sweep set the last completed sweep: %s", m)
	}
	if strings.Contains(logs.String(), "job failed") {
		t.Errorf("the held sweep was logged as a failed job:\n%s", logs.String())
	}
}
