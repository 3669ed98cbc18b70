package engine

import (
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/grammar"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

func (m *inputs) ledger(id int64, outcome state.LedgerOutcome) {
	if outbox.Handled(m.S, id) {
		return
	}
	m.S.Ledger = append(m.S.Ledger, state.LedgerEntry{CommentID: id, Outcome: outcome})
}

// agentComment applies a configured agent's comment: agents may report
// on the step they execute, nothing else.
func (m *inputs) agentComment(c events.Comment, r grammar.Result) {
	switch {
	case !agentMay(r):
		m.ledger(c.ID, state.LedgerNotCommand)
	case c.PermErr:
		// fail closed: not classified, retried on the next reconcile
	case !agentPermitted(c, m.Set.AnswerPermission):
		m.refuseUnauthorized(c)
	case c.EditUnproven && !ReadOnlyReply(r):
		m.refuseEdited(c)
	default:
		m.command(c, r)
	}
}

// comment classifies one comment exactly once and applies it.
func (m *inputs) comment(c events.Comment) error {
	if outbox.Handled(m.S, c.ID) {
		return nil // already classified: duplicates and re-runs are no-ops
	}
	if before(c.At, m.S.StartedAt) {
		m.ledger(c.ID, state.LedgerNotCommand) // older than the run: history, not input
		return nil
	}
	r := parsed(c)
	if answeredReadOnly(c, r) && c.Perm == "" && !c.PermErr {
		c.Perm = m.Set.AnswerPermission // permitted when it was answered (NeedsPerm)
	}
	if !r.Acts() {
		m.ledger(c.ID, state.LedgerNotCommand)
		return nil
	}
	if c.Bot && !c.Agent {
		m.ledger(c.ID, state.LedgerNotCommand) // bots never count
		return nil
	}
	if c.Agent {
		m.agentComment(c, r)
		return nil
	}
	if c.PermErr {
		return nil // fail closed: not classified, retried on the next reconcile
	}
	if !c.Perm.AtLeast(m.Set.AnswerPermission) {
		m.refuseUnauthorized(c)
		return nil
	}
	if c.EditUnproven && !ReadOnlyReply(r) {
		m.refuseEdited(c)
		return nil
	}
	if r.Attempt {
		m.ledger(c.ID, state.RejectedNotCanonical)
		m.Changed = true
		m.React(c.ID, outbox.ReactConfuse) // refused: 😕, like every refused comment (PRODUCT §7)
		m.replyOnce(c, "attempt", r.Hint)
		return nil
	}
	if r.Kind == grammar.Choice {
		m.choice(c, r.Letter, r.Reason)
		return nil
	}
	m.command(c, r)
	return nil
}

// agentPermitted applies the permission rule for configured agents (see
// the package comment): the permission API must grant answer_permission,
// except that a bot account it reports no role for (none; read, which any
// account has on a public repository; or not looked up) is trusted on the
// strength of the agents: entry, because a GitHub App's bot is never a
// collaborator.
func agentPermitted(c events.Comment, min access.Level) bool {
	if c.Perm.AtLeast(min) {
		return true
	}
	return c.Bot && !c.Perm.AtLeast(access.Triage)
}

// refuseUnauthorized: 😕 and at most one explanation per user per gate.
func (m *inputs) refuseUnauthorized(c events.Comment) {
	m.ledger(c.ID, state.RejectedUnauthorized)
	m.Changed = true
	m.React(c.ID, outbox.ReactConfuse)
	key := "unauth:" + strings.ToLower(c.Author) + ":" + m.gateKey()
	if m.Owed(key) {
		m.ReplyTo(c.ID, prose.Unauthorized(c.Author, string(m.Set.AnswerPermission)))
	}
}

// refuseEdited refuses a comment edited before it was processed whose
// current text its author cannot be shown to have written: someone with
// write access may have changed it. The author is asked, once, to post a
// new comment; the edited one is never applied.
func (m *inputs) refuseEdited(c events.Comment) {
	m.ledger(c.ID, state.RejectedEdited)
	m.Changed = true
	m.React(c.ID, outbox.ReactConfuse)
	m.ReplyTo(c.ID, prose.Edited(c.Author))
}

// replyOnce posts a reply unless this user already got one of this kind for
// the current gate.
func (m *inputs) replyOnce(c events.Comment, kind, text string) {
	if m.Owed(kind + ":" + strings.ToLower(c.Author) + ":" + m.gateKey()) {
		m.ReplyTo(c.ID, fmt.Sprintf("@\u200b%s: %s", textsafe.Escape(c.Author), text))
	}
}

func (m *inputs) gateKey() string {
	if m.S.Gate != nil {
		return m.S.Gate.ID
	}
	return fmt.Sprintf("step-%s-c%d", m.S.Slug, m.S.Cycle)
}

// choice handles a letter answer.
func (m *inputs) choice(c events.Comment, letter, reason string) {
	g := m.S.Gate
	if g == nil || m.S.Run == state.RunStopped {
		if m.alreadyDecided(c) {
			return
		}
		if c.At.After(m.S.UpdatedAt) && !m.S.UpdatedAt.IsZero() && m.S.Run != state.RunStopped {
			return // may answer a gate whose state write is not visible yet: defer
		}
		m.ledger(c.ID, state.RejectedNoOpenGate)
		m.Changed = true
		m.React(c.ID, outbox.ReactConfuse)
		return
	}
	opened := g.OpenedAt
	if !c.GatePostedAt.IsZero() && c.GatePostedAt.Before(opened) {
		opened = c.GatePostedAt
	}
	if before(c.At, opened) {
		if m.alreadyDecided(c) {
			return
		}
		m.ledger(c.ID, state.RejectedStale)
		m.React(c.ID, outbox.ReactConfuse)
		m.replyOnce(c, "stale", "this answer was written before the current question was asked, so it was not applied. Please answer the open question below it.")
		return
	}
	if _, ok := g.Option(letter); !ok {
		m.ledger(c.ID, state.RejectedInvalidOption)
		m.Changed = true
		m.React(c.ID, outbox.ReactConfuse)
		m.replyOnce(c, "invalid", fmt.Sprintf("`%s` is not one of the options; did you mean one of %s?", letter, strings.Join(strings.Split(g.Letters(), ""), ", ")))
		return
	}
	if m.vote(c, letter, reason, state.VoteComment, c) {
		return
	}
	m.ledger(c.ID, state.LedgerApplied)
	m.Answer(c, letter, reason)
}

// decidedFor finds the decision of the gate a late answer was meant for.
func (m *inputs) decidedFor(c events.Comment) (state.Decision, bool) {
	for i := len(m.S.Decisions) - 1; i >= 0; i-- {
		d := m.S.Decisions[i]
		if !before(c.At, d.GateOpenedAt) && d.CommentID != c.ID {
			return d, true
		}
	}
	return state.Decision{}, false
}

func (m *inputs) slugs() []string {
	out := make([]string, len(m.F.Steps))
	for i, s := range m.F.Steps {
		out[i] = s.Slug
	}
	return out
}

// skipCommand handles /autopilot skip [reason]: reason required where the
// step says so; the skip itself is confirmed with a Choose (seed 002).
func (m *inputs) skipCommand(c events.Comment, r grammar.Result, accept func(), refuse func(string, string)) {
	if m.S.Run == state.RunDone || m.S.Run == state.RunStopped || m.S.Step == 0 {
		refuse("not-running", "there is no running step to skip.")
		return
	}
	st := m.Step()
	if g := m.S.Gate; g != nil && g.Kind != state.GateApproval(st.Slug) {
		refuse("gate-open", "answer the open question first; it decides what happens to this step.")
		return
	}
	reason := strings.TrimSpace(r.Text)
	if st.SkipReason && reason == "" {
		refuse("reason-required", fmt.Sprintf("skipping **%s** needs a reason: `/autopilot skip <reason>`.", st.Name))
		return
	}
	if st.Interview && reason == "" {
		refuse("reason-required", "skipping the interview needs a reason: `/autopilot skip <reason>`.")
		return
	}
	if st.Consensus || st.Evidence == "review" {
		refuse("not-skippable", fmt.Sprintf("**%s** cannot be skipped: it needs its approvals or evidence.", st.Name))
		return
	}
	accept()
	m.OpenSkipGate(reason, c.Author)
}

// tasksCommand handles /autopilot tasks retry|sync (and their jira aliases).
func (m *inputs) tasksCommand(c events.Comment, r grammar.Result, accept func(), refuse func(string, string)) {
	if !m.Set.TrackerConfigured && (m.S.Gate == nil || m.S.Gate.Kind != state.GateTrackerAuth) {
		refuse("jira-not-configured", prose.NoTracker)
		return
	}
	if m.S.TrackerOff != "" {
		// A tracker is configured now: the tasks kept here go to the outbox.
		for i := range m.S.Tasks {
			if m.S.Tasks[i].Sync == state.SyncLocal {
				m.S.Tasks[i].Sync = state.SyncPending
			}
		}
		m.S.TrackerOff = ""
		m.Changed = true
	}
	if r.Cmd == CmdTasksRetry {
		if m.S.Gate != nil && m.S.Gate.Kind == state.GateTrackerAuth {
			if m.vote(c, "A", "via /autopilot tasks retry", state.VoteComment, c) {
				return // an approver policy counts it as a vote for A
			}
			m.ledger(c.ID, state.LedgerApplied)
			m.Answer(c, "A", "via /autopilot tasks retry")
			return
		}
		accept()
		m.S.TrackerNote = ""
		m.Ask(events.Query{Kind: events.QTrackerSync, Jira: events.SyncRetry})
		return
	}
	if !m.HasPendingTasks() && !m.hasCreatedTasks() {
		refuse("nothing-to-sync", "there are no tasks to sync.")
		return
	}
	accept()
	m.Ask(events.Query{Kind: events.QTrackerSync, Jira: events.SyncAsked})
}

func (m *inputs) hasCreatedTasks() bool {
	for _, t := range m.S.Tasks {
		if t.Sync == state.SyncCreated {
			return true
		}
	}
	return false
}
