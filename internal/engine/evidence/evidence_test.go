package evidence

import (
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/state"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestTrusted(t *testing.T) {
	rule := Rule{Answer: access.Write}
	base := func() *PullFacts {
		return &PullFacts{Number: 7, Author: "alice", AuthorPerm: access.Read, HeadSHA: "head2", Links: true, Body: "Fixes #1"}
	}
	approval := func(who string, perm access.Level, sha string) PullApproval {
		return PullApproval{ID: 1, Reviewer: who, Perm: perm, CommitSHA: sha}
	}
	vouch := []state.LinkVouch{{PR: 7, By: "maint", Body: bodyHash("Fixes #1")}}
	cases := []struct {
		name   string
		rule   Rule
		vs     []state.LinkVouch
		edit   func(p *PullFacts)
		nilPR  bool
		want   bool
		reason string // substring of the reason when not trusted
	}{
		{name: "unreadable PR", nilPR: true, reason: "could not be read"},
		{name: "no longer links", edit: func(p *PullFacts) { p.Links = false; p.AuthorPerm = access.Admin }, reason: "no longer links"},
		{name: "same-repo author with permission", edit: func(p *PullFacts) { p.AuthorPerm = access.Write }, want: true},
		{name: "same-repo author above permission", edit: func(p *PullFacts) { p.AuthorPerm = access.Admin }, want: true},
		{name: "same-repo author below permission", reason: "its author @alice has less than write"},
		{name: "author permission lookup failed", edit: func(p *PullFacts) { p.AuthorPerm = access.Admin; p.AuthorPermErr = true }, reason: "less than write"},
		{name: "fork author with permission", edit: func(p *PullFacts) { p.Fork = true; p.AuthorPerm = access.Admin }, reason: "head branch is on a fork"},
		{name: "fork approved on current head", edit: func(p *PullFacts) {
			p.Fork = true
			p.Approvals = []PullApproval{approval("bob", access.Write, "head2")}
		}, want: true},
		{name: "fork approved on an old head", edit: func(p *PullFacts) {
			p.Fork = true
			p.Approvals = []PullApproval{approval("bob", access.Write, "head1")}
		}, reason: "fork"},
		{name: "fork approved on old head, keep stale", rule: Rule{Answer: access.Write, KeepStale: true}, edit: func(p *PullFacts) {
			p.Fork = true
			p.Approvals = []PullApproval{approval("bob", access.Write, "head1")}
		}, want: true},
		{name: "approval without commit", edit: func(p *PullFacts) {
			p.Approvals = []PullApproval{approval("bob", access.Write, "")}
		}, reason: "not trusted"},
		{name: "approval by someone below permission", edit: func(p *PullFacts) {
			p.Approvals = []PullApproval{approval("bob", access.Triage, "head2")}
		}, reason: "not trusted"},
		{name: "approval whose permission lookup failed", edit: func(p *PullFacts) {
			a := approval("bob", access.Admin, "head2")
			a.PermErr = true
			p.Approvals = []PullApproval{a}
		}, reason: "not trusted"},
		{name: "self-approval does not count", edit: func(p *PullFacts) {
			p.Approvals = []PullApproval{approval("ALICE", access.Admin, "head2")}
		}, reason: "not trusted"},
		{name: "same-repo link vouched", vs: vouch, want: true},
		{name: "fork link vouched still needs approval", vs: vouch, edit: func(p *PullFacts) { p.Fork = true }, reason: "fork"},
		{name: "vouched description changed since", vs: vouch, edit: func(p *PullFacts) { p.Body = "Fixes #1 and more" }, reason: "not trusted"},
		{name: "vouch for another PR", vs: []state.LinkVouch{{PR: 8, By: "maint", Body: bodyHash("Fixes #1")}}, reason: "not trusted"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.rule
			if r.Answer == "" {
				r = rule
			}
			var p *PullFacts
			if !c.nilPR {
				p = base()
				if c.edit != nil {
					c.edit(p)
				}
			}
			got, reason := r.Trusted(c.vs, p)
			if got != c.want {
				t.Fatalf("Trusted = %v (%q), want %v", got, reason, c.want)
			}
			if got && reason != "" {
				t.Errorf("trusted with a reason %q", reason)
			}
			if !got && !strings.Contains(reason, c.reason) {
				t.Errorf("reason %q does not contain %q", reason, c.reason)
			}
		})
	}
}

