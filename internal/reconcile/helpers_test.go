package reconcile

import (
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/reconcile/route"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

const (
	testRepo = "acme/widgets"
	bot      = "github-actions[bot]"
	testKey  = "reconcile-test-key"
	// greenfieldConfig pins the flow so runs start without detection.
	greenfieldConfig = "default_flow: greenfield\njira:\n  enabled: false\n"
)

// t0 is the start of every test clock.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// world is a sandbox repository, a clock and a reconciler, driven by
// delivering events the way the Action or the App would.
type world struct {
	t   testing.TB
	sb  *forge.Sandbox
	rec *Reconciler

	key []byte

	mu    sync.Mutex // guards printed
	clock *fakeclock.Clock
	// printed collects dry-run output.
	printed []string
}

// newWorld builds a repository with maria (admin), devin (write), reader
// (read) and the greenfield config; mod adjusts the reconciler options.
func newWorld(t testing.TB, mod func(*Options)) *world {
	t.Helper()
	w := &world{t: t, clock: fakeclock.New(t0)}
	w.sb = forge.NewSandbox(testRepo, forge.User{Login: bot, ID: 41898282, Type: "Bot"}, w.now)
	for login, p := range map[string]access.Level{"maria": access.Admin, "devin": access.Write, "reader": access.Read} {
		w.sb.AddUser(forge.User{Login: login}, p)
	}
	w.sb.SetFile(".github/autopilot.yml", []byte(greenfieldConfig))
	o := Options{Forge: w.sb, BotLogin: bot, StateKey: []byte(testKey), Now: w.now, Logger: testLogger(t),
		Print: func(s string) { w.mu.Lock(); w.printed = append(w.printed, s); w.mu.Unlock() }}
	if mod != nil {
		mod(&o)
	}
	if o.Forge == nil {
		o.Forge = w.sb
	}
	w.key = o.StateKey
	rec, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	w.rec = rec
	return w
}

func (w *world) now() time.Time { return w.clock.Now() }

func (w *world) tick(d time.Duration) { w.clock.Advance(d) }

// issue opens an issue and returns its number.
func (w *world) issue(title string) int {
	w.tick(time.Minute)
	return w.sb.CreateIssue("maria", title, "Users want it.").Number
}

func (w *world) snapshot(n int) forge.Issue {
	is, ok := w.sb.Snapshot(n)
	if !ok {
		w.t.Fatalf("no issue #%d", n)
	}
	return is
}

// event builds an event on issue n as a payload would carry it.
func (w *world) event(name, action string, n int, sender string) *ghevent.Event {
	is := w.snapshot(n)
	return &ghevent.Event{Name: name, Action: action, Repo: testRepo, Sender: w.sb.User(sender), Handled: true,
		Issue: n, IsPR: is.IsPR, Labels: is.Labels, Title: is.Title, Body: is.Body, IssueState: is.State}
}

// handle delivers an event and returns the outcomes.
func (w *world) handle(ev *ghevent.Event) ([]route.Outcome, error) {
	w.t.Helper()
	w.tick(10 * time.Second)
	return w.rec.Handle(context.Background(), ev)
}

// mustHandle delivers an event and fails the test on an error.
func (w *world) mustHandle(ev *ghevent.Event) []route.Outcome {
	w.t.Helper()
	outs, err := w.handle(ev)
	if err != nil {
		w.t.Fatalf("%s.%s on #%d: %v", ev.Name, ev.Action, ev.Issue, err)
	}
	return outs
}

// start labels issue n and delivers issues.labeled.
func (w *world) start(n int) {
	w.t.Helper()
	w.tick(time.Minute)
	w.sb.LabelIssue("maria", n, "autopilot")
	ev := w.event("issues", "labeled", n, "maria")
	ev.Label = "autopilot"
	w.mustHandle(ev)
	if w.state(n) == nil {
		w.t.Fatalf("no state after starting #%d", n)
	}
}

// say posts a comment (without delivering its event).
func (w *world) say(n int, who, body string) forge.Comment {
	w.t.Helper()
	w.tick(time.Minute)
	c, err := w.sb.Comment(who, n, body)
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

// commentEvent is the issue_comment.created event of c.
func (w *world) commentEvent(c forge.Comment) *ghevent.Event {
	ev := w.event("issue_comment", "created", c.IssueNumber, c.Author.Login)
	cc := c
	ev.Comment = &cc
	return ev
}

// comment posts and delivers a comment.
func (w *world) comment(n int, who, body string) forge.Comment {
	w.t.Helper()
	c := w.say(n, who, body)
	w.mustHandle(w.commentEvent(c))
	return c
}

func (w *world) sweep() []route.Outcome {
	w.t.Helper()
	return w.mustHandle(&ghevent.Event{Name: "schedule", Handled: true, Sweep: true, Repo: testRepo})
}

// state returns the newest trusted, valid state of issue n (nil if none).
func (w *world) state(n int) *state.State {
	w.t.Helper()
	var best *state.State
	for _, c := range w.sb.Comments(n) {
		if c.Author.Login != bot || !c.Author.IsBot() || !strings.HasPrefix(c.Body, state.Marker) {
			continue
		}
		s, err := codec.Parse(c.Body, codec.Want{Repo: testRepo, Issue: n, Key: w.key})
		if err != nil {
			continue
		}
		if best == nil || s.Version > best.Version {
			best = s
		}
	}
	return best
}

// stateComment returns the bot's state comment of issue n.
func (w *world) stateComment(n int) forge.Comment {
	w.t.Helper()
	for _, c := range w.sb.Comments(n) {
		if c.Author.Login == bot && strings.HasPrefix(c.Body, state.Marker) {
			return c
		}
	}
	w.t.Fatalf("#%d has no state comment", n)
	return forge.Comment{}
}

// botComments returns the bot's comments on issue n whose first line
// contains marker.
func (w *world) botComments(n int, marker string) []forge.Comment {
	var out []forge.Comment
	for _, c := range w.sb.Comments(n) {
		first, _, _ := strings.Cut(c.Body, "\n")
		if c.Author.Login == bot && strings.Contains(first, marker) {
			out = append(out, c)
		}
	}
	return out
}

// mutations counts the sandbox calls that change something.
func (w *world) mutations() int {
	n := 0
	for k, v := range w.sb.Calls() {
		if !strings.HasPrefix(k, "GET ") {
			n += v
		}
	}
	return n
}

// labels returns the labels of issue n.
func (w *world) labels(n int) []string { return w.snapshot(n).Labels }

func hasLabel(ls []string, l string) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}

// decompose is a /autopilot done that declares tasks and opens the
// session-boundary gate of the greenfield flow.
const decompose = "/autopilot done decomposed\n\n```autopilot-tasks\n- title: Writer\n- title: Endpoint\n```"

// toGate runs issue n from the start to the decompose gate.
func (w *world) toGate(n int) {
	w.t.Helper()
	for _, s := range []string{"problem", "research", "plan"} {
		w.comment(n, "devin", "/autopilot done "+s+" finished")
	}
	w.comment(n, "devin", decompose)
	if st := w.state(n); st == nil || st.Gate == nil {
		w.t.Fatalf("#%d: no open gate after decompose", n)
	}
}

// normalised is a state reduced to what must converge: versions,
// signatures and every timestamp are dropped, comment ids are replaced by
// names (ids[id], e.g. the comment's place in a script: ids depend on how
// the bot's comments interleave), and outbox effects already visible on
// the issue (done, kept only until the next write) are left out.
func normalised(t testing.TB, s *state.State, ids map[int64]string, done map[string]bool) map[string]any {
	t.Helper()
	if s == nil {
		return nil
	}
	c := *s
	c.Outbox = nil
	for _, e := range s.Outbox {
		if !done[e.Marker] {
			c.Outbox = append(c.Outbox, e)
		}
	}
	b, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "version")
	delete(m, "sig")
	delete(m, "write_id")
	return normalise(m, "", ids).(map[string]any)
}

var issueCommentRef = regexp.MustCompile(`issuecomment-([0-9]+)`)

func normalise(v any, key string, ids map[int64]string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalise(e, k, ids)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = normalise(e, key, ids)
		}
		return x
	case float64:
		if key == "id" || key == "comment_id" {
			if name, ok := ids[int64(x)]; ok {
				return name
			}
		}
		return x
	case string:
		if _, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return "<time>"
		}
		return issueCommentRef.ReplaceAllStringFunc(x, func(ref string) string {
			id, _ := strconv.ParseInt(strings.TrimPrefix(ref, "issuecomment-"), 10, 64)
			if name, ok := ids[id]; ok {
				return "issuecomment-" + name
			}
			return ref
		})
	}
	return v
}

// testLogger sends warnings to the test log (visible with -v or on failure).
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tlogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tlogWriter struct{ t testing.TB }

func (w tlogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
