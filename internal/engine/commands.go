package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/grammar"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// command is one `/autopilot` command. Everything about commands is read
// from the commands table below: the parser and its usage hints (Parse),
// the help text (Usage), ReadOnly, what agents may send, and the dispatch
// in inputs.command. Adding a command is one row here and its handler.
type command struct {
	grammar.Spec
	// readOnly: answering it changes nothing in the state, so it needs no
	// state write and may be answered from an edited comment.
	readOnly bool
	// agents: a configured agent (agents: in the config) may send it. Every
	// command needs answer_permission (engine package comment); agents
	// send nothing but their reports on the step they execute.
	agents bool
	// declares: the comment may declare tasks (a report's task block, or
	// the task files of a Jira step), which reconcile reads for it.
	declares bool
	// handle applies the command from an authorised author; accept and
	// refuse record the outcome in the ledger and react.
	handle handler
}

type handler func(m *inputs, c events.Comment, r grammar.Result, accept func(), refuse func(why, text string))

// commands lists the commands of PRODUCT.md §7 in the order the help text
// shows them.
var commands = [...]command{
	{Spec: grammar.Spec{Name: "status", About: "post where the run is"},
		readOnly: true, handle: (*inputs).statusCommand},
	{Spec: grammar.Spec{Name: "done", Args: "[--confidence X] [summary]", Flags: true,
		About: "report the current step finished",
		Rule:  "X is a number from 0 to 1, e.g. 0.7"},
		agents: true, declares: true, handle: (*inputs).reportCommand},
	{Spec: grammar.Spec{Name: "fail", Args: "<reason>", NeedText: true,
		About: "report the current step failed",
		Rule:  "a reason is required"},
		agents: true, handle: (*inputs).reportCommand},
	{Spec: grammar.Spec{Name: "progress", Args: "<phase> <name> [detail]", Phase: true, Slug: true,
		About: "record progress inside the current step",
		Rule:  "phase is a whole number, 0 or more; name is kebab-case, e.g. run-tests"},
		agents: true, handle: (*inputs).reportCommand},
	{Spec: grammar.Spec{Name: "skip", Args: "[reason]",
		About: "skip the current step (security-audit and qa need a reason)"},
		handle: (*inputs).skipCommand},
	{Spec: grammar.Spec{Name: "back", Args: "<step>", Slug: true,
		About: "go back to an earlier step",
		Rule:  "step is a step name such as plan, or its number"},
		handle: (*inputs).backCommand},
	{Spec: grammar.Spec{Name: "retry", About: "retry the failed step"},
		handle: (*inputs).retryCommand},
	{Spec: grammar.Spec{Name: "stop", About: "stop the run"},
		handle: (*inputs).stopCommand},
	{Spec: grammar.Spec{Name: "resume", About: "continue a stopped run"},
		handle: (*inputs).resumeCommand},
	{Spec: grammar.Spec{Name: "approve", Args: "<role> [note]", Slug: true,
		About: "approve the plan in a review role",
		Rule:  "role is architect or critic"},
		handle: (*inputs).consensus},
	{Spec: grammar.Spec{Name: "reject", Args: "<role> <reason>", Slug: true, NeedText: true,
		About: "reject the plan in a review role",
		Rule:  "role is architect or critic; a reason is required"},
		handle: (*inputs).consensus},
	{Spec: grammar.Spec{Name: CmdTasksRetry, Aliases: []string{"jira retry"},
		About: "check the tracker's credentials again and resume a paused task sync"},
		handle: (*inputs).tasksCommand},
	{Spec: grammar.Spec{Name: CmdTasksSync, Aliases: []string{"jira sync"},
		About: "send the tasks still pending to the tracker (Jira or GitHub sub-issues) and read back the closed ones"},
		handle: (*inputs).tasksCommand},
	{Spec: grammar.Spec{Name: "help", About: "show this list"},
		readOnly: true, handle: (*inputs).helpCommand},
	{Spec: grammar.Spec{Name: "choose", Args: "<letter>", Letter: true,
		About: "answer the open decision, same as replying with the letter",
		Rule:  "letter is one of A, B, C, D"},
		handle: (*inputs).chooseCommand},
}

