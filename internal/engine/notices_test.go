package engine

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/state"
)

func TestUnmanagedCommandIsAnsweredOnceToAPermittedUser(t *testing.T) {
	set := machine.Settings{AnswerPermission: access.Write, TriggerLabel: "autopilot"}
	ask := func(ev events.Event) Result {
		t.Helper()
		res, err := Apply(set, nil, ev, t0)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, tc := range []struct {
		name    string
		ev      events.Unmanaged
		perm    access.Level
		replies int
	}{
		{"command, writer", events.Unmanaged{ID: 5, Author: "maria", Body: "/autopilot status"}, access.Write, 1},
		{"command, reader", events.Unmanaged{ID: 5, Author: "eve", Body: "/autopilot status"}, access.Read, 0},
		{"not a command", events.Unmanaged{ID: 5, Author: "maria", Body: "thanks"}, "", 0},
		{"a bot", events.Unmanaged{ID: 5, Author: "ci[bot]", Bot: true, Body: "/autopilot status"}, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := ask(tc.ev)
			if tc.perm != "" {
				qs := queriesOf(res.Queries, events.QPerms)
				if len(qs) != 1 || qs[0].Logins[0] != tc.ev.Author {
					t.Fatalf("queries = %+v", res.Queries)
				}
				res = ask(qs[0].Then.WithPerms(map[string]evidence.PermRead{tc.ev.Author: {Perm: tc.perm}}))
			}
			want(t, "replies", repliesTo(res.Effects, 5), tc.replies)
			want(t, "queries", len(res.Queries), 0)
			if tc.replies == 1 && !hasBody(res.Effects, "not managed by autopilot", "`autopilot` label") {
				t.Errorf("reply = %q", bodies(res.Effects))
			}
		})
	}
}

func TestRecoveredNotices(t *testing.T) {
	set := machine.Settings{TriggerLabel: "go"}
	res, err := Apply(set, nil, events.Recovered{Lost: true, Deleted: true}, t0)
	if err != nil || res.State != nil || !hasBody(res.Effects, "was deleted", "re-add the `go` label") || res.Effects[0].Marker != "<!-- autopilot:notice state-lost -->" {
		t.Fatalf("lost: %v %+v", err, res.Effects)
	}
	res, _ = Apply(set, nil, events.Recovered{Lost: true}, t0)
	if !hasBody(res.Effects, "no longer verifies") {
		t.Errorf("broken: %q", bodies(res.Effects))
	}
	h := newHarness(t, "")
	h.start("greenfield")
	res = h.apply(events.Recovered{Restored: true, Comment: 77, Version: 4})
	want(t, "restored state is written", res.Changed, true)
	if len(res.Effects) != 1 || res.Effects[0].Marker != "<!-- autopilot:notice tamper-77-v4 -->" || !strings.Contains(res.Effects[0].Body, "(version 4) was restored") {
		t.Errorf("tamper notice = %+v", res.Effects)
	}
	res = h.apply(events.Recovered{Lost: true})
	want(t, "no lost notice while a state exists", len(res.Effects), 0)
}

func TestPlanSync(t *testing.T) {
	on, off := true, false
	withTasks := func(enabled *bool, note string) *state.State {
		return &state.State{TrackerEnabled: enabled, TrackerNote: note, Tasks: []state.Task{{IdemKey: "k", Sync: state.SyncCreated}}}
	}
	asked := []events.Query{{Kind: events.QTrackerSync, Jira: events.SyncAsked}}
	retry := []events.Query{{Kind: events.QTrackerSync}, {Kind: events.QTrackerSync, Jira: events.SyncRetry}}
	auto := []events.Query{{Kind: events.QTrackerSync}}
	set := machine.Settings{TrackerConfigured: true}
	for _, tc := range []struct {
		name  string
		set   machine.Settings
		s     *state.State
		qs    []events.Query
		sweep bool
		want  events.SyncPlan
	}{
		{"not configured", machine.Settings{}, withTasks(&on, ""), auto, false, events.SyncPlan{Unconfigured: true}},
		{"asked while off turns it on", set, withTasks(&off, ""), asked, false, events.SyncPlan{Run: true, Enable: true}},
		{"retry wins", set, withTasks(&on, ""), retry, false, events.SyncPlan{Run: true, Retry: true}},
		{"off: automatic sync waits", set, withTasks(&off, ""), auto, false, events.SyncPlan{}},
		{"paused by a 401", set, withTasks(&on, outbox.PausedAuth), auto, false, events.SyncPlan{}},
		{"nothing pending, no sweep", set, withTasks(&on, ""), nil, false, events.SyncPlan{}},
		{"the sweep reads back", set, withTasks(&on, ""), nil, true, events.SyncPlan{Run: true}},
		{"never decided", set, withTasks(nil, ""), auto, true, events.SyncPlan{}},
	} {
		if got := PlanSync(tc.set, tc.s, tc.qs, tc.sweep); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestNeedsPerm(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    events.Comment
		want bool
	}{
		{"discussion", events.Comment{Author: "maria", Body: "looks good"}, false},
		{"an answer", events.Comment{Author: "maria", Body: "A"}, true},
		{"a bot", events.Comment{Author: "ci[bot]", Bot: true, Body: "/autopilot done"}, false},
		{"an agent", events.Comment{Author: "claude[bot]", Bot: true, Agent: true, Body: "/autopilot done"}, true},
		{"status, replied already", events.Comment{Author: "maria", Body: "/autopilot status", Replied: true}, false},
		{"status, not replied", events.Comment{Author: "maria", Body: "/autopilot status"}, true},
		{"an answer replied to (refused before)", events.Comment{Author: "eve", Body: "A", Replied: true}, true},
	} {
		if got := NeedsPerm(tc.c); got != tc.want {
			t.Errorf("%s: NeedsPerm = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestAnsweredStatusIsClassifiedWithoutALookup(t *testing.T) {
	h := newHarness(t, "")
	h.start("greenfield")
	c := h.comment("maria", "", "/autopilot status")
	c.Replied = true
	res := h.apply(c)
	want(t, "classified as permitted", ledgerOf(res.State, c.ID), state.LedgerApplied)
	want(t, "no refusal", hasBody(res.Effects, "only people with"), false)
}
