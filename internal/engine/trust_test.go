package engine

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
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
			c := h.comment("maria", access.Admin, tc.body)
			if tc.agent {
				c.Author, c.Bot, c.Agent, c.Perm = "claude[bot]", true, true, access.None
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
			if len(effectsOf(res.Effects, state.EffReact)) != 1 {
				t.Errorf("reactions = %+v", effectsOf(res.Effects, state.EffReact))
			}
			// Seen again (a redelivery, the sweep): nothing more.
			again := h.apply(c)
			want(t, "again: changed", again.Changed, false)
			want(t, "again: effects", nEffects(again), 0)
			// The author posts it anew: applied.
			fresh := h.comment(c.Author, c.Perm, tc.body)
			fresh.Bot, fresh.Agent = c.Bot, c.Agent
			res = h.apply(fresh)
			if res.State.Ledger[len(res.State.Ledger)-1].Outcome != state.LedgerApplied && res.Decision == "" && res.State.Slug == before.Slug && res.State.Run == before.Run {
				t.Errorf("the new comment was not applied: ledger %+v", res.State.Ledger)
			}
		})
	}
	t.Run("read-only command", func(t *testing.T) {
		h := newHarness(t, jiraOff)
		h.start("greenfield")
		c := h.comment("maria", access.Admin, "/autopilot status")
		c.EditUnproven = true
		res := h.apply(c)
		if hasBody(res.Effects, "was edited before autopilot processed it") {
			t.Errorf("a status command was refused: %q", bodies(res.Effects))
		}
	})
}

// TestTrustedPullRule is the trusted-PR rule as a table (PRODUCT §8).
func TestTrustedPullRule(t *testing.T) {
	set := settingsFor(t, reviewCfg)
	stale := settingsFor(t, reviewCfg+"keep_stale_approvals: true\n")
	approve := func(who string, perm access.Level, commit string) evidence.PullApproval {
		return evidence.PullApproval{ID: 7, Reviewer: who, Perm: perm, CommitSHA: commit}
	}
	tests := []struct {
		name  string
		set   machine.Settings
		p     *evidence.PullFacts
		trust bool
		why   string
	}{
		{"not read", set, nil, false, "could not be read"},
		{"author with write, own branch", set, &evidence.PullFacts{Number: 40, Author: "devin", AuthorPerm: access.Write, HeadSHA: testHead, Links: true}, true, ""},
		{"no longer links the issue", set, &evidence.PullFacts{Number: 40, Author: "devin", AuthorPerm: access.Write, HeadSHA: testHead}, false, "no longer links"},
		{"author with read", set, &evidence.PullFacts{Number: 40, Author: "randy", AuthorPerm: access.Read, HeadSHA: testHead, Links: true}, false, "@randy has less than write"},
		{"author lookup failed", set, &evidence.PullFacts{Number: 40, Author: "devin", AuthorPermErr: true, AuthorPerm: access.Admin, HeadSHA: testHead, Links: true}, false, "less than write"},
		{"fork by a writer", set, &evidence.PullFacts{Number: 40, Author: "devin", AuthorPerm: access.Write, Fork: true, HeadSHA: testHead, Links: true}, false, "on a fork"},
		{"fork approved on its head", set, &evidence.PullFacts{Number: 40, Author: "randy", AuthorPerm: access.Read, Fork: true, HeadSHA: testHead, Links: true,
			Approvals: []evidence.PullApproval{approve("maria", access.Admin, testHead)}}, true, ""},
		{"fork approved on an older commit", set, &evidence.PullFacts{Number: 40, Author: "randy", AuthorPerm: access.Read, Fork: true, HeadSHA: testHead, Links: true,
			Approvals: []evidence.PullApproval{approve("maria", access.Admin, "0123456")}}, false, "on a fork"},
		{"fork approved on an older commit, stale approvals kept", stale, &evidence.PullFacts{Number: 40, Author: "randy", AuthorPerm: access.Read, Fork: true, HeadSHA: testHead, Links: true,
			Approvals: []evidence.PullApproval{approve("maria", access.Admin, "0123456")}}, true, ""},
		{"approved by a reader", set, &evidence.PullFacts{Number: 40, Author: "randy", AuthorPerm: access.Read, HeadSHA: testHead, Links: true,
			Approvals: []evidence.PullApproval{approve("rita", access.Read, testHead)}}, false, "less than write"},
		{"approved by its author", set, &evidence.PullFacts{Number: 40, Author: "randy", AuthorPerm: access.Read, Fork: true, HeadSHA: testHead, Links: true,
			Approvals: []evidence.PullApproval{approve("randy", access.Admin, testHead)}}, false, "on a fork"},
		{"approver lookup failed", set, &evidence.PullFacts{Number: 40, Author: "randy", AuthorPerm: access.Read, HeadSHA: testHead, Links: true,
			Approvals: []evidence.PullApproval{{ID: 7, Reviewer: "maria", Perm: access.Admin, PermErr: true, CommitSHA: testHead}}}, false, "less than write"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := TrustedPull(tc.set, nil, tc.p)
			want(t, "trusted", ok, tc.trust)
			if !strings.Contains(why, tc.why) {
				t.Errorf("reason %q lacks %q", why, tc.why)
			}
		})
	}
}

