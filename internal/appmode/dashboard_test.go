package appmode

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
)

// passSink records the passes the App reports.
type passSink struct {
	mu     sync.Mutex
	passes []model.Pass
}

func (s *passSink) Passed(_ context.Context, p model.Pass) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.passes = append(s.passes, p)
}

func (s *passSink) last(n int) (model.Pass, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.passes) - 1; i >= 0; i-- {
		if s.passes[i].Issue == n {
			return s.passes[i], true
		}
	}
	return model.Pass{}, false
}

// TestEveryPassTellsTheDashboardWhatItLeft: a delivery's pass and a
// sweep's pass each end by handing the Sink the state they left, with the
// installation, and whether the issue is still listed (open and labelled).
func TestEveryPassTellsTheDashboardWhatItLeft(t *testing.T) {
	g := apptest.New(t, repo)
	sink := &passSink{}
	r := newRigAt(t, g, g.SweepURL, func(o *Options) { o.Sink = sink })
	n := r.gh.Issue(repo, "Add CSV export")
	r.mustProcess(r.gh.Labeled(repo, n, apptest.Maintainer, "autopilot"))
	p, ok := sink.last(n)
	if !ok || p.State == nil || p.State.Slug != "problem" || !p.Listed || p.Installation != apptest.Installation ||
		!strings.EqualFold(p.Repo, repo) {
		t.Fatalf("after the label: pass %+v (ok %v)", p, ok)
	}

	if err := r.gh.UnlabelIssue(repo, n, "autopilot"); err != nil {
		t.Fatal(err)
	}
	r.start(settings.Config{QueueSize: 16, Workers: 2, LockTTL: time.Second, DedupeTTL: settings.MinDedupeTTL,
		ShutdownTimeout: 5 * time.Second, SweepInterval: time.Hour}, newRecordingLocker())
	eventually(t, "the sweep's pass", func() bool {
		p, _ := sink.last(n)
		return p.State != nil && p.State.Run == "stopped"
	})
	if p, _ := sink.last(n); p.Listed {
		t.Errorf("an unlabelled issue is still listed: %+v", p)
	}
}
