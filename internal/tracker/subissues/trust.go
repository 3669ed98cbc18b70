package subissues

import (
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"

	"github.com/autopilot-dev/autopilot/internal/textsafe"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// Trust makes the tracker adopt a task issue only when our own bot wrote
// it: its author is login (a Bot account) and, when appID is not 0 (App
// mode), GitHub's performed_via_github_app, where it names an App, is that
// App. Task keys are predictable, so without it any bot (a workflow's
// github-actions[bot], another App) could plant issues taken as tasks.
// Without Trust any bot-authored issue counts (tests and the sandbox).
func (g *Tracker) Trust(login string, appID int64) *Tracker {
	g.owner, g.ownerApp = login, appID
	return g
}

// ours reports whether is was written by our own bot (tasksync.Owner).
func (g *Tracker) ours(is tracker.GHIssue) bool {
	return tasksync.Owner{Login: g.owner, App: g.ownerApp}.Wrote(tasksync.Author{Login: is.Author, Bot: is.AuthorIsBot, App: is.AppID})
}

// trusted reads the marker of an issue our own bot wrote. A marked issue
// written by anyone else is an impostor: ignored, and remembered for the
// task whose key it carries, to be said once.
func (g *Tracker) trusted(is tracker.GHIssue) (marker, bool) {
	m, ok := readMarker(is.Body)
	if !ok {
		return marker{}, false
	}
	if g.ours(is) {
		return m, true
	}
	if g.impostors == nil {
		g.impostors = map[string]string{}
	}
	if _, seen := g.impostors[m.key]; !seen {
		who := is.Author
		if who == "" {
			who = "another account"
		}
		g.impostors[m.key] = fmt.Sprintf("ignored #%d: not written by autopilot's bot (%s)", is.Number, textsafe.Truncate(who, 60))
	}
	return marker{}, false
}

// Remarks are what this tracker has to say about single tasks, by
// idempotency key (tracker.Remarker): impostor issues ignored and links
// GitHub refused for good. Sync notes a remark only when it is new, so an
// impostor met at every pass is said once.
func (g *Tracker) Remarks() map[string]string {
	out := map[string]string{}
	for k, r := range g.impostors {
		out[k] = r
	}
	for k, r := range g.remarks {
		out[k] = r
	}
	return out
}

var _ tracker.Remarker = (*Tracker)(nil)
