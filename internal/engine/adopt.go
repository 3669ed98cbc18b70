package engine

import (
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// AdoptSince is how far back a pass looks for the run of a dispatch whose
// answer was lost: from a little before the recorded dispatch (the clocks
// of GitHub and the runner differ), or a day back when none is recorded.
func AdoptSince(s *state.State, now time.Time) time.Time {
	if ex := s.Exec; ex != nil && !ex.DispatchedAt.IsZero() {
		return ex.DispatchedAt.Add(-5 * time.Minute)
	}
	return now.Add(-24 * time.Hour)
}

// AdoptRun picks, among the runs listed since AdoptSince, the one an
// earlier send of the dispatch with session token session started: it
// carries the token as a word of its display title, and the step's run
// rule accepts it by that token (anyone can put a token in a title).
// skipped says why each run with the token was not adopted (for the log).
func AdoptRun(set machine.Settings, s *state.State, session string, runs []evidence.Run) (id int64, found bool, skipped map[int64]string) {
	ex := s.Exec
	if ex == nil {
		return 0, false, nil
	}
	for _, r := range runs {
		if !evidence.CarriesToken(r.DisplayTitle, session) {
			continue
		}
		if ok, why := TokenRunTrusted(set, s.Slug, ex, r.Path, r.Event, r.HeadRepo, r.CreatedAt); !ok {
			if skipped == nil {
				skipped = map[int64]string{}
			}
			skipped[r.ID] = why
			continue
		}
		return r.ID, true, skipped
	}
	return 0, false, skipped
}
