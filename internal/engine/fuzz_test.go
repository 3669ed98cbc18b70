package engine

import (
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/grammar"
)

// FuzzApplyComment feeds arbitrary comment bodies to runs parked at each
// kind of open question or running step: Apply must not fail or panic,
// must not mutate its input, must ledger the comment at most once, and
// may record a decision only for a canonical letter or choose command; a
// comment edited before processing (odd which) never decides anything.
func FuzzApplyComment(f *testing.F) {
	for _, s := range []string{"A", "b) because", "/autopilot done", "/autopilot back plan", "/autopilot skip x", "/autopilot progress 2 batch-loop", "> A", "```\nA\n```", "Ａ", "/autopilot choose c", "/autopilot approve architect", "/autopilot stop", "/autopilot resume", "/autopilot jira sync", "/autopilot tasks sync", "/autopilot tasks retry", "\u200bA"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(3))
	}
	setups := []func(h *harness){
		func(h *harness) { h.start("greenfield") },
		func(h *harness) { h.runTo("greenfield", "decompose"); h.done("tasks") },
		func(h *harness) { h.start("greenfield"); failThrice(h, "boom") },
		func(h *harness) { h.start("greenfield"); h.say("maria", "/autopilot stop") },
		func(h *harness) {
			h.apply(events.Start{Issue: testIssue, Candidates: []string{"greenfield", "review-loop"}})
		},
		func(h *harness) { h.start("review-loop"); h.done("why"); h.done("plan") },
	}
	var states []*harness
	for _, setup := range setups {
		h := newHarness(f, reviewCfg)
		setup(h)
		states = append(states, h)
	}
	f.Fuzz(func(t *testing.T, body string, which uint8) {
		h := states[int(which)%len(states)]
		c := events.Comment{ID: 99999, Author: "maria", Perm: access.Admin, Body: body, At: h.now().Add(time.Second), URL: "u", EditUnproven: which%2 == 1}
		before := string(mustJSON(t, h.st))
		res, err := Apply(h.set, h.st, c, h.now().Add(time.Minute))
		if err != nil {
			t.Fatalf("Apply: %v", err)
		}
		if string(mustJSON(t, h.st)) != before {
			t.Fatal("input mutated")
		}
		n := 0
		for _, e := range res.State.Ledger {
			if e.CommentID == c.ID {
				n++
			}
		}
		if n > 1 {
			t.Fatalf("ledgered %d times", n)
		}
		if c.EditUnproven && (res.Decision != "" || res.State.Run != h.st.Run || res.State.Step != h.st.Step) {
			t.Fatalf("an unproven edit %q moved the run: decision %q, %s/%d → %s/%d", body, res.Decision, h.st.Run, h.st.Step, res.State.Run, res.State.Step)
		}
		if res.Decision != "" {
			r := Parse(body)
			if r.Kind != grammar.Choice && !(r.Kind == grammar.Command && (r.Cmd == "retry" || r.Cmd == CmdTasksRetry)) {
				t.Fatalf("decision %q from non-choice %q", res.Decision, body)
			}
			if r.Kind == grammar.Choice && r.Letter != res.Decision {
				t.Fatalf("decision %q but the reply chose %q", res.Decision, r.Letter)
			}
		}
	})
}