// The tracker-neutral task commands; `jira retry` and `jira sync` are
// their aliases (PRODUCT §10).
const (
	CmdTasksRetry = "tasks retry"
	CmdTasksSync  = "tasks sync"
)

// commandGrammar is the parser built from the commands table (set in init: the
// help handler reads it, so a var initialiser would be a cycle).
var commandGrammar *grammar.Grammar

func init() {
	specs := make([]grammar.Spec, len(commands))
	for i, c := range commands {
		specs[i] = c.Spec
	}
	commandGrammar = grammar.NewGrammar(specs...)
}

// Parse reads a comment against the commands table (grammar.Grammar.Parse).
func Parse(body string) grammar.Result { return commandGrammar.Parse(body) }

// Usage is the `/autopilot help` text.
func Usage() string { return commandGrammar.Usage() }

// Grammar is the parser of the commands table, for tests and docs checks.
func Grammar() *grammar.Grammar { return commandGrammar }

func lookupCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.Name == name {
			return c, true
		}
	}
	return command{}, false
}

// ReadOnly reports whether a comment body is a read-only command
// (status/help) or no command at all: classifying it needs no state write.
func ReadOnly(body string) bool { return ReadOnlyReply(Parse(body)) }

// ReadOnlyReply is ReadOnly for a body already parsed.
func ReadOnlyReply(r grammar.Result) bool {
	if !r.Acts() {
		return true
	}
	c, ok := lookupCommand(r.Cmd)
	return r.Kind == grammar.Command && ok && c.readOnly
}

// agentMay reports whether a configured agent may send r: agents report on
// the step they execute, nothing else.
func agentMay(r grammar.Result) bool {
	c, ok := lookupCommand(r.Cmd)
	return r.Kind == grammar.Command && ok && c.agents
}

// DeclaresTasks reports whether r is a command whose comment may declare
// tasks (reconcile then parses the task block or reads the task files).
func DeclaresTasks(r grammar.Result) bool {
	c, ok := lookupCommand(r.Cmd)
	return r.Kind == grammar.Command && ok && c.declares
}

// command applies an /autopilot command from an authorised author.
func (m *inputs) command(c events.Comment, r grammar.Result) {
	accept := func() {
		m.ledger(c.ID, state.LedgerApplied)
		m.Changed = true
		m.React(c.ID, outbox.ReactUp)
	}
	refuse := func(why, text string) {
		m.ledger(c.ID, state.Rejected(why))
		m.Changed = true
		m.React(c.ID, outbox.ReactConfuse)
		m.replyOnce(c, why, text)
	}
	cmd, ok := lookupCommand(r.Cmd)
	if !ok {
		refuse("unknown-command", "unknown command; see `/autopilot help`.")
		return
	}
	cmd.handle(m, c, r, accept, refuse)
}

func (m *inputs) chooseCommand(c events.Comment, r grammar.Result, _ func(), _ func(string, string)) {
	m.choice(c, r.Letter, r.Reason)
}

func (m *inputs) statusCommand(c events.Comment, _ grammar.Result, _ func(), _ func(string, string)) {
	m.ledger(c.ID, state.LedgerApplied)
	m.React(c.ID, outbox.ReactUp)
	m.ReplyTo(c.ID, "Status requested by @\u200b"+textsafe.Escape(c.Author)+":\n\n```text\n"+prose.Banner(m.Set.Config.All, m.S)+"\n```"+m.statusTasks())
}

