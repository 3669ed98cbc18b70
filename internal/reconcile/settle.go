package reconcile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/pass"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile/dispatch"
	"github.com/autopilot-dev/autopilot/internal/reconcile/effects"
	"github.com/autopilot-dev/autopilot/internal/reconcile/labelsync"
	"github.com/autopilot-dev/autopilot/internal/reconcile/load"
	"github.com/autopilot-dev/autopilot/internal/reconcile/prcheck"
	"github.com/autopilot-dev/autopilot/internal/reconcile/trackersync"
	"github.com/autopilot-dev/autopilot/internal/reconcile/writes"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

// settle gives the engine what the thread shows and carries out what it
// decides, round after round (pass.Drive): answers its queries, writes the
// state it hands out (persist, the one place the state comment is
// written), performs the effects, matches the labels and creates the PR
// checks, feeding every outcome back; then reads the comments back
// (verify).
func (ru *run) settle() error {
	defer ru.r.giveBackID(ru)
	if err := ru.node.Step(ru.threadRead(), ru.r.o.Now()); err != nil {
		return err
	}
	if err := pass.Drive(ru.node, ru.input, ru.carry); err != nil {
		return err
	}
	return ru.verify()
}

// input is what each Ready is given: the time, and the id of the next
// state write (drawn again once a write used it).
func (ru *run) input() pass.Input {
	if ru.writeID == "" {
		ru.writeID = ru.r.takeID()
	}
	return pass.Input{Now: ru.r.o.Now(), WriteID: ru.writeID}
}

// carry carries out one Ready, in order: queries, the state write (and,
// for the tracker sync's claim, that it stands), the effects, the labels,
// the checks, the tracker op.
func (ru *run) carry(rd pass.Ready) error {
	ru.notes = append(ru.notes, rd.Notes...)
	if len(rd.Unanswered) > 0 {
		ru.r.o.Logger.Warn("engine still asks after the last round; left to the next pass", "issue", ru.number, "queries", rd.Unanswered)
	}
	for _, q := range rd.Queries {
		if err := ru.answer(q); err != nil {
			return err
		}
	}
	if rd.Persist != nil {
		ru.writeID = ""
		if err := ru.persist(rd.Persist); err != nil {
			return err
		}
		if rd.Claim && !ru.r.o.DryRun {
			if err := ru.claim(); err != nil {
				return err
			}
		}
	}
	if len(rd.Effects) > 0 {
		if err := ru.perform(rd.Effects); err != nil {
			return err
		}
	}
	if rd.Labels != nil {
		if err := ru.labelsSync(rd.Labels); err != nil {
			return err
		}
	}
	if len(rd.Checks) > 0 {
		ru.checks = rd.Checks
		if err := ru.publishChecks(); err != nil {
			return err
		}
	}
	if rd.TrackerDone != nil {
		ru.trackerLog(rd.TrackerDone)
	}
	if rd.Tracker != nil {
		return ru.trackerOp(*rd.Tracker)
	}
	return nil
}

// threadRead is what the thread shows, given to the engine as data: the
// bot's comments by marker, the outbox comments GitHub refused, and the
// people's comments read (their times and reactions).
func (ru *run) threadRead() pass.ThreadRead {
	ld := ru.loaded
	t := pass.ThreadRead{Links: map[string]string{}, Fresh: ld.Win.Fresh, FreshSince: ld.Win.Since}
	for m, c := range ld.Markers {
		t.Links[m] = c.URL
		if ru.r.loader().Trusted(c) {
			if t.Bodies == nil {
				t.Bodies = map[string]string{}
			}
			t.Bodies[m] = strings.TrimSuffix(c.Body, load.TagOf(c.Body))
		}
	}
	for _, c := range ld.Comments {
		if c.UpdatedAt.After(t.Newest) {
			t.Newest = c.UpdatedAt
		}
	}
	for _, list := range [][]forge.Comment{ld.Human, ru.prSeen} {
		for _, c := range list {
			t.Read = append(t.Read, pass.Read{ID: c.ID, UpdatedAt: c.UpdatedAt, Reactions: c.Reactions})
		}
	}
	if s := ru.state(); s != nil {
		t.Refused = writes.RefusedOutbox(s)
	}
	return t
}

