// Package pass is one reconcile pass as the engine sees it: a Node steps
// the pass's events into the engine (engine.Apply) and says what to do
// next (Ready), so the caller keeps no decision of its own.
package pass

import (
	"fmt"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Node carries one reconcile pass over an issue, in the shape of etcd
// raft's RawNode: the caller steps every input in as an event (Step), asks
// what to do next (Ready), carries that out — answers the queries with
// more events, writes the state, performs the effects — and reports back
// (Wrote, and the outcomes as events). The node keeps what the pass has
// produced so far, so the caller keeps no decision of its own.
//
// A pass has two halves. Until the engine's reads are answered (QPerms,
// QJiraAuth, QCheckPR), Ready hands out only those. The first Ready
// without reads settles the pass (outbox.Settle: what the write
// announces, what is still owed) and plans the PR checks; from then on
// Ready hands out the tracker work (QJiraSync, then QJiraClose, each at
// most once a pass, as its answer writes the state before it sends), the
// effects produced since, and whether an unwritten change is left.
type Node struct {
	set engine.Settings
	opt Options
	st  *state.State
	// effects and queries were produced and not handed out yet.
	effects []state.Effect
	queries []engine.Query
	// changed: the state has a change no write carried yet; classified:
	// the ledger grew and no write carried it yet.
	changed, classified bool
	decision            string
	settled             bool
	// synced and closed: the tracker queries were handed out this pass;
	// syncOpen: the sync's answer has not come back yet.
	synced, closed, syncOpen bool
	// sync are the engine.QJiraSync queries the events asked (engine.PlanSync reads
	// them at the settle).
	sync []engine.Query
	// notes were produced by events and not handed out yet.
	notes []string
}

// Options are the facts of the pass the node's rules read besides
// the settings.
type Options struct {
	Issue int
	// Sweep: the scheduled catch-up (tracker statuses are read back).
	Sweep bool
	// Closed: the issue as read is closed (its tasks may move to done).
	Closed bool
	// Tracker is what the issue's tracker can do (its registration).
	Tracker tasksync.Caps
	// Checks: the forge can create check runs; Buttons: they may offer a
	// Choose block's options as buttons (App mode).
	Checks, Buttons bool
	// Rewrite: the state read is older than the bot's own comments; it is
	// written whatever the events do.
	Rewrite bool
}

// Ready is what to do next, in order: answer Queries (then ask again);
// write State when Write; perform Effects; create Checks; match Labels.
// Notes say what the pass chose not to do.
type Ready struct {
	outbox.Ready
	Queries []engine.Query
	// Checks are the PR check runs to create; their shown hashes are
	// already in State.
	Checks   []checkview.CheckRun
	Decision string
	Notes    []string
}

// New starts a pass over issue opt.Issue whose state as read is st
// (nil: none yet).
func New(set engine.Settings, st *state.State, opt Options) *Node {
	return &Node{set: set, st: st, opt: opt, changed: opt.Rewrite}
}

// Asks reports whether the engine asked, and nobody was handed yet, a
// query of kind k about PR pr (0: any).
func (n *Node) Asks(k engine.QueryKind, pr int) bool {
	for _, q := range n.queries {
		if q.Kind == k && (pr == 0 || q.PR == pr) {
			return true
		}
	}
	return false
}

// State is the state as the events so far left it.
func (n *Node) State() *state.State { return n.st }

// Decision is the last option letter an event applied.
func (n *Node) Decision() string { return n.decision }

// Step applies one event at now.
func (n *Node) Step(ev engine.Event, now time.Time) error {
	ledger := 0
	var retryAt time.Time
	if n.st != nil {
		ledger, retryAt = len(n.st.Ledger), n.st.TrackerRetryAt
	}
	if js, ok := ev.(engine.JiraSynced); ok && n.st != nil && js.RetryAt.After(now) && !js.RetryAt.Equal(retryAt) {
		// The tracker's limit window is deferred work, not a failure: the
		// run says it once, and the state written records the window.
		n.notes = append(n.notes, fmt.Sprintf("%s asked to wait until %s (rate limit): %d task(s) stay pending, the first run after that sends them; the flow goes on",
			state.TrackerLabel(n.st.TrackerInUse), js.RetryAt.UTC().Format(time.RFC3339), engine.PendingCount(&state.State{Tasks: js.Tasks})))
	}
	res, err := engine.Apply(n.set, n.st, ev, now)
	if err != nil {
		return err
	}
	if res.State != nil && n.st == nil {
		res.State.Issue = n.opt.Issue
	}
	n.st = res.State
	n.effects = append(n.effects, res.Effects...)
	for _, q := range res.Queries {
		if q.Kind == engine.QJiraSync {
			n.sync = append(n.sync, q)
		} else {
			n.queries = append(n.queries, q)
		}
	}
	n.changed = n.changed || res.Changed
	if _, ok := ev.(engine.JiraSynced); ok {
		n.syncOpen = false
	}
	if _, ok := ev.(engine.Comment); ok && n.st != nil && len(n.st.Ledger) > ledger {
		// Every classification is stored, read-only ones too: one that
		// is not could be edited into an answer before a later write and
		// then be applied (edits never change a decision).
		n.classified = true
	}
	if res.Decision != "" {
		n.decision = res.Decision
	}
	return nil
}

// Ready says what to do next; seen tells what the thread shows of the
// writes the stored state announced (asked once, when the pass settles:
// the caller calls Ready again for every effect it performs), now is the
// time of the pass.
func (n *Node) Ready(seen func() outbox.Seen, now time.Time) (Ready, error) {
	rd := Ready{Decision: n.decision, Notes: n.notes}
	n.notes = nil
	if q := n.take(func(q engine.Query) bool { return q.Kind == engine.QPerms }); len(q) > 0 {
		// A read that asked for permissions is given again with them
		// before anything else is applied.
		rd.Queries = q
		return rd, nil
	}
	if q := n.take(func(engine.Query) bool { return true }); len(q) > 0 {
		rd.Queries = q
		return rd, nil
	}
	if !n.settled {
		st, err := n.settle(seen, now)
		st.Notes = append(rd.Notes, st.Notes...)
		return st, err
	}
	rd.State, rd.Write, rd.Effects = n.st, n.changed || n.classified, n.effects
	if n.st != nil {
		rd.Labels = outbox.Labels(n.st)
	}
	n.effects = nil
	rd.Queries = n.trackerWork(&rd)
	return rd, nil
}

// settle is the pass's first Ready without reads: the PR checks are
// planned, the outbox settled, and the tracker work handed out.
func (n *Node) settle(seen func() outbox.Seen, now time.Time) (Ready, error) {
	n.settled = true
	var checks []checkview.CheckRun
	if n.st != nil && n.opt.Checks {
		want := checkview.DesiredChecks(n.set.Config, n.set.AnswerPermission, n.st, checkview.CheckOptions{Buttons: n.opt.Buttons})
		var shown []engine.CheckShown
		checks, shown = checkview.ToCreate(want, n.st.PRChecks)
		for _, ev := range shown {
			if err := n.Step(ev, now); err != nil {
				return Ready{}, err
			}
		}
		if len(checks) > 0 {
			n.changed = true
		}
	}
	rd := Ready{Checks: checks, Decision: n.decision}
	if n.st == nil {
		rd.Effects, n.effects, n.changed = n.effects, nil, false
		return rd, nil
	}
	// The engine decides what is still owed and what the write announces;
	// classifications ride on this pass's write when effects follow
	// anyway (a write of their own at the end otherwise).
	rd.Ready = outbox.Settle(n.st, n.effects, seen(), n.changed, n.classified)
	n.st, n.effects, n.changed = rd.State, nil, rd.Write
	rd.Queries = n.trackerWork(&rd)
	return rd, nil
}

// trackerWork hands out the pass's tracker sync, then its closes, once
// each: the one after the other, as a sync can create what a close moves.
func (n *Node) trackerWork(rd *Ready) []engine.Query {
	if !n.synced {
		n.synced = true
		// With sub-issues every pass reads open tasks back, as the sweep does.
		plan := engine.PlanSync(n.set, n.st, n.sync, n.opt.Sweep || outbox.ReadBack(n.st, n.opt.Tracker))
		n.sync = nil
		if plan.Unconfigured {
			rd.Notes = append(rd.Notes, "tasks sync requested but no tracker is configured")
		}
		if plan.Run {
			n.syncOpen = true
			return []engine.Query{{Kind: engine.QJiraSync, Sync: plan}}
		}
	}
	if !n.closed && !n.syncOpen {
		n.closed = true
		if open := outbox.PlanClose(n.set.Config, n.st, n.set.JiraConfigured, n.opt.Tracker, n.opt.Closed); open > 0 {
			return []engine.Query{{Kind: engine.QJiraClose, Open: open}}
		}
	}
	return nil
}

// take removes and returns the pending queries keep accepts, in order.
func (n *Node) take(keep func(engine.Query) bool) []engine.Query {
	var out, rest []engine.Query
	for _, q := range n.queries {
		if keep(q) {
			out = append(out, q)
		} else {
			rest = append(rest, q)
		}
	}
	n.queries = rest
	return out
}

// Wrote reports that the caller stored s, the node's state with its
// write envelope (version, write id, watermark) and compaction: every
// change so far is written.
func (n *Node) Wrote(s *state.State) {
	n.st = s
	n.changed, n.classified = false, false
}

// Unwritten reports a change no write carried yet.
func (n *Node) Unwritten() bool { return n.st != nil && (n.changed || n.classified) }

// Changed reports a state change no write carried yet (classifications
// alone wait for the end of the pass).
func (n *Node) Changed() bool { return n.st != nil && n.changed }