// TestChecksCountOnlyOnATrustedPRsCurrentHead: green (or red) checks of an
// untrusted PR, of a PR that no longer links the issue, or of a commit that
// is not the head change nothing; a trusted PR's green head completes QA
// and the handoff names the PR, head and checks.
func TestChecksCountOnlyOnATrustedPRsCurrentHead(t *testing.T) {
	untrusted := func() *evidence.PullFacts {
		return &evidence.PullFacts{Number: 40, Author: "randy", AuthorPerm: access.Read, Fork: true, HeadSHA: testHead, Links: true}
	}
	for _, conclusion := range []string{"success", "failure"} {
		for name, p := range map[string]*evidence.PullFacts{
			"untrusted fork": untrusted(),
			"unlinked":       {Number: 40, Author: "devin", AuthorPerm: access.Write, HeadSHA: testHead},
			"not the head":   {Number: 40, Author: "devin", AuthorPerm: access.Write, HeadSHA: "9999999", Links: true},
			"not read":       nil,
		} {
			h := newHarness(t, reviewCfg)
			reviewLoopTo(t, h, "review-loop", "qa")
			res := h.apply(events.Checks{PR: 40, SHA: testHead, State: conclusion, Failed: []string{"x"}, URL: prURL + "/checks", Pull: p})
			if res.Changed || res.State.Slug != "qa" || nEffects(res) != 0 {
				t.Errorf("%s, %s: changed %v, at %s, effects %q", name, conclusion, res.Changed, res.State.Slug, bodies(res.Effects))
			}
		}
	}
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "qa")
	p := untrusted()
	p.Approvals = []evidence.PullApproval{{ID: 9, Reviewer: "maria", Perm: access.Admin, CommitSHA: testHead}}
	res := h.apply(events.Checks{PR: 40, SHA: testHead, State: "success", URL: prURL + "/checks", IDs: []int64{5, 6}, Pull: p})
	want(t, "approved fork's green head completes QA", res.State.Run, state.RunDone)
	ho := res.State.Review.Handoffs["qa"]
	if ho.PR != 40 || ho.HeadSHA != testHead || len(ho.Checks) != 2 || ho.Checks[0] != 5 {
		t.Errorf("qa handoff = %+v", ho)
	}
}

// TestApprovalCountsOnlyOnTheCurrentHead: an approval given before a push
// is noted once and not counted, unless keep_stale_approvals is set; the
// handoff names the PR, head and review.
func TestApprovalCountsOnlyOnTheCurrentHead(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "code-review")
	rv := approval("bob", "devin")
	rv.Pull.HeadSHA = "9999999" // pushed after bob approved
	res := h.apply(rv)
	want(t, "stale approval: still reviewing", res.State.Slug, "code-review")
	if !hasBody(res.Effects, "was given on commit abcdef1, but the PR's head is now 9999999") {
		t.Errorf("notice = %q", bodies(res.Effects))
	}
	want(t, "noted once", nEffects(h.apply(rv)), 0)
	unlinked := approval("bob", "devin")
	unlinked.Pull.Links = false
	want(t, "unlinked PR's approval", h.apply(unlinked).State.Slug, "code-review")
	fresh := approval("bob", "devin")
	res = h.apply(fresh)
	want(t, "current head's approval counts", res.State.Slug, "qa")
	ho := res.State.Review.Handoffs["code-review"]
	if ho.PR != 40 || ho.HeadSHA != testHead || ho.Review != fresh.ID {
		t.Errorf("code-review handoff = %+v", ho)
	}

	k := newHarness(t, reviewCfg+"keep_stale_approvals: true\n")
	reviewLoopTo(t, k, "review-loop", "code-review")
	rv = approval("bob", "devin")
	rv.Pull.HeadSHA = "9999999"
	want(t, "kept stale approval counts", k.apply(rv).State.Slug, "qa")
}

