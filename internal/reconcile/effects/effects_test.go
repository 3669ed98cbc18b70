package effects

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile/writes"
	"github.com/autopilot-dev/autopilot/internal/state"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const tag = "\n<!-- autopilot:v test -->"

// rig is a Performer on a fresh sandbox issue, recording what it is told.
type rig struct {
	sb      *forge.Sandbox
	issue   int
	p       Performer
	refused map[string]bool
	posted  map[int64]string
	printed []string
	sent    []state.Effect
}

func newRig(t *testing.T) *rig {
	t.Helper()
	sb := forge.NewSandbox("o/r", forge.User{Login: "bot[bot]", Type: "Bot"}, func() time.Time { return t0 })
	r := &rig{sb: sb, issue: sb.CreateIssue("alice", "t", "b").Number, refused: map[string]bool{}, posted: map[int64]string{}}
	r.p = Performer{
		Forge: sb, Issue: r.issue, Markers: map[string]forge.Comment{},
		Print:   func(s string) { r.printed = append(r.printed, s) },
		Refused: func(fp string) bool { return r.refused[fp] },
		Refuse:  func(fp string, err error) { r.refused[fp] = true },
		Tag:     func() string { return tag },
		Replied: func(int64) bool { return false },
		Posted:  func(id int64, m string) { r.posted[id] = m },
		Dispatch: func(e state.Effect) error {
			r.sent = append(r.sent, e)
			return nil
		},
	}
	return r
}

func list(es ...state.Effect) []state.Effect { return es }

func TestPerformPostsAComment(t *testing.T) {
	r := newRig(t)
	m := "<!-- autopilot:reply 7 -->"
	if err := r.p.Perform(context.Background(), list(state.Effect{Kind: state.EffComment, Marker: m, Body: m + "\nhello"})); err != nil {
		t.Fatal(err)
	}
	cs := r.sb.Comments(r.issue)
	if len(cs) != 1 || cs[0].Body != m+"\nhello"+tag {
		t.Fatalf("comments %+v, want one with the body and the tag", cs)
	}
	if r.p.Markers[m].ID != cs[0].ID || r.posted[cs[0].ID] != m {
		t.Errorf("posted comment not recorded: markers %+v, posted %v", r.p.Markers, r.posted)
	}
	// Its marker is now on the thread: performing again posts nothing.
	if err := r.p.Perform(context.Background(), list(state.Effect{Kind: state.EffComment, Marker: m, Body: m + "\nhello"})); err != nil {
		t.Fatal(err)
	}
	if n := r.sb.Calls()["POST comment"]; n != 1 {
		t.Errorf("%d comment posts, want 1", n)
	}
}

func TestPerformGivesUpARefusedComment(t *testing.T) {
	r := newRig(t)
	m := "<!-- autopilot:archive 1 -->"
	e := state.Effect{Kind: state.EffArchive, Marker: m, Body: m + "\nold decisions"}
	r.sb.FailNext("POST comment", fmt.Errorf("unprocessable: %w", forge.ErrValidation))
	if err := r.p.Perform(context.Background(), list(e)); err != nil {
		t.Fatalf("a 422 is given up, not an error: %v", err)
	}
	if fp := writes.Fingerprint("comment", m, e.Body); !r.refused[fp] {
		t.Errorf("refusal not remembered under %q: %v", fp, r.refused)
	}
	if err := r.p.Perform(context.Background(), list(e)); err != nil {
		t.Fatal(err)
	}
	if n := r.sb.Calls()["POST comment"]; n != 1 {
		t.Errorf("refused comment sent %d times, want once (not resent unchanged)", n)
	}
	// Changed, it is a new request and is sent.
	e.Body += " (shorter)"
	if err := r.p.Perform(context.Background(), list(e)); err != nil {
		t.Fatal(err)
	}
	if n := len(r.sb.Comments(r.issue)); n != 1 {
		t.Errorf("changed comment: %d comments on the thread, want 1", n)
	}
}

