package route

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
)

// A deployment protection-rule request names its issue only once routed:
// each issue it reaches is reconciled holding that issue's lease (Lease),
// as every other job on the issue is, never beside them.
func TestADeployRequestReconcilesItsIssueHoldingTheIssuesLease(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	sb := forge.NewSandbox("o/r", forge.User{Login: "autopilot[bot]", Type: "Bot"}, now)
	managed := sb.CreateIssue("maria", "managed", "").Number
	sb.LabelIssue("maria", managed, "autopilot")
	var leased, unleased []int
	holding := 0
	r := &Router{Forge: sb, TriggerLabel: "autopilot", Now: now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Issue: func(_ context.Context, n int, _ Trigger) (Outcome, error) {
			if holding == n {
				leased = append(leased, n)
			} else {
				unleased = append(unleased, n)
			}
			return Outcome{Issue: n}, nil
		},
		Lease: func(ctx context.Context, n int, fn func(context.Context) error) error {
			holding = n
			defer func() { holding = 0 }()
			return fn(ctx)
		}}
	ev := &ghevent.Event{Name: "deployment_protection_rule", Action: "requested", Handled: true, Repo: "o/r",
		LinkedIssues: []int{managed},
		Carries:      events.DeploymentRequested{Environment: "production", SHA: "abc", RunID: 7}}
	outs, err := r.deploymentRule(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(unleased) > 0 || !slices.Equal(leased, []int{managed}) {
		t.Errorf("reconciled under the lease %v, without it %v; want #%d under it", leased, unleased, managed)
	}
	if len(outs) != 1 || outs[0].Issue != managed {
		t.Errorf("outcomes %+v, want #%d's", outs, managed)
	}
}
