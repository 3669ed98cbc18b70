package jira

import (
	"fmt"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/fake/fakejira"
	"github.com/autopilot-dev/autopilot/internal/idem"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// BenchmarkSync120Tasks syncs 120 new tasks per run against the fake Jira
// Cloud and reports the create requests each run took (the quality bar is
// ceil(120/50) = 3) and all HTTP requests.
func BenchmarkSync120Tasks(b *testing.B) {
	e := setup(b, fakejira.Cloud, nil, nil)
	runs, creates, requests := 0, 0, 0
	for b.Loop() {
		ts := make([]state.Task, 120)
		for i := range ts {
			id := fmt.Sprintf("%02d", i+1)
			ts[i] = mkTask(id, state.KindTask, "Task "+id, "", 1)
			ts[i].IdemKey = idem.Key("bench/repo", runs, id)
		}
		bulkBefore, allBefore := len(e.fj.RequestsTo(fakejira.EndpointBulk)), len(e.fj.Requests())
		if res := e.sync(b, ts, nil); res.Created != 120 {
			b.Fatalf("run %d: created %d: %s", runs, res.Created, res.Note)
		}
		creates += len(e.fj.RequestsTo(fakejira.EndpointBulk)) - bulkBefore
		requests += len(e.fj.Requests()) - allBefore
		runs++
	}
	b.ReportMetric(float64(creates)/float64(runs), "creates/op")
	b.ReportMetric(float64(requests)/float64(runs), "requests/op")
}