func TestVouch(t *testing.T) {
	rule := Rule{Answer: access.Write}
	edit := func(perm access.Level, links bool, delivered, now string) *PullEdit {
		return &PullEdit{Sender: "maint", Perm: perm, BodyChanged: true, Links: links, Delivered: delivered, Now: now}
	}
	p := &PullFacts{Number: 7, Body: "Fixes #1"}

	vs, changed := rule.Vouch(nil, 7, nil)
	if changed || len(vs) != 0 {
		t.Fatalf("nil edit: %v %v", vs, changed)
	}
	vs, changed = rule.Vouch(nil, 7, edit(access.Read, true, "Fixes #1", "Fixes #1"))
	if changed || LinkedBy(vs, p) != "" {
		t.Fatalf("a sender below permission vouched: %v", vs)
	}
	vs, changed = rule.Vouch(nil, 7, edit(access.Write, true, "Fixes #1", "Fixes #2"))
	if changed || LinkedBy(vs, p) != "" {
		t.Fatalf("a description changed since delivery vouched: %v", vs)
	}
	vs, changed = rule.Vouch(nil, 7, edit(access.Write, true, "Fixes #1", "Fixes #1"))
	if !changed || LinkedBy(vs, p) != "maint" {
		t.Fatalf("permitted edit: %v %v", vs, changed)
	}
	if LinkedBy(vs, &PullFacts{Number: 7, Body: "Fixes #1 edited"}) != "" {
		t.Error("a vouch survived a changed description")
	}
	if _, again := rule.Vouch(vs, 7, edit(access.Write, true, "Fixes #1", "Fixes #1")); again {
		t.Error("the same vouch recorded twice reported a change")
	}
	title := edit(access.Write, false, "x", "y")
	title.BodyChanged = false
	if _, ch := rule.Vouch(vs, 7, title); ch || LinkedBy(vs, p) != "maint" {
		t.Error("a permitted title-only edit changed the vouch")
	}
	other := edit(access.Read, true, "Fixes #1", "Fixes #1")
	other.BodyChanged = false // even a title edit by someone without permission drops it
	vs2, ch := rule.Vouch(append([]state.LinkVouch(nil), vs...), 7, other)
	if !ch || LinkedBy(vs2, p) != "" {
		t.Errorf("an edit without permission kept the vouch: %v %v", vs2, ch)
	}
	vs3, ch := rule.Vouch(append([]state.LinkVouch(nil), vs...), 7, edit(access.Admin, false, "no link", "no link"))
	if !ch || len(vs3) != 0 {
		t.Errorf("an unlinking edit kept the vouch: %v %v", vs3, ch)
	}
	permErr := edit(access.Admin, true, "Fixes #1", "Fixes #1")
	permErr.PermErr = true
	vs4, ch := rule.Vouch(append([]state.LinkVouch(nil), vs...), 7, permErr)
	if !ch || len(vs4) != 0 {
		t.Errorf("a failed permission lookup kept the vouch: %v %v", vs4, ch)
	}
}

func TestCounts(t *testing.T) {
	ex := &state.Execution{StartedAt: t0}
	cases := []struct {
		state string
		at    time.Time
		ex    *state.Execution
		want  bool
	}{
		{"APPROVED", t0.Add(time.Second), ex, true},
		{"CHANGES_REQUESTED", t0.Add(time.Second), ex, true},
		{"APPROVED", t0, ex, true},
		{"APPROVED", t0.Add(-time.Second), ex, false},
		{"CHANGES_REQUESTED", t0.Add(-time.Hour), ex, false},
		{"COMMENTED", t0.Add(time.Second), ex, false},
		{"DISMISSED", t0.Add(time.Second), ex, false},
		{"PENDING", t0.Add(time.Second), ex, false},
		{"APPROVED", t0.Add(-time.Hour), nil, true},
		{"COMMENTED", t0, nil, false},
	}
	for _, c := range cases {
		if got := Counts(ReviewRead{State: c.state, At: c.at}, c.ex); got != c.want {
			t.Errorf("Counts(%s at %s, exec nil=%v) = %v, want %v", c.state, c.at.Sub(t0), c.ex == nil, got, c.want)
		}
	}
}

func TestOnHead(t *testing.T) {
	p := &PullFacts{HeadSHA: "h"}
	cases := []struct {
		keep   bool
		commit string
		want   bool
	}{
		{false, "h", true}, {false, "old", false}, {false, "", false},
		{true, "old", true}, {true, "", true},
	}
	for _, c := range cases {
		if got := (Rule{KeepStale: c.keep}).OnHead(p, c.commit); got != c.want {
			t.Errorf("OnHead(keep=%v, %q) = %v, want %v", c.keep, c.commit, got, c.want)
		}
	}
}
