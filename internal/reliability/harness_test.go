package reliability

import (
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
)

// The harness's own tests: a harness that drifts makes every case blind.

// TestSchedulerConcurrencyGroups: deliveries arriving while a run is busy
// wait in the group's pending slot; with queue: single a newer one cancels
// the older, with queue: max all run in order, without a group none waits.
func TestSchedulerConcurrencyGroups(t *testing.T) {
	for _, tc := range []struct {
		g             Group
		runs, cancels int
	}{
		{GroupSingle, 2, 2}, {GroupMax, 4, 0}, {NoGroup, 4, 0},
	} {
		t.Run(tc.g.String(), func(t *testing.T) {
			w := NewWorld(t, Options{})
			n := w.NewIssue("busy", "a start creates the labels: the run takes fake seconds")
			w.Label(n, "autopilot")
			sch := NewScheduler(w, 1)
			sch.Group = tc.g
			sch.Send(w.LabelDelivery(n, "labeled", "autopilot", Maria), Fault{})
			for i := range 3 { // arrive during the first run
				sch.Send(w.SweepDelivery(), Fault{Delay: time.Duration(i+1) * time.Second})
			}
			sch.Drain()
			ran, cancelled := 0, 0
			for _, r := range w.Runs() {
				if r.Cancelled {
					cancelled++
				} else {
					ran++
				}
			}
			if ran != tc.runs || cancelled != tc.cancels {
				t.Errorf("%d runs, %d cancelled; want %d and %d\n%v", ran, cancelled, tc.runs, tc.cancels, sch.Trace)
			}
		})
	}
}

// TestSchedulerFaults: a dropped delivery never runs, a duplicate keeps
// its delivery id, a re-emitted copy gets a new one, and a delay moves it
// after later deliveries.
func TestSchedulerFaults(t *testing.T) {
	w := NewWorld(t, Options{})
	sch := NewScheduler(w, 2)
	a, b, c, d := w.SweepDelivery(), w.SweepDelivery(), w.SweepDelivery(), w.SweepDelivery()
	sch.Send(a, Fault{Drop: true})
	sch.Send(b, Fault{Duplicate: 1})
	sch.Send(c, Fault{ReEmit: 1, Delay: time.Minute})
	sch.Send(d, Fault{})
	sch.Drain()
	var ids []string
	for _, r := range w.Runs() {
		ids = append(ids, r.Delivery.ID)
	}
	if len(ids) != 5 || ids[0] != b.ID || ids[1] != b.ID || ids[2] != d.ID || ids[3] != c.ID || ids[4] == c.ID || ids[4] == a.ID {
		t.Errorf("ran %v; want b, b, d, c, then c re-emitted under a new id (a dropped)", ids)
	}
}

// TestOracleRacingAnswers: the oracle, fed by hand, gives the earliest
// answer the decision and the other "already decided"; unauthorised and
// bot comments never act.
func TestOracleRacingAnswers(t *testing.T) {
	perm := func(login string) access.Level {
		return map[string]access.Level{Maria: access.Admin, Devin: access.Write, Reader: access.Read}[login]
	}
	var acts []Act
	id := int64(100)
	add := func(phase int, a Act) {
		id++
		a.Phase, a.CommentID = phase, id
		acts = append(acts, a)
	}
	add(0, Act{Kind: ActLabel, Who: Maria, Label: "autopilot"})
	for i, s := range []string{"problem", "research", "plan", "decompose"} {
		add(i+1, Act{Kind: ActSay, Who: Devin, Mean: MeanDone, Text: s})
	}
	add(5, Act{Kind: ActSay, Who: Reader, Mean: MeanAnswer, Letter: "A"})
	add(5, Act{Kind: ActSay, Who: LintBot, Mean: MeanChatter})
	add(5, Act{Kind: ActSay, Who: Maria, Mean: MeanAnswer, Letter: "B"})
	add(5, Act{Kind: ActSay, Who: Devin, Mean: MeanAnswer, Letter: "A"})
	exp := Oracle(Scenario{Flow: "greenfield"}, acts, perm, nil, "")
	if exp.Slug != "implement" || exp.Run != "in-progress" || len(exp.Decisions) != 1 || exp.Decisions[0].By != Maria || exp.Decisions[0].Option != "B" {
		t.Fatalf("oracle: %s/%s decisions %+v", exp.Slug, exp.Run, exp.Decisions)
	}
	want := map[int64]string{106: Unauthorized, 107: NotACommand, 108: Applied, 109: Decided}
	for cid, o := range want {
		if exp.Ledger[cid] != o {
			t.Errorf("comment %d: oracle says %q, want %q", cid, exp.Ledger[cid], o)
		}
	}
}
