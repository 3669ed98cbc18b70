package dashboard

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/autopilot-dev/autopilot/internal/dashboard/store"
	"github.com/autopilot-dev/autopilot/internal/server/metrics"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestOpenIssueFiguresComeFromTheReadModel: the metrics' open-issue
// figures are the rows' open decisions (their ages at the reader's clock)
// and tasks waiting for the tracker; a run that waits for nobody adds
// nothing, nor does a decision whose start is not recorded.
func TestOpenIssueFiguresComeFromTheReadModel(t *testing.T) {
	rows := fill(t,
		samplePass(nil),
		samplePass(func(s *state.State) { s.Issue = 13 }),
		samplePass(func(s *state.State) {
			s.Issue, s.Run, s.Gate = 14, state.RunStopped, nil
			s.Stop = &state.Stop{Reason: "max-hours-exceeded"}
		}),
	)
	undated, _, _ := rows.Get(context.Background(), "octo-org/hello-world#13")
	wait := *undated.Wait
	wait.Since = time.Time{}
	undated.Issue, undated.Wait = 15, &wait
	if _, err := rows.Put(context.Background(), undated); err != nil {
		t.Fatal(err)
	}
	read := OpenIssueFigures(rows, func() time.Time { return now.Add(time.Hour) })
	got, err := read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.DecisionAges) != 2 || got.DecisionAges[0] != 3*time.Hour || got.DecisionAges[1] != 3*time.Hour {
		t.Errorf("decision ages = %v, want two of 3h (the gate opened 2h before now, read 1h later)", got.DecisionAges)
	}
	want := 0
	all, _ := rows.List(context.Background())
	for _, r := range all {
		want += len(r.TrackerWaiting)
	}
	if got.TrackerTasks != want {
		t.Errorf("tracker tasks = %d, want %d", got.TrackerTasks, want)
	}
}

// TestHealthShowsEachInstallationsRESTBudgetAndItsReset: the budget table
// has one row per installation, its REST (core) budget and when it
// refills; a GraphQL budget does not add a row.
func TestHealthShowsEachInstallationsRESTBudgetAndItsReset(t *testing.T) {
	m := metrics.New()
	h := http.Header{}
	h.Set("X-Ratelimit-Remaining", "4321")
	h.Set("X-Ratelimit-Limit", "5000")
	h.Set("X-Ratelimit-Reset", "1795874400") // 2026-11-28T14:00:00Z
	m.ObserveResponse(77, &http.Response{StatusCode: 200, Header: h})
	g := h.Clone()
	g.Set("X-Ratelimit-Resource", "graphql")
	g.Set("X-Ratelimit-Remaining", "12")
	m.ObserveResponse(77, &http.Response{StatusCode: 200, Header: g})
	var reg prometheus.Gatherer = m.Registry()
	d := newDash(t, Options{Store: store.NewMemory(), Health: &Health{Metrics: reg}})
	_, body := get(t, d, "/health")
	if want := "<td>77</td><td>4321 of 5000</td><td>2026-11-28 14:00 UTC</td>"; !strings.Contains(body, want) {
		t.Errorf("health lacks %q:\n%s", want, between(body, "API budget", "</table>"))
	}
	if strings.Count(body, "<td>77</td>") != 1 {
		t.Errorf("installation 77 has %d budget rows, want 1", strings.Count(body, "<td>77</td>"))
	}
}
