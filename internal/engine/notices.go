package engine

import (
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/reply"
	"github.com/autopilot-dev/autopilot/internal/state"
)

func (m *machine) recovered(e Recovered) {
	switch {
	case e.Restored && m.s != nil:
		m.changed = true
		m.notice(fmt.Sprintf("tamper-%d-v%d", e.Comment, e.Version),
			fmt.Sprintf("⚠️ The autopilot state comment was edited by someone other than the bot. Edits are not acted on: the last good state (version %d) was restored.", e.Version))
	case e.Lost && m.s == nil:
		why := "modified so that it no longer verifies"
		if e.Deleted {
			why = "deleted"
		}
		m.notice("state-lost", "⚠️ The autopilot state comment of this issue was "+why+", so autopilot has paused here rather than guess. Nothing further happens on this issue (Jira tasks are never re-created). To start over, remove and re-add the `"+m.set.TriggerLabel+"` label.")
	}
}

func (m *machine) unmanaged(e Unmanaged) {
	if m.s != nil || e.Bot || Parse(e.Body).Kind != reply.Command {
		return
	}
	p, ok := e.Perms[e.Author]
	if !ok {
		m.ask(Query{Kind: QPerms, Logins: []string{e.Author}, Then: e})
		return
	}
	if p.Err || !p.Perm.AtLeast(m.set.AnswerPermission) {
		return
	}
	m.replyTo(e.ID, "This issue is not managed by autopilot. Add the `"+m.set.TriggerLabel+"` label to start a run.")
}

// notice posts a one-off notice under a fixed marker: posted once, however
// often the condition is seen.
func (m *machine) notice(key, text string) {
	marker := "<!-- autopilot:notice " + key + " -->"
	m.emit(state.Effect{Kind: state.EffComment, Marker: marker, Body: marker + "\n" + text})
}
