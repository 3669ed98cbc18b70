package appmode

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/server"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
)

// unknownInstallation is an installation id GitHub does not know.
const unknownInstallation = 4040

// forInstallation moves a delivery to another installation id.
func forInstallation(t *testing.T, d apptest.Delivery, id int64) apptest.Delivery {
	t.Helper()
	d.Body = ghtest.Mutate(t, d.Body, map[string]any{"installation.id": id})
	d.ID = apptest.NewDeliveryID()
	return d
}

// TestUnknownInstallationIsDroppedWithoutRetries: a delivery for an
// installation GitHub does not know (its token request answers 404) is
// final: one token request, no API call, no retry, and the job's error is
// server.ErrDropped. The next delivery for it costs one request again.
func TestUnknownInstallationIsDroppedWithoutRetries(t *testing.T) {
	r := newRig(t, nil)
	n := r.gh.Issue(repo, "Add CSV export")
	for i := range 2 {
		d := forInstallation(t, r.gh.Say(repo, n, apptest.Writer, "/autopilot status"), unknownInstallation)
		from := len(r.gh.Requests())
		err := r.process(d)
		if !errors.Is(err, server.ErrDropped) || !strings.Contains(err.Error(), "4040") {
			t.Fatalf("delivery %d: err = %v, want server.ErrDropped naming installation 4040", i, err)
		}
		reqs := r.gh.Requests()[from:]
		if len(reqs) != 1 || !strings.HasSuffix(reqs[0].Path, "/app/installations/4040/access_tokens") || reqs[0].Status != http.StatusNotFound {
			t.Fatalf("delivery %d: requests %s, want the one token request answered 404", i, paths(reqs))
		}
	}
}

// TestServerCountsADroppedDelivery: through the server, the dropped
// delivery's job is counted with outcome "dropped", and the App goes on
// with its own installation's deliveries.
func TestServerCountsADroppedDelivery(t *testing.T) {
	r := newRig(t, nil)
	n := r.gh.Issue(repo, "Add CSV export")
	url := r.start(settings.Config{QueueSize: 16, Workers: 1, LockTTL: time.Second, DedupeTTL: settings.MinDedupeTTL, ShutdownTimeout: 5 * time.Second}, nil)
	d := forInstallation(t, r.gh.Labeled(repo, n, apptest.Maintainer, "autopilot"), unknownInstallation)
	if code := d.Post(t, url+settings.DefaultWebhookPath, apptest.Secret); code != http.StatusAccepted {
		t.Fatalf("delivery answered %d", code)
	}
	eventually(t, "the dropped job", func() bool {
		return r.metric(`autopilot_jobs_total{event="issues",outcome="dropped"}`) == `autopilot_jobs_total{event="issues",outcome="dropped"} 1`
	})
	if m := r.metric(`autopilot_jobs_total{event="issues",outcome="error"}`); m != "" {
		t.Errorf("the dropped delivery also counted as an error: %s", m)
	}
	ours := r.gh.Labeled(repo, n, apptest.Maintainer, "autopilot")
	if code := ours.Post(t, url+settings.DefaultWebhookPath, apptest.Secret); code != http.StatusAccepted {
		t.Fatalf("delivery answered %d", code)
	}
	eventually(t, "the run", func() bool { return len(r.gh.States(repo, n)) == 1 })
}

func paths(reqs []fakegithub.Request) string {
	var b strings.Builder
	for _, q := range reqs {
		b.WriteString("\n  " + q.Method + " " + q.Path + " " + http.StatusText(q.Status))
	}
	return b.String()
}

// TestSweepOfAnUnknownInstallationStopsAtOnce: a sweep of an installation
// GitHub no longer knows fails after its one token request, with no
// re-mint.
func TestSweepOfAnUnknownInstallationStopsAtOnce(t *testing.T) {
	r := newRig(t, nil)
	from := len(r.gh.Requests())
	err := r.app.Sweep(context.Background(), unknownInstallation)
	if !errors.Is(err, forge.ErrNoInstallation) {
		t.Fatalf("sweep: %v, want ErrNoInstallation", err)
	}
	if reqs := r.gh.Requests()[from:]; len(reqs) != 1 {
		t.Fatalf("requests %s, want the one token request", paths(reqs))
	}
	if got := r.metric("autopilot_installation_token_remints_total"); got != "autopilot_installation_token_remints_total 0" {
		t.Errorf("metric = %q, want no re-mint", got)
	}
}