// answer answers one query of the engine, with events.
func (ru *run) answer(q events.Query) error {
	switch q.Kind {
	case events.QTrackerAuth:
		if ru.tracker != nil {
			ru.outside = true
		}
		return ru.apply(trackersync.Auth(ru.ctx, ru.tracker, ru.caps, ru.r.o.Logger, ru.number))
	case events.QCheckPR:
		return ru.checkPR(q.PR)
	case events.QPerms:
		if q.Then == nil {
			return ru.readPerms(q)
		}
		return ru.apply(q.AnswerPerms(ru.perm))
	case events.QTaskFiles:
		return ru.readTaskFiles(q.Dir)
	case events.QPullHead:
		return ru.readPullHead(q.PR)
	case events.QPullSeen:
		return ru.readPullSeen(q.PR)
	case events.QRepoDir:
		return ru.readDir(q.Dir)
	case events.QApprovers:
		return ru.approvers(q.Approvers)
	case events.QDeployApprovals:
		return ru.readDeployApprovals(q.RunID)
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
func (ru *run) pullFacts(pr forge.Pull, reviews []forge.Review) *evidence.PullFacts {
	return prcheck.Facts(pr, reviews, ru.r.o.Forge.Repo(), ru.number, ru.perm)
}

// pullHead is what a review needs to know about its PR (prcheck.Head).
func (ru *run) pullHead(pr forge.Pull) *evidence.PullFacts {
	return prcheck.Head(pr, ru.r.o.Forge.Repo(), ru.number)
}

// perm is a login's permission, looked up once per pass (comments.Perms).
func (ru *run) perm(login string) (access.Level, error) { return ru.perms.Get(ru.ctx, login) }

// persist stores the state the engine handed out, exactly as it is (its
// version, write id, watermark and compaction are the engine's), and
// reports the outcome (pass.Persisted). It is the one place the state
// comment is written: it is posted when there is none, else edited after
// its version is re-read.
func (ru *run) persist(s *state.State) error {
	r := ru.r
	body, err := codec.Render(s, writes.View(ru.set.Config, s), r.o.StateKey)
	if err != nil {
		ru.persisted(pass.Failed, 0, s)
		return fmt.Errorf("render state of #%d: %w", ru.number, err)
	}
	if r.o.DryRun {
		r.o.Print(fmt.Sprintf("dry-run: would write state v%d of #%d (%d characters)", s.Version, ru.number, len([]rune(body))))
		ru.wrote = true
		ru.persisted(pass.Previewed, 0, s)
		return nil
	}
	c, err := ru.store(body)
	if err != nil {
		ru.persisted(pass.Failed, 0, s)
		return err
	}
	ru.stored(c, s, body)
	ru.persisted(pass.Stored, c.ID, s)
	return nil
}

// persisted reports a persist's outcome to the engine.
func (ru *run) persisted(o pass.PersistOutcome, id int64, s *state.State) {
	// Pass events never fail to apply.
	_ = ru.node.Step(pass.Persisted{Outcome: o, CommentID: id, Version: s.Version}, ru.r.o.Now())
}

// store posts or edits the state comment with body.
func (ru *run) store(body string) (forge.Comment, error) {
	r := ru.r
	if ru.loaded.StateComment == nil {
		c, err := r.o.Forge.CreateComment(ru.ctx, ru.number, body)
		if err != nil {
			return c, fmt.Errorf("post state of #%d: %w", ru.number, err)
		}
		ru.posted[c.ID] = state.Marker
		return c, nil
	}
	prev := int64(0)
	if ru.loaded.State != nil {
		prev = ru.loaded.State.Version
	}
	// Re-read before writing: a concurrent run may have written meanwhile
	// (the load is that re-read when nothing was sent since).
	reread := r.o.Now()
	if ru.loadIsReread() {
		reread = ru.loaded.Win.At
	} else if err := ru.checkVersion(prev); err != nil {
		return forge.Comment{}, err
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
		return c, fmt.Errorf("write state of #%d: %w", ru.number, err)
	}
	return c, nil
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

// perform executes the effects the engine handed out (effects.Performer);
// their outcomes (a refusal, a dispatch's run) are stepped in as they come.
func (ru *run) perform(effs []state.Effect) error {
	r := ru.r
	p := effects.Performer{Forge: r.o.Forge, Issue: ru.number, DryRun: r.o.DryRun, Print: r.o.Print, Markers: ru.loaded.Markers,
		Refused: ru.wasRefused, Refuse: ru.refuse, Tag: ru.versionTag, Replied: ru.replied, Dispatch: ru.dispatch, Deploy: ru.deploy,
		Posted: func(id int64, marker string) { ru.posted[id] = marker }}
	return p.Perform(ru.ctx, effs)
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
// its outbox entry; the next Ready writes it before the effects after it).
func (ru *run) afterDispatch(ev events.Dispatched) error { return ru.apply(ev) }

// labelsSync makes the issue's autopilot labels match the state
// (labelsync.Apply).
func (ru *run) labelsSync(want []string) error {
	if ru.state() == nil || ru.r.o.DryRun {
		return nil
	}
	ld := ru.loaded
	is := labelsync.Issue{Number: ru.number, Labels: ld.Issue.Labels, Snapshot: ld.Snapshot, ReadLabels: ld.ReadLabels}
	labels, reread, err := labelsync.Apply(ru.ctx, ru.r.o.Forge, is, want, labelsync.Refusals{Refused: ru.wasRefused, Refuse: ru.refuse})
	if reread {
		ld.Snapshot = false
	}
	ld.Issue.Labels = labels
	return err
}
