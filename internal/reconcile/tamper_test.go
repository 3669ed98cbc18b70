package reconcile

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

func TestTrusted(t *testing.T) {
	tests := []struct {
		name  string
		appID int64
		c     forge.Comment
		want  bool
	}{
		{"the bot", 0, forge.Comment{Author: forge.User{Login: bot, Type: "Bot"}}, true},
		{"login in another case", 0, forge.Comment{Author: forge.User{Login: "GitHub-Actions[bot]", Type: "Bot"}}, true},
		{"a User account named like the bot", 0, forge.Comment{Author: forge.User{Login: bot, Type: "User"}}, false},
		{"no account type", 0, forge.Comment{Author: forge.User{Login: bot}}, false},
		{"another bot", 0, forge.Comment{Author: forge.User{Login: "dependabot[bot]", Type: "Bot"}}, false},
		{"a person", 0, forge.Comment{Author: forge.User{Login: "maria", Type: "User"}}, false},
		{"App id matches", 15368, forge.Comment{Author: forge.User{Login: bot, Type: "Bot"}, AppID: 15368}, true},
		{"App id differs", 15368, forge.Comment{Author: forge.User{Login: bot, Type: "Bot"}, AppID: 99}, false},
		{"App id missing", 15368, forge.Comment{Author: forge.User{Login: bot, Type: "Bot"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(Options{Forge: forge.NewSandbox(testRepo, forge.User{}, nil), BotLogin: bot, AppID: tt.appID})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.trusted(tt.c); got != tt.want {
				t.Errorf("trusted = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestImpostorStateIsIgnored: without a state key, a User account that
// carries the bot's login posts a "newer" state that closes the gate; it is
// not read as state (RELIABILITY case 18).
func TestImpostorStateIsIgnored(t *testing.T) {
	w := newWorld(t, func(o *Options) { o.StateKey = nil })
	n := w.issue("Add CSV export")
	w.start(n)
	w.toGate(n)
	good := w.stateOf(n, nil)
	forged := *good
	forged.Version += 10
	forged.Gate = nil
	forged.Run = state.RunDone
	body, err := codec.Render(&forged, codec.View{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.sb.AddUser(forge.User{Login: bot, Type: "User"}, access.Read)
	w.say(n, bot, body)
	w.comment(n, "devin", "/autopilot status")
	st := w.stateOf(n, nil)
	if st.Gate == nil || st.Run != state.RunAwaitingDecision || st.Version > good.Version+1 {
		t.Fatalf("after the impostor's state: gate %v run %s version %d (good was v%d)", st.Gate, st.Run, st.Version, good.Version)
	}
	// The impostor's comment is a human comment: classified, never obeyed.
	w.comment(n, "maria", "A")
	if st := w.stateOf(n, nil); st.Gate != nil || len(st.Decisions) != 1 {
		t.Fatalf("maria's answer after the impostor: gate %v decisions %v", st.Gate, st.Decisions)
	}
}

// stateOf is state() for a world with the given key.
func (w *world) stateOf(n int, key []byte) *state.State {
	w.t.Helper()
	var best *state.State
	for _, c := range w.sb.Comments(n) {
		if c.Author.Login != bot || !c.Author.IsBot() || !strings.HasPrefix(c.Body, state.Marker) {
			continue
		}
		if s, err := codec.Parse(c.Body, codec.Want{Repo: testRepo, Issue: n, Key: key}); err == nil && (best == nil || s.Version > best.Version) {
			best = s
		}
	}
	if best == nil {
		w.t.Fatalf("#%d has no valid state", n)
	}
	return best
}

// TestEditedStateIsRestoredOnce: a maintainer edits the human part of the
// state comment; the next run restores the last good state and says so
// once (RELIABILITY case 16).
func TestEditedStateIsRestoredOnce(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	w.toGate(n)
	before := w.state(n)
	sc := w.stateComment(n)
	edited := strings.Replace(sc.Body, "## Autopilot State", "## Autopilot State\n\n**decided: A** (edited by hand)", 1)
	if edited == sc.Body {
		t.Fatal("the state comment has no heading to edit")
	}
	if err := w.sb.EditAs("maria", sc.ID, edited); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		w.comment(n, "devin", "/autopilot status")
	}
	after := w.stateComment(n)
	s, err := codec.Parse(after.Body, codec.Want{Repo: testRepo, Issue: n, Key: []byte(testKey)})
	if err != nil {
		t.Fatalf("the state comment still does not verify: %v", err)
	}
	if s.Gate == nil || s.Gate.ID != before.Gate.ID || len(s.Decisions) != 0 {
		t.Errorf("restored state: gate %v decisions %v; the edit must not be acted on", s.Gate, s.Decisions)
	}
	if s.Version <= before.Version {
		t.Errorf("restored version %d, want above %d", s.Version, before.Version)
	}
	if got := len(w.botComments(n, "autopilot:notice tamper-")); got != 1 {
		t.Errorf("%d tamper notices, want 1", got)
	}
	if after.ID != sc.ID {
		t.Errorf("state comment %d replaced by %d; want it edited in place", sc.ID, after.ID)
	}
}

// TestForgedStatePausesOnce: the machine block is replaced by one signed
// with another key; autopilot pauses with one notice, acts on nothing, and
// keeps quiet on later runs (no crash loop).
func TestForgedStatePausesOnce(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	w.toGate(n)
	sc := w.stateComment(n)
	forged := *w.state(n)
	forged.Gate = nil
	forged.Version += 5
	body, err := codec.Render(&forged, codec.View{}, []byte("not-the-key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.sb.EditAs("maria", sc.ID, body); err != nil {
		t.Fatal(err)
	}
	labels := w.labels(n)
	for i := 0; i < 3; i++ {
		outs, err := w.handle(w.commentEvent(w.say(n, "maria", "A")))
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if len(outs) != 1 || !strings.Contains(strings.Join(outs[0].Notes, " "), "paused") {
			t.Errorf("run %d notes %v, want a pause note", i, outs)
		}
	}
	if got := len(w.botComments(n, "autopilot:notice state-lost")); got != 1 {
		t.Errorf("%d state-lost notices, want 1", got)
	}
	if c := w.stateComment(n); c.Body != body {
		t.Error("the forged state comment was overwritten while paused")
	}
	if got := w.labels(n); strings.Join(got, ",") != strings.Join(labels, ",") {
		t.Errorf("labels changed while paused: %v → %v", labels, got)
	}
}

// TestDeletedStatePausesOnce: a human deletes the state comment; one
// notice, no error, no further writes (RELIABILITY cases 14, 17); re-adding
// the label starts over.
func TestDeletedStatePausesOnce(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	w.comment(n, "devin", "/autopilot done problem framed")
	w.sb.DeleteComment(w.stateComment(n).ID)
	before := w.mutations()
	for i := 0; i < 3; i++ {
		w.comment(n, "devin", "/autopilot done research done")
	}
	w.sweep()
	if got := len(w.botComments(n, "autopilot:notice state-lost")); got != 1 {
		t.Errorf("%d state-lost notices, want 1", got)
	}
	if got := w.mutations() - before; got != 1 {
		t.Errorf("%d mutations while paused, want 1 (the notice)", got)
	}
	if w.state(n) != nil {
		t.Fatal("a state appeared while paused")
	}
	// Start over: remove and re-add the trigger label.
	w.sb.UnlabelIssue("maria", n, "autopilot")
	ev := w.event("issues", "unlabeled", n, "maria")
	ev.Label = "autopilot"
	w.mustHandle(ev)
	w.start(n)
	if st := w.state(n); st.Version != 1 || st.Slug != "problem" {
		t.Errorf("restart: v%d at %s, want v1 at problem", st.Version, st.Slug)
	}
}

// hookForge runs a hook before the nth ListComments call of an issue.
type hookForge struct {
	*forge.Sandbox
	issue int
	nth   int
	calls int
	hook  func()
}

func (h *hookForge) ListComments(ctx context.Context, n int) ([]forge.Comment, error) {
	if n == h.issue {
		h.calls++
		if h.calls == h.nth && h.hook != nil {
			h.hook()
		}
	}
	return h.Sandbox.ListComments(ctx, n)
}

// TestLostUpdateIsReapplied: a run reads v_n, another run writes v_n+1
// meanwhile; the version check sees it and the first run re-applies on
// top, so both changes survive (RELIABILITY case 2).
func TestLostUpdateIsReapplied(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	v0 := w.state(n).Version
	other := w.rec
	hf := &hookForge{Sandbox: w.sb, issue: n, nth: 2}
	racing, err := New(Options{Forge: hf, BotLogin: bot, StateKey: []byte(testKey), Now: w.now})
	if err != nil {
		t.Fatal(err)
	}
	hf.hook = func() {
		// The concurrent run: an answer applied and written while the
		// racing run sits between its read and its write.
		c := w.say(n, "devin", "/autopilot done problem framed")
		if _, err := other.Handle(context.Background(), w.commentEvent(c)); err != nil {
			t.Errorf("concurrent run: %v", err)
		}
	}
	w.sb.LabelIssue("maria", n, "do-not-touch")
	ev := w.event("issues", "closed", n, "maria")
	outs, err := racing.Handle(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	st := w.state(n)
	if st.Version != v0+2 {
		t.Errorf("version %d, want %d (one write each)", st.Version, v0+2)
	}
	if len(st.Completed) != 1 || st.Completed[0].Slug != "problem" {
		t.Errorf("completed %v: the concurrent run's change was lost", st.Completed)
	}
	if st.Run != state.RunStopped || outs[0].Status != string(state.RunStopped) {
		t.Errorf("run %s: the racing run's close was lost", st.Run)
	}
	if got := len(w.botComments(n, state.Marker)); got != 1 {
		t.Errorf("%d state comments, want 1", got)
	}
	if !hasLabel(w.labels(n), "do-not-touch") {
		t.Error("a label autopilot does not manage was removed")
	}
}

// TestStateCommentDeletedBeforeWrite: the PATCH of the state comment 404s
// (deleted between read and write); a new state comment carries the write.
func TestStateCommentDeletedBeforeWrite(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	old := w.stateComment(n)
	v0 := w.state(n).Version
	hf := &hookForge{Sandbox: w.sb, issue: n, nth: 2, hook: func() { w.sb.DeleteComment(old.ID) }}
	rec, err := New(Options{Forge: hf, BotLogin: bot, StateKey: []byte(testKey), Now: w.now})
	if err != nil {
		t.Fatal(err)
	}
	c := w.say(n, "devin", "/autopilot done problem framed")
	if _, err := rec.Handle(context.Background(), w.commentEvent(c)); err != nil {
		t.Fatal(err)
	}
	now := w.stateComment(n)
	if now.ID == old.ID {
		t.Fatal("the deleted state comment is still there")
	}
	st := w.state(n)
	if st.Version != v0+1 || st.Slug != "research" {
		t.Errorf("new state v%d at %s, want v%d at research", st.Version, st.Slug, v0+1)
	}
	if calls := w.sb.Calls()["PATCH comment"]; calls == 0 {
		t.Error("no PATCH was tried before posting a new state comment")
	}
}

// TestDeletedAnswerIsIgnored: an answer deleted before its run is not
// applied; one deleted after the read but before the reaction does not
// fail the run (RELIABILITY case 14).
func TestDeletedAnswerIsIgnored(t *testing.T) {
	t.Run("before the run", func(t *testing.T) {
		w := newWorld(t, nil)
		n := w.issue("Add CSV export")
		w.start(n)
		w.toGate(n)
		c := w.say(n, "maria", "A")
		w.sb.DeleteComment(c.ID)
		if _, err := w.handle(w.commentEvent(c)); err != nil {
			t.Fatal(err)
		}
		if st := w.state(n); st.Gate == nil || len(st.Decisions) != 0 {
			t.Errorf("a deleted answer was applied: gate %v decisions %v", st.Gate, st.Decisions)
		}
	})
	t.Run("between the read and the reaction", func(t *testing.T) {
		w := newWorld(t, nil)
		n := w.issue("Add CSV export")
		w.start(n)
		w.toGate(n)
		c := w.say(n, "maria", "A")
		hf := &hookForge{Sandbox: w.sb, issue: n, nth: 2, hook: func() { w.sb.DeleteComment(c.ID) }}
		rec, err := New(Options{Forge: hf, BotLogin: bot, StateKey: []byte(testKey), Now: w.now})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rec.Handle(context.Background(), w.commentEvent(c)); err != nil {
			t.Fatalf("a reaction on a vanished comment failed the run: %v", err)
		}
		if st := w.state(n); len(st.Decisions) != 1 {
			t.Errorf("decisions %v, want the answer read before the delete", st.Decisions)
		}
	})
}

func TestWriteErrorsAreReturned(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	boom := &forge.TransientError{Status: 502, Err: errors.New("bad gateway")}
	w.sb.FailNext("PATCH comment", boom)
	_, err := w.handle(w.commentEvent(w.say(n, "devin", "/autopilot done problem framed")))
	var te *forge.TransientError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v, want the transient error", err)
	}
	// The next run applies the same comment once.
	w.comment(n, "devin", "/autopilot status")
	if st := w.state(n); st.Slug != "research" || len(st.Completed) != 1 {
		t.Errorf("after recovery at %s with %d completed", st.Slug, len(st.Completed))
	}
}
