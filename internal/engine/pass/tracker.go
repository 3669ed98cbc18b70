package pass

import (
	"fmt"
	"reflect"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
)

// The tracker work of a pass (PRODUCT §10) is the engine's: the node runs
// the rules' machines (tasksync.Sync, then tasksync.Close) itself and
// hands out their ops one at a time (Ready.Tracker); the carrier only
// performs each op against the tracker's port — the API call, its error
// mapped to a tasksync.Refusal — and steps the answer in
// (TrackerOutcome). The sync's claim, the write of the "sending" marks
// before a create, is a Persist of the node's (Ready.Claim); the sync's
// and the close's outcomes are written like every other state change.

// TrackerOp is one tracker operation to perform (Ready.Tracker).
type TrackerOp struct {
	Op tasksync.Op
	// Close: the op is the close policy's (else the sync's).
	Close bool
	// Tasks counts the tasks the work concerns: a dry run previews it
	// instead of performing the op.
	Tasks int
}

// TrackerOutcome answers the TrackerOp handed out last.
type TrackerOutcome struct {
	Op      tasksync.Op
	Outcome tasksync.Outcome
	// Previewed: a dry run performed nothing; the work ends having sent
	// nothing (a sync reports the tasks as they were).
	Previewed bool
}

// TrackerReport is what a tracker sync or close did, handed out once it
// is over (for the log): Sync or Close is set.
type TrackerReport struct {
	Name  string
	Sync  *tasksync.Result
	Close *tasksync.CloseResult
}

// trackerRun is the tracker work in flight: at most one machine, the op
// handed out and not answered (out), the claim's write handed out and
// not stored (claim).
type trackerRun struct {
	sync   *tasksync.Sync
	close  *tasksync.Close
	enable bool // the sync's plan turns the tracker on
	tasks  int
	out    tasksync.Op
	claim  bool
	report *TrackerReport
}

// rules are the bounds of this pass's tracker work at now.
func (n *Node) rules(now time.Time) tasksync.Options {
	return n.opt.Tracker.Bound(tasksync.Options{Now: now, NotBefore: n.st.TrackerRetryAt, SearchLag: time.Duration(n.set.Config.Jira.SearchLag)})
}

func (n *Node) trackerName() string {
	if name := n.opt.Tracker.Name; name != "" {
		return name
	}
	return "Tracker"
}

// trackerSync plans the pass's sync, once, and hands out its next op;
// true when rd holds it (or an op is still unanswered).
func (n *Node) trackerSync(rd *Ready, in Input) (bool, error) {
	rd.TrackerDone, n.trk.report = n.trk.report, nil
	if !n.synced {
		n.synced = true
		// With sub-issues every pass reads open tasks back, as the sweep does.
		plan := engine.PlanSync(n.set, n.st, n.sync, n.opt.Sweep || outbox.ReadBack(n.st, n.opt.Tracker))
		n.sync = nil
		if plan.Unconfigured {
			rd.Notes = append(rd.Notes, "tasks sync requested but no tracker is configured")
		}
		if !plan.Run {
			return false, nil
		}
		tasks := n.st.Tasks
		if plan.Retry {
			tasks = tasksync.RetryFailed(tasks)
		}
		m, err := tasksync.NewSync(tasks, n.rules(in.Now))
		if err != nil {
			return false, fmt.Errorf("%s sync of #%d: %w", n.trackerName(), n.opt.Issue, err)
		}
		n.trk = trackerRun{sync: m, enable: plan.Enable, tasks: tasksync.PendingCount(n.st)}
	}
	if n.trk.sync == nil {
		return false, nil
	}
	if n.trk.out != nil || n.trk.claim {
		return true, nil
	}
	switch op := n.trk.sync.Next().(type) {
	case nil:
		n.hand(rd, tasksync.Recall{}, false)
	case tasksync.Persist:
		// The claim: the "sending" marks are written, and the write must
		// stand, before the creates they announce are handed out.
		st := n.st
		if err := n.apply(events.TrackerSynced{Tasks: op.Tasks, Note: st.TrackerNote, RetryAt: st.TrackerRetryAt, Enable: n.trk.enable}, in.Now); err != nil {
			return false, err
		}
		rd.Persist, rd.Claim = n.persist(in), true
		n.trk.claim = true
	default:
		n.hand(rd, op, false)
	}
	return true, nil
}

