// Package engine is autopilot's workflow state machine. It is pure:
// Apply(settings, state, event, now) returns the next state and the side
// effects to perform, and never does I/O, reads a clock or draws randomness.
// The caller (internal/reconcile) persists the state before it performs the
// effects, so a crash between the two is recoverable (every effect is
// idempotent by its hidden marker).
//
// Who may act. A human comment acts only when the collaborator-permission
// API grants its author at least answer_permission; a failed lookup defers
// the comment (fail closed). Bots never act, with one exception: accounts
// listed under agents: in the configuration may report on the step they
// execute (/autopilot done|fail|progress: the rows of the command table
// marked agents, nothing else). Being listed is
// not enough on its own: an agent must also pass the permission check,
// unless it is a bot account (GitHub type "Bot") for which the permission
// API reports no role — "none" (a 404 the adapter maps to none) or "read",
// which every account has on a public repository. A GitHub App's bot is
// never a collaborator, so for it the agents: entry is the grant. A listed
// machine user (type "User") therefore needs answer_permission like anyone
// else; an agent below it (a user with read, a bot given triage) is refused
// with the usual one-time explanation, and a failed lookup defers the
// report (fail closed).
//
// Other inputs are authenticated as strictly (docs/security.md, trust
// table): only the recorded run id completes a dispatched step (MatchRun);
// PR evidence counts only from a trusted PR on its current head
// (TrustedPull, and approvals on the head commit); a comment edited before
// it was processed is refused unless its author is shown to have written
// the text (Comment.EditUnproven).
//
// Two packages share the work. This one reads the inputs — events,
// comments, commands, PR evidence — and decides whether and how they count
// (the rules above); package machine is the walk, how a run moves (steps,
// gates and their answers, retries, kill-switches), which this package
// embeds and calls.
//
// Kill-switches (seed 004, in package machine) act only at iteration
// boundaries: after a step completes or is skipped (advance), when a fresh
// executor session would start (sessionLimit), and on the sweep's Tick
// while the run waits at a boundary. Each sets the run stopped with a reason and a recovery hint;
// /autopilot resume (or re-adding the trigger label) continues and resets
// the budgets the stop was about.
package engine

