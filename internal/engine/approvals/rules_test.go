package approvals

import (
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/state"
)

func TestEligible(t *testing.T) {
	facts := Facts{IssueAuthor: "maria", PR: 7, PRAuthor: "devin", Pusher: "erin",
		Teams:      map[string]map[string]Membership{"ada": {"@acme/sre": Active}, "bob": {"@Acme/SRE": Pending}, "cy": {"@acme/sre": NotMember}, "gus": {"@acme/web": Active}},
		CodeOwners: []string{"@ola", "@acme/web"}, OwnedPaths: map[string]string{"@ola": "docs/", "@acme/web": "*.js"}}
	cases := []struct {
		name  string
		p     config.Approval
		login string
		want  string // evidence, or "!" + part of the refusal
	}{
		{"no list: answer_permission", config.Approval{}, "anyone", "answer_permission"},
		{"user listed, any case and @", config.Approval{Users: []string{"@Ada"}}, "ada", "listed in users"},
		{"team member", config.Approval{Teams: []string{"@acme/sre"}}, "ADA", "member of @acme/sre"},
		{"team compared without case", config.Approval{Teams: []string{"@acme/sre"}}, "bob", "!has not accepted yet"},
		{"not a member", config.Approval{Teams: []string{"@acme/sre"}}, "cy", "!it takes @acme/sre"},
		{"no answer for the team fails closed", config.Approval{Teams: []string{"@acme/sre"}}, "dee", "!Members: read"},
		{"unreadable team, but listed as a user", config.Approval{Teams: []string{"@acme/sre"}, Users: []string{"dee"}}, "dee", "listed in users"},
		{"code owner", config.Approval{CodeOwners: true}, "ola", "code owner of docs/"},
		{"code owner through a team", config.Approval{CodeOwners: true}, "gus", "code owner via @acme/web of *.js"},
		{"code owners off", config.Approval{Users: []string{"x"}}, "ola", "!it takes @x"},
		{"issue author", config.Approval{PreventSelf: true}, "Maria", "!opened this issue"},
		{"PR author", config.Approval{PreventSelf: true, Users: []string{"devin"}}, "devin", "!opened PR #7"},
		{"pusher", config.Approval{PreventSelf: true, Teams: []string{"@acme/sre"}}, "erin", "!pushed the head of PR #7"},
		{"self allowed without prevent_self", config.Approval{Users: []string{"maria"}}, "maria", "listed in users"},
	}
	for _, c := range cases {
		ev, why := Eligible(c.p, c.login, facts)
		if refusal, ok := strings.CutPrefix(c.want, "!"); ok {
			if ev != "" || !strings.Contains(why, refusal) {
				t.Errorf("%s: evidence %q, refused %q; want refused containing %q", c.name, ev, why, refusal)
			}
			continue
		}
		if ev != c.want || why != "" {
			t.Errorf("%s: evidence %q, refused %q; want evidence %q", c.name, ev, why, c.want)
		}
	}
}

func TestRefusedVoteDropsThePersonsEarlierVote(t *testing.T) {
	p := config.Approval{Teams: []string{"@acme/sre"}, Min: 2}
	f := Facts{Teams: map[string]map[string]Membership{"ada": {"@acme/sre": Active}}}
	r := Cast(p, Gate{}, state.Ballot{}, state.Vote{By: "ada", Option: "A"}, f)
	f.Teams["ada"]["@acme/sre"] = NotMember
	r = Cast(p, Gate{}, r.Ballot, state.Vote{By: "ada", Option: "A"}, f)
	if r.Refused == "" || len(r.Ballot.Votes) != 0 || len(r.Dropped) != 1 {
		t.Fatalf("after leaving the team: %+v; want refused, the earlier vote dropped, an empty ballot", r)
	}
}

func TestExpiry(t *testing.T) {
	approve := Gate{Options: []Option{{Letter: "A"}, {Letter: "B"}}, Recommend: "B"}
	reject := Gate{Options: []Option{{Letter: "A"}, {Letter: "B", Rejecting: true}, {Letter: "C", Rejecting: true}}}
	cases := []struct {
		on     string
		g      Gate
		letter string
		stop   bool
	}{
		{config.ExpireReject, reject, "B", false},
		{config.ExpireReject, approve, "", true}, // no rejecting option: stop
		{config.ExpireDefault, approve, "B", false},
		{config.ExpireDefault, reject, "", true}, // no recommended option: stop
		{config.ExpireStop, approve, "", true},
	}
	for _, c := range cases {
		letter, stop := Expiry(config.Approval{OnExpire: c.on}, c.g)
		if letter != c.letter || stop != c.stop {
			t.Errorf("%s on %+v: %q stop=%v, want %q stop=%v", c.on, c.g, letter, stop, c.letter, c.stop)
		}
	}
}

func TestDeadlinesAreDueOnce(t *testing.T) {
	p := config.Approval{RemindAfter: config.Wait(time.Hour), EscalateTo: []string{"@acme/leads"}, ExpireAfter: config.Wait(5 * time.Hour)}
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	var b state.Ballot
	steps := []struct {
		after time.Duration
		want  Due
	}{
		{59 * time.Minute, Due{}},
		{time.Hour, Due{Remind: true}},
		{time.Hour, Due{}},
		{3 * time.Hour, Due{Escalate: true}}, // twice remind_after
		{4 * time.Hour, Due{}},
		{5 * time.Hour, Due{Expire: true}},
	}
	for _, s := range steps {
		d := Deadlines(p, at, at.Add(s.after), b)
		if d != s.want {
			t.Fatalf("after %v: %+v, want %+v", s.after, d, s.want)
		}
		b = Mark(b, d, at.Add(s.after))
	}
	// A sweep that missed every deadline only expires the gate.
	if d := Deadlines(p, at, at.Add(6*time.Hour), state.Ballot{}); d != (Due{Expire: true}) {
		t.Fatalf("late sweep: %+v", d)
	}
}

func TestSpan(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Second: "under a minute", 45 * time.Minute: "45 min", 3*time.Hour + 10*time.Minute: "3 h 10 min",
		52 * time.Hour: "2 d 4 h", 120 * time.Hour: "5 d", 2 * time.Hour: "2 h",
	} {
		if got := Span(d); got != want {
			t.Errorf("Span(%v) = %q, want %q", d, got, want)
		}
	}
}
