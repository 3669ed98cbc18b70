package engine

import (
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/reply"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

func (m *machine) ledger(id int64, outcome string) {
	if outbox.Handled(m.s, id) {
		return
	}
	m.s.Ledger = append(m.s.Ledger, state.LedgerEntry{CommentID: id, Outcome: outcome})
}

// agentComment applies a configured agent's comment: agents may report
// on the step they execute, nothing else.
func (m *machine) agentComment(c Comment, r reply.Result) {
	switch {
	case !agentMay(r):
		m.ledger(c.ID, outbox.OutNotCommand)
	case c.PermErr:
		// fail closed: not classified, retried on the next reconcile
	case !agentPermitted(c, m.set.AnswerPermission):
		m.refuseUnauthorized(c)
	case c.EditUnproven && !ReadOnlyReply(r):
		m.refuseEdited(c)
	default:
		m.command(c, r)
	}
}

// comment classifies one comment exactly once and applies it.
func (m *machine) comment(c Comment) error {
	if outbox.Handled(m.s, c.ID) {
		return nil // already classified: duplicates and re-runs are no-ops
	}
	if before(c.At, m.s.StartedAt) {
		m.ledger(c.ID, outbox.OutNotCommand) // older than the run: history, not input
		return nil
	}
	r := parsed(c)
	if answeredReadOnly(c, r) && c.Perm == "" && !c.PermErr {
		c.Perm = m.set.AnswerPermission // permitted when it was answered (NeedsPerm)
	}
	if !r.Acts() {
		m.ledger(c.ID, outbox.OutNotCommand)
		return nil
	}
	if c.Bot && !c.Agent {
		m.ledger(c.ID, outbox.OutNotCommand) // bots never count
		return nil
	}
	if c.Agent {
		m.agentComment(c, r)
		return nil
	}
	if c.PermErr {
		return nil // fail closed: not classified, retried on the next reconcile
	}
	if !c.Perm.AtLeast(m.set.AnswerPermission) {
		m.refuseUnauthorized(c)
		return nil
	}
	if c.EditUnproven && !ReadOnlyReply(r) {
		m.refuseEdited(c)
		return nil
	}
	if r.Attempt {
		m.ledger(c.ID, "rejected:not-canonical")
		m.changed = true
		m.react(c.ID, outbox.ReactConfuse) // refused: 😕, like every refused comment (PRODUCT §7)
		m.replyOnce(c, "attempt", r.Hint)
		return nil
	}
	if r.Kind == reply.Choice {
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
func agentPermitted(c Comment, min access.Level) bool {
	if c.Perm.AtLeast(min) {
		return true
	}
	return c.Bot && !c.Perm.AtLeast(access.Triage)
}

// refuseUnauthorized: 😕 and at most one explanation per user per gate.
func (m *machine) refuseUnauthorized(c Comment) {
	m.ledger(c.ID, "rejected:unauthorized")
	m.changed = true
	m.react(c.ID, outbox.ReactConfuse)
	key := "unauth:" + strings.ToLower(c.Author) + ":" + m.gateKey()
	if m.owed(key) {
		m.replyTo(c.ID, prose.Unauthorized(c.Author, string(m.set.AnswerPermission)))
	}
}

// refuseEdited refuses a comment edited before it was processed whose
// current text its author cannot be shown to have written: someone with
// write access may have changed it. The author is asked, once, to post a
// new comment; the edited one is never applied.
func (m *machine) refuseEdited(c Comment) {
	m.ledger(c.ID, "rejected:edited")
	m.changed = true
	m.react(c.ID, outbox.ReactConfuse)
	m.replyTo(c.ID, prose.Edited(c.Author))
}

// replyOnce posts a reply unless this user already got one of this kind for
// the current gate.
func (m *machine) replyOnce(c Comment, kind, text string) {
	if m.owed(kind + ":" + strings.ToLower(c.Author) + ":" + m.gateKey()) {
		m.replyTo(c.ID, fmt.Sprintf("@\u200b%s: %s", textsafe.Escape(c.Author), text))
	}
}

// owed records a reply key and reports whether it was new.
func (m *machine) owed(key string) bool {
	for _, k := range m.s.Replies {
		if k == key {
			return false
		}
	}
	m.s.Replies = append(m.s.Replies, key)
	m.changed = true
	return true
}

func (m *machine) gateKey() string {
	if m.s.Gate != nil {
		return m.s.Gate.ID
	}
	return fmt.Sprintf("step-%s-c%d", m.s.Slug, m.s.Cycle)
}

// choice handles a letter answer.
func (m *machine) choice(c Comment, letter, reason string) {
	g := m.s.Gate
	if g == nil || m.s.Run == state.RunStopped {
		if m.alreadyDecided(c) {
			return
		}
		if c.At.After(m.s.UpdatedAt) && !m.s.UpdatedAt.IsZero() && m.s.Run != state.RunStopped {
			return // may answer a gate whose state write is not visible yet: defer
		}
		m.ledger(c.ID, "rejected:no-open-gate")
		m.changed = true
		m.react(c.ID, outbox.ReactConfuse)
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
		m.ledger(c.ID, "rejected:stale")
		m.react(c.ID, outbox.ReactConfuse)
		m.replyOnce(c, "stale", "this answer was written before the current question was asked, so it was not applied. Please answer the open question below it.")
		return
	}
	if _, ok := g.Option(letter); !ok {
		m.ledger(c.ID, "rejected:invalid-option")
		m.changed = true
		m.react(c.ID, outbox.ReactConfuse)
		m.replyOnce(c, "invalid", fmt.Sprintf("`%s` is not one of the options; did you mean one of %s?", letter, strings.Join(strings.Split(g.Letters(), ""), ", ")))
		return
	}
	m.ledger(c.ID, outbox.OutApplied)
	m.answer(c, letter, reason)
}

// decidedFor finds the decision of the gate a late answer was meant for.
func (m *machine) decidedFor(c Comment) (state.Decision, bool) {
	for i := len(m.s.Decisions) - 1; i >= 0; i-- {
		d := m.s.Decisions[i]
		if !before(c.At, d.GateOpenedAt) && d.CommentID != c.ID {
			return d, true
		}
	}
	return state.Decision{}, false
}

func (m *machine) slugs() []string {
	out := make([]string, len(m.f.Steps))
	for i, s := range m.f.Steps {
		out[i] = s.Slug
	}
	return out
}

// skipCommand handles /autopilot skip [reason]: reason required where the
// step says so; the skip itself is confirmed with a Choose (seed 002).
func (m *machine) skipCommand(c Comment, r reply.Result, accept func(), refuse func(string, string)) {
	if m.s.Run == state.RunDone || m.s.Run == state.RunStopped || m.s.Step == 0 {
		refuse("not-running", "there is no running step to skip.")
		return
	}
	st := m.step()
	if g := m.s.Gate; g != nil && g.Kind != "approval-"+st.Slug {
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
	if reason == "" {
		reason = "no reason given"
	}
	details := []string{"Reason: " + textsafe.Code(prose.OneLine(reason, 200))}
	if deps := m.dependents(); deps != "" {
		details = append(details, "Warning: later steps ("+deps+") may depend on its output.")
	}
	m.openGate("skip-"+st.Slug, fmt.Sprintf("DECISION REQUIRED: Skip %s?", st.Name), details,
		[]state.Option{{Letter: "A", Text: "Skip " + st.Name + " (with the warning above)", Action: state.ActSkipReason.With(c.Author)}, {Letter: "B", Text: "Execute the step", Action: state.ActExecute}},
		"B", "skipped steps leave gaps later steps may rely on")
}

func (m *machine) dependents() string {
	var out []string
	for i := m.s.Step; i < len(m.f.Steps) && len(out) < 3; i++ {
		out = append(out, m.f.Steps[i].Name)
	}
	return strings.Join(out, ", ")
}

// jiraCommand handles /autopilot jira retry|sync.
func (m *machine) jiraCommand(c Comment, r reply.Result, accept func(), refuse func(string, string)) {
	if !m.set.JiraConfigured && (m.s.Gate == nil || m.s.Gate.Kind != "jira-auth") {
		refuse("jira-not-configured", prose.JiraNotConfigured)
		return
	}
	if m.s.JiraOff != "" {
		// Jira is configured now: the tasks kept here go to the outbox.
		for i := range m.s.Tasks {
			if m.s.Tasks[i].Jira == state.JiraLocal {
				m.s.Tasks[i].Jira = state.JiraPending
			}
		}
		m.s.JiraOff = ""
		m.changed = true
	}
	if r.Cmd == "jira retry" {
		if m.s.Gate != nil && m.s.Gate.Kind == "jira-auth" {
			m.ledger(c.ID, outbox.OutApplied)
			m.answer(c, "A", "via /autopilot jira retry")
			return
		}
		accept()
		m.s.JiraNote = ""
		m.ask(Query{Kind: QJiraSync, Jira: JiraRetry})
		return
	}
	if !m.hasPendingTasks() && !m.hasCreatedTasks() {
		refuse("nothing-to-sync", "there are no tasks to sync with Jira.")
		return
	}
	accept()
	m.ask(Query{Kind: QJiraSync, Jira: JiraAsked})
}

func (m *machine) hasPendingTasks() bool {
	for _, t := range m.s.Tasks {
		if t.Jira == state.JiraPending || t.Jira == state.JiraSending {
			return true
		}
	}
	return false
}

func (m *machine) hasCreatedTasks() bool {
	for _, t := range m.s.Tasks {
		if t.Jira == state.JiraCreated {
			return true
		}
	}
	return false
}

// Handled reports whether the comment id is already in the ledger
// (outbox.Handled); kept here for its many callers outside the engine.
func Handled(s *state.State, id int64) bool { return outbox.Handled(s, id) }
