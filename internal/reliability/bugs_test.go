package reliability

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestFoundBugs keeps the scenarios of product bugs this suite found that
// no numbered case covers on its own; each was fixed in the product (see
// docs/reliability.md, "Bugs found") and stays here as a regression test.
func TestFoundBugs(t *testing.T) {
	t.Run("B1_read_only_classification_not_stored", func(t *testing.T) {
		// I1: after quiescence plus a pass, a chatter comment is still not in
		// the stored ledger; edited into an answer later, it is applied,
		// although edits must never change a decision.
		w, n := started(t, Options{})
		w.toGate(n)
		chat := w.post(n, Reader, "Looks good to me.")
		mine := w.post(n, Maria, "I'll think about it.")
		w.MustSweep()
		checkOnly(t, w.CheckLedger(n, nil, nil))
		edited, err := w.GH.EditComment(mine.ID, Maria, "A")
		must(t, err)
		w.Clock.Advance(time.Minute)
		w.MustRun(w.CommentDelivery(edited, "edited", Maria))
		w.MustSweep()
		if s := w.mustState(n); len(s.Decisions) != 0 {
			t.Errorf("an edit turned a comment into decision %s", decisions(s))
		}
		_ = chat
	})
	t.Run("B2_two_first_runs_post_two_states", func(t *testing.T) {
		w := NewWorld(t, Options{})
		n := w.NewIssue("Add CSV export", "Users want CSV.")
		w.Label(n, "autopilot")
		d := w.LabelDelivery(n, "labeled", "autopilot", Maria)
		// A redelivery (or re-run) outside one concurrency group: the second
		// run reads the comments before the first one posts its state.
		secondRead := make(chan struct{})
		var once sync.Once
		w.OnCall(func(c Call, _ []byte) ([]byte, bool) {
			if c.Run == 2 && c.ListsComments() {
				once.Do(func() { close(secondRead) })
			}
			return nil, false
		})
		w.BeforeCall(func(c Call) {
			if c.Run == 1 && c.Method == "POST" && c.Mutation() {
				select {
				case <-secondRead:
				case <-time.After(2 * time.Second):
				}
			}
		})
		var wg sync.WaitGroup
		wg.Go(func() { w.ActionRun(context.Background(), d) })
		time.Sleep(20 * time.Millisecond)
		wg.Go(func() { w.ActionRun(context.Background(), d) })
		wg.Wait()
		w.OnCall(nil)
		w.BeforeCall(nil)
		if k := w.markers(n)[state.Marker]; k != 1 {
			t.Errorf("%d state comments, want 1", k)
		}
		checkOnly(t, w.CheckEffects(n))
	})
	t.Run("B4_lost_PR_comment_applied_out_of_order", func(t *testing.T) {
		w, n := started(t, Options{})
		pr, sha := w.OpenPR(n, Casey)
		w.MustRun(w.PullDelivery(pr, "opened", sha))
		w.Clock.Advance(time.Minute)
		stop := w.Say(pr, Maria, "/autopilot stop")         // its delivery is lost
		done := w.post(n, Devin, "/autopilot done problem") // later, on the issue
		w.MustSweep()
		s := w.mustState(n)
		if s.Slug != "problem" || outcome(s, done.ID) == Applied {
			t.Errorf("at %s/%s, the report made after the stop is %q, the stop %q: the stop (earlier, on the PR) was applied after it",
				s.Slug, s.Run, outcome(s, done.ID), outcome(s, stop.ID))
		}
	})
	t.Run("B6_lost_label_deliveries_never_recovered", func(t *testing.T) {
		w := NewWorld(t, Options{})
		n := w.NewIssue("Add CSV export", "Users want CSV.")
		w.Label(n, "autopilot") // its delivery is lost
		w.MustSweep()
		other := w.NewIssue("Other", "More work.")
		w.Label(other, "autopilot")
		w.MustRun(w.LabelDelivery(other, "labeled", "autopilot", Maria))
		w.Unlabel(other, "autopilot") // its delivery is lost
		w.Clock.Advance(time.Hour)
		w.MustSweep()
		if w.State(n) == nil {
			t.Error("a labelled issue whose labeled delivery was lost never starts")
		}
		if s := w.State(other); s != nil && s.Run != "stopped" {
			t.Errorf("issue #%d is %s although its trigger label is gone", other, s.Run)
		}
	})
	t.Run("B8_notice_repeated_when_the_bot_is_not_recognised", func(t *testing.T) {
		// An App whose comments are not recognised as its own (e.g. a
		// wrong app id) posts the "state lost" notice again on every run.
		w, n := started(t, Options{})
		w.AppIDTrusted = 999 // the runs trust another App than the one posting
		for range 3 {
			w.post(n, Maria, "/autopilot status")
		}
		w.AppIDTrusted = 0
		k := 0
		for _, c := range w.GH.Comments(Repo, n) {
			if strings.HasPrefix(c.Body, "<!-- autopilot:notice state-lost -->") {
				k++
			}
		}
		if k > 1 {
			t.Errorf("%d state-lost notices: a loop of notices", k)
		}
	})
}
