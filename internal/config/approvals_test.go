package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

func TestApprovalsParse(t *testing.T) {
	c := mustParse(t, `approvals:
  approval:
    teams: ["@acme/sre"]
    users: [ada, "@bob"]
    codeowners: true
    min: 2
    prevent_self: true
    reject_wins: true
    remind_after: 1d
    escalate_to: ["@acme/leads", carol]
    escalate_after: 2d12h
    expire_after: 7d
    on_expire: reject
  confirm-implement:
    users: [ada]
`)
	a, ok := c.ApprovalFor(state.GateApproval("plan"))
	if !ok {
		t.Fatal("no policy for approval-plan")
	}
	want := Approval{Teams: []string{"@acme/sre"}, Users: []string{"ada", "@bob"}, CodeOwners: true, Min: 2, PreventSelf: true, RejectWins: true,
		RemindAfter: Wait(24 * time.Hour), EscalateTo: []string{"@acme/leads", "carol"}, EscalateAfter: Wait(60 * time.Hour), ExpireAfter: Wait(7 * 24 * time.Hour), OnExpire: ExpireReject}
	if !equalApproval(a, want) {
		t.Fatalf("approval-plan: %+v\nwant %+v", a, want)
	}
	if b, ok := c.ApprovalFor(state.GateConfirm("implement")); !ok || b.Min != 1 || len(b.Users) != 1 {
		t.Fatalf("confirm-implement: %+v %v, want users [ada] min 1 (the default)", b, ok)
	}
	if _, ok := c.ApprovalFor(state.GateFlowSelect); ok {
		t.Fatal("flow-select has no policy")
	}
}

func TestApprovalForPrefersKindThenStepThenFamily(t *testing.T) {
	c := mustParse(t, "approvals:\n  approval: {min: 1}\n  plan: {min: 2, users: [a, b]}\n  approval-plan: {min: 3, users: [a, b, c]}\n  skip: {min: 4}\n")
	cases := []struct {
		kind state.GateKind
		min  int
	}{
		{state.GateApproval("plan"), 3},
		{state.GateSkip("plan"), 2},
		{state.GateApproval("implement"), 1},
		{state.GateSkip("implement"), 4},
		{state.GateRollback("implement"), 0},
	}
	for _, k := range cases {
		a, ok := c.ApprovalFor(k.kind)
		if got := map[bool]int{true: a.Min}[ok]; got != k.min {
			t.Errorf("%s: min %d (found %v), want %d", k.kind, got, ok, k.min)
		}
	}
}

func TestApprovalsErrorsNameLineAndField(t *testing.T) {
	cases := []struct {
		name, src, field, msg string
		line                  int
	}{
		{"team without org", "approvals:\n  approval:\n    teams: [sre]\n", "approvals.approval.teams[0]", `"sre": want a team as @org/team-slug (e.g. @acme/sre)`, 3},
		{"team with spaces", "approvals:\n  approval:\n    teams: ['@acme/site reliability']\n", "approvals.approval.teams[0]", "want a team as @org/team-slug", 3},
		{"team under users", "approvals:\n  approval:\n    users: ['@acme/sre']\n", "approvals.approval.users[0]", "is a team; list it under teams", 3},
		{"bad user", "approvals:\n  approval:\n    users: [not a login]\n", "approvals.approval.users[0]", "is not a GitHub login", 3},
		{"min above users", "approvals:\n  approval:\n    users: [ada, bob, Ada]\n    min: 3\n", "approvals.approval.min", "3 approvals, but only 2 people can ever vote (users: ada, bob)", 4},
		{"min below one", "approvals:\n  approval:\n    min: -1\n", "approvals.approval.min", "want 1 or more", 3},
		{"bad duration", "approvals:\n  approval:\n    remind_after: soon\n", "approvals.approval.remind_after", `"soon" is not a duration (e.g. 4h, 2d, 1d12h)`, 3},
		{"expire without on_expire", "approvals:\n  approval:\n    expire_after: 2d\n", "approvals.approval.on_expire", "say what happens when the time runs out: reject, default or stop", 2},
		{"on_expire without expire_after", "approvals:\n  approval:\n    on_expire: stop\n", "approvals.approval.on_expire", "needs expire_after", 3},
		{"bad on_expire", "approvals:\n  approval:\n    expire_after: 2d\n    on_expire: approve\n", "approvals.approval.on_expire", `"approve": want reject, default or stop`, 4},
		{"escalate_to without a time", "approvals:\n  approval:\n    escalate_to: [ada]\n", "approvals.approval.escalate_to", "needs remind_after or escalate_after", 3},
		{"bad escalate_to", "approvals:\n  approval:\n    remind_after: 1h\n    escalate_to: [acme/sre]\n", "approvals.approval.escalate_to[0]", "want a login (ada) or a team (@acme/sre)", 4},
		{"expiry before reminder", "approvals:\n  approval:\n    remind_after: 2d\n    expire_after: 1d\n    on_expire: stop\n", "approvals.approval.expire_after", "must come after remind_after (2d)", 4},
		{"unknown gate", "approvals:\n  launch: {min: 1}\n", "approvals.launch", "not a gate kind or step", 2},
		{"unknown step after a kind", "approvals:\n  deploy-to-mars: {min: 1}\n", "approvals.deploy-to-mars", `no flow has a step "to-mars"`, 2},
		{"unknown step in kind", "approvals:\n  approval-nowhere: {min: 1}\n", "approvals.approval-nowhere", "no flow has a step \"nowhere\"", 2},
		{"unknown key", "approvals:\n  approval:\n    quorum: 2\n", "approvals.approval.quorum", `unknown key "quorum"`, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantError(t, c.src, c.line, c.field, c.msg) })
	}
}

