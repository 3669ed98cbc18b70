// Package approvals holds the rules of approver policies (the approvals:
// section of the config): who may vote on a Choose block, how many
// distinct people must agree, what a split vote does, and when a question
// is reminded, escalated and expired.
//
// It is pure like the engine that calls it: every fact the rules need —
// team membership, CODEOWNERS owners, the authors and the pusher — is an
// input (Facts), and every time is the state's recorded clock. It must
// never read the network, a file or the clock.
package approvals

import (
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Membership is what GitHub said about one person in one team.
type Membership string

// Team memberships (GitHub's membership states, plus what the token may
// not know).
const (
	Active     Membership = "active"     // a member: counts
	Pending    Membership = "pending"    // invited, not yet a member: does not count
	NotMember  Membership = "none"       // 404 on a team the token can see
	Unreadable Membership = "unreadable" // the token cannot read the team (404 on the team, 403)
)

// MissingPermission is the App permission a team read needs.
const MissingPermission = "Members: read"

// Facts are what the rules are told about the people around a gate. The
// engine asks for them (a query) before it applies a vote; the rules never
// read anything.
type Facts struct {
	IssueAuthor string
	// PR is the linked PR (0: none); PRAuthor opened it and Pusher pushed
	// its head.
	PR       int
	PRAuthor string
	Pusher   string
	// Teams: login → team ("@org/slug") → membership, for every voter and
	// every team the policy or CODEOWNERS names. Keys compare without case.
	Teams map[string]map[string]Membership
	// CodeOwners are the owners (logins and teams, "@ada", "@acme/web")
	// of the files the linked PR changes, read from CODEOWNERS at its base.
	CodeOwners []string
	// OwnedPaths names, per owner, the patterns that made it an owner (for
	// the evidence), e.g. "@ada" → "src/api/".
	OwnedPaths map[string]string
}

// membership is GitHub's answer for login in team; a missing answer is
// unreadable (fail closed).
func (f Facts) membership(login, team string) Membership {
	for l, teams := range f.Teams {
		if !strings.EqualFold(l, login) {
			continue
		}
		for t, m := range teams {
			if strings.EqualFold(t, team) {
				return m
			}
		}
	}
	return Unreadable
}

// Option is what the rules need of a gate's option.
type Option struct {
	Letter string
	// Rejecting options say no (request changes, abort, stay, ...);
	// reject_wins lets one vote for them decide.
	Rejecting bool
}

// Gate is what the rules need of the open gate.
type Gate struct {
	Options   []Option
	Recommend string
}

func (g Gate) rejecting(letter string) bool {
	for _, o := range g.Options {
		if o.Letter == letter {
			return o.Rejecting
		}
	}
	return false
}

// Result is what applying one vote did.
type Result struct {
	// Ballot is the gate's ballot after the vote.
	Ballot state.Ballot
	// Vote is the vote as recorded (with its evidence), when it counts.
	Vote state.Vote
	// Refused says why the vote does not count ("" when it does).
	Refused string
	// Dropped are earlier votes that no longer count, each with why.
	Dropped []Dropped
	// Decided is the option that won ("" while the vote goes on); By are
	// the people whose votes decided it.
	Decided string
	By      []string
}

// Dropped is an earlier vote that no longer counts.
type Dropped struct {
	Vote state.Vote
	Why  string
}

// Cast applies vote v to ballot b under policy p. Every vote already on
// the ballot is judged again with f, so a member removed from a team since
// voting no longer counts. A person's later vote replaces the earlier one
// (an edited answer is its author's latest text). An option wins when min
// distinct people chose it — the first option to get there, since each
// vote is judged as it comes — or at once, with reject_wins, when an
// eligible person chooses a rejecting option.
func Cast(p config.Approval, g Gate, b state.Ballot, v state.Vote, f Facts) Result {
	r := Result{}
	kept := make([]state.Vote, 0, len(b.Votes)+1)
	for _, old := range b.Votes {
		if strings.EqualFold(old.By, v.By) {
			continue // replaced by v (or v is refused: the old vote is judged below)
		}
		if _, why := Eligible(p, old.By, f); why != "" {
			r.Dropped = append(r.Dropped, Dropped{Vote: old, Why: why})
			continue
		}
		kept = append(kept, old)
	}
	evidence, why := Eligible(p, v.By, f)
	if why != "" {
		r.Refused = why
		// The person's earlier vote stays only while it still counts.
		for _, old := range b.Votes {
			if strings.EqualFold(old.By, v.By) {
				r.Dropped = append(r.Dropped, Dropped{Vote: old, Why: why})
			}
		}
	} else {
		v.Evidence = evidence
		r.Vote = v
		kept = append(kept, v)
	}
	b.Votes = kept
	r.Ballot = b
	if why != "" {
		return r
	}
	if p.RejectWins && g.rejecting(v.Option) {
		r.Decided, r.By = v.Option, []string{v.By}
		return r
	}
	if by := voters(kept, v.Option); len(by) >= max(p.Min, 1) {
		r.Decided, r.By = v.Option, by
	}
	return r
}

// voters are the people who chose option, in voting order.
func voters(votes []state.Vote, option string) []string {
	var out []string
	for _, v := range votes {
		if v.Option == option {
			out = append(out, v.By)
		}
	}
	return out
}

// Eligible judges whether login may vote under p with facts f. It returns
// the evidence the vote counts on, or why it does not count.
func Eligible(p config.Approval, login string, f Facts) (evidence, refused string) {
	if p.PreventSelf {
		for _, self := range []struct{ who, did string }{
			{f.IssueAuthor, "opened this issue"},
			{f.PRAuthor, fmt.Sprintf("opened PR #%d", f.PR)},
			{f.Pusher, fmt.Sprintf("pushed the head of PR #%d", f.PR)},
		} {
			if self.who != "" && strings.EqualFold(bare(self.who), bare(login)) {
				return "", fmt.Sprintf("@%s %s, and this question does not take approvals from the people whose work it decides (prevent_self)", bare(login), self.did)
			}
		}
	}
	if len(p.Users) == 0 && len(p.Teams) == 0 && !p.CodeOwners {
		return "answer_permission", ""
	}
	for _, u := range p.Users {
		if strings.EqualFold(bare(u), bare(login)) {
			return "listed in users", ""
		}
	}
	var unreadable, pending []string
	for _, t := range p.Teams {
		switch f.membership(login, t) {
		case Active:
			return "member of " + t, ""
		case Unreadable:
			unreadable = append(unreadable, t)
		case Pending:
			pending = append(pending, t)
		}
	}
	if p.CodeOwners {
		for _, o := range f.CodeOwners {
			owns := f.OwnedPaths[o]
			switch {
			case config.IsTeam(o):
				switch f.membership(login, o) {
				case Active:
					return fmt.Sprintf("code owner via %s of %s", o, owns), ""
				case Unreadable:
					unreadable = append(unreadable, o)
				}
			case strings.EqualFold(bare(o), bare(login)):
				return "code owner of " + owns, ""
			}
		}
	}
	if len(unreadable) > 0 {
		return "", fmt.Sprintf("the members of %s cannot be read, so the vote of @%s is not counted (fail closed); reading them needs the organization permission %s: grant it to the App, or, in the Action (whose GITHUB_TOKEN never has it), pass a token that has it as the members_token input", strings.Join(unreadable, ", "), bare(login), MissingPermission)
	}
	if len(pending) > 0 {
		return "", fmt.Sprintf("@%s is invited to %s but has not accepted yet; a pending member does not count", bare(login), strings.Join(pending, ", "))
	}
	return "", fmt.Sprintf("@%s may not decide this question: it takes %s", bare(login), whoMay(p))
}

// whoMay names the people a policy lets vote.
func whoMay(p config.Approval) string {
	if who := people(p, nil, "a code owner of the changed files"); len(who) > 0 {
		return orList(who)
	}
	return "anyone with answer_permission"
}

// people names, for people to read, who a policy lets vote: the listed
// users (those with no vote on ballot b, when given), the teams, and
// owners for the code owners.
func people(p config.Approval, b *state.Ballot, owners string) []string {
	voted := map[string]bool{}
	if b != nil {
		for _, v := range b.Votes {
			voted[strings.ToLower(bare(v.By))] = true
		}
	}
	var who []string
	for _, u := range p.Users {
		if !voted[strings.ToLower(bare(u))] {
			who = append(who, "@"+bare(u))
		}
	}
	who = append(who, p.Teams...)
	if p.CodeOwners {
		who = append(who, owners)
	}
	return who
}

func orList(who []string) string {
	if len(who) < 2 {
		return strings.Join(who, "")
	}
	return strings.Join(who[:len(who)-1], ", ") + " or " + who[len(who)-1]
}

func bare(login string) string { return strings.TrimPrefix(strings.TrimSpace(login), "@") }

// Line is the quorum line of the Choose block, e.g. "1 of 2 approvals:
// @ada (A) — waiting for one more from @acme/sre". The count is that of
// the option with the most votes.
func Line(p config.Approval, b state.Ballot) string {
	need := max(p.Min, 1)
	most := 0
	for _, v := range b.Votes {
		most = max(most, len(voters(b.Votes, v.Option)))
	}
	var cast []string
	for _, v := range b.Votes {
		cast = append(cast, fmt.Sprintf("@%s (%s)", bare(v.By), v.Option))
	}
	noun := "approvals"
	if need == 1 {
		noun = "approval"
	}
	s := fmt.Sprintf("%d of %d %s", most, need, noun)
	if len(cast) > 0 {
		s += ": " + strings.Join(cast, ", ")
	}
	more := "one more"
	if k := need - most; k > 1 || most == 0 {
		more = count(k)
		if most > 0 {
			more += " more"
		}
	}
	return s + " — waiting for " + more + " from " + waitingOn(p, b)
}

// waitingOn names who may still vote: the listed users who have not, the
// teams, the code owners.
func waitingOn(p config.Approval, b state.Ballot) string {
	if who := people(p, &b, "a code owner"); len(who) > 0 {
		return orList(who)
	}
	return "an approver"
}

var words = []string{"none", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}

func count(n int) string {
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return fmt.Sprint(n)
}
