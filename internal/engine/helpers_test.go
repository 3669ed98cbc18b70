package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/testkit"
)

// t0 is the fixed start of every test clock.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

const testIssue = 12

// settingsFor builds engine settings from a config file (empty: defaults).
func settingsFor(t testing.TB, yaml string) machine.Settings {
	t.Helper()
	cfg := config.Default()
	if strings.TrimSpace(yaml) != "" {
		var err error
		cfg, err = config.Parse([]byte(yaml))
		if err != nil {
			t.Fatalf("config.Parse: %v", err)
		}
	}
	return machine.Settings{Config: cfg, AnswerPermission: access.Write, Repo: "acme/widgets"}
}

// harness drives the engine through a sequence of events with a clock that
// advances one minute per event, collecting every effect.
type harness struct {
	t      testing.TB
	set    machine.Settings
	st     *state.State
	clock  time.Time
	nextID int64
	all    []state.Effect
	last   Result
}

func newHarness(t testing.TB, yaml string) *harness {
	t.Helper()
	return &harness{t: t, set: settingsFor(t, yaml), clock: t0, nextID: 1000}
}

// now is the current clock reading (the time of the last applied event).
func (h *harness) now() time.Time { return h.clock }

// advance moves the clock on by d without applying an event.
func (h *harness) advance(d time.Duration) { h.clock = h.clock.Add(d) }

// apply applies one event one minute after the previous one and fails the
// test on an engine error. It checks that the input state is not mutated.
func (h *harness) apply(ev events.Event) Result {
	h.t.Helper()
	res, err := h.try(ev)
	if err != nil {
		h.t.Fatalf("Apply(%T): %v", ev, err)
	}
	return res
}

// try is apply returning the engine's error instead of failing.
func (h *harness) try(ev events.Event) (Result, error) {
	h.t.Helper()
	h.clock = h.clock.Add(time.Minute)
	var before []byte
	if h.st != nil {
		before = mustJSON(h.t, h.st)
	}
	res, err := Apply(h.set, h.st, ev, h.clock)
	if h.st != nil && string(mustJSON(h.t, h.st)) != string(before) {
		h.t.Fatalf("Apply(%T) mutated its input state", ev)
	}
	if err != nil {
		return res, err
	}
	h.last = res
	h.all = append(h.all, res.Effects...)
	if res.State != nil {
		h.st = res.State
	}
	return res, nil
}

// start starts a run of the named flow on testIssue.
func (h *harness) start(flowName string) Result {
	h.t.Helper()
	return h.apply(events.Start{Flow: flowName, Issue: testIssue, Actor: "maria", Title: "Add CSV export to reports", Body: "## Desired outcome\nCSV downloads\n## Constraints\nno new deps", URL: "https://github.com/acme/widgets/issues/12"})
}

// comment builds a comment by a user with the given permission, written at
// the current clock reading.
func (h *harness) comment(author string, perm access.Level, body string) events.Comment {
	h.nextID++
	return events.Comment{ID: h.nextID, Author: author, Perm: perm, Body: body, At: h.clock,
		URL: fmt.Sprintf("https://github.com/acme/widgets/issues/12#issuecomment-%d", h.nextID)}
}

// say applies a comment by a user with write permission.
func (h *harness) say(author, body string) Result {
	h.t.Helper()
	return h.apply(h.comment(author, access.Write, body))
}

// done reports the current step done as maria.
func (h *harness) done(summary string) Result {
	h.t.Helper()
	return h.say("maria", strings.TrimSpace("/autopilot done "+summary))
}

