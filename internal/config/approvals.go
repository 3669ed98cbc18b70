package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
	"go.yaml.in/yaml/v3"
)

// Approval is the approver policy of one gate kind or step (the
// approvals: section): who may vote, how many must agree, and what happens
// when nobody answers. A gate without a policy is decided by the first
// answer of anyone with answer_permission, as before.
type Approval struct {
	// Teams ("@org/team-slug") whose active members may vote; membership
	// is judged when each vote is applied.
	Teams []string `yaml:"teams,omitempty" json:"teams,omitempty"`
	// Users (logins) who may vote.
	Users []string `yaml:"users,omitempty" json:"users,omitempty"`
	// CodeOwners lets the owners (CODEOWNERS at the linked PR's base branch) of
	// the files the PR changes vote.
	CodeOwners bool `yaml:"codeowners,omitempty" json:"codeowners,omitempty"`
	// Min is how many distinct people must choose the same option
	// (default 1).
	Min int `yaml:"min,omitempty" json:"min,omitempty"`
	// PreventSelf refuses votes from the author, the PR's author
	// and whoever pushed the PR's head.
	PreventSelf bool `yaml:"prevent_self,omitempty" json:"prevent_self,omitempty"`
	// RejectWins decides the gate at once when one eligible person picks
	// a rejecting option (request changes, abort, stay, ...).
	RejectWins bool `yaml:"reject_wins,omitempty" json:"reject_wins,omitempty"`
	// RemindAfter: one reminder mentioning the approvers this long after
	// the gate opened (0: none).
	RemindAfter Wait `yaml:"remind_after,omitempty" json:"remind_after,omitempty"`
	// EscalateTo (logins or teams) is mentioned once at EscalateAfter.
	EscalateTo []string `yaml:"escalate_to,omitempty" json:"escalate_to,omitempty"`
	// EscalateAfter defaults to twice RemindAfter.
	EscalateAfter Wait `yaml:"escalate_after,omitempty" json:"escalate_after,omitempty"`
	// ExpireAfter: the gate is decided by OnExpire this long after it
	// opened (0: never).
	ExpireAfter Wait `yaml:"expire_after,omitempty" json:"expire_after,omitempty"`
	// OnExpire is ExpireReject, ExpireDefault or ExpireStop.
	OnExpire string `yaml:"on_expire,omitempty" json:"on_expire,omitempty"`
}

// TeamNotes says, for each approver policy naming teams (by key), what
// reading their membership needs; `bot validate` prints them, since a
// workflow's GITHUB_TOKEN can never read organization teams.
func (c *Config) TeamNotes() []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(c.Approvals)) {
		if ts := c.Approvals[k].Teams; len(ts) > 0 {
			out = append(out, fmt.Sprintf("approvals.%s.teams: membership of %s is read at each vote and needs the organization permission Members: read "+
				"(the App: grant it; the Action: pass a token that has it as the members_token input, since GITHUB_TOKEN cannot read teams)", k, strings.Join(ts, ", ")))
		}
	}
	return out
}

// What an expired gate does (Approval.OnExpire).
const (
	ExpireReject  = "reject"  // the first rejecting option is chosen (none: the run stops)
	ExpireDefault = "default" // the recommended option is chosen
	ExpireStop    = "stop"    // the run stops; /autopilot resume asks again
)

// Escalation is when escalate_to is mentioned: EscalateAfter, or twice
// RemindAfter when it is not set.
func (a Approval) Escalation() time.Duration {
	if a.EscalateAfter != 0 {
		return time.Duration(a.EscalateAfter)
	}
	return 2 * time.Duration(a.RemindAfter)
}

// Wait is a time.Duration written in Go syntax or with whole days:
// "4h", "2d", "1d12h".
type Wait time.Duration

var waitRE = regexp.MustCompile(`^([0-9]+)d(.*)$`)

// ParseWait parses "4h", "2d", "1d12h" (not negative).
func ParseWait(s string) (time.Duration, error) {
	days, rest := 0, s
	if m := waitRE.FindStringSubmatch(s); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil || n > 3650 {
			return 0, fmt.Errorf("%q is not a duration", s)
		}
		days, rest = n, m[2]
	}
	var v time.Duration
	if rest != "" {
		var err error
		if v, err = time.ParseDuration(rest); err != nil || v < 0 {
			return 0, fmt.Errorf("%q is not a duration", s)
		}
	} else if days == 0 {
		return 0, fmt.Errorf("%q is not a duration", s)
	}
	total := time.Duration(days)*24*time.Hour + v
	if total > maxWait {
		return 0, fmt.Errorf("%q is longer than ten years", s)
	}
	return total, nil
}

