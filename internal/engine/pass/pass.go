// Package pass is one reconcile pass as the engine sees it: a Node steps
// the pass's events into the engine (engine.Apply) and says what to do
// next (Ready), so the caller keeps no decision of its own.
package pass

import (
	"fmt"
	"slices"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/labels"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Node carries one reconcile pass over an issue, in the shape of etcd
// raft's RawNode: the caller steps every input in as an event (Step), asks
// what to do next (Ready), carries out all of it in order — answers the
// queries with events, persists the state it is handed, performs the
// effects, matches the labels, creates the checks — reports every outcome
// as an event (Step), acknowledges the Ready (Advance) and asks again,
// until a Ready is Empty. The node decides everything: when the state is
// written and exactly what (version, write id, watermark, compaction), so
// the caller keeps no decision of its own and edits no state.
//
// The rounds of a pass, in order: the reads the node asks for the
// comments it holds (an author's permission, a tasks step's task files:
// reads.go; a comment that needs one waits for it, and so does every
// event stepped after it); the engine's reads (QPerms, QTrackerAuth,
// QCheckPR); the settle (outbox.Settle: what the state announces and what
// is still owed, and the PR checks planned); the tracker work (the sync,
// then the close policy, each planned at most once a pass and handed out
// op by op, tracker.go), each followed by a Persist when its outcome
// changed the state; a Persist of the settled state when it
// changed; the effects, handed out up to the first dispatch, whose outcome
// is persisted before the effects after it; the labels; the checks; and a
// last Persist of whatever no write carried (refusals, classifications, a
// check's pending mark).
type Node struct {
	set machine.Settings
	opt Options
	st  *state.State
	// stored is the state as read (OwedReactions compares with it);
	// version is the version last stored (the next write goes one above).
	stored  *state.State
	version int64
	// rollback: the next write goes above opt.MaxVersion too.
	rollback bool
	// effects and queries were produced and not handed out yet.
	effects []state.Effect
	queries []events.Query
	// changed: the state has a change no write carried yet; classified:
	// the ledger grew and no write carried it yet; persistNow: a change
	// that is written before anything else is handed out (the settle's,
	// a tracker answer's, a dispatch outcome's).
	changed, classified, persistNow bool
	decision                        string
	settled                         bool
	// synced and closed: the tracker sync and the close policy were
	// planned this pass; trk is the one in flight (tracker.go).
	synced, closed bool
	trk            trackerRun
	// labeled and checked: the labels and the checks were handed out.
	labeled, checked bool
	// failed: a persist failed or met a conflict; the pass ends.
	failed bool
	// sync are the events.QTrackerSync queries the events asked (engine.PlanSync reads
	// them at the settle).
	sync []events.Query
	// checks are the PR check runs planned at the settle.
	checks []checkview.CheckRun
	// thread is what the thread shows (ThreadRead).
	thread ThreadRead
	// reacts are the comments a reaction was handed out for (the
	// watermark stays below them).
	reacts map[int64]bool
	// notes were produced by events and not handed out yet.
	notes []string
	// rd are the reads the node asks for the comments it holds.
	rd reads
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
	// written whatever the events do, above MaxVersion, the highest
	// version the bot's comments name.
	Rewrite    bool
	MaxVersion int64
	// Posted are when the bot's comments on the thread were posted, by
	// marker (GitHub's clock): a comment applied while a gate is open is
	// given when the gate's comment appeared (events.Comment.GatePostedAt).
	Posted map[string]time.Time
	// Signed: the state is signed (the fit of a declaration counts it).
	Signed bool
}

// Input is what the caller supplies to each Ready: the time of the pass
// and the id the next state write carries (used only when the Ready
// persists; the caller draws a new one after).
type Input struct {
	Now     time.Time
	WriteID string
}

// Ready is what to do next, in order: answer Queries (with events);
// store Persist; perform Effects; match Labels (when not nil); create
// Checks. Notes say what the pass chose not to do. Every outcome comes
// back with Step; Advance acknowledges the Ready.
type Ready struct {
	Queries []events.Query
	// Persist is the state to store, exactly: version, write id,
	// watermark and compaction are set. Its outcome comes back as a
	// Persisted event.
	Persist *state.State
	Effects []state.Effect
	Labels  []string
	// Checks are the PR check runs to create; their shown hashes are
	// already in the state.
	Checks   []checkview.CheckRun
	Decision string
	Notes    []string
	// Unanswered are queries asked after the last round Drive answers:
	// left to the next pass (for the log).
	Unanswered []events.Query
	// Claim: Persist records tracker creates about to be sent (the
	// sync's claim); the caller makes sure the write stands before it
	// carries out the next Ready.
	Claim bool
	// Tracker is the tracker operation to perform, after everything
	// else; its answer comes back as a TrackerOutcome.
	Tracker *TrackerOp
	// TrackerDone reports a tracker sync or close that ended (for the
	// log).
	TrackerDone *TrackerReport
}

// Empty reports a Ready with nothing to do: the pass is over.
func (rd Ready) Empty() bool {
	return len(rd.Queries) == 0 && rd.Persist == nil && len(rd.Effects) == 0 && rd.Labels == nil && len(rd.Checks) == 0 && len(rd.Notes) == 0 &&
		rd.Tracker == nil && rd.TrackerDone == nil
}

// ThreadRead is what the thread shows, as the caller read it: the event
// that gives the node the data its settle and its writes need.
type ThreadRead struct {
	// Links maps the markers of the bot's comments on the thread to their
	// links: a comment whose marker is there was posted.
	Links map[string]string
	// Refused holds the markers of outbox comments GitHub refused (422).
	Refused map[string]bool
	// Bodies maps the markers of the bot's comments read to their text,
	// without the version tag (events.ChooseShown).
	Bodies map[string]string
	// Read are the people's comments read on the issue and its linked
	// PRs: the watermark stays below the pending ones, the ledger's floor
	// below the unhandled ones, and their reactions say which the ledger
	// still owes.
	Read []Read
	// Newest is when the newest comment read (any author) was updated;
	// Fresh: a first start read only the first page of a longer thread,
	// from FreshSince.
	Newest     time.Time
	Fresh      bool
	FreshSince time.Time
}

// Read is one comment read.
type Read struct {
	ID        int64
	UpdatedAt time.Time
	// Reactions are its reaction counts as listed (nil: unknown).
	Reactions map[string]int
}

// PersistOutcome is what became of a Persist.
type PersistOutcome int

const (
	// Stored: the state comment holds the write.
	Stored PersistOutcome = iota
	// Previewed: a dry run printed it; nothing was stored.
	Previewed
	// Failed: the write met a conflict or an error; the pass ends.
	Failed
)

// Persisted reports the outcome of a Persist; CommentID is the state
// comment that holds it.
type Persisted struct {
	Outcome   PersistOutcome
	CommentID int64
	Version   int64
}

// New starts a pass over issue opt.Issue whose state as read is st
// (nil: none yet).
func New(set machine.Settings, st *state.State, opt Options) *Node {
	n := &Node{set: set, st: st, stored: st, opt: opt, changed: opt.Rewrite, rollback: opt.Rewrite, reacts: map[int64]bool{}}
	if st != nil {
		n.version = st.Version
	}
	return n
}

// Asks reports whether the engine asked, and nobody was handed yet, a
// query of kind k about PR pr (0: any).
func (n *Node) Asks(k events.QueryKind, pr int) bool {
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

// Step applies one event at now: an engine event, or one of the pass's
// own (ThreadRead, Persisted, TrackerOutcome).
func (n *Node) Step(ev any, now time.Time) error {
	switch ev := ev.(type) {
	case ThreadRead:
		n.thread = ev
		return nil
	case Persisted:
		switch ev.Outcome {
		case Stored:
			n.version = ev.Version
		case Failed:
			n.failed = true
		}
		n.claimed(ev, now)
		return nil
	case TrackerOutcome:
		return n.trackerOutcome(ev, now)
	case events.PermsRead, events.FilesRead, events.PullHeadRead, events.PullSeenRead, events.DirRead:
		return n.answered(ev, now)
	case events.Event:
		return n.admit(ev, now)
	}
	return fmt.Errorf("pass: unknown event %T", ev)
}

func (n *Node) apply(ev events.Event, now time.Time) error {
	ledger := 0
	var retryAt time.Time
	if n.st != nil {
		ledger, retryAt = len(n.st.Ledger), n.st.TrackerRetryAt
	}
	if js, ok := ev.(events.TrackerSynced); ok && n.st != nil && js.RetryAt.After(now) && !js.RetryAt.Equal(retryAt) {
		// The tracker's limit window is deferred work, not a failure: the
		// run says it once, and the state written records the window.
		n.notes = append(n.notes, fmt.Sprintf("%s asked to wait until %s (rate limit): %d task(s) stay pending, the first run after that sends them; the flow goes on",
			state.TrackerLabel(n.st.TrackerInUse), js.RetryAt.UTC().Format(time.RFC3339), tasksync.PendingCount(&state.State{Tasks: js.Tasks})))
	}
	res, err := engine.Apply(n.set, n.st, ev, now)
	if err != nil {
		return err
	}
	if res.State != nil && n.st == nil {
		res.State.Issue = n.opt.Issue
	}
	n.st = res.State
	for _, e := range res.Effects {
		if e.Kind == state.EffEdit {
			// One edit of a comment a pass: the last asked wins.
			n.effects = slices.DeleteFunc(n.effects, func(o state.Effect) bool { return o.Kind == state.EffEdit && o.Marker == e.Marker })
		}
		n.effects = append(n.effects, e)
	}
	for _, q := range res.Queries {
		if q.Kind == events.QTrackerSync {
			n.sync = append(n.sync, q)
		} else {
			n.queries = append(n.queries, q)
		}
	}
	n.changed = n.changed || res.Changed
	switch ev.(type) {
	case events.TrackerSynced: // a sync's outcome (or its claim), or the closes'
		n.persistNow = true
	case events.Dispatched, events.DeployAnswered:
		n.persistNow = true
	}
	if _, ok := ev.(events.Comment); ok && n.st != nil && len(n.st.Ledger) > ledger {
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

// Ready says what to do next (see Node for the order of the rounds).
func (n *Node) Ready(in Input) (Ready, error) {
	rd := Ready{Decision: n.decision, Notes: n.notes}
	n.notes = nil
	if n.failed {
		return Ready{}, nil
	}
	if q, ok := n.readQuery(); ok {
		// The events held wait for this read.
		rd.Queries = []events.Query{q}
		return rd, nil
	}
	if q := n.take(func(q events.Query) bool { return q.Kind == events.QPerms }); len(q) > 0 {
		// A read that asked for permissions is given again with them
		// before anything else is applied.
		rd.Queries = q
		return rd, nil
	}
	if q := n.take(func(events.Query) bool { return true }); len(q) > 0 {
		rd.Queries = q
		return rd, nil
	}
	if !n.settled {
		if err := n.settle(in.Now); err != nil {
			return Ready{}, err
		}
	}
	if n.st == nil {
		// No state (an issue autopilot does not manage, or not started):
		// only replies, nothing to write or label.
		rd.Effects, n.effects = n.effects, nil
		return rd, nil
	}
	if handed, err := n.trackerSync(&rd, in); err != nil {
		return Ready{}, err
	} else if handed {
		return rd, nil
	}
	if n.persistNow {
		// The settle's change, or a tracker answer's or a dispatch
		// outcome's, is written before anything after it is handed out.
		n.persistNow = false
		if n.changed {
			rd.Persist = n.persist(in)
			return rd, nil
		}
	}
	if n.trackerClose(&rd, in) {
		return rd, nil
	}
	if len(n.effects) > 0 {
		rd.Effects = n.takeEffects()
		return rd, nil
	}
	if !n.labeled {
		n.labeled = true
		rd.Labels = labels.Labels(n.st)
		if rd.Labels == nil {
			rd.Labels = []string{}
		}
		return rd, nil
	}
	if !n.checked {
		n.checked = true
		if len(n.checks) > 0 {
			rd.Checks, n.checks = n.checks, nil
			return rd, nil
		}
	}
	if n.changed || n.classified {
		rd.Persist = n.persist(in)
	}
	return rd, nil
}

// Advance acknowledges rd: everything in it was carried out and its
// outcomes stepped in.
func (n *Node) Advance(rd Ready) {
	for _, e := range rd.Effects {
		if e.Kind == state.EffReact {
			n.reacts[e.Target] = true
		}
	}
}

// settle is the pass's first Ready without reads: the PR checks are
// planned and the outbox settled; the settled state is written before
// anything else is handed out when it changed.
func (n *Node) settle(now time.Time) error {
	n.settled = true
	if n.st != nil && n.opt.Checks {
		want := checkview.DesiredChecks(n.set.Config, n.set.AnswerPermission, n.st, checkview.CheckOptions{Buttons: n.opt.Buttons})
		var shown []events.CheckShown
		n.checks, shown = checkview.ToCreate(want, n.st.PRChecks)
		for _, ev := range shown {
			if err := n.apply(ev, now); err != nil {
				return err
			}
		}
		if len(n.checks) > 0 {
			n.changed = true
		}
	}
	if n.st == nil {
		n.changed = false
		return nil
	}
	if n.st.Gate != nil && len(n.thread.Bodies) > 0 {
		// What the open question's comment shows, once every event of
		// the pass is in (the engine edits it when it shows another line).
		if err := n.apply(events.ChooseShown{Bodies: n.thread.Bodies}, now); err != nil {
			return err
		}
	}
	// The engine decides what is still owed and what the write announces;
	// classifications ride on this pass's write when effects follow
	// anyway (a write of their own at the end otherwise).
	seen := outbox.Seen{Markers: map[string]bool{}, Refused: n.thread.Refused, Links: n.thread.Links,
		Owed: outbox.OwedReactions(n.stored, n.rollups())}
	for m := range n.thread.Links {
		seen.Markers[m] = true
	}
	rd := outbox.Settle(n.st, n.effects, seen, n.changed, n.classified)
	n.st, n.effects, n.changed = rd.State, rd.Effects, rd.Write
	n.persistNow = rd.Write
	return nil
}

// takeEffects hands out the effects up to and including the first
// dispatch: its outcome is persisted before the ones after it.
func (n *Node) takeEffects() []state.Effect {
	for i, e := range n.effects {
		if e.Kind == state.EffDispatch {
			out := n.effects[: i+1 : i+1]
			n.effects = append([]state.Effect(nil), n.effects[i+1:]...)
			return out
		}
	}
	out := n.effects
	n.effects = nil
	return out
}

// persist is the state to write now: one version above the last stored
// (above every version the bot's comments name after a rollback), the
// write id given, the watermark, and compacted.
func (n *Node) persist(in Input) *state.State {
	s := outbox.Clone(n.st)
	v := n.version + 1
	if n.rollback {
		v = max(n.version, n.opt.MaxVersion) + 1
		n.rollback = false
	}
	s.Version = v
	s.Repo, s.Issue = n.set.Repo, n.opt.Issue
	s.WriteID = in.WriteID
	s.Since = n.watermark(s)
	var read []int64
	for _, c := range n.thread.Read {
		read = append(read, c.ID)
	}
	s = outbox.Compact(s, read)
	n.st = s
	n.changed, n.classified, n.persistNow = false, false, false
	return s
}

// Slack keeps the watermark this far behind the newest comment read
// (GitHub's since compares updated times, which may lag).
const Slack = 2 * time.Minute

// watermark is the watermark the state written carries: a little behind
// the newest comment read, and never past a comment read that is still
// unhandled or that this pass reacts to, so the next pass reads it (and
// sees whether the reaction happened). A fresh start's window is kept;
// nothing read keeps the state's own.
func (n *Node) watermark(s *state.State) time.Time {
	t := n.thread
	if t.Fresh {
		return t.FreshSince
	}
	if t.Newest.IsZero() {
		return s.Since
	}
	pending := map[int64]bool{}
	for id := range n.reacts {
		pending[id] = true
	}
	for _, e := range n.effects {
		if e.Kind == state.EffReact {
			pending[e.Target] = true
		}
	}
	next := t.Newest.Add(-Slack)
	for _, c := range t.Read {
		if !c.UpdatedAt.After(next) && (!outbox.Handled(s, c.ID) || pending[c.ID]) {
			// A second earlier: read again whether GitHub's since
			// counts an equal timestamp or not.
			next = c.UpdatedAt.Add(-time.Second)
		}
	}
	return next.UTC().Truncate(time.Second)
}

func (n *Node) rollups() []outbox.Rollup {
	var out []outbox.Rollup
	for _, c := range n.thread.Read {
		out = append(out, outbox.Rollup{ID: c.ID, Reactions: c.Reactions})
	}
	return out
}

// take removes and returns the pending queries keep accepts, in order.
func (n *Node) take(keep func(events.Query) bool) []events.Query {
	var out, rest []events.Query
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

// Driven is what Drive needs of a node (a Node; a carrier's test may
// wrap one to count its calls).
type Driven interface {
	Ready(Input) (Ready, error)
	Advance(Ready)
}

// MaxQueryRounds bounds the rounds of "the engine asks, the carrier
// answers, the engine again" in one pass: the reads for the events held
// (a start's flow detection, two; the permissions of every author held,
// one; a report's task files, one; a review's PR head, one), the engine's
// reads (a PR read can lead to a tracker check only through a step
// completing, and a read may ask for permissions), then the tracker sync
// and the closes — about ten at the very most; the bound only stops a
// loop.
const MaxQueryRounds = 16

// Drive is the carrier loop, the one way a node is driven: it asks the
// node what to do (Ready), has do carry all of it out in order and step
// every outcome in, acknowledges it (Advance) and asks again, until a
// Ready is empty. in supplies each Ready's inputs. Queries asked after
// MaxQueryRounds rounds are handed to do as Unanswered instead.
func Drive(n Driven, in func() Input, do func(Ready) error) error {
	rounds := 0
	for {
		rd, err := n.Ready(in())
		if err != nil {
			return err
		}
		if rd.Empty() {
			return nil
		}
		if len(rd.Queries) > 0 {
			if rounds == MaxQueryRounds {
				rd.Unanswered, rd.Queries = rd.Queries, nil
			} else {
				rounds++
			}
		}
		if err := do(rd); err != nil {
			return err
		}
		n.Advance(rd)
	}
}
