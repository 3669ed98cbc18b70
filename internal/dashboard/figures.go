package dashboard

import (
	"context"
	"time"

	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
	"github.com/autopilot-dev/autopilot/internal/dashboard/store"
	"github.com/autopilot-dev/autopilot/internal/server/metrics"
)

// OpenIssueFigures returns the metrics' reader of the open issues (see
// metrics.SetOpenIssues): it lists the read model once per scrape and
// counts the open decisions whose start is known, with their ages at now, and the tasks
// waiting for their tracker. Like the pages, it never calls the GitHub API.
func OpenIssueFigures(rows store.Store, now func() time.Time) func(context.Context) (metrics.OpenIssues, error) {
	return func(ctx context.Context) (metrics.OpenIssues, error) {
		all, err := rows.List(ctx)
		if err != nil {
			return metrics.OpenIssues{}, err
		}
		at := now()
		var o metrics.OpenIssues
		for _, r := range all {
			// A wait whose start the state did not record has no age: it
			// would read as two thousand years and page someone.
			if r.Wait != nil && r.Wait.Kind == model.WaitDecision && !r.Wait.Since.IsZero() {
				o.DecisionAges = append(o.DecisionAges, at.Sub(r.Wait.Since))
			}
			o.TrackerTasks += len(r.TrackerWaiting)
		}
		return o, nil
	}
}
