package checkview

import (
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// ToCreate picks the check runs of want to create: those whose content
// the state does not record as shown on that head, and those a failed
// create left pending. shown records the new hashes, to be applied before
// the state write (so a pass where nothing shown changed makes no call).
func ToCreate(want []CheckRun, recs []state.PRCheck) (create []CheckRun, shown []events.CheckShown) {
	for _, c := range want {
		h := c.Hash()
		r, _ := Record(recs, c.PR, c.HeadSHA)
		if r.Shown == h && !r.Pending {
			continue
		}
		if r.Shown != h {
			shown = append(shown, events.CheckShown{PR: c.PR, Head: c.HeadSHA, Hash: h})
		}
		create = append(create, c)
	}
	return create, shown
}

// Record is what the state records of PR pr's check on head.
func Record(rs []state.PRCheck, pr int, head string) (state.PRCheck, bool) {
	for _, r := range rs {
		if r.PR == pr && r.Head == head {
			return r, true
		}
	}
	return state.PRCheck{}, false
}