// maxWait is the longest Wait: ten years of days.
const maxWait = 3650 * 24 * time.Hour

// UnmarshalYAML parses a Wait; a bad value is a type error naming its line,
// as Duration's.
func (w *Wait) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: cannot unmarshal %s into config.Wait", n.Line, n.ShortTag())}}
	}
	v, err := ParseWait(n.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %q is not a duration (e.g. 4h, 2d, 1d12h)", n.Line, n.Value)}}
	}
	*w = Wait(v)
	return nil
}

// String writes w as days, hours, minutes and seconds ("2d", "1d12h",
// "90m" as "1h30m"); a fraction of a second is written in Go syntax.
func (w Wait) String() string {
	d := time.Duration(w)
	if d <= 0 || d%time.Second != 0 {
		return d.String()
	}
	var b strings.Builder
	for _, u := range []struct {
		name string
		size time.Duration
	}{{"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}} {
		if n := d / u.size; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.size
		}
	}
	return b.String()
}

// gateFamilies are the gate kinds an approvals: key may name. The kinds
// for one step ("approval", "confirm", "skip", "rollback") also take a
// step: "approval-plan"; "deploy" is the deploy gate's.
var gateFamilies = map[string]bool{
	"approval": true, "confirm": true, "skip": true, "rollback": true, "deploy": true,
	string(state.GateFlowSelect): true, string(state.GateSkillFailed): true, string(state.GateNextCycle): true,
	string(state.GateSessionBoundary): true, string(state.GateLowConfidence): true, string(state.GateTrackerAuth): true,
}

// stepFamilies are the gate kinds that carry a step's slug.
var stepFamilies = []string{"approval", "confirm", "skip", "rollback", "deploy"}

// splitKind splits a gate kind for one step into its family and slug.
func splitKind(kind string) (family, slug string, ok bool) {
	for _, f := range stepFamilies {
		if s, found := strings.CutPrefix(kind, f+"-"); found && s != "" {
			return f, s, true
		}
	}
	return "", "", false
}

// ApprovalFor returns the policy of a gate kind: the entry for the exact
// kind ("approval-plan"), else for its step ("plan"), else for its family
// ("approval"). Min is at least 1. It reports false when none applies.
func (c *Config) ApprovalFor(kind state.GateKind) (Approval, bool) {
	k := string(kind)
	a, ok := c.Approvals[k]
	if !ok {
		if family, slug, step := splitKind(k); step {
			if a, ok = c.Approvals[slug]; !ok {
				a, ok = c.Approvals[family]
			}
		}
	}
	if ok && a.Min < 1 {
		a.Min = 1
	}
	return a, ok
}

var teamRE = regexp.MustCompile(`^@[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9][A-Za-z0-9._-]*$`)

// IsTeam reports whether s is written as a team, "@org/team-slug".
func IsTeam(s string) bool { return teamRE.MatchString(s) }

// checkApprovals validates the approvals: section. slugs are the steps of
// every flow.
//
// The rule for min: when the policy lists users only (no teams, no
// codeowners), at most the distinct users listed can ever vote, so min
// may not exceed their number. Teams and CODEOWNERS are read when a vote
// comes in, so with either of them (or with no list at all: anyone with
// answer_permission) min is not bounded here.
func (c *Config) checkApprovals(k *checker, slugs map[string]bool) {
	for _, key := range c.inFileOrder(k.root, "approvals", keys(c.Approvals)) {
		at := []string{"approvals", key}
		field := "approvals." + key
		switch family, slug, step := splitKind(key); {
		case gateFamilies[key] || slugs[key]:
		case step && !slugs[slug]:
			k.add(field, fmt.Sprintf("no flow has a step %q; name a gate kind, a step, or a kind and a step of some flow (%s-<slug>)", slug, family), at...)
			continue
		case !step:
			k.add(field, "not a gate kind or step (want approval, confirm, skip, rollback, deploy, flow-select, skill-failed, next-cycle, session-boundary, low-confidence, jira-auth, a step slug, or a kind and step such as approval-plan)", at...)
			continue
		}
		checkApproval(k, c.Approvals[key], field, at)
	}
}

