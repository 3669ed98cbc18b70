package main

import (
	"slices"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
)

// TestServeRedeliversFailedDeliveries: a delivery the App's server failed
// while it was down is redelivered through GitHub's deliveries API by the
// pass the binary runs at start; a delivered one is not.
func TestServeRedeliversFailedDeliveries(t *testing.T) {
	g := apptest.New(t)
	failed, err := g.RecordDelivery(fakegithub.HookDelivery{AppID: apptest.AppID, Event: "issue_comment", Action: "created",
		StatusCode: 0, InstallationID: apptest.Installation})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.RecordDelivery(fakegithub.HookDelivery{AppID: apptest.AppID, Event: "issues", Action: "labeled",
		StatusCode: 202, InstallationID: apptest.Installation}); err != nil {
		t.Fatal(err)
	}
	env := baseEnv(t, g)
	env["REDELIVERY_INTERVAL"] = "1h" // once at start, then hourly
	r := startReplica(t, "redeliverer", env)
	waitFor(t, "the redelivery request", func() bool { return len(g.RedeliveryRequests()) > 0 })
	waitFor(t, "the redelivery metric", func() bool { return r.metric("autopilot_redeliveries_requested_total") == 1 })
	if got := g.RedeliveryRequests(); !slices.Equal(got, []int64{failed}) {
		t.Errorf("redelivery requests %v, want [%d]", got, failed)
	}
	if code := r.terminate(); code != 0 {
		t.Fatalf("exit %d after SIGTERM", code)
	}
}