// statusTasks is what a status reply says of the tasks still open on a
// tracker. The command is read-only: the reply is composed from the state
// as the pass read it, before any read-back, so it says what the tracker
// may know that the reply cannot show, and which run will record it.
func (m *inputs) statusTasks() string {
	open, done := 0, 0
	for _, t := range m.S.Tasks {
		switch {
		case t.Closable():
			open++
		case t.Done:
			done++
		}
	}
	tracker := m.trackerInUse()
	if open == 0 || tracker == state.TrackerLocal {
		return ""
	}
	label := state.TrackerLabel(tracker)
	line := fmt.Sprintf("\n\n%s: %d of %d task(s) done as the state last recorded them; ", label, done, done+open)
	switch {
	case m.S.TrackerEnabled == nil || !*m.S.TrackerEnabled:
		return line + "the sync is off, so they are not read back; `/autopilot tasks sync` turns it on and reads them."
	case m.S.TrackerNote == outbox.PausedAuth:
		return line + "the sync is paused (" + label + " refused the credentials), so they are not read back; `/autopilot tasks retry` resumes it."
	case m.S.TrackerRetryAt.After(m.Now):
		return line + fmt.Sprintf("%s asked to wait until %s (rate limit), so they are not read back, nor sent, before then; the first run after that records what changed.",
			label, m.S.TrackerRetryAt.UTC().Format(time.RFC3339))
	case tracker == state.TrackerGitHub:
		return line + "task issues closed since are read back from GitHub by this run after this reply: the state comment shows them ticked."
	}
	return line + label + " statuses are read back by the scheduled sweep or `/autopilot tasks sync`, not by this command."
}

func (m *inputs) helpCommand(c events.Comment, _ grammar.Result, _ func(), _ func(string, string)) {
	m.ledger(c.ID, state.LedgerApplied)
	m.React(c.ID, outbox.ReactUp)
	m.ReplyTo(c.ID, "Autopilot commands (first line of a comment):\n\n```text\n"+Usage()+"\n```")
}

func (m *inputs) stopCommand(c events.Comment, _ grammar.Result, accept func(), refuse func(string, string)) {
	if m.S.Run == state.RunStopped || m.S.Run == state.RunDone {
		refuse("not-running", "the run is not running, so there is nothing to stop.")
		return
	}
	accept()
	m.Stop(stops.KillUserAbort, "stopped by @"+c.Author)
}

func (m *inputs) resumeCommand(c events.Comment, _ grammar.Result, accept func(), refuse func(string, string)) {
	if m.S.Run != state.RunStopped {
		refuse("not-stopped", "the run is not stopped; `/autopilot resume` continues a stopped run.")
		return
	}
	accept()
	m.Resume("resumed by @" + c.Author)
}

// reportCommand handles the executor's done, fail and progress.
func (m *inputs) reportCommand(c events.Comment, r grammar.Result, accept func(), refuse func(string, string)) {
	if m.S.Run == state.RunStopped || m.S.Run == state.RunDone || m.S.Status != state.InProgress || m.S.Gate != nil && m.S.Gate.Kind != state.GateApproval(m.S.Slug) {
		refuse("no-step-running", "no step is waiting for an executor report right now (see the state comment).")
		return
	}
	m.executorReport(c, r, accept, refuse)
}

func (m *inputs) backCommand(c events.Comment, r grammar.Result, accept func(), refuse func(string, string)) {
	if m.F == nil || m.S.Run == state.RunStopped {
		refuse("not-running", "there is no running flow to go back in; `/autopilot resume` a stopped run first.")
		return
	}
	if g := m.S.Gate; g != nil && !g.Kind.IsApproval() && g.Kind != state.GateSkillFailed {
		refuse("gate-open", "answer the open question first; `/autopilot back` can follow once it is decided.")
		return
	}
	i := m.F.Index(r.Name)
	if k, err := strconv.Atoi(r.Name); err == nil && i < 0 && k >= 1 && k <= len(m.F.Steps) {
		i = k - 1
	}
	latest := m.S.Step
	if m.S.Run == state.RunDone {
		latest = len(m.F.Steps) + 1
	}
	if i < 0 || i+1 >= latest {
		refuse("bad-step", "`/autopilot back` needs an earlier step of this flow: "+strings.Join(m.slugs(), ", ")+".")
		return
	}
	accept()
	m.OpenRollbackGate(m.F.Steps[i])
}

func (m *inputs) retryCommand(c events.Comment, _ grammar.Result, _ func(), refuse func(string, string)) {
	if m.S.Status != state.Failed || m.S.Gate == nil || m.S.Gate.Kind != state.GateSkillFailed {
		refuse("nothing-to-retry", "there is no failed step to retry.")
		return
	}
	if m.vote(c, "A", "via /autopilot retry", state.VoteComment, c) {
		return // an approver policy counts it as a vote for A
	}
	m.ledger(c.ID, state.LedgerApplied)
	m.Answer(c, "A", "via /autopilot retry")
}
