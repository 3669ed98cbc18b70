package appmode

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
)

// approvalsRig: the App on a fake whose config puts an approver policy on
// the meta-repo config review; the App's clock is the wall clock moved by
// skew, so a test can jump to a deadline.
func approvalsRig(t *testing.T, g *apptest.GitHub, skew *atomic.Int64) *rig {
	return newRigOn(t, g, func(o *Options) {
		o.Wiring.Now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	})
}

const approvalsConfig = `default_flow: meta-repo
jira:
  enabled: false
approvals:
  approval:
    teams: ["@acme/sre"]
    users: [maria]
    min: 2
    prevent_self: true
    remind_after: 24h
    expire_after: 96h
    on_expire: stop
`

// openApprovalGate starts a meta-repo run on a new issue (opened by the
// writer, so prevent_self refuses him) and reports its discovery done: the
// config review's approval gate opens.
func openApprovalGate(t *testing.T, g *apptest.GitHub, r *rig, cfg string) int {
	t.Helper()
	if err := g.SetFile(apptest.Repo, ".github/autopilot.yml", []byte(cfg)); err != nil {
		t.Fatal(err)
	}
	n, err := g.CreateIssue(apptest.Repo, apptest.Writer, "Review the config", "Opened by the writer.", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.mustProcess(g.Labeled(apptest.Repo, n, apptest.Maintainer, "autopilot"))
	r.mustProcess(g.Say(apptest.Repo, n, apptest.Maintainer, "/autopilot done config drafted"))
	if s := g.State(apptest.Repo, n); s == nil || s.Gate == nil || !s.Gate.Kind.IsApproval() {
		t.Fatalf("no approval gate open: %+v", s)
	}
	return n
}

// TestApproversAreReadFromGitHubAtEachVote: team membership comes from the
// team-membership API through the installation token when each vote is
// applied; the issue's author is refused (prevent_self); a member and a
// listed user make the quorum of two.
func TestApproversAreReadFromGitHubAtEachVote(t *testing.T) {
	g := apptest.New(t)
	skew := new(atomic.Int64)
	r := approvalsRig(t, g, skew)
	for _, err := range []error{
		g.AddTeam("acme", "sre", false),
		g.SetTeamMember("acme", "sre", "ola", "active", ""),
		g.SetTeamMember("acme", "sre", apptest.Writer, "active", ""),
		g.SetPermission(apptest.Repo, "ola", "write"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	n := openApprovalGate(t, g, r, approvalsConfig)

	r.mustProcess(g.Say(apptest.Repo, n, apptest.Writer, "A"))
	if g.BotComments(apptest.Repo, n, "opened this issue") != 1 {
		t.Fatalf("the issue's author was not refused once:\n%s", botBodies(g, n))
	}
	before := len(g.Requests())
	r.mustProcess(g.Say(apptest.Repo, n, "ola", "A"))
	if g.BotComments(apptest.Repo, n, "vote counted — 1 of 2 approvals: @\u200bola (A)") != 1 {
		t.Fatalf("no quorum line for ola's vote:\n%s", botBodies(g, n))
	}
	reads := 0
	for _, q := range g.Requests()[before:] {
		if strings.Contains(q.Path, "/teams/sre/memberships/") {
			reads++
		}
		t.Logf("vote call: %s %s %d", q.Method, q.Path, q.Status)
	}
	if reads == 0 {
		t.Fatal("the vote was counted without reading the team membership")
	}
	r.mustProcess(g.Say(apptest.Repo, n, apptest.Maintainer, "A — looks right"))
	s := g.State(apptest.Repo, n)
	if s.Gate != nil || s.Slug != "plan" {
		t.Fatalf("the quorum did not decide the gate: step %s gate %+v", s.Slug, s.Gate)
	}
	last := s.Decisions[len(s.Decisions)-1]
	if !strings.Contains(last.Reason, "decided by 2 of 2: @ola via comment (member of @acme/sre), @maria via comment (listed in users)") {
		t.Fatalf("decision reason %q", last.Reason)
	}
}

// TestTwoReplicasSweepOneReminder: two replicas sweep at the same
// deadline; the reminder is one comment (the ballot and its marker record
// it), and a second sweep at the same moment sends nothing.
func TestTwoReplicasSweepOneReminder(t *testing.T) {
	g := apptest.New(t)
	skew := new(atomic.Int64)
	r1 := approvalsRig(t, g, skew)
	r2 := approvalsRig(t, g, skew)
	n := openApprovalGate(t, g, r1, approvalsConfig)
	skew.Store(int64(25 * time.Hour))
	ctx := context.Background()
	for i, r := range []*rig{r1, r2, r2, r1} {
		if err := r.app.Sweep(ctx, apptest.Installation); err != nil {
			t.Fatalf("sweep %d: %v", i+1, err)
		}
	}
	if k := g.BotComments(apptest.Repo, n, "⏰ Reminder"); k != 1 {
		t.Fatalf("%d reminders after four sweeps by two replicas, want 1:\n%s", k, botBodies(g, n))
	}
	s := g.State(apptest.Repo, n)
	if s.Gate == nil || s.Gate.Ballot == nil || s.Gate.Ballot.Reminded.IsZero() {
		t.Fatalf("the ballot does not record the reminder: %+v", s.Gate)
	}
	if !strings.Contains(s.Gate.Ballot.Status, "waiting 1 d 1 h; reminder sent; expires in 2 d 22 h") {
		t.Fatalf("status %q", s.Gate.Ballot.Status)
	}
}

func botBodies(g *apptest.GitHub, n int) string {
	var out []string
	for _, c := range g.Comments(apptest.Repo, n) {
		if c.Author.Login == apptest.BotLogin {
			out = append(out, c.Body)
		}
	}
	return strings.Join(out, "\n---\n")
}

// TestCodeOwnerApprovesThroughTheApp: with codeowners: true the owners in
// CODEOWNERS at the linked PR's base of the files it changes may vote; the
// PR's author (who pushed its head) is refused by prevent_self although
// CODEOWNERS names her.
func TestCodeOwnerApprovesThroughTheApp(t *testing.T) {
	g := apptest.New(t)
	skew := new(atomic.Int64)
	r := approvalsRig(t, g, skew)
	cfg := strings.Replace(approvalsConfig, "    teams: [\"@acme/sre\"]\n    users: [maria]\n", "    codeowners: true\n", 1)
	for _, err := range []error{
		g.SetFile(apptest.Repo, ".github/CODEOWNERS", []byte("*.go @ola\ndocs/ @pat\n")),
		g.SetPermission(apptest.Repo, "ola", "write"),
		g.SetPermission(apptest.Repo, "pat", "write"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	n := openApprovalGate(t, g, r, cfg)
	pr, d := g.OpenPR(apptest.Repo, n, "pat", "c0ffee")
	if err := g.SetPullFiles(apptest.Repo, pr, fakegithub.PullFile{Filename: "src/a.go"}, fakegithub.PullFile{Filename: "docs/a.md"}); err != nil {
		t.Fatal(err)
	}
	r.mustProcess(d)
	r.mustProcess(g.Say(apptest.Repo, n, "pat", "A"))
	if g.BotComments(apptest.Repo, n, "opened PR #") != 1 {
		t.Fatalf("the PR's author was not refused:\n%s", botBodies(g, n))
	}
	r.mustProcess(g.Say(apptest.Repo, n, "ola", "A"))
	s := g.State(apptest.Repo, n)
	if s.Gate == nil || s.Gate.Ballot == nil || len(s.Gate.Ballot.Votes) != 1 || s.Gate.Ballot.Votes[0].Evidence != "code owner of *.go" {
		t.Fatalf("ola's vote: %+v", s.Gate.Ballot)
	}
}

// olaVotesOnAGate opens the config review's approval gate under
// approvalsConfig, with ola a member of @acme/sre who may vote.
func olaVotesOnAGate(t *testing.T) (*apptest.GitHub, *rig, int) {
	t.Helper()
	g := apptest.New(t)
	skew := new(atomic.Int64)
	r := approvalsRig(t, g, skew)
	for _, err := range []error{
		g.AddTeam("acme", "sre", false),
		g.SetTeamMember("acme", "sre", "ola", "active", ""),
		g.SetPermission(apptest.Repo, "ola", "write"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	n := openApprovalGate(t, g, r, approvalsConfig)
	return g, r, n
}

// TestTheChooseCommentShowsTheQuorum: the Choose comment people answer
// shows the quorum once a vote counts — one edit of the bot's own comment
// per change of the line, none for a refused vote that leaves it as it
// was.
func TestTheChooseCommentShowsTheQuorum(t *testing.T) {
	g, r, n := olaVotesOnAGate(t)
	choose := func() fakegithub.Comment {
		t.Helper()
		for _, c := range g.Comments(apptest.Repo, n) {
			if c.Author.Login == apptest.BotLogin && strings.HasPrefix(c.Body, "<!-- autopilot:gate ") {
				return c
			}
		}
		t.Fatalf("no Choose comment:\n%s", botBodies(g, n))
		return fakegithub.Comment{}
	}
	edits := func(from int) int {
		k := 0
		for _, q := range g.Requests()[from:] {
			if q.Method == "PATCH" && strings.Contains(q.Path, "/issues/comments/") {
				k++
			}
		}
		return k
	}

	before := len(g.Requests())
	r.mustProcess(g.Say(apptest.Repo, n, "ola", "A"))
	body := choose().Body
	if !strings.Contains(strings.ReplaceAll(body, "\n ", " "), "Approvals: 1 of 2 approvals: @\u200bola (A) — waiting for one more from @\u200bmaria or @\u200bacme/sre") {
		t.Fatalf("the Choose comment does not show the quorum:\n%s", body)
	}
	if k := edits(before) - 1; k != 1 { // one PATCH is the state comment's
		t.Fatalf("%d edits of the Choose comment for one counted vote, want 1", k)
	}

	before = len(g.Requests())
	r.mustProcess(g.Say(apptest.Repo, n, apptest.Writer, "A"))
	if k := edits(before) - 1; k != 0 {
		t.Fatalf("%d edits of the Choose comment for a refused vote, want 0", k)
	}
	if choose().Body != body {
		t.Fatalf("a refused vote changed the Choose comment")
	}
}

// TestALostQuorumEditIsRedoneByTheNextPass: the vote's state write stands
// but the PATCH of the Choose comment fails (a crash between the two); the
// next pass of the issue, a chatter comment or the sweep, finds the comment
// not showing the quorum the state holds and edits it, once; a pass after
// that finds nothing to edit and sends no PATCH of it.
func TestALostQuorumEditIsRedoneByTheNextPass(t *testing.T) {
	for _, next := range []string{"chatter", "sweep"} {
		t.Run(next, func(t *testing.T) { lostQuorumEditRedone(t, next) })
	}
}

func lostQuorumEditRedone(t *testing.T, next string) {
	g, r, n := olaVotesOnAGate(t)
	var choose fakegithub.Comment
	for _, c := range g.Comments(apptest.Repo, n) {
		if c.Author.Login == apptest.BotLogin && strings.HasPrefix(c.Body, "<!-- autopilot:gate ") {
			choose = c
		}
	}
	if choose.ID == 0 {
		t.Fatalf("no Choose comment:\n%s", botBodies(g, n))
	}
	chooseBody := func() string {
		for _, c := range g.Comments(apptest.Repo, n) {
			if c.ID == choose.ID {
				return strings.ReplaceAll(c.Body, "\n ", " ")
			}
		}
		t.Fatal("the Choose comment is gone")
		return ""
	}
	path := fmt.Sprintf("/repos/%s/issues/comments/%d", apptest.Repo, choose.ID)
	edits := func(from int) (ok, failed int) {
		for _, q := range g.Requests()[from:] {
			if q.Method == "PATCH" && q.Path == path {
				if q.Status == 200 {
					ok++
				} else {
					failed++
				}
			}
		}
		return ok, failed
	}
	const line = "Approvals: 1 of 2 approvals: @\u200bola (A) — waiting for one more from @\u200bmaria or @\u200bacme/sre"

	g.Script("PATCH", path, fakegithub.Fail(500), fakegithub.Fail(500), fakegithub.Fail(500), fakegithub.Fail(500))
	before := len(g.Requests())
	_ = r.process(g.Say(apptest.Repo, n, "ola", "A")) // the edit is lost
	g.ClearScripts()
	if s := g.State(apptest.Repo, n); s == nil || s.Gate == nil || s.Gate.Ballot == nil || len(s.Gate.Ballot.Votes) != 1 {
		t.Fatalf("the vote is not in the state: %+v", s)
	}
	if ok, failed := edits(before); ok != 0 || failed == 0 || strings.Contains(chooseBody(), line) {
		t.Fatalf("the edit was not lost (%d PATCHes answered, %d failed):\n%s", ok, failed, chooseBody())
	}

	before = len(g.Requests())
	pass := func(text string) {
		t.Helper()
		if next == "sweep" {
			if err := r.app.Sweep(context.Background(), apptest.Installation); err != nil {
				t.Fatal(err)
			}
			return
		}
		r.mustProcess(g.Say(apptest.Repo, n, apptest.Stranger, text))
	}
	pass("any news on this?")
	if !strings.Contains(chooseBody(), line) {
		t.Fatalf("the next pass did not redo the lost edit:\n%s", chooseBody())
	}
	if ok, failed := edits(before); ok != 1 || failed != 0 {
		t.Fatalf("%d PATCHes of the Choose comment answered (%d failed), want exactly 1", ok, failed)
	}

	before = len(g.Requests())
	pass("still waiting")
	if ok, failed := edits(before); ok+failed != 0 {
		t.Fatalf("%d PATCHes of the Choose comment when it shows the quorum already, want 0", ok+failed)
	}
}
