package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile/load"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestChatterIsStoredSoAnEditCannotAnswer: a comment that is no command is
// classified and stored at once; edited into "A" later, it never decides.
func TestChatterIsStoredSoAnEditCannotAnswer(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	w.toGate(n)
	v := w.state(n).Version
	c := w.comment(n, "maria", "I'll think about it.")
	st := w.state(n)
	if !outbox.Handled(st, c.ID) || st.Version != v+1 {
		t.Fatalf("chatter handled=%v at v%d (was v%d): want it stored with one write", outbox.Handled(st, c.ID), st.Version, v)
	}
	if err := w.sb.EditAs("maria", c.ID, "A"); err != nil {
		t.Fatal(err)
	}
	w.sweep()
	if st := w.state(n); len(st.Decisions) != 0 || st.Gate == nil {
		t.Errorf("an edit decided: %+v", st.Decisions)
	}
}

// TestStatusClassificationRidesOnTheWrite: /autopilot status is stored
// with the write that precedes its reaction and reply (one write).
func TestStatusClassificationRidesOnTheWrite(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	before := w.sb.Calls()["PATCH comment"]
	c := w.comment(n, "devin", "/autopilot status")
	if got := w.sb.Calls()["PATCH comment"] - before; got != 1 {
		t.Errorf("%d state writes for a status command, want 1", got)
	}
	if !outbox.Handled(w.state(n), c.ID) {
		t.Error("the status command is not in the stored ledger")
	}
}

// racer is a forge whose hook runs once, right before the nth call of a
// kind (e.g. the state write), to play a concurrent run.
type racer struct {
	*forge.Sandbox
	kind string
	nth  int
	n    int
	hook func()
}

func (r *racer) step(kind string) {
	if kind != r.kind {
		return
	}
	r.n++
	if r.n == r.nth && r.hook != nil {
		h := r.hook
		r.hook = nil
		h()
	}
}

func (r *racer) CreateComment(ctx context.Context, n int, body string) (forge.Comment, error) {
	r.step("POST comment")
	return r.Sandbox.CreateComment(ctx, n, body)
}

func (r *racer) EditComment(ctx context.Context, id int64, body string) (forge.Comment, error) {
	r.step("PATCH comment")
	return r.Sandbox.EditComment(ctx, id, body)
}

