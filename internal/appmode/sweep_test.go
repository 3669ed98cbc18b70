package appmode

import (
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
)

// TestTheAppsSweepIsTheActionsLoop: the App's sweep runs the Action's
// sweep loop (reconcile.SweepEach), each issue under its lease: like the
// Action's, it reads the repository's configuration once for the whole
// sweep, not once per issue.
func TestTheAppsSweepIsTheActionsLoop(t *testing.T) {
	g := apptest.New(t, repo)
	r := newRigAt(t, g, g.SweepURL, nil)
	var issues []int
	for range 3 {
		n := r.gh.Issue(repo, "Sweep me")
		r.mustProcess(r.gh.Labeled(repo, n, apptest.Maintainer, "autopilot"))
		r.gh.Say(repo, n, apptest.Writer, "/autopilot done problem") // delivery lost
		issues = append(issues, n)
	}
	before := r.gh.Count("GET /repos/{owner}/{repo}/contents/{path...}")
	r.start(settings.Config{QueueSize: 16, Workers: 2, LockTTL: time.Second, DedupeTTL: settings.MinDedupeTTL,
		ShutdownTimeout: 5 * time.Second, SweepInterval: time.Hour}, newRecordingLocker())
	eventually(t, "the sweep", func() bool {
		return strings.Contains(r.metric(`autopilot_jobs_total{event="sweep"`), " 1")
	})
	for _, n := range issues {
		if st := r.gh.State(repo, n); st.Slug != "research" {
			t.Errorf("#%d: step %s after the sweep, want research", n, st.Slug)
		}
	}
	if reads := r.gh.Count("GET /repos/{owner}/{repo}/contents/{path...}") - before; reads != 1 {
		t.Errorf("the sweep read the configuration %d times, want once for the repository", reads)
	}
}
