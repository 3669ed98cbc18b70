package action_test

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
)

const teamPolicyConfig = `default_flow: meta-repo
jira:
  enabled: false
approvals:
  approval:
    teams: ["@acme/sre"]
    min: 1
`

// TestActionTeamPolicyNeedsTheMembersToken: the workflow's GITHUB_TOKEN
// cannot read organization teams (GitHub answers 403), so without the
// members_token input a team member's vote is refused, fail closed, with a
// reply that names the permission and the input to set; with a token that
// can read the team passed as members_token, the same vote counts and
// decides, and only the membership read goes out with that token.
func TestActionTeamPolicyNeedsTheMembersToken(t *testing.T) {
	h := newHarness(t)
	if err := h.gh.SetFile(repo, ".github/autopilot.yml", []byte(teamPolicyConfig)); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{h.gh.AddTeam("acme", "sre", false), h.gh.SetTeamMember("acme", "sre", "devin", "active", "")} {
		if err != nil {
			t.Fatal(err)
		}
	}
	const members = "github_pat_members_read"
	h.gh.AddToken(members, fakegithub.Identity{Login: "maria", Type: "User"})

	n, err := h.gh.CreateIssue(repo, "maria", "Review the config", "Opened by maria.", nil)
	if err != nil {
		t.Fatal(err)
	}
	h.addLabel(n, "autopilot")
	h.mustOK(h.run("issues", h.labeled(n, "maria")), "label")
	h.mustOK(h.run("issue_comment", h.comment(n, "maria", "/autopilot done config drafted")), "done")
	if s := h.state(n); s == nil || s.Gate == nil || !s.Gate.Kind.IsApproval() {
		t.Fatalf("no approval gate open: %+v", s)
	}

	h.mustOK(h.run("issue_comment", h.comment(n, "devin", "A")), "vote without members_token")
	var reply string
	for _, c := range h.gh.Comments(repo, n) {
		if c.Author.Login == fakegithub.ActionsBotLogin && strings.Contains(c.Body, "cannot be read") {
			reply = c.Body
		}
	}
	for _, want := range []string{"@\u200bacme/sre", "not counted", "Members: read", "members_token", "GITHUB_TOKEN"} {
		if !strings.Contains(reply, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, reply)
		}
	}
	if s := h.state(n); s.Gate == nil {
		t.Fatal("a vote the token could not judge decided the gate")
	}

	before := len(h.gh.Requests())
	h.mustOK(h.run("issue_comment", h.comment(n, "devin", "A"), "INPUT_MEMBERS_TOKEN="+members), "vote with members_token")
	if s := h.state(n); s.Gate != nil || s.Slug != "plan" {
		t.Fatalf("devin's vote with members_token did not decide: step %s gate %+v", s.Slug, s.Gate)
	}
	for _, q := range h.gh.Requests()[before:] {
		team := strings.HasPrefix(q.Path, "/orgs/")
		if team != (q.Login == "maria") {
			t.Errorf("%s %s went out as %s", q.Method, q.Path, q.Login)
		}
	}
}
