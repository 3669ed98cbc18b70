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

// A kind the table routes by itself (no handler of its own here) reaches
// every managed issue it concerns as the engine event it carries, and no
// other issue: the event's own issue when the table says Issue, the issues
// its PR links when it says Linked.
func TestATableRoutedKindReachesTheIssuesItConcernsAsItsEngineEvent(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	sb := forge.NewSandbox("o/r", forge.User{Login: "autopilot[bot]", Type: "Bot"}, now)
	managed := sb.CreateIssue("maria", "managed", "").Number
	sb.LabelIssue("maria", managed, "autopilot")
	other := sb.CreateIssue("maria", "not managed", "").Number
	type got struct {
		issue  int
		events []events.Event
	}
	var seen []got
	r := &Router{Forge: sb, TriggerLabel: "autopilot", Now: now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Issue: func(_ context.Context, n int, t Trigger) (Outcome, error) {
			seen = append(seen, got{n, t.Events})
			return Outcome{Issue: n}, nil
		}}
	carried := events.Tick{}
	for _, tc := range []struct {
		name     string
		concerns ghevent.Concern
		ev       ghevent.Event
		want     []int
	}{
		{"its own managed issue", ghevent.ConcernsIssue, ghevent.Event{Issue: managed, Labels: []string{"autopilot"}}, []int{managed}},
		{"its own issue, unmanaged", ghevent.ConcernsIssue, ghevent.Event{Issue: other}, nil},
		{"its own issue, labels unknown: read", ghevent.ConcernsIssue, ghevent.Event{Issue: managed}, []int{managed}},
		{"the issues its PR links", ghevent.ConcernsLinked, ghevent.Event{Issue: 99, IsPR: true, LinkedIssues: []int{other, managed}}, []int{managed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen = nil
			ev := tc.ev
			ev.Name, ev.Handled, ev.Carries = "some_new_event", true, carried
			k := ghevent.Kind{Name: ev.Name, Actions: []string{""}, Concerns: tc.concerns}
			if _, err := r.dispatch(context.Background(), k, &ev); err != nil {
				t.Fatal(err)
			}
			var issues []int
			for _, s := range seen {
				issues = append(issues, s.issue)
				if len(s.events) != 1 || s.events[0] != events.Event(carried) {
					t.Errorf("#%d got events %v, want the carried %v", s.issue, s.events, carried)
				}
			}
			if !slices.Equal(issues, tc.want) {
				t.Errorf("reconciled %v, want %v", issues, tc.want)
			}
		})
	}
}
