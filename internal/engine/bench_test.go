package engine

import (
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
)

// BenchmarkApplyGateAnswer measures one gate answer (the session-boundary
// question answered A, which starts the next step) on a state with some
// history: decisions, completed steps, tasks and a ledger.
func BenchmarkApplyGateAnswer(b *testing.B) {
	h := newHarness(b, jiraOff)
	h.runTo("greenfield", "decompose")
	for i := 0; i < 30; i++ {
		h.say("bob", "/autopilot status")
	}
	c := h.comment("maria", access.Write, "/autopilot done tasks")
	for i := 0; i < 20; i++ {
		c.Declared = append(c.Declared, taskN(i))
	}
	h.apply(c)
	s, set := h.st, h.set
	answer := h.comment("maria", access.Write, "A")
	now := h.now().Add(time.Minute)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Apply(set, s, answer, now)
		if err != nil || res.Decision != "A" {
			b.Fatalf("decision %q, err %v", res.Decision, err)
		}
	}
}
