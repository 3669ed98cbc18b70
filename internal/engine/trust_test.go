package engine

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestEditedBeforeProcessingIsRefusedOnce: an answer, command or executor
// report whose text its author cannot be shown to have written is refused
// once (😕 and a reply asking for a new comment) and never applied later;
// a read-only command is answered as usual, and a new comment applies.
func TestEditedBeforeProcessingIsRefusedOnce(t *testing.T) {
	tests := []struct {
		name  string
		setup func(h *harness)
		body  string
		agent bool
	}{
		{name: "gate answer", body: "A", setup: func(h *harness) {
			h.runTo("greenfield", "decompose")
			h.done("tasks")
		}},
		{name: "executor report", body: "/autopilot done problem statement", setup: func(h *harness) { h.start("greenfield") }},
		{name: "agent report", body: "/autopilot done problem statement", agent: true, setup: func(h *harness) { h.start("greenfield") }},
		{name: "stop command", body: "/autopilot stop", setup: func(h *harness) { h.start("greenfield") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, jiraOff+"agents: [\"claude[bot]\"]\n")
			tc.setup(h)
			before := h.st
			c := h.comment("maria", forge.PermAdmin, tc.body)
			if tc.agent {
				c.Author, c.Bot, c.Agent, c.Perm = "claude[bot]", true, true, forge.PermNone
			}
			c.EditUnproven = true
			res := h.apply(c)
			s := res.State
			want(t, "step unchanged", s.Slug, before.Slug)
			want(t, "run unchanged", s.Run, before.Run)
			want(t, "gate unchanged", s.Gate == nil, before.Gate == nil)
			want(t, "no decision", res.Decision, "")
			want(t, "ledger", s.Ledger[len(s.Ledger)-1], state.LedgerEntry{CommentID: c.ID, Outcome: "rejected:edited"})
			if !hasBody(res.Effects, "was edited before autopilot processed it", "post your answer or command as a new comment") {
				t.Errorf("reply = %q", bodies(res.Effects))
			}
			if len(effectsOf(res.Effects, EffReact)) != 1 {
				t.Errorf("reactions = %+v", effectsOf(res.Effects, EffReact))
			}
			// Seen again (a redelivery, the sweep): nothing more.
			again := h.apply(c)
			want(t, "again: changed", again.Changed, false)
			want(t, "again: effects", len(again.Effects), 0)
			// The author posts it anew: applied.
			fresh := h.comment(c.Author, c.Perm, tc.body)
			fresh.Bot, fresh.Agent = c.Bot, c.Agent
			res = h.apply(fresh)
			if res.State.Ledger[len(res.State.Ledger)-1].Outcome != OutApplied && res.Decision == "" && res.State.Slug == before.Slug && res.State.Run == before.Run {
				t.Errorf("the new comment was not applied: ledger %+v", res.State.Ledger)
			}
		})
	}
	t.Run("read-only command", func(t *testing.T) {
		h := newHarness(t, jiraOff)
		h.start("greenfield")
		c := h.comment("maria", forge.PermAdmin, "/autopilot status")
		c.EditUnproven = true
		res := h.apply(c)
		if hasBody(res.Effects, "was edited before autopilot processed it") {
			t.Errorf("a status command was refused: %q", bodies(res.Effects))
		}
	})
}