import (
	"fmt"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/approvals"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/grammar"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// NeedsPerm reports whether classifying c needs its author's permission
// (the caller looks it up into Perm, or sets PermErr). Bots never act, so
// theirs is never asked; configured agents pass the check too (package
// comment). A status or help command the bot already replied to was
// answered by an earlier pass that wrote nothing (read-only commands are
// not kept in the ledger on their own): it was permitted then, and its
// reaction and reply exist, so it is classified again without a lookup.
func NeedsPerm(c events.Comment) bool {
	r := parsed(c)
	switch {
	case !r.Acts(), c.Bot && !c.Agent:
		return false
	case answeredReadOnly(c, r):
		return false
	}
	return true
}

func answeredReadOnly(c events.Comment, r grammar.Result) bool {
	return c.Replied && r.Kind == grammar.Command && ReadOnlyReply(r)
}

// parsed is the comment's reply, parsed once.
func parsed(c events.Comment) grammar.Result {
	if c.Reply != nil {
		return *c.Reply
	}
	return Parse(c.Body)
}

// Result is what Apply returns besides the state.
type Result struct {
	State *state.State
	// Effects are the writes to perform after the state is written, in order.
	Effects []state.Effect
	// Queries are what the engine needs answered (as events) before it can
	// go on.
	Queries []events.Query
	// Changed is false when the event changed nothing worth writing
	// (ledger-only classifications of read-only commands ride along later).
	Changed bool
	// Decision is the option letter applied by this event, if any.
	Decision string
}

// inputs is one Apply call seen from the engine: the walk (machine.M)
// plus the handlers that read each input and decide which move it makes.
type inputs struct {
	*machine.M
	// facts are what an approver policy judges a vote on (Voted).
	facts *approvals.Facts
}

// Apply computes the next state and effects for one event. s may be nil
// when the issue has no state yet (only Start creates one). Apply never
// mutates s.
func Apply(set machine.Settings, s *state.State, ev events.Event, now time.Time) (Result, error) {
	w, err := machine.New(set, s, now)
	if err != nil {
		return Result{}, err
	}
	m := &inputs{M: w}
	if err := m.apply(ev); err != nil {
		return Result{}, err
	}
	if m.S != nil && len(m.S.Deploys) > 0 {
		m.SettleDeploys() // a deploy question the event closed (deploy.go)
	}
	if m.S != nil && m.Changed {
		m.S.UpdatedAt = m.Now
		m.S.TrackerInUse = m.trackerInUse()
		m.gateStatus()
	}
	return Result{State: m.S, Effects: m.Effs, Queries: m.Qs, Changed: m.Changed, Decision: m.Decision}, nil
}

// reapply is apply for a row that hands on an event it carries (a vote);
// set in init, since the table cannot name apply, which reads the table.
var reapply func(m *inputs, ev events.Event) error

func init() { reapply = (*inputs).apply }

func (m *inputs) apply(ev events.Event) error {
	h, ok := eventHandlers[events.Name(ev)]
	if !ok {
		return fmt.Errorf("unknown event %T", ev)
	}
	if m.S == nil && !h.noRun {
		return nil // no run on this issue: nothing to do
	}
	if m.S != nil {
		switch ev.(type) {
		case events.Recovered, events.Unmanaged:
		default:
			m.deadlines() // an approver policy's reminders and expiry first
		}
	}
	return h.apply(m, ev)
}

// eventHandler is one row of the engine's event table.
type eventHandler struct {
	// noRun: applied also when the issue has no run (else such an event
	// does nothing).
	noRun bool
	apply func(m *inputs, ev events.Event) error
}

// eventHandlers is the engine's event table: the handler of every event of
// engine/events, keyed by its name. A new event is its type there and a
// row here (a test checks every event has one).
var eventHandlers = table(
	on(true, func(m *inputs, e events.Recovered) error { m.recovered(e); return nil }),
	on(true, func(m *inputs, e events.Unmanaged) error { m.unmanaged(e); return nil }),
	// A vote with what the approver policy judges it on: the vote applies
	// as its comment or click would (approvals.go).
	on(false, func(m *inputs, e events.Voted) error { m.facts = &e.Facts; return reapply(m, e.Vote) }),
	on(true, func(m *inputs, e events.Start) error {
		if m.S == nil {
			return m.Start(e)
		}
		return m.Restart(e)
	}),
	on(false, func(m *inputs, e events.LabelRemoved) error {
		m.Stop(stops.KillUserAbort, "the trigger label was removed"+machine.By(e.Actor))
		return nil
	}),
	on(false, func(m *inputs, e events.Closed) error {
		if m.S.Run != state.RunDone && m.S.Run != state.RunStopped {
			m.Stop(stops.KillUserAbort, "the issue was closed")
		}
		return nil
	}),
	on(false, (*inputs).comment),
	do((*inputs).review),
	do((*inputs).checks),
	do((*inputs).runCompleted),
	do((*inputs).dispatched),
	do((*inputs).TrackerAuth),
	do((*inputs).trackerSynced),
	do(func(m *inputs, e events.Tick) {
		m.Tick(e)
		m.AskDeployApprovals() // environment-page reviewers (deploy.go)
		m.backgroundResumed()  // held.go
	}),
	do((*inputs).backgroundHeld),
	do((*inputs).prLinked),
	do((*inputs).pullSeen),
	do((*inputs).pullRead),
	do((*inputs).configRead),
	do((*inputs).refused),
	// What the thread shows of the open question's Choose comment
	// (chooseshown.go).
	do((*inputs).chooseShown),
	do((*inputs).checkShown),
	do((*inputs).click),
	// A deployment protection-rule request, matched to this issue or to
	// none (deploy.go); and what became of its answer.
	on(true, func(m *inputs, e events.DeploymentRequested) error { m.deploymentRequested(e); return nil }),
	do(func(m *inputs, e events.DeployAnswered) { m.DeployAnswered(e) }),
	do((*inputs).deployReviews),
)

type row struct {
	name string
	h    eventHandler
}

// on is the row of the events of type E, handled by f.
func on[E events.Event](noRun bool, f func(m *inputs, e E) error) row {
	var zero E
	return row{events.Name(zero), eventHandler{noRun: noRun, apply: func(m *inputs, ev events.Event) error {
		e, ok := ev.(E)
		if !ok { // another type answering to the name (embedding E)
			return fmt.Errorf("unknown event %T", ev)
		}
		return f(m, e)
	}}}
}

// do is the row of the events of type E, handled by f when the issue has
// a run.
func do[E events.Event](f func(m *inputs, e E)) row {
	return on(false, func(m *inputs, e E) error { f(m, e); return nil })
}

func table(rows ...row) map[string]eventHandler {
	t := make(map[string]eventHandler, len(rows))
	for _, r := range rows {
		if _, dup := t[r.name]; dup {
			panic("engine: two handlers for event " + r.name)
		}
		t[r.name] = r.h
	}
	return t
}

// before reports whether a (a GitHub timestamp, whole seconds) is before b
// (the engine's clock), comparing at GitHub's one-second resolution.
func before(a, b time.Time) bool { return a.Before(b.Truncate(time.Second)) }