// trackerClose plans the close policy, once, after the sync's outcome is
// written (a sync can create what a close moves), and hands out its next
// op.
func (n *Node) trackerClose(rd *Ready, in Input) bool {
	if !n.closed {
		n.closed = true
		if !n.opt.Tracker.CanClose {
			return false
		}
		open := outbox.PlanClose(n.set.Config, n.st, n.set.TrackerConfigured, n.opt.Tracker, n.opt.Closed)
		if open == 0 {
			return false
		}
		n.trk = trackerRun{close: tasksync.NewClose(n.st.Tasks, n.rules(in.Now)), tasks: open}
	}
	if n.trk.close == nil {
		return false
	}
	if n.trk.out != nil {
		return true
	}
	op := n.trk.close.Next()
	if op == nil {
		op = tasksync.Recall{}
	}
	n.hand(rd, op, true)
	return true
}

func (n *Node) hand(rd *Ready, op tasksync.Op, closing bool) {
	n.trk.out = op
	rd.Tracker = &TrackerOp{Op: op, Close: closing, Tasks: n.trk.tasks}
}

// trackerOutcome takes the answer to the op handed out.
func (n *Node) trackerOutcome(ev TrackerOutcome, now time.Time) error {
	if n.trk.out == nil {
		return fmt.Errorf("pass: a tracker outcome (%T) with no tracker op handed out", ev.Op)
	}
	if reflect.TypeOf(ev.Op) != reflect.TypeOf(n.trk.out) {
		return fmt.Errorf("pass: a tracker outcome for %T, but the op handed out is %T", ev.Op, n.trk.out)
	}
	n.trk.out = nil
	_, recall := ev.Op.(tasksync.Recall)
	switch {
	case n.trk.sync != nil && ev.Previewed:
		n.trk.sync = nil
		st := n.st
		return n.apply(events.TrackerSynced{Tasks: st.Tasks, Note: st.TrackerNote, RetryAt: st.TrackerRetryAt}, now)
	case n.trk.sync != nil && recall:
		res := n.trk.sync.Result(ev.Outcome.Extras)
		n.trk.sync = nil
		n.trk.report = &TrackerReport{Name: n.trackerName(), Sync: &res}
		return n.apply(events.TrackerSynced{Tasks: res.Tasks, Paused: res.Paused, Note: res.WaitingNote(), RetryAt: res.RetryAt, Enable: n.trk.enable}, now)
	case n.trk.sync != nil:
		n.trk.sync.Apply(ev.Outcome)
	case ev.Previewed:
		n.trk.close = nil
	case recall:
		res := n.trk.close.Result(ev.Outcome.Extras)
		n.trk.close = nil
		n.trk.report = &TrackerReport{Name: n.trackerName(), Close: &res}
		n.notes = append(n.notes, res.Notes(n.trackerName())...)
		st := n.st
		return n.apply(events.TrackerSynced{Tasks: res.Tasks, Note: st.TrackerNote, Paused: res.Paused, Closing: true, Left: res.Left, RetryAt: res.RetryAt}, now)
	default:
		n.trk.close.Apply(ev.Outcome)
	}
	return nil
}

// claimed takes the outcome of the claim's write: the sync goes on with
// its creates once it stood.
func (n *Node) claimed(p Persisted, now time.Time) {
	if !n.trk.claim {
		return
	}
	n.trk.claim = false
	if p.Outcome == Failed {
		n.trk.sync.Apply(tasksync.Outcome{At: now, Failed: fmt.Errorf("the state write failed")})
		return
	}
	n.trk.sync.Apply(tasksync.Outcome{At: now})
}
