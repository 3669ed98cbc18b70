package appmode

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/budget"
	"github.com/autopilot-dev/autopilot/internal/forge"
)

// atReserve is a budget store whose every installation sits at the
// interactive reserve until an hour from now, whatever GitHub answers.
type atReserve struct{ *budget.Memory }

func (atReserve) Load(context.Context, int64) (budget.Record, error) {
	return budget.Record{Core: budget.Bucket{Limit: 5000, Remaining: 900, Reset: time.Now().Add(time.Hour)},
		GraphQL: budget.Bucket{Remaining: -1}}, nil
}

// TestTheSweepWaitsAtTheReserveWhileDeliveriesGoOn: with the installation's
// budget at the reserve, the sweep stops before its first repository read
// (and the health page's list names the installation), while a delivery's
// job still runs.
func TestTheSweepWaitsAtTheReserveWhileDeliveriesGoOn(t *testing.T) {
	b := budget.New(atReserve{budget.NewMemory()}, budget.Options{})
	r := newRig(t, func(o *Options) { o.Budget = b })
	n := r.gh.Issue(repo, "Sweep me")
	r.mustProcess(r.gh.Labeled(repo, n, apptest.Maintainer, "autopilot")) // interactive: runs
	if st := r.gh.State(repo, n); st.Slug == "" {
		t.Fatal("the delivery's job did not run at the reserve")
	}
	from := len(r.gh.Requests())
	err := r.app.Sweep(context.Background(), apptest.Installation)
	var rl *forge.RateLimitError
	if !errors.As(err, &rl) || !rl.Held || !strings.Contains(rl.Msg, "interactive reserve") {
		t.Fatalf("sweep: %v, want held at the interactive reserve", err)
	}
	for _, req := range r.gh.Requests()[from:] {
		if strings.HasPrefix(req.Path, "/repos/") {
			t.Errorf("the sweep sent %s %s at the reserve", req.Method, req.Path)
		}
	}
	if w := b.Waiting(); len(w) != 1 || w[0].Installation != apptest.Installation {
		t.Fatalf("waiting %+v", w)
	}
}