// TestLinkVouchedByAPermittedEditor is the "or a person with that permission
// linked it" part of the trusted-PR rule (PRODUCT §8) as a table: each case
// applies pull_request opened/edited deliveries to a run at QA, then asks
// whether a reader's PR, its description as read now, is trusted.
func TestLinkVouchedByAPermittedEditor(t *testing.T) {
	const linked = "CSV export.\n\nFixes #1"
	edit := func(sender string, perm access.Level, body string) *evidence.PullEdit {
		return &evidence.PullEdit{Sender: sender, Perm: perm, BodyChanged: true, Links: strings.Contains(body, "Fixes #1"), Delivered: body, Now: body}
	}
	stale := edit("maria", access.Admin, linked)
	stale.Now = linked + "\n\nand more"
	lookupFailed := edit("maria", access.Admin, linked)
	lookupFailed.PermErr = true
	titleOnly := edit("maria", access.Admin, linked)
	titleOnly.BodyChanged = false
	readerTitle := edit("randy", access.Read, linked)
	readerTitle.BodyChanged = false
	tests := []struct {
		name  string
		edits []*evidence.PullEdit
		body  string // the description read with the checks
		fork  bool
		trust bool
		by    string // the vouch the state keeps
	}{
		{"linked by a maintainer's edit", []*evidence.PullEdit{edit("maria", access.Admin, linked)}, linked, false, true, "maria"},
		{"opened by a writer for a reader", []*evidence.PullEdit{edit("devin", access.Write, linked)}, linked, false, true, "devin"},
		{"fork linked by a maintainer still needs an approval", []*evidence.PullEdit{edit("maria", access.Admin, linked)}, linked, true, false, "maria"},
		{"linked by a triage user", []*evidence.PullEdit{edit("tess", access.Triage, linked)}, linked, false, false, ""},
		{"linked by the reader", []*evidence.PullEdit{edit("randy", access.Read, linked)}, linked, false, false, ""},
		{"maintainer's lookup failed", []*evidence.PullEdit{lookupFailed}, linked, false, false, ""},
		{"description changed before the delivery was processed", []*evidence.PullEdit{stale}, linked + "\n\nand more", false, false, ""},
		{"description changed since the vouch (delivery lost)", []*evidence.PullEdit{edit("maria", access.Admin, linked)}, linked + "\n\nFixes #1 again", false, false, "maria"},
		{"reader removed and re-added the link", []*evidence.PullEdit{edit("maria", access.Admin, linked), edit("randy", access.Read, linked)}, linked, false, false, ""},
		{"reader edited only the title", []*evidence.PullEdit{edit("maria", access.Admin, linked), readerTitle}, linked, false, false, ""},
		{"maintainer edited only the title", []*evidence.PullEdit{edit("maria", access.Admin, linked), titleOnly}, linked, false, true, "maria"},
		{"maintainer title edit vouches for nothing", []*evidence.PullEdit{titleOnly}, linked, false, false, ""},
		{"maintainer unlinked it", []*evidence.PullEdit{edit("maria", access.Admin, linked), edit("maria", access.Admin, "CSV export.")}, linked, false, false, ""},
		{"re-linked by a maintainer after the reader's edit", []*evidence.PullEdit{edit("maria", access.Admin, linked), edit("randy", access.Read, linked), edit("alex", access.Write, linked)}, linked, false, true, "alex"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, reviewCfg)
			reviewLoopTo(t, h, "review-loop", "qa")
			for _, e := range tc.edits {
				h.apply(events.PRLinked{PR: 41, URL: prURL, Edit: e})
			}
			by := ""
			for _, v := range h.st.LinkVouches {
				if v.PR == 41 {
					by = v.By
				}
			}
			want(t, "vouch kept by", by, tc.by)
			p := &evidence.PullFacts{Number: 41, Author: "randy", AuthorPerm: access.Read, Fork: tc.fork, HeadSHA: testHead, Links: strings.Contains(tc.body, "Fixes #1"), Body: tc.body}
			ok, why := TrustedPull(h.set, h.st, p)
			want(t, "trusted", ok, tc.trust)
			// The checks of the PR's head complete QA exactly when it is trusted.
			res := h.apply(events.Checks{PR: 41, SHA: testHead, State: "success", URL: prURL + "/checks", Pull: p})
			want(t, "QA completed ("+why+")", res.State.Slug != "qa", tc.trust)
		})
	}
}
