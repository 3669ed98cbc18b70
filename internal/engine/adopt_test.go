package engine

import (
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
)

func TestAdoptRun(t *testing.T) {
	h, res := toDispatch(t)
	s := res.State
	session := s.Exec.Session
	at := s.Exec.DispatchedAt
	ours := evidence.Run{ID: 7, DisplayTitle: "implement " + session, Path: ".github/workflows/impl.yml", Event: "workflow_dispatch", HeadRepo: "acme/widgets", CreatedAt: at.Add(time.Second)}
	tests := []struct {
		name    string
		runs    []evidence.Run
		id      int64
		skipped int
	}{
		{name: "the run with the token", runs: []evidence.Run{ours}, id: 7},
		{name: "the token inside another word", runs: []evidence.Run{func() evidence.Run { r := ours; r.DisplayTitle = "x" + session; return r }()}},
		{name: "another workflow carrying the token", runs: []evidence.Run{func() evidence.Run { r := ours; r.ID, r.Path = 8, ".github/workflows/evil.yml"; return r }(), ours}, id: 7, skipped: 1},
		{name: "a fork's run", runs: []evidence.Run{func() evidence.Run { r := ours; r.HeadRepo = "mallory/widgets"; return r }()}, skipped: 1},
		{name: "none", runs: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, found, skipped := AdoptRun(h.set, s, session, tt.runs)
			want(t, "id", id, tt.id)
			want(t, "found", found, tt.id != 0)
			want(t, "skipped", len(skipped), tt.skipped)
		})
	}
	want(t, "window starts before the dispatch", AdoptSince(s, at.Add(time.Hour)), at.Add(-5*time.Minute))
	none := outbox.Clone(s)
	none.Exec.DispatchedAt = time.Time{}
	want(t, "a day back when no dispatch is recorded", AdoptSince(none, at), at.Add(-24*time.Hour))
}
