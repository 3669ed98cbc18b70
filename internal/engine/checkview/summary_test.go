package checkview

import (
	"slices"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
)

func TestChecksSummary(t *testing.T) {
	done := func(id int64, name, concl string) evidence.CheckRead {
		return evidence.CheckRead{ID: id, Name: name, Status: "completed", Conclusion: concl}
	}
	running := func(id int64, name string) evidence.CheckRead {
		return evidence.CheckRead{ID: id, Name: name, Status: "in_progress"}
	}
	cases := []struct {
		name   string
		cs     []evidence.CheckRead
		state  string
		ok     bool
		failed []string
		ids    []int64
	}{
		{name: "none", ok: false},
		{name: "only the bot's own check", cs: []evidence.CheckRead{done(1, "autopilot", "success")}, ok: false},
		{name: "own failure is no evidence", cs: []evidence.CheckRead{done(1, "autopilot", "failure"), done(2, "ci", "success")}, state: "success", ok: true, ids: []int64{2}},
		{name: "all success-like", cs: []evidence.CheckRead{done(1, "ci", "success"), done(2, "lint", "neutral"), done(3, "docs", "skipped")}, state: "success", ok: true, ids: []int64{1, 2, 3}},
		{name: "one pending", cs: []evidence.CheckRead{done(1, "ci", "success"), running(2, "lint")}, state: "pending", ok: false, ids: []int64{1, 2}},
		{name: "queued", cs: []evidence.CheckRead{{ID: 1, Name: "ci", Status: "queued"}}, state: "pending", ok: false, ids: []int64{1}},
		{name: "failure beats pending", cs: []evidence.CheckRead{running(1, "ci"), done(2, "lint", "failure"), running(3, "e2e")}, state: "failure", ok: true, failed: []string{"lint"}, ids: []int64{1, 2, 3}},
		{name: "other bad conclusions fail", cs: []evidence.CheckRead{done(1, "a", "cancelled"), done(2, "b", "timed_out"), done(3, "c", "action_required"), done(4, "d", "")}, state: "failure", ok: true, failed: []string{"a", "b", "c", "d"}, ids: []int64{1, 2, 3, 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := slices.Clone(c.cs)
			ev, ok := ChecksSummary(5, "abc", "https://example.test/pull/5", c.cs, "autopilot")
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v (%+v)", ok, c.ok, ev)
			}
			if !slices.Equal(c.cs, in) {
				t.Error("ChecksSummary modified its input")
			}
			if c.state == "" {
				if ev.State != "" {
					t.Errorf("no checks gave state %q", ev.State)
				}
				return
			}
			if ev.State != c.state || ev.PR != 5 || ev.SHA != "abc" || ev.URL != "https://example.test/pull/5/checks" {
				t.Errorf("got %+v, want state %q", ev, c.state)
			}
			if !slices.Equal(ev.Failed, c.failed) {
				t.Errorf("failed %v, want %v", ev.Failed, c.failed)
			}
			if !slices.Equal(ev.IDs, c.ids) {
				t.Errorf("ids %v, want %v", ev.IDs, c.ids)
			}
		})
	}
}
