package reconcile

import (
	"errors"
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/pass"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile/dispatch"
	"github.com/autopilot-dev/autopilot/internal/reconcile/effects"
	"github.com/autopilot-dev/autopilot/internal/reconcile/labelsync"
	"github.com/autopilot-dev/autopilot/internal/reconcile/prcheck"
	"github.com/autopilot-dev/autopilot/internal/reconcile/trackersync"
	"github.com/autopilot-dev/autopilot/internal/reconcile/writes"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

// settle carries out what the engine decides: it answers the engine's
// queries until none is left (ready), writes the state, performs the
// effects, matches the labels and creates the PR checks, and writes once
// more if their outcomes left a change unwritten (a refusal to remember,
// classifications no other write carried, a check's pending mark).
func (ru *run) settle() error {
	if err := ru.ready(); err != nil {
		return err
	}
	if ru.node.Changed() {
		// Written before any effect, with the effects announced in the outbox.
		if err := ru.write(); err != nil {
			return err
		}
	}
	if err := ru.perform(); err != nil {
		return err
	}
	if err := ru.labelsSync(); err != nil {
		return err
	}
	if err := ru.publishChecks(); err != nil {
		return err
	}
	if ru.node.Unwritten() {
		if err := ru.write(); err != nil {
			return err
		}
	}
	return ru.verify()
}

// maxQueryRounds bounds the rounds of "the engine asks, reconcile answers,
// the engine again" in one pass: reads (a PR read can lead to a Jira check
// only through a step completing, and a read may ask for permissions),
// then the tracker sync and the closes.
const maxQueryRounds = 10

// ready asks the engine what to do next and answers its queries, round
// after round, until it asks nothing more; what it hands out to carry out
// (effects, checks, labels, notes) is kept for the rest of the pass.
func (ru *run) ready() error {
	for round := 0; ; round++ {
		rd, err := ru.next()
		if err != nil {
			return err
		}
		if len(rd.Queries) == 0 {
			return nil
		}
		if round == maxQueryRounds {
			ru.r.o.Logger.Warn("engine still asks after the last round; left to the next pass", "issue", ru.number, "queries", rd.Queries)
			return nil
		}
		for _, q := range rd.Queries {
			if err := ru.answer(q); err != nil {
				return err
			}
		}
	}
}

// next takes the engine's Ready: the effects to perform (after what it
// handed out before), the checks to create, the labels and the notes.
func (ru *run) next() (pass.Ready, error) {
	rd, err := ru.node.Ready(ru.seen, ru.r.o.Now())
	if err != nil {
		return rd, err
	}
	ru.effects = append(ru.effects, rd.Effects...)
	ru.checks = append(ru.checks, rd.Checks...)
	ru.notes = append(ru.notes, rd.Notes...)
	if rd.Labels != nil {
		ru.labels = rd.Labels
	}
	return rd, nil
}

// answer answers one query of the engine, with events (or, for the
// tracker work, by carrying it out and reporting what happened).
func (ru *run) answer(q engine.Query) error {
	switch q.Kind {
	case engine.QJiraAuth:
		if ru.tracker != nil {
			ru.outside = true
		}
		return ru.apply(trackersync.Auth(ru.ctx, ru.tracker, ru.caps, ru.r.o.Logger, ru.number))
	case engine.QCheckPR:
		return ru.checkPR(q.PR)
	case engine.QPerms:
		return ru.apply(q.AnswerPerms(ru.perm))
	case engine.QJiraSync:
		return ru.jira(q.Sync)
	case engine.QJiraClose:
		return ru.closeJira(q.Open)
	}
	return fmt.Errorf("unknown engine query %v", q.Kind)
}

// checkPR reads a linked PR, its reviews and, for a checks step, its
// checks, and gives them to the engine, which decides what counts.
func (ru *run) checkPR(n int) error {
	f := ru.r.o.Forge
	pr, err := ru.getPull(n)
	if err != nil {
		if errors.Is(err, forge.ErrNotFound) {
			return nil
		}
		return fmt.Errorf("read PR #%d: %w", n, err)
	}
	ev := evidence.Wanted(ru.set.Config, ru.state())
	if ev == "" {
		return nil
	}
	rs, err := f.ListReviews(ru.ctx, n)
	if err != nil {
		return fmt.Errorf("reviews of PR #%d: %w", n, err)
	}
	facts := ru.pullFacts(pr, rs)
	var cs []forge.Check
	if ev == "checks" {
		if cs, err = f.ListChecks(ru.ctx, pr.HeadSHA); err != nil {
			return fmt.Errorf("checks of PR #%d: %w", n, err)
		}
	}
	return ru.apply(prcheck.Read(pr, facts, rs, cs, ev == "checks"))
}

// pullFacts gathers what the trusted-PR rule needs about a linked PR
// (prcheck.Facts), with this pass's permission lookups.
func (ru *run) pullFacts(pr forge.Pull, reviews []forge.Review) *engine.PullFacts {
	return prcheck.Facts(pr, reviews, ru.r.o.Forge.Repo(), ru.number, ru.perm)
}

// pullHead is what a review needs to know about its PR (prcheck.Head).
func (ru *run) pullHead(pr forge.Pull) *engine.PullFacts {
	return prcheck.Head(pr, ru.r.o.Forge.Repo(), ru.number)
}

// pullEdit completes what a pull_request opened or edited delivery shows
// about who wrote the PR's description (prcheck.Edit).
func (ru *run) pullEdit(n int, e engine.PullEdit) (*engine.PullEdit, error) {
	return prcheck.Edit(ru.ctx, ru.r.o.Forge, n, ru.number, e, ru.perm)
}

// perm is a login's permission, looked up once per pass (comments.Perms).
func (ru *run) perm(login string) (access.Level, error) { return ru.perms.Get(ru.ctx, login) }

// seen reports what the thread shows of the writes the state announced
// (writes.Seen).
func (ru *run) seen() outbox.Seen {
	if ru.state() == nil {
		return outbox.Seen{}
	}
	return writes.Seen(ru.loaded.Markers, ru.state(), ru.owedReactions(), ru.wasRefused)
}

// write renders and stores the state, re-reading its version first.
func (ru *run) write() error {
	r := ru.r
	s := ru.state()
	prev := int64(0)
	if ru.loaded.State != nil {
		prev = ru.loaded.State.Version
	}
	s.Version = prev + 1
	if ru.rollback {
		// Above every version the bot's comments say it already wrote.
		s.Version = max(prev, ru.loaded.MaxVersion) + 1
		ru.rollback = false
	}
	s.Repo, s.Issue = r.o.Forge.Repo(), ru.number
	s.WriteID = r.o.WriteID()
	s.Since = ru.nextSince()
	s = outbox.Compact(s, ru.readIDs())
	ru.node.Wrote(s)
	body, err := codec.Render(s, writes.View(ru.set.Config, s), r.o.StateKey)
	if err != nil {
		return fmt.Errorf("render state of #%d: %w", ru.number, err)
	}
	if r.o.DryRun {
		r.o.Print(fmt.Sprintf("dry-run: would write state v%d of #%d (%d characters)", s.Version, ru.number, len([]rune(body))))
		ru.wrote = true
		return nil
	}
	if ru.loaded.StateComment == nil {
		c, err := r.o.Forge.CreateComment(ru.ctx, ru.number, body)
		if err != nil {
			return fmt.Errorf("post state of #%d: %w", ru.number, err)
		}
		ru.posted[c.ID] = state.Marker
		ru.stored(c, s, body)
		return nil
	}
	// Re-read before writing: a concurrent run may have written meanwhile
	// (the load is that re-read when nothing was sent since).
	reread := r.o.Now()
	if ru.loadIsReread() {
		reread = ru.loaded.Win.At
	} else if err := ru.checkVersion(prev); err != nil {
		return err
	}
	c, err := r.o.Forge.EditComment(ru.ctx, ru.loaded.StateComment.ID, body)
	ru.noteGap(reread)
	if errors.Is(err, forge.ErrNotFound) {
		// Deleted under us: post a new one rather than lose the write.
		if c, err = r.o.Forge.CreateComment(ru.ctx, ru.number, body); err == nil {
			ru.posted[c.ID] = state.Marker
		}
	}
	if err != nil {
		return fmt.Errorf("write state of #%d: %w", ru.number, err)
	}
	ru.stored(c, s, body)
	return nil
}

// readIDs are the ids of the comments this pass read (outbox.Compact keeps
// the ledger's floor below the unhandled ones).
func (ru *run) readIDs() []int64 {
	var ids []int64
	for _, list := range [][]forge.Comment{ru.loaded.Human, ru.prSeen} {
		for _, c := range list {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// stored records a successful state write.
func (ru *run) stored(c forge.Comment, s *state.State, body string) {
	ru.loaded.StateComment = &c
	ru.loaded.State = s
	ru.wrote = true
	ru.wroteID, ru.wroteBody = c.ID, body
}

func (ru *run) checkVersion(prev int64) error {
	cs, err := ru.reread()
	if err != nil {
		return fmt.Errorf("re-read state of #%d: %w", ru.number, err)
	}
	// An input posted since the load is applied now rather than maybe
	// overwrite a concurrent run's state that applied it. On the last pass
	// it is left to its own event (or the sweep): the version check below
	// still guards the write, and the read-back catches an overwrite, so
	// a thread that keeps moving does not fail the job (people typing
	// while it runs).
	if !ru.last && ru.unseenInput(cs) {
		return fmt.Errorf("%w: a comment that acts was posted since the pass read the thread", ErrConflict)
	}
	if why := ru.r.loader().Moved(cs, ru.number, ru.loaded.StateComment.ID, prev, ru.loaded.Restorable != nil); why != "" {
		return fmt.Errorf("%w: %s", ErrConflict, why)
	}
	return nil
}

// perform executes the effects (effects.Performer).
func (ru *run) perform() error {
	r := ru.r
	p := effects.Performer{Forge: r.o.Forge, Issue: ru.number, DryRun: r.o.DryRun, Print: r.o.Print, Markers: ru.loaded.Markers,
		Refused: ru.wasRefused, Refuse: ru.refuse, Tag: ru.versionTag, Replied: ru.replied, Dispatch: ru.dispatch,
		Posted: func(id int64, marker string) { ru.posted[id] = marker }}
	return p.Perform(ru.ctx, ru.toPerform)
}

// toPerform is the performer's live list of effects: what the engine
// handed out, and the effects the outcomes reported while it runs produced.
// A query asked that late is not answered in this pass (no outcome asks
// one today; pass.Node hands it out like any other).
func (ru *run) toPerform() []state.Effect {
	if _, err := ru.next(); err != nil {
		// Ready fails only while it settles, which is done by now; logged
		// in case that changes, and nothing new is handed out.
		ru.r.o.Logger.Warn("engine could not say what to do next", "issue", ru.number, "err", err)
	}
	return ru.effects
}

// dispatch triggers a workflow. A run whose id is lost is still matched by
// the session token in its display title; a dispatch that never happened is
// caught by the sweep's executor timeout.
func (ru *run) dispatch(e state.Effect) error {
	r := ru.r
	if r.o.DryRun {
		r.o.Print("dry-run: would dispatch " + e.Workflow + " session " + e.Marker)
		return nil
	}
	ev, note, ok := dispatch.Run(ru.ctx, r.o.Forge, r.o.Logger, ru.number, e, ru.set, ru.state(), r.o.Now())
	if note != "" {
		ru.notes = append(ru.notes, note)
	}
	if !ok {
		return nil
	}
	return ru.afterDispatch(ev)
}

// afterDispatch feeds a dispatch outcome to the engine (which settles
// its outbox entry) and writes the state when that changed it.
func (ru *run) afterDispatch(ev engine.Dispatched) error {
	if err := ru.apply(ev); err != nil {
		return err
	}
	if ru.node.Changed() {
		return ru.write()
	}
	return nil
}

// labelsSync makes the issue's autopilot labels match the state
// (labelsync.Apply).
func (ru *run) labelsSync() error {
	if _, err := ru.next(); err != nil {
		return err
	}
	if ru.state() == nil || ru.r.o.DryRun {
		return nil
	}
	ld := ru.loaded
	is := labelsync.Issue{Number: ru.number, Labels: ld.Issue.Labels, Snapshot: ld.Snapshot, ReadLabels: ld.ReadLabels}
	labels, reread, err := labelsync.Apply(ru.ctx, ru.r.o.Forge, is, ru.labels, labelsync.Refusals{Refused: ru.wasRefused, Refuse: ru.refuse})
	if reread {
		ld.Snapshot = false
	}
	ld.Issue.Labels = labels
	return err
}
