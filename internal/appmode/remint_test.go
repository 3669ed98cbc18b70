package appmode

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
)

// TestRevokedTokenIsMintedAgainOnce: an installation token revoked between
// two jobs (the cached one answers 401) is minted again and the job runs
// again, once; /metrics counts it. When the new token is refused too, the
// job fails (the sweep takes the issue up later) after exactly one retry.
func TestRevokedTokenIsMintedAgainOnce(t *testing.T) {
	r := newRig(t, nil)
	n := r.gh.Issue(repo, "Add CSV export")
	r.mustProcess(r.gh.Labeled(repo, n, apptest.Maintainer, "autopilot"))
	if k := r.gh.RevokeInstallationTokens(apptest.Installation); k == 0 {
		t.Fatal("no installation token to revoke")
	}
	from := len(r.gh.Requests())
	r.mustProcess(r.gh.Say(repo, n, apptest.Writer, "/autopilot done problem understood"))
	if st := r.gh.State(repo, n); st.Slug != "research" {
		t.Fatalf("after a revoked token: step %s, want research", st.Slug)
	}
	mints, refused := tokenTraffic(r.gh.Requests()[from:])
	if mints != 1 || refused != 1 {
		t.Errorf("%d token mints and %d refused requests, want 1 and 1", mints, refused)
	}
	if got := r.metric("autopilot_installation_token_remints_total"); got != "autopilot_installation_token_remints_total 1" {
		t.Errorf("metric = %q, want 1", got)
	}

	// Refused again after the re-mint: one retry, then the job fails.
	r.gh.Script("POST", "/graphql", fakegithub.Step{Status: http.StatusUnauthorized}, fakegithub.Step{Status: http.StatusUnauthorized})
	from = len(r.gh.Requests())
	err := r.process(r.gh.Say(repo, n, apptest.Writer, "/autopilot done research done"))
	if err == nil || !strings.Contains(err.Error(), "unauthorized") {
		t.Fatalf("a job whose token stays refused: err = %v, want unauthorized", err)
	}
	mints, refused = tokenTraffic(r.gh.Requests()[from:])
	if mints != 1 || refused != 2 {
		t.Errorf("%d mints and %d refused requests, want 1 re-mint and 2 refusals (one retry, no storm)", mints, refused)
	}
	if got := r.metric("autopilot_installation_token_remints_total"); got != "autopilot_installation_token_remints_total 2" {
		t.Errorf("metric = %q, want 2", got)
	}
	if st := r.gh.State(repo, n); st.Slug != "research" {
		t.Errorf("a failed job changed the state: step %s", st.Slug)
	}
}

// TestSweepMintsARevokedTokenAgain: the sweep, too, replaces a token GitHub
// refuses (once) and sweeps on.
func TestSweepMintsARevokedTokenAgain(t *testing.T) {
	r := newRig(t, nil)
	n := r.gh.Issue(repo, "Add CSV export")
	r.mustProcess(r.gh.Labeled(repo, n, apptest.Maintainer, "autopilot"))
	r.gh.RevokeInstallationTokens(apptest.Installation)
	r.gh.Say(repo, n, apptest.Writer, "/autopilot done problem understood") // its delivery is lost
	if err := r.app.Sweep(context.Background(), apptest.Installation); err != nil {
		t.Fatalf("sweep after a revoked token: %v", err)
	}
	if st := r.gh.State(repo, n); st.Slug != "research" {
		t.Errorf("the sweep did not catch up: step %s", st.Slug)
	}
	if got := r.metric("autopilot_installation_token_remints_total"); got != "autopilot_installation_token_remints_total 1" {
		t.Errorf("metric = %q, want 1", got)
	}
}

// tokenTraffic counts the installation-token mints and the requests GitHub
// refused with 401 among reqs.
func tokenTraffic(reqs []fakegithub.Request) (mints, refused int) {
	for _, q := range reqs {
		if strings.HasSuffix(q.Path, "/access_tokens") {
			mints++
		}
		if q.Status == http.StatusUnauthorized {
			refused++
		}
	}
	return mints, refused
}
