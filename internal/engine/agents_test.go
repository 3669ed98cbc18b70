package engine

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// agentCfg runs every step through a comment executor mentioning @claude,
// and lists two agent accounts: an App bot and a machine user.
const agentCfg = jiraOff + "executor: {kind: comment, agent: \"@claude\"}\nagents: [\"claude[bot]\", devin-ai]\n"

func TestAgentReportsNeedPermissionUnlessABotWithNoRole(t *testing.T) {
	tests := []struct {
		name    string
		author  string
		bot     bool
		perm    access.Level
		permErr bool
		body    string
		// ledger is the expected ledger outcome ("" = deferred, not ledgered).
		ledger state.LedgerOutcome
		slug   string
	}{
		{name: "app bot the API gives no role", author: "claude[bot]", bot: true, perm: access.None, body: "/autopilot done", ledger: state.LedgerApplied, slug: "research"},
		{name: "app bot whose permission was not looked up", author: "claude[bot]", bot: true, body: "/autopilot done", ledger: state.LedgerApplied, slug: "research"},
		{name: "app bot with write", author: "claude[bot]", bot: true, perm: access.Write, body: "/autopilot done", ledger: state.LedgerApplied, slug: "research"},
		{name: "app bot with read (a public repository)", author: "claude[bot]", bot: true, perm: access.Read, body: "/autopilot done", ledger: state.LedgerApplied, slug: "research"},
		{name: "bot given triage", author: "claude[bot]", bot: true, perm: access.Triage, body: "/autopilot done", ledger: "rejected:unauthorized", slug: "problem"},
		{name: "machine user with read", author: "devin-ai", perm: access.Read, body: "/autopilot done", ledger: "rejected:unauthorized", slug: "problem"},
		{name: "machine user with write", author: "devin-ai", perm: access.Write, body: "/autopilot done", ledger: state.LedgerApplied, slug: "research"},
		{name: "machine user without a role", author: "devin-ai", perm: access.None, body: "/autopilot done", ledger: "rejected:unauthorized", slug: "problem"},
		{name: "machine user with triage", author: "devin-ai", perm: access.Triage, body: "/autopilot fail flaky", ledger: "rejected:unauthorized", slug: "problem"},
		{name: "failed lookup defers", author: "claude[bot]", bot: true, permErr: true, body: "/autopilot done", ledger: "", slug: "problem"},
		{name: "agents only report", author: "claude[bot]", bot: true, perm: access.Admin, body: "/autopilot skip not needed", ledger: state.LedgerNotCommand, slug: "problem"},
		{name: "an unlisted bot never acts", author: "helper[bot]", bot: true, perm: access.Admin, body: "/autopilot done", ledger: state.LedgerNotCommand, slug: "problem"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, agentCfg)
			h.start("greenfield")
			c := h.comment(tc.author, tc.perm, tc.body)
			c.Bot, c.PermErr = tc.bot, tc.permErr
			c.Agent = h.set.Config.IsAgent(tc.author)
			res := h.apply(c)
			want(t, "ledger", ledgerOf(res.State, c.ID), tc.ledger)
			want(t, "step", res.State.Slug, tc.slug)
			switch tc.ledger {
			case "rejected:unauthorized":
				wantDeep(t, "reactions", reactions(res.Effects, c.ID), []string{outbox.ReactConfuse})
				want(t, "one explanation", repliesTo(res.Effects, c.ID), 1)
			case "":
				want(t, "deferred: nothing written", res.Changed, false)
				want(t, "deferred: no effects", nEffects(res), 0)
			}
		})
	}
}

func TestRefusedAgentIsToldOncePerGate(t *testing.T) {
	h := newHarness(t, agentCfg)
	h.start("greenfield")
	for i := 0; i < 2; i++ {
		c := h.comment("devin-ai", access.Read, "/autopilot progress 1 drafting")
		c.Agent = true
		res := h.apply(c)
		want(t, "refused", ledgerOf(res.State, c.ID), "rejected:unauthorized")
		want(t, "replies", repliesTo(res.Effects, c.ID), 1-i)
	}
	want(t, "sub-step untouched", h.st.SubStep.Name, state.AwaitingInvocation)
}