// wantError checks that src fails to parse with an error on line naming
// field, its message containing msg.
func wantError(t *testing.T, src string, line int, field, msg string) {
	t.Helper()
	_, err := Parse([]byte(src))
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("Parse = %v, want a *config.Error", err)
	}
	if ce.Line != line || ce.Field != field || !strings.Contains(ce.Msg, msg) {
		t.Fatalf("got line %d field %q msg %q\nwant line %d field %q msg containing %q", ce.Line, ce.Field, ce.Msg, line, field, msg)
	}
}

func TestApprovalsMinIsFreeWithTeamsOrCodeowners(t *testing.T) {
	for _, src := range []string{
		"approvals:\n  approval: {users: [ada], teams: ['@acme/sre'], min: 5}\n",
		"approvals:\n  approval: {codeowners: true, min: 3}\n",
		"approvals:\n  approval: {min: 4}\n", // anyone with answer_permission
	} {
		mustParse(t, src)
	}
}

func equalApproval(a, b Approval) bool {
	return strings.Join(a.Teams, ",") == strings.Join(b.Teams, ",") && strings.Join(a.Users, ",") == strings.Join(b.Users, ",") &&
		strings.Join(a.EscalateTo, ",") == strings.Join(b.EscalateTo, ",") && a.CodeOwners == b.CodeOwners && a.Min == b.Min &&
		a.PreventSelf == b.PreventSelf && a.RejectWins == b.RejectWins && a.RemindAfter == b.RemindAfter &&
		a.EscalateAfter == b.EscalateAfter && a.ExpireAfter == b.ExpireAfter && a.OnExpire == b.OnExpire
}

func TestParseWait(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"4h", 4 * time.Hour, true}, {"2d", 48 * time.Hour, true}, {"1d12h", 36 * time.Hour, true}, {"90m", 90 * time.Minute, true},
		{"0d", 0, false}, {"d", 0, false}, {"-1h", 0, false}, {"2 days", 0, false}, {"1d-1h", 0, false}, {"", 0, false}, {"99999d", 0, false},
	}
	for _, c := range cases {
		got, err := ParseWait(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseWait(%q) = %v, %v; want %v ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
	if s := Wait(36 * time.Hour).String(); s != "1d12h" {
		t.Errorf("String = %q", s)
	}
}

// FuzzParseWait: a parsed wait is never negative and writes back to the
// same length of time.
func FuzzParseWait(f *testing.F) {
	for _, s := range []string{"4h", "2d", "1d12h", "90m", "0d", "3650d23h59m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseWait(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("%q: negative %v", s, d)
		}
		if d == 0 {
			return
		}
		back, err := ParseWait(Wait(d).String())
		if err != nil || back != d {
			t.Fatalf("%q = %v; String %q reads back as %v, %v", s, d, Wait(d).String(), back, err)
		}
	})
}
