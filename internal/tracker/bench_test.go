package tracker

import (
	"context"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// BenchmarkSync120Tasks syncs 4 epics and 120 tasks linked to them per run
// against the Sandbox and reports tracker calls per run. The quality bar is
// ceil(120/50) = 3 task creates plus a small constant: here one create for
// the epics (they go first, so tasks can name their keys) and one lookup by
// idempotency key. internal/jira's benchmark of the same name counts HTTP
// requests against the fake Jira.
func BenchmarkSync120Tasks(b *testing.B) {
	runs, creates, calls := 0, 0, 0
	for b.Loop() {
		c := newClock()
		sb := NewSandbox(SandboxOptions{Now: c.Now})
		ts := manyTasks(124)
		for i := range 4 {
			ts[i].Kind, ts[i].Title = state.KindEpic, "Epic "+ts[i].ID
		}
		for i := 4; i < len(ts); i++ {
			ts[i].Epic = ts[i%4].ID
		}
		p := &persister{}
		res, err := Sync(context.Background(), sb, ts, SyncOptions{Now: c.Now, Sleep: c.Sleep, Persist: p.Persist})
		if err != nil || res.Created != 124 || res.Waiting != 0 {
			b.Fatalf("run %d: %v, %+v", runs, err, res)
		}
		log := sb.Calls()
		creates += countOps(log, OpCreate)
		calls += len(log)
		runs++
	}
	b.ReportMetric(float64(creates)/float64(runs), "creates/op")
	b.ReportMetric(float64(calls)/float64(runs), "calls/op")
}
