package checkview

import (
	"slices"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
)

// ChecksSummary adds up the check runs on a PR's head: any failure →
// failure; all completed successfully (success/neutral/skipped) → success;
// otherwise pending (ok false: no evidence yet). The bot's own PR check
// (named own) is no evidence of anything.
func ChecksSummary(pr int, sha, url string, cs []evidence.CheckRead, own string) (events.Checks, bool) {
	cs = slices.DeleteFunc(slices.Clone(cs), func(c evidence.CheckRead) bool { return c.Name == own })
	if len(cs) == 0 {
		return events.Checks{}, false
	}
	ev := events.Checks{PR: pr, SHA: sha, State: "success", URL: url + "/checks"}
	for _, c := range cs {
		ev.IDs = append(ev.IDs, c.ID)
		switch {
		case c.Status != "completed":
			if ev.State == "success" {
				ev.State = "pending"
			}
		case c.Conclusion == "success" || c.Conclusion == "neutral" || c.Conclusion == "skipped":
		default:
			ev.State = "failure"
			ev.Failed = append(ev.Failed, c.Name)
		}
	}
	return ev, ev.State != "pending"
}
