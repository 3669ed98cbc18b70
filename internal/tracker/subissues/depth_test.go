package subissues

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

type noCallsAPI struct{ tracker.SubIssueAPI }

// A chain of full parents is never extended past tasksync.MaxBatches: the next task
// is refused with a validation error naming what to do, not nested deeper
// than GitHub's 8 levels. A chain one shorter still gets its next batch.
func TestParentForRefusesBatchesPastTheDepthLimit(t *testing.T) {
	g := &Tracker{api: noCallsAPI{}, root: 1, now: time.Now, children: map[int][]tracker.GHIssue{}, byKey: map[string]tracker.GHIssue{}}
	full := func(p, batch int) {
		var kids []tracker.GHIssue
		for i := 0; i < tracker.MaxSubIssues-1; i++ {
			kids = append(kids, tracker.GHIssue{Number: p*1000 + i, AuthorIsBot: true,
				Body: marker{key: fmt.Sprintf("autopilot-%010d", p*1000+i), parent: p, kind: "task"}.String()})
		}
		if batch != 0 {
			kids = append(kids, tracker.GHIssue{Number: batch, AuthorIsBot: true,
				Body: marker{key: fmt.Sprintf("autopilot-b%09d", batch), parent: p, kind: "batch"}.String()})
		}
		g.children[p] = kids
	}
	// Epic #2, then batches #3..#7: tasksync.MaxBatches parents, all full.
	for p := 2; p < 2+tasksync.MaxBatches; p++ {
		next := p + 1
		if p == 1+tasksync.MaxBatches {
			next = 0
		}
		full(p, next)
	}
	_, err := g.parentFor(context.Background(), 2, 1)
	var ve *tracker.ValidationError
	if !errors.As(err, &ve) || ve.Field != "tasks" {
		t.Fatalf("parentFor on a full chain of %d parents: %v, want a *tracker.ValidationError on tasks", tasksync.MaxBatches, err)
	}
	if g.Requests != 0 {
		t.Errorf("%d requests sent for a refused placement", g.Requests)
	}
	// With room in the last batch, the task goes there.
	g.children[1+tasksync.MaxBatches] = g.children[1+tasksync.MaxBatches][:tracker.MaxSubIssues-2]
	if p, err := g.parentFor(context.Background(), 2, 1); err != nil || p != 1+tasksync.MaxBatches {
		t.Errorf("parentFor = #%d, %v; want the last batch #%d", p, err, 1+tasksync.MaxBatches)
	}
}