func TestPerformReportsOtherFailures(t *testing.T) {
	r := newRig(t)
	boom := errors.New("boom")
	r.sb.FailNext("POST comment", boom)
	err := r.p.Perform(context.Background(), list(state.Effect{Kind: state.EffComment, Marker: "<!-- autopilot:x -->", Body: "x"}))
	if !errors.Is(err, boom) {
		t.Errorf("Perform = %v, want boom", err)
	}
	if len(r.refused) != 0 {
		t.Errorf("a non-422 failure was remembered as refused: %v", r.refused)
	}
}

func TestPerformDryRun(t *testing.T) {
	r := newRig(t)
	r.p.DryRun = true
	err := r.p.Perform(context.Background(), list(
		state.Effect{Kind: state.EffComment, Marker: "<!-- autopilot:x -->", Body: "hi"},
		state.Effect{Kind: state.EffReact, Target: 1, Reaction: "+1"},
	))
	if err != nil {
		t.Fatal(err)
	}
	if n := r.sb.TotalCalls(); n != 0 {
		t.Errorf("dry run made %d calls: %v", n, r.sb.Calls())
	}
	if len(r.printed) != 2 || !strings.Contains(r.printed[0], "would comment") || !strings.Contains(r.printed[1], "would react +1") {
		t.Errorf("dry run printed %q", r.printed)
	}
}

func TestPerformReacts(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	c, err := r.sb.Comment("alice", r.issue, "A")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.p.Perform(ctx, list(state.Effect{Kind: state.EffReact, Target: c.ID, Reaction: "+1"})); err != nil {
		t.Fatal(err)
	}
	if got := r.sb.Reactions(c.ID); len(got) != 1 || got[0] != "+1" {
		t.Errorf("reactions %v, want +1", got)
	}
	// Already replied to: a re-classified reaction is not sent, an owed one is.
	r.p.Replied = func(id int64) bool { return id == c.ID }
	if err := r.p.Perform(ctx, list(state.Effect{Kind: state.EffReact, Target: c.ID, Reaction: "confused"})); err != nil {
		t.Fatal(err)
	}
	if n := r.sb.Calls()["POST reaction"]; n != 1 {
		t.Errorf("reaction to a replied comment sent (%d posts)", n)
	}
	if err := r.p.Perform(ctx, list(state.Effect{Kind: state.EffReact, Target: c.ID, Reaction: "heart", Owed: true})); err != nil {
		t.Fatal(err)
	}
	if n := r.sb.Calls()["POST reaction"]; n != 2 {
		t.Errorf("owed reaction not sent (%d posts)", n)
	}
	// A comment that is gone is no error.
	if err := r.p.Perform(ctx, list(state.Effect{Kind: state.EffReact, Target: 99999, Reaction: "+1"})); err != nil {
		t.Errorf("reaction to a deleted comment = %v, want nil", err)
	}
}

// TestPerformHandsADispatchBack: a dispatch is handed to the pass (which
// steps its outcome in; the effects it adds come in the node's next
// Ready, TestADispatchOutcomeIsPersistedBeforeTheEffectsAfterIt in
// engine/pass), and its failure stops the performing.
func TestPerformHandsADispatchBack(t *testing.T) {
	r := newRig(t)
	es := []state.Effect{{Kind: state.EffDispatch, Marker: "tok", Workflow: "agent.yml"}}
	r.p.Dispatch = func(e state.Effect) error {
		r.sent = append(r.sent, e)
		return nil
	}
	if err := r.p.Perform(context.Background(), es); err != nil {
		t.Fatal(err)
	}
	if len(r.sent) != 1 || r.sent[0].Workflow != "agent.yml" {
		t.Errorf("dispatched %+v, want agent.yml once", r.sent)
	}
	boom := errors.New("boom")
	r.p.Dispatch = func(state.Effect) error { return boom }
	if err := r.p.Perform(context.Background(), list(es[0], state.Effect{Kind: state.EffComment, Marker: "<!-- autopilot:after -->", Body: "after"})); !errors.Is(err, boom) {
		t.Errorf("failed dispatch = %v, want boom", err)
	}
	if cs := r.sb.Comments(r.issue); len(cs) != 0 {
		t.Errorf("performed past a failed dispatch: %+v", cs)
	}
}