// runTo starts a flow and reports done until the current step is slug.
// Gates met on the way are answered with their recommended option.
func (h *harness) runTo(flowName, slug string) {
	h.t.Helper()
	if h.st == nil {
		h.start(flowName)
	}
	for i := 0; i < 40 && !(h.st.Slug == slug && h.st.Status == state.InProgress && h.st.Gate == nil); i++ {
		switch {
		case h.st.Gate != nil:
			h.say("maria", h.st.Gate.Recommend)
		case h.st.Status == state.InProgress:
			h.done("ok")
		default:
			h.t.Fatalf("runTo %s: stuck at %s (%s/%s)", slug, h.st.Slug, h.st.Run, h.st.Status)
		}
	}
	if h.st.Slug != slug {
		h.t.Fatalf("runTo %s: ended at %s", slug, h.st.Slug)
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

// effectsOf filters effects by kind.
func effectsOf(effs []state.Effect, kind state.EffectKind) []state.Effect {
	var out []state.Effect
	for _, e := range effs {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// nEffects counts a result's writes and queries.
func nEffects(r Result) int { return len(r.Effects) + len(r.Queries) }

// queriesOf filters queries by kind.
func queriesOf(qs []events.Query, kind events.QueryKind) []events.Query {
	var out []events.Query
	for _, q := range qs {
		if q.Kind == kind {
			out = append(out, q)
		}
	}
	return out
}

// bodies returns the bodies of the comment effects.
func bodies(effs []state.Effect) []string {
	var out []string
	for _, e := range effectsOf(effs, state.EffComment) {
		out = append(out, e.Body)
	}
	return out
}

// hasBody reports whether any comment effect's body contains all parts.
func hasBody(effs []state.Effect, parts ...string) bool {
	for _, b := range bodies(effs) {
		ok := true
		for _, p := range parts {
			if !strings.Contains(b, p) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// reactions returns the reactions made on comment id.
func reactions(effs []state.Effect, id int64) []string {
	var out []string
	for _, e := range effectsOf(effs, state.EffReact) {
		if e.Target == id {
			out = append(out, e.Reaction)
		}
	}
	return out
}

// repliesTo counts the reply comments addressed to comment id.
func repliesTo(effs []state.Effect, id int64) int {
	n := 0
	for _, e := range effectsOf(effs, state.EffComment) {
		if e.Marker == fmt.Sprintf("<!-- autopilot:reply %d -->", id) {
			n++
		}
	}
	return n
}

// ledgerOf returns the ledger outcome of comment id, "" when not ledgered.
func ledgerOf(s *state.State, id int64) state.LedgerOutcome {
	for _, e := range s.Ledger {
		if e.CommentID == id {
			return e.Outcome
		}
	}
	return ""
}

// progressOf returns the banner status of a step slug.
func progressOf(s *state.State, slug string) state.StepStatus {
	for _, p := range s.Steps {
		if p.Slug == slug {
			return p.Status
		}
	}
	return ""
}

// gateBody returns the posted body of the open gate.
func gateBody(t testing.TB, effs []state.Effect, g *state.Gate) string {
	t.Helper()
	if g == nil {
		t.Fatalf("no gate open")
	}
	for _, e := range effs {
		if e.Kind == state.EffComment && e.Marker == prose.GateMarker(g.ID) {
			return e.Body
		}
	}
	t.Fatalf("gate %s was never posted", g.ID)
	return ""
}

// want and wantDeep are testkit's checks under the short names the engine
// tests use.
func want[T comparable](t testing.TB, what string, got, w T) {
	t.Helper()
	testkit.Want(t, what, got, w)
}

func wantDeep(t testing.TB, what string, got, w any) {
	t.Helper()
	testkit.WantDeep(t, what, got, w)
}

// taskN is a declared task with a numbered title.
func taskN(i int) state.Task {
	return state.Task{Kind: state.KindTask, Title: fmt.Sprintf("task %d", i), Points: float64(i%5 + 1)}
}

// wantLines fails the test for each part the rendered body lacks.
func wantLines(t testing.TB, what, body string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(body, p) {
			t.Errorf("%s lacks %q:\n%s", what, p, body)
		}
	}
}

// wantGate stops the test unless the state has an open gate of the kind.
func wantGate(t testing.TB, s *state.State, kind state.GateKind) *state.Gate {
	t.Helper()
	if s.Gate == nil || s.Gate.Kind != kind {
		t.Fatalf("gate = %+v, want %s", s.Gate, kind)
	}
	return s.Gate
}

// refused applies a comment by a writer and checks that it was refused
// with the ledger outcome: a 😕 reaction and one explanatory reply.
func (h *harness) refused(author, body string, outcome state.LedgerOutcome) Result {
	h.t.Helper()
	c := h.comment(author, access.Write, body)
	res := h.apply(c)
	want(h.t, body+": ledger", ledgerOf(res.State, c.ID), outcome)
	wantDeep(h.t, body+": reactions", reactions(res.Effects, c.ID), []string{outbox.ReactConfuse})
	want(h.t, body+": replies", repliesTo(res.Effects, c.ID), 1)
	return res
}
