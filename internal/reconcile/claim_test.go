package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile/writes"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// claimForge runs hook once, when the state is read back before Jira creates.
type claimForge struct {
	*forge.Sandbox
	hook func(id int64)
}

func (f *claimForge) GetComment(ctx context.Context, id int64) (forge.Comment, error) {
	if h := f.hook; h != nil {
		f.hook = nil
		h(id)
	}
	return f.Sandbox.GetComment(ctx, id)
}

// TestJiraCreatesWaitForTheirClaim: a pass records its Jira creates in the
// state, waits ClaimSettle and reads the state back; if an overlapping run's
// write replaced it meanwhile, it sends nothing (that run's state decides),
// so two runs never both create the same tasks.
func TestJiraCreatesWaitForTheirClaim(t *testing.T) {
	const jiraCfg = "  search_lag: 1m\n"
	for _, overwritten := range []bool{false, true} {
		name := map[bool]string{false: "the write stands: created", true: "overwritten: nothing sent"}[overwritten]
		t.Run(name, func(t *testing.T) {
			jw := newJiraWorld(t, jiraCfg)
			n := jw.issue("Add CSV export")
			jw.start(n)
			for _, s := range []string{"problem", "research", "plan"} {
				jw.comment(n, "devin", "/autopilot done "+s+" finished")
			}
			cf := &claimForge{Sandbox: jw.sb}
			racing := jw.recOn(cf, func(o *Options) {
				o.Tracker, o.ClaimSettle = jw.tr, time.Millisecond
				o.TrackerSleep = func(_ context.Context, d time.Duration) error { jw.tick(d); return nil }
			})
			if overwritten {
				cf.hook = func(id int64) { rewriteState(t, jw.world, n, id) }
			}
			c := jw.say(n, "devin", decompose)
			if _, err := racing.Handle(context.Background(), jw.commentEvent(c)); err != nil {
				t.Fatal(err)
			}
			created := len(jw.tr.Issues())
			if want := map[bool]int{false: 2, true: 0}[overwritten]; created != want {
				t.Fatalf("%d Jira issues right after the claim, want %d", created, want)
			}
			// Past the search lag the outbox finds nothing and creates once.
			jw.tick(2 * time.Minute)
			jw.sweep()
			if got := len(jw.tr.Issues()); got != 2 {
				t.Errorf("%d Jira issues in the end, want 2 (one per task)", got)
			}
			for _, tk := range jw.state(n).Tasks {
				if tk.Sync != state.SyncCreated {
					t.Errorf("task %s is %s", tk.ID, tk.Sync)
				}
			}
			for _, call := range jw.tr.Calls() {
				if call.Op == tracker.OpCreate && overwritten && call.At.Before(jw.now().Add(-time.Minute)) {
					t.Errorf("a create was sent at %s, before the overwriting run's search lag passed", call.At)
				}
			}
		})
	}
}

// rewriteState plays an overlapping run's write of the same state: the
// bot's comment id gets a valid body with another write id.
func rewriteState(t *testing.T, w *world, n int, id int64) {
	t.Helper()
	c, err := w.sb.GetComment(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	s, err := codec.Parse(c.Body, codec.Want{Repo: testRepo, Issue: n, Key: []byte(testKey)})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte("default_flow: greenfield\njira:\n  search_lag: 1m\n"))
	if err != nil {
		t.Fatal(err)
	}
	s.WriteID = "another-run"
	body, err := codec.Render(s, writes.View(cfg, s), []byte(testKey))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.sb.EditComment(context.Background(), id, body); err != nil {
		t.Fatal(err)
	}
}