// TestConcurrentFirstRunsLeaveOneState: two runs of the first start pass
// their reads before either posts; the later poster sees both states after
// writing, deletes its own comments and goes on from the earlier state.
func TestConcurrentFirstRunsLeaveOneState(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.sb.LabelIssue("maria", n, "autopilot")
	ev := w.event("issues", "labeled", n, "maria")
	ev.Label = "autopilot"
	rf := &racer{Sandbox: w.sb, kind: "POST comment", nth: 1}
	late := w.recOn(rf, nil)
	// The concurrent run completes between our read and our first post.
	rf.hook = func() { w.mustHandle(ev) }
	outs, err := late.Handle(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if k := len(w.botComments(n, "autopilot:state")); k != 1 {
		t.Errorf("%d state comments, want 1", k)
	}
	noDuplicates(t, w, n)
	if st := w.state(n); st == nil || st.Version != 1 || st.Slug != "problem" {
		t.Errorf("state %+v, want v1 at problem", st)
	}
	if !strings.Contains(strings.Join(outs[0].Notes, "\n"), "deleted duplicate comment") {
		t.Errorf("notes %q do not say a duplicate was deleted", outs[0].Notes)
	}
}

// noDuplicates: at most one bot comment per marker (the state comment
// included: an edited-over one is still one comment).
func noDuplicates(t *testing.T, w *world, n int) {
	t.Helper()
	count := map[string]int{}
	for _, c := range w.sb.Comments(n) {
		if c.Author.Login == bot {
			count[load.FirstLine(c.Body)]++
		}
	}
	for m, k := range count {
		if k > 1 {
			t.Errorf("%d bot comments with marker %s", k, m)
		}
	}
}

// TestOverwrittenAnswerIsAppliedAgain: a concurrent run applies and writes
// an answer between this run's version re-read and its state write; this
// run's write overwrites it (GitHub has no compare-and-swap), and as the
// pass posted a comment its read-back sees an answer it never handled, so
// one more pass applies it on top (RELIABILITY case 2).
func TestOverwrittenAnswerIsAppliedAgain(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	w.toGate(n)
	status := w.say(n, "devin", "/autopilot status")
	rf := &racer{Sandbox: w.sb, kind: "PATCH comment", nth: 1}
	slow := w.recOn(rf, nil)
	var answer forge.Comment
	rf.hook = func() { answer = w.comment(n, "maria", "A") }
	if _, err := slow.Handle(context.Background(), w.commentEvent(status)); err != nil {
		t.Fatal(err)
	}
	st := w.state(n)
	if len(st.Decisions) != 1 || st.Decisions[0].CommentID != answer.ID {
		t.Fatalf("decisions %+v: the overwritten answer was not applied again", st.Decisions)
	}
	if !outbox.Handled(st, status.ID) {
		t.Error("the status command's classification was lost")
	}
	noDuplicates(t, w, n)
}

// TestAnswerSeenAtReReadIsAppliedNow: an answer posted after this run's
// load shows up in its version re-read; the run applies it before writing
// rather than write a state that a concurrent run may already have
// advanced past it.
func TestAnswerSeenAtReReadIsAppliedNow(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	w.toGate(n)
	chat := w.say(n, "reader", "Any news?")
	var answer forge.Comment
	hf := &hookForge{Sandbox: w.sb, issue: n, nth: 2, hook: func() { answer = w.say(n, "maria", "A") }}
	rec := w.recOn(hf, nil)
	outs, err := rec.Handle(context.Background(), w.commentEvent(chat))
	if err != nil {
		t.Fatal(err)
	}
	st := w.state(n)
	if len(st.Decisions) != 1 || st.Decisions[0].CommentID != answer.ID || !outbox.Handled(st, chat.ID) {
		t.Fatalf("decisions %+v, chatter handled %v: want the answer applied in the same run", st.Decisions, outbox.Handled(st, chat.ID))
	}
	if outs[0].Decision != "A" {
		t.Errorf("outcome decision %q, want A", outs[0].Decision)
	}
}

// TestReplayedOlderStateIsRolledForward: a collaborator pastes an older,
// validly signed state body into the state comment; the bot's version tags
// show it is old, so the comments since are applied again and the version
// goes above every earlier one.
func TestReplayedOlderStateIsRolledForward(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	old := w.stateComment(n).Body
	oldV := w.state(n).Version
	w.toGate(n)
	w.comment(n, "maria", "A")
	want := w.state(n)
	if err := w.sb.EditAs("maria", w.stateComment(n).ID, old); err != nil {
		t.Fatal(err)
	}
	if got := w.state(n).Version; got != oldV {
		t.Fatalf("replay setup: v%d, want v%d", got, oldV)
	}
	outs := w.sweep()
	st := w.state(n)
	// Versions never go back: the next one is above every version the
	// bot's comments are tagged with.
	if st.Version < want.Version || len(st.Decisions) != 1 || st.Slug != want.Slug {
		t.Errorf("after the replay: v%d at %s with %d decisions; want at least v%d at %s with 1", st.Version, st.Slug, len(st.Decisions), want.Version, want.Slug)
	}
	if !strings.Contains(fmt.Sprint(outs), "older than the bot's comments") {
		t.Errorf("outcomes %+v do not say the state was rolled back", outs)
	}
	noDuplicates(t, w, n)
}

// TestSweepAdoptsAndStopsOnLabels: the sweep starts a run on a labelled
// issue whose labeled event was lost, and stops a run whose trigger label
// was removed while its unlabeled event was lost.
func TestSweepAdoptsAndStopsOnLabels(t *testing.T) {
	w := newWorld(t, nil)
	lost := w.issue("Lost label event")
	w.sb.LabelIssue("maria", lost, "autopilot") // no event
	gone := w.issue("Label removed")
	w.start(gone)
	w.sb.UnlabelIssue("maria", gone, "autopilot") // no event
	w.sweep()
	if st := w.state(lost); st == nil || st.Run != state.RunInProgress || st.Slug != "problem" {
		t.Errorf("labelled issue after the sweep: %+v, want a run at problem", st)
	} else if !strings.Contains(st.LastSession.Notes, "run started") || strings.Contains(st.LastSession.Notes, "@") {
		t.Errorf("session notes %q, want an actor-less start", st.LastSession.Notes)
	}
	if st := w.state(gone); st.Run != state.RunStopped || st.Stop == nil || st.Stop.Reason != "user-abort" {
		t.Errorf("unlabelled issue after the sweep: run %s stop %+v, want stopped (user-abort)", st.Run, st.Stop)
	}
	w.sweep()
	if k := len(w.botComments(lost, "autopilot:state")); k != 1 {
		t.Errorf("%d state comments after a second sweep, want 1", k)
	}
}

// TestRedeliveredEventChangesNoLabels: a late copy of an event carries an
// old label snapshot; the labels are read again instead of being "fixed"
// from it.
func TestRedeliveredEventChangesNoLabels(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	c := w.say(n, "devin", "/autopilot done problem framed")
	stale := w.commentEvent(c) // labels as they were before the report
	w.mustHandle(w.commentEvent(c))
	before := w.mutations()
	w.mustHandle(stale)
	if got := w.mutations() - before; got != 0 {
		t.Errorf("the redelivery made %d mutations, want 0", got)
	}
	if !hasLabel(w.labels(n), "autopilot/step:research") {
		t.Errorf("labels %v lack the current step", w.labels(n))
	}
}

// TestRefusedCommentIsNotSentAgain: a comment GitHub refuses with 422 is
// remembered in the state; later runs do not send it again.
func TestRefusedCommentIsNotSentAgain(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	refused := fmt.Errorf("body is too long: %w", forge.ErrValidation)
	w.sb.FailNext("POST comment", refused)
	w.comment(n, "devin", "/autopilot done problem framed")
	st := w.state(n)
	if st.Slug != "research" || len(st.Refused) != 1 || !strings.HasPrefix(st.Refused[0], "comment announce ") {
		t.Fatalf("after the 422: step %s refused %q", st.Slug, st.Refused)
	}
	posts := w.sb.Calls()["POST comment"]
	w.sweep()
	w.comment(n, "devin", "/autopilot status")
	if got := w.sb.Calls()["POST comment"] - posts; got != 1 {
		t.Errorf("%d comments posted after the 422, want 1 (the status reply only)", got)
	}
}

// TestNoticeUnderUntrustedIdentityIsNotRepeated: when the bot does not
// recognise its own comments (wrong app id), the "state lost" notice is
// still posted once, not on every run.
func TestNoticeUnderUntrustedIdentityIsNotRepeated(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	wrong := w.recOn(w.sb, func(o *Options) { o.AppID = 999 })
	for range 3 {
		c := w.say(n, "maria", "/autopilot status")
		if _, err := wrong.Handle(context.Background(), w.commentEvent(c)); err != nil {
			t.Fatal(err)
		}
	}
	if k := len(w.botComments(n, "autopilot:notice state-lost")); k != 1 {
		t.Errorf("%d state-lost notices, want 1", k)
	}
}

// TestLinkedPRAnswerAppliedBeforeLaterIssueComment: an answer on a linked
// PR whose event was lost is read when a later issue comment is applied,
// so the two are applied in creation order.
func TestLinkedPRAnswerAppliedBeforeLaterIssueComment(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	pr := w.linkPR(n, "Fixes #1")
	stop := w.say(pr, "maria", "/autopilot stop") // its event is lost
	done := w.comment(n, "devin", "/autopilot done problem framed")
	st := w.state(n)
	if st.Run != state.RunStopped || st.Slug != "problem" {
		t.Errorf("run %s at %s: the later report overtook the stop", st.Run, st.Slug)
	}
	if !outbox.Handled(st, stop.ID) || !outbox.Handled(st, done.ID) {
		t.Error("both comments must be classified")
	}
}

// TestRecheckIsAConflict: a recheck after writing is retried as a
// conflict.
func TestRecheckIsAConflict(t *testing.T) {
	if errors.Is(errRecheck, ErrConflict) != true {
		t.Error("errRecheck must be a conflict")
	}
}

// recOn is a second reconciler of the world's repository (a concurrent run)
// working through f.
func (w *world) recOn(f forge.Forge, mod func(*Options)) *Reconciler {
	w.t.Helper()
	o := Options{Forge: f, BotLogin: bot, StateKey: []byte(testKey), Now: w.now, Logger: testLogger(w.t)}
	if mod != nil {
		mod(&o)
	}
	r, err := New(o)
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

// busyThread is a forge on which someone comments again during every pass:
// a command appears right before each version re-read (every second
// listing of the issue: load, re-read, load, ...).
type busyThread struct {
	*forge.Sandbox
	issue int
	calls int
	say   func()
}

func (b *busyThread) ListComments(ctx context.Context, n int) ([]forge.Comment, error) {
	if n == b.issue {
		if b.calls++; b.calls%2 == 0 {
			b.say()
		}
	}
	return b.Sandbox.ListComments(ctx, n)
}

// TestBusyThreadLastPassWrites: with no concurrent run, every pass's
// re-read finds one more new command (people typing while the job runs).
// The last pass writes what it applied and leaves the newest command to
// its own event; the job does not fail, and the state is not moved
// backwards by it.
func TestBusyThreadLastPassWrites(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	done := w.say(n, "devin", "/autopilot done problem finished")
	v0 := w.state(n).Version
	var said []forge.Comment
	bt := &busyThread{Sandbox: w.sb, issue: n}
	bt.say = func() { said = append(said, w.say(n, "devin", "/autopilot status")) }
	rec := w.recOn(bt, nil)
	outs, err := rec.Handle(context.Background(), w.commentEvent(done))
	if err != nil {
		t.Fatalf("a thread that keeps moving failed the job: %v", err)
	}
	st := w.state(n)
	if !outbox.Handled(st, done.ID) || st.Slug != "research" || st.Version <= v0 {
		t.Fatalf("state v%d at %s, done handled %v: want the command applied and written", st.Version, st.Slug, outbox.Handled(st, done.ID))
	}
	if len(said) < maxPasses {
		t.Fatalf("%d comments appeared during the run, want at least %d (one per pass)", len(said), maxPasses)
	}
	for _, c := range said[:maxPasses-1] {
		if !outbox.Handled(st, c.ID) {
			t.Errorf("comment %d, seen by a later pass, is not handled", c.ID)
		}
	}
	if !outs[0].Wrote {
		t.Error("outcome says nothing was written")
	}
	// What is left is applied by its own event, as usual.
	w.mustHandle(w.commentEvent(said[len(said)-1]))
	for _, c := range said {
		if !outbox.Handled(w.state(n), c.ID) {
			t.Errorf("comment %d never handled", c.ID)
		}
	}
}
