package approvals

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/transcript"
)

var update = flag.Bool("update", false, "rewrite the transcripts' outputs")

// script is one transcript's world: a policy, a gate, the facts and the
// ballot, on the recorded clock (2026-03-02 09:00 UTC when the gate opens).
type script struct {
	p      config.Approval
	g      Gate
	f      Facts
	b      state.Ballot
	opened time.Time
	now    time.Time
	done   bool
}

// Directives (see testdata/README.md).
func (s *script) do(c *transcript.Case) string {
	switch c.Cmd {
	case "policy":
		cfg, err := config.Parse([]byte("approvals:\n  approval:\n" + indent(c.Input, "    ")))
		if err != nil {
			return "error: " + err.Error()
		}
		s.p, _ = cfg.ApprovalFor(state.GateApproval("x"))
		s.g = Gate{Options: []Option{{Letter: "A"}, {Letter: "B", Rejecting: true}, {Letter: "C", Rejecting: true}}, Recommend: "A"}
		s.opened = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
		s.now, s.b, s.done = s.opened, state.Ballot{}, false
		return "ok; " + Line(s.p, s.b)
	case "facts":
		s.f.IssueAuthor, s.f.PRAuthor, s.f.Pusher = c.Or("issue", ""), c.Or("author", ""), c.Or("pusher", "")
		fmt.Sscan(c.Or("pr", "0"), &s.f.PR)
		s.f.CodeOwners, s.f.OwnedPaths = nil, map[string]string{}
		for _, o := range strings.Split(c.Or("owners", ""), ",") {
			if who, path, ok := strings.Cut(o, ":"); ok {
				s.f.CodeOwners = append(s.f.CodeOwners, who)
				s.f.OwnedPaths[who] = path
			}
		}
		return "ok"
	case "member":
		if s.f.Teams == nil {
			s.f.Teams = map[string]map[string]Membership{}
		}
		login := c.Args[0].Key
		if s.f.Teams[login] == nil {
			s.f.Teams[login] = map[string]Membership{}
		}
		for _, a := range c.Args[1:] {
			s.f.Teams[login][a.Key] = Membership(a.Val)
		}
		return "ok"
	case "advance":
		d, err := config.ParseWait(c.Args[0].Key)
		if err != nil {
			return "error: " + err.Error()
		}
		s.now = s.now.Add(d)
		return "now " + s.now.Format(time.RFC3339)
	case "vote":
		return s.vote(c)
	case "tick":
		return s.tick()
	}
	return "unknown directive " + c.Cmd
}

func (s *script) vote(c *transcript.Case) string {
	if s.done {
		return "the gate is decided; no vote is taken"
	}
	v := state.Vote{By: c.Args[0].Key, Option: c.Args[1].Key, Where: state.VoteWhere(c.Or("where", "comment")), At: s.now}
	r := Cast(s.p, s.g, s.b, v, s.f)
	s.b = r.Ballot
	var out []string
	for _, d := range r.Dropped {
		out = append(out, fmt.Sprintf("dropped: @%s (%s): %s", d.Vote.By, d.Vote.Option, d.Why))
	}
	if r.Refused != "" {
		out = append(out, "refused: "+r.Refused)
	} else {
		out = append(out, fmt.Sprintf("counted: @%s (%s) via %s — %s", r.Vote.By, r.Vote.Option, r.Vote.Where, r.Vote.Evidence))
	}
	if r.Decided != "" {
		s.done = true
		out = append(out, fmt.Sprintf("decided: %s by @%s", r.Decided, strings.Join(r.By, ", @")))
	} else {
		out = append(out, "line: "+Line(s.p, s.b))
	}
	return strings.Join(out, "\n")
}

func indent(s, by string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = by + l
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			s := &script{}
			transcript.Run(t, path, *update, s.do)
		})
	}
}

// tick is the sweep: the deadlines due now, acted on once, and the banner.
func (s *script) tick() string {
	if s.done {
		return "the gate is decided; nothing to do"
	}
	due := Deadlines(s.p, s.opened, s.now, s.b)
	var out []string
	if due.Remind {
		out = append(out, "comment: "+Reminder(s.p, s.b, "Approve the plan?", s.now.Sub(s.opened)))
	}
	if due.Escalate {
		out = append(out, "comment: "+Escalation(s.p, "Approve the plan?", s.now.Sub(s.opened)))
	}
	if due.Expire {
		letter, stop := Expiry(s.p, s.g)
		out = append(out, "comment: "+Expired(s.p, "Approve the plan?", s.now.Sub(s.opened), letter, "Option "+letter, stop))
		s.done = true
	}
	s.b = Mark(s.b, due, s.now)
	if len(out) == 0 {
		out = append(out, "nothing due")
	}
	if !s.done {
		out = append(out, "banner: "+Status(s.p, s.opened, s.now, s.b))
	}
	return strings.Join(out, "\n")
}
