package trackersync

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// answering is a tracker whose every call answers err (and, for creates,
// the per-item results res).
type answering struct {
	err error
	res []tracker.CreateResult
}

func (a *answering) CheckAuth(context.Context) error { return a.err }
func (a *answering) FindByIdemKeys(context.Context, []string) (map[string]tracker.Issue, error) {
	return nil, a.err
}
func (a *answering) CreateBulk(context.Context, []tracker.Item) ([]tracker.CreateResult, error) {
	return a.res, a.err
}
func (a *answering) Statuses(context.Context, []string) (map[string]tracker.Issue, error) {
	return nil, a.err
}
func (a *answering) LinkDependency(context.Context, string, string) error { return a.err }
func (a *answering) CloseIssue(context.Context, string) error             { return a.err }

func executorFor(a *answering, rand func() float64) *executor {
	x := newExecutor(Options{Now: func() time.Time { return time.Unix(0, 0) }, Rand: rand, Name: "GitHub"})
	x.port = a
	return x
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func TestAnAnswerAfterCancelKeepsItsClass(t *testing.T) {
	rejected := &tracker.ValidationError{Message: "title too long"}
	gone := &tracker.GoneError{Gone: state.IssueDeleted, Status: 410}
	for _, c := range []struct {
		name string
		op   tasksync.Op
		a    *answering
		want tasksync.Class
		item bool
	}{
		{"a 422 item is rejected", tasksync.Create{Items: []tasksync.Item{{IdemKey: "k1"}}},
			&answering{res: []tracker.CreateResult{{IdemKey: "k1", Err: rejected}}}, tasksync.Rejected, true},
		{"a refused link is rejected", tasksync.LinkDep{Key: "A-2", Blocker: "A-1"}, &answering{err: rejected}, tasksync.Rejected, false},
		{"a gone close is gone", tasksync.CloseIssue{Key: "A-1"}, &answering{err: gone}, tasksync.Gone, false},
		{"an unclassified error stays other", tasksync.CloseIssue{Key: "A-1"}, &answering{err: errors.New("odd")}, tasksync.Other, false},
		{"the context's cancellation is canceled", tasksync.CloseIssue{Key: "A-1"}, &answering{err: context.Canceled}, tasksync.Canceled, false},
		{"a wrapped cancellation is canceled", tasksync.Lookup{IdemKeys: []string{"k1"}},
			&answering{err: fmt.Errorf("search: %w", context.Canceled)}, tasksync.Canceled, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := executorFor(c.a, func() float64 { return 0 }).perform(canceled(), c.op)
			r := out.Err
			if c.item {
				if len(out.Results) != 1 {
					t.Fatalf("results %+v", out.Results)
				}
				r = out.Results[0].Err
			}
			if r == nil || r.Class != c.want {
				t.Fatalf("refusal %+v, want class %d", r, c.want)
			}
		})
	}
}

func TestRandIsDrawnOnlyForATransientAnswer(t *testing.T) {
	for _, c := range []struct {
		name string
		op   tasksync.Op
		err  error
		want int
	}{
		{"success", tasksync.Lookup{IdemKeys: []string{"k1"}}, nil, 0},
		{"wait", tasksync.Wait{D: 0}, nil, 0},
		{"persist", tasksync.Persist{}, nil, 0},
		{"rejected", tasksync.CloseIssue{Key: "A-1"}, &tracker.ValidationError{Message: "no"}, 0},
		{"rate limited", tasksync.Lookup{IdemKeys: []string{"k1"}}, &tracker.RateLimitError{RetryAfter: time.Second}, 0},
		{"transient", tasksync.Lookup{IdemKeys: []string{"k1"}}, &tracker.TransientError{Status: 502}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			draws := 0
			x := executorFor(&answering{err: c.err}, func() float64 { draws++; return 0.25 })
			x.o.Sleep = func(context.Context, time.Duration) error { return nil }
			x.o.Persist = func([]state.Task) error { return nil }
			out := x.perform(context.Background(), c.op)
			if draws != c.want {
				t.Errorf("Rand drawn %d times, want %d", draws, c.want)
			}
			if c.want > 0 && out.Jitter != 0.25 {
				t.Errorf("jitter %v, want 0.25", out.Jitter)
			}
		})
	}
}