func checkApproval(k *checker, a Approval, field string, at []string) {
	sub := func(key ...string) []string { return append(append([]string(nil), at...), key...) }
	for i, t := range a.Teams {
		if !IsTeam(t) {
			k.add(fmt.Sprintf("%s.teams[%d]", field, i), fmt.Sprintf("%q: want a team as @org/team-slug (e.g. @acme/sre)", t), sub("teams", fmt.Sprintf("[%d]", i))...)
		}
	}
	distinct := map[string]bool{}
	var names []string
	for i, u := range a.Users {
		f, p := fmt.Sprintf("%s.users[%d]", field, i), sub("users", fmt.Sprintf("[%d]", i))
		switch bare := strings.TrimPrefix(u, "@"); {
		case IsTeam(u) || IsTeam("@"+bare):
			k.add(f, fmt.Sprintf("%q is a team; list it under teams", u), p...)
		case !loginRE.MatchString(bare):
			k.add(f, fmt.Sprintf("%q is not a GitHub login", u), p...)
		case !distinct[strings.ToLower(bare)]:
			distinct[strings.ToLower(bare)] = true
			names = append(names, bare)
		}
	}
	switch {
	case a.Min < 0:
		k.add(field+".min", fmt.Sprintf("%d: want 1 or more distinct people", a.Min), sub("min")...)
	case len(a.Teams) == 0 && !a.CodeOwners && len(a.Users) > 0 && a.Min > len(names) && badUsers(a.Users) == 0:
		k.add(field+".min", fmt.Sprintf("%d approvals, but only %d people can ever vote (users: %s); lower min or add teams or codeowners", a.Min, len(names), strings.Join(names, ", ")), sub("min")...)
	}
	for i, e := range a.EscalateTo {
		if !IsTeam(e) && !loginRE.MatchString(strings.TrimPrefix(e, "@")) {
			k.add(fmt.Sprintf("%s.escalate_to[%d]", field, i), fmt.Sprintf("%q: want a login (ada) or a team (@acme/sre)", e), sub("escalate_to", fmt.Sprintf("[%d]", i))...)
		}
	}
	if len(a.EscalateTo) > 0 && a.Escalation() == 0 {
		k.add(field+".escalate_to", "needs remind_after or escalate_after to say when to escalate", sub("escalate_to")...)
	}
	if len(a.EscalateTo) == 0 && a.EscalateAfter != 0 {
		k.add(field+".escalate_after", "says when to escalate, but escalate_to names nobody", sub("escalate_after")...)
	}
	if a.ExpireAfter != 0 {
		for _, before := range []struct {
			key string
			v   time.Duration
		}{{"remind_after", time.Duration(a.RemindAfter)}, {"escalate_after", a.Escalation()}} {
			if before.v != 0 && time.Duration(a.ExpireAfter) <= before.v && (before.key == "remind_after" || len(a.EscalateTo) > 0) {
				k.add(field+".expire_after", fmt.Sprintf("%s must come after %s (%s)", a.ExpireAfter, before.key, Wait(before.v)), sub("expire_after")...)
				break
			}
		}
	}
	switch {
	case a.OnExpire == "" && a.ExpireAfter != 0:
		k.add(field+".on_expire", "expire_after is set: say what happens when the time runs out: reject, default or stop", at...)
	case a.OnExpire == "":
	case a.OnExpire != ExpireReject && a.OnExpire != ExpireDefault && a.OnExpire != ExpireStop:
		k.add(field+".on_expire", fmt.Sprintf("%q: want reject, default or stop", a.OnExpire), sub("on_expire")...)
	case a.ExpireAfter == 0:
		k.add(field+".on_expire", "needs expire_after: how long the question may stay open", sub("on_expire")...)
	}
}

// badUsers counts the entries of users that are no login (reported on
// their own; min is not judged against a list with errors).
func badUsers(users []string) int {
	n := 0
	for _, u := range users {
		if bare := strings.TrimPrefix(u, "@"); IsTeam(u) || IsTeam("@"+bare) || !loginRE.MatchString(bare) {
			n++
		}
	}
	return n
}
