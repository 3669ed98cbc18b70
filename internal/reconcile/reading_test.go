package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

// recentWorld is a world whose forge reads threads most recently updated
// first (the GitHub adapter's GraphQL read), with n comments of chatter
// on an issue before it is labelled.
func recentWorld(t *testing.T, before int) (*world, int) {
	t.Helper()
	w := newWorld(t, func(o *Options) { o.Forge = o.Forge.(*forge.Sandbox).Recent() })
	n := w.issue("Add CSV export")
	for i := range before {
		w.say(n, "reader", fmt.Sprintf("remark %d", i))
	}
	w.start(n)
	return w, n
}

// graphqlPages counts the sandbox's GraphQL pages since mark.
func graphqlPages(w *world, mark map[string]int) int {
	return w.sb.Calls()["POST graphql"] - mark["POST graphql"]
}

// An issue labelled after 250 comments: its state comment is not among the
// oldest 100, yet each event reads one page (no REST listing at all), and
// an answer's load is its version re-read: no second read before the write.
func TestLateLabelledThreadReadsOnePagePerEvent(t *testing.T) {
	w, n := recentWorld(t, 250)
	w.toGate(n)
	mark := w.sb.Calls()
	w.comment(n, "reader", "sounds good")
	if p := graphqlPages(w, mark); p != 1 {
		t.Errorf("a chatter comment read %d GraphQL pages, want 1", p)
	}
	mark = w.sb.Calls()
	w.comment(n, "maria", "A")
	calls := w.sb.Calls()
	if s := w.state(n); len(s.Decisions) != 1 {
		t.Fatalf("the answer was not applied: %+v", s.Decisions)
	}
	if p := graphqlPages(w, mark); p != 1 {
		t.Errorf("an answer read %d GraphQL pages, want 1 (the load is the re-read)", p)
	}
	if calls["GET comments"] != 0 || calls["GET issue"] != mark["GET issue"] {
		t.Errorf("REST reads of the thread or the issue: %v", calls)
	}
	if calls["GET permission"]-mark["GET permission"] != 1 {
		t.Errorf("permission asked %d times, want once (before the load)", calls["GET permission"]-mark["GET permission"])
	}
}

// permWriter is a forge on which a concurrent run writes the state while
// this pass asks for a permission after its load.
type permWriter struct {
	forge.RecentSandbox
	w    *world
	n    int
	once bool
}

func (p *permWriter) Permission(ctx context.Context, login string) (access.Level, error) {
	if !p.once {
		p.once = true
		// A concurrent run writes the state: one version up.
		sc := p.w.stateComment(p.n)
		s := p.w.state(p.n)
		s.Version++
		body, err := codec.Render(s, codec.View{}, p.w.key)
		if err != nil {
			p.w.t.Fatal(err)
		}
		if err := p.w.sb.EditAs(bot, sc.ID, body); err != nil {
			p.w.t.Fatal(err)
		}
	}
	return p.RecentSandbox.Permission(ctx, login)
}

// When a request follows the load (a permission the sweep asks for an
// answer whose event was lost), the load cannot stand in for the re-read: the pass
// re-reads, sees the concurrent write and applies again on top of it.
func TestRereadAfterARequestSeesAConcurrentWrite(t *testing.T) {
	w, n := recentWorld(t, 0)
	w.toGate(n)
	pw := &permWriter{RecentSandbox: w.sb.Recent(), w: w, n: n}
	rec := w.recOn(pw, nil)
	before := w.state(n).Version
	w.say(n, "maria", "A") // its event was lost: the sweep asks after the load
	w.tick(10 * time.Second)
	if _, err := rec.Handle(context.Background(), &ghevent.Event{Name: "schedule", Handled: true, Sweep: true, Repo: testRepo}); err != nil {
		t.Fatal(err)
	}
	s := w.state(n)
	if len(s.Decisions) != 1 || s.Version != before+2 {
		t.Errorf("version %d (read v%d, a concurrent write made v%d), decisions %d: want the answer applied on top of the concurrent write", s.Version, before, before+1, len(s.Decisions))
	}
}

// A GraphQL read that fails (an errors array, a 5xx) is repeated through
// REST; refused credentials are not (REST would be refused too).
func TestGraphQLFailureFallsBackToREST(t *testing.T) {
	w, n := recentWorld(t, 0)
	w.sb.FailNext("POST graphql", errors.New("GraphQL: Something went wrong"))
	w.comment(n, "reader", "a remark")
	if got := w.sb.Calls()["GET comments"]; got == 0 {
		t.Error("no REST listing after the GraphQL read failed")
	}
	w.sb.FailNext("POST graphql", fmt.Errorf("github: %w", forge.ErrUnauthorized))
	mark := w.sb.Calls()
	_, err := w.handle(w.commentEvent(w.say(n, "reader", "another")))
	if !errors.Is(err, forge.ErrUnauthorized) || !strings.Contains(err.Error(), "read #") {
		t.Errorf("err = %v, want the refusal", err)
	}
	if got := w.sb.Calls()["GET comments"] - mark["GET comments"]; got != 0 {
		t.Errorf("%d REST listings after a 401", got)
	}
}
