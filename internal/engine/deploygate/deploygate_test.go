package deploygate

import (
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/state"
)

const (
	reviewed = "1111111111111111111111111111111111111111"
	later    = "2222222222222222222222222222222222222222"
)

var t0 = time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)

// atDeploy is a flow at its deploy step whose merge gate passed on
// reviewed, entered by "/autopilot done" (no answer).
func atDeploy() *state.State {
	return &state.State{
		Repo: "acme/widgets", Issue: 12, Flow: "greenfield", Slug: "deploy", Name: "Deploy",
		Status: state.InProgress, Run: state.RunInProgress,
		LinkedPRs: []int{5},
		PRChecks:  []state.PRCheck{{PR: 5, Head: reviewed, GateHead: reviewed}},
		Completed: []state.CompletedStep{{Step: 7, Slug: "security-audit", Name: "Security Audit", At: t0}},
		Decisions: []state.Decision{{Gate: "g3-session-boundary", Option: "A", By: "maria", At: t0.Add(-time.Hour)}},
	}
}

func req(sha string) Request {
	return Request{Environment: "production", SHA: sha, Ref: "refs/heads/main", RunID: 900}
}

func gateCfg() config.DeployGate {
	return config.DeployGate{Unmatched: config.UnmatchedIgnore, Step: config.DefaultDeployStep}
}

// answer records an answer to the deploy question of env and sha.
func answer(st *state.State, env, sha, letter, by string) {
	st.Decisions = append(st.Decisions, state.Decision{
		Gate: "g9-" + string(Kind(env, sha)), Option: letter, By: by, At: t0.Add(time.Hour),
		Link: "https://github.com/acme/widgets/issues/12#issuecomment-77",
	})
}

func TestDecideCoversEveryBranch(t *testing.T) {
	cases := []struct {
		name    string
		st      func() *state.State
		cfg     func(config.DeployGate) config.DeployGate
		req     Request
		verdict Verdict
		reason  Reason
		says    string
	}{
		{
			name: "environment not listed is ignored",
			cfg:  func(c config.DeployGate) config.DeployGate { c.Environments = []string{"staging"}; return c },
			req:  req(reviewed), verdict: Ignore, reason: EnvNotGated, says: `environment "production" is not listed`,
		},
		{
			name: "listed environment matches whatever its case",
			cfg:  func(c config.DeployGate) config.DeployGate { c.Environments = []string{"Production"}; return c },
			req:  req(reviewed), verdict: Ask, reason: Asking,
		},
		{
			name: "stopped flow is rejected with its reason and the issue",
			st: func() *state.State {
				s := atDeploy()
				s.Run, s.Stop = state.RunStopped, &state.Stop{Reason: "max-hours-exceeded"}
				return s
			},
			req: req(reviewed), verdict: Reject, reason: FlowStopped,
			says: "Rejected the deploy of 1111111 to production: the flow on acme/widgets#12 is stopped (max-hours-exceeded). Resume it there first.",
		},
		{
			name: "failed run is rejected",
			st:   func() *state.State { s := atDeploy(); s.Run = state.RunFailed; return s },
			req:  req(reviewed), verdict: Reject, reason: FlowFailed, says: "step deploy of the flow on acme/widgets#12 failed",
		},
		{
			name: "failed step is rejected",
			st:   func() *state.State { s := atDeploy(); s.Status = state.Failed; return s },
			req:  req(reviewed), verdict: Reject, reason: FlowFailed,
		},
		{
			name: "flow before its deploy step is rejected",
			st:   func() *state.State { s := atDeploy(); s.Slug = "run-tests"; return s },
			req:  req(reviewed), verdict: Reject, reason: NotAtDeploy, says: "is at step run-tests, not at its deploy step",
		},
		{
			name: "finished flow is rejected",
			st:   func() *state.State { s := atDeploy(); s.Slug, s.Run = "done", state.RunDone; return s },
			req:  req(reviewed), verdict: Reject, reason: NotAtDeploy, says: "acme/widgets#12 is done",
		},
		{
			name: "configured deploy step is the one that counts",
			cfg:  func(c config.DeployGate) config.DeployGate { c.Step = "release"; return c },
			req:  req(reviewed), verdict: Reject, reason: NotAtDeploy, says: "not at its release step",
		},
		{
			name: "a later push is unreviewed",
			req:  req(later), verdict: Reject, reason: Unreviewed,
			says: "the gates of acme/widgets#12 passed on 1111111, not on 2222222; a later push is not reviewed",
		},
		{
			name: "no gate passed on any commit",
			st:   func() *state.State { s := atDeploy(); s.PRChecks[0].GateHead = ""; return s },
			req:  req(reviewed), verdict: Reject, reason: NoGatePassed, says: "no gate of acme/widgets#12 passed",
		},
		{
			name: "an approval of the later commit does not pass the gates on it",
			st:   func() *state.State { s := atDeploy(); answer(s, "production", later, "A", "maria"); return s },
			req:  req(later), verdict: Reject, reason: Unreviewed,
		},
		{
			name: "answered approve is approved, naming who",
			st:   func() *state.State { s := atDeploy(); answer(s, "production", reviewed, "A", "maria"); return s },
			req:  req(reviewed), verdict: Approve, reason: AnsweredApprove, says: "@maria answered approve on acme/widgets#12",
		},
		{
			name: "an answer for the environment in another case counts",
			st:   func() *state.State { s := atDeploy(); answer(s, "PRODUCTION", reviewed, "A", "maria"); return s },
			req:  req(reviewed), verdict: Approve, reason: AnsweredApprove,
		},
		{
			name: "answered reject is rejected, naming who",
			st:   func() *state.State { s := atDeploy(); answer(s, "production", reviewed, "B", "devin"); return s },
			req:  req(reviewed), verdict: Reject, reason: AnsweredReject, says: "@devin answered reject",
		},
		{
			name: "the newest answer wins",
			st: func() *state.State {
				s := atDeploy()
				answer(s, "production", reviewed, "A", "maria")
				answer(s, "production", reviewed, "B", "devin")
				return s
			},
			req: req(reviewed), verdict: Reject, reason: AnsweredReject,
		},
		{
			name: "an answer for another environment does not count",
			st:   func() *state.State { s := atDeploy(); answer(s, "staging", reviewed, "A", "maria"); return s },
			req:  req(reviewed), verdict: Ask, reason: Asking,
		},
		{
			name: "an open deploy question waits",
			st: func() *state.State {
				s := atDeploy()
				s.Gate = &state.Gate{ID: "g9-" + string(Kind("production", reviewed)), Kind: Kind("production", reviewed)}
				return s
			},
			req: req(reviewed), verdict: Wait, reason: Waiting, says: "waits for an answer to the deploy question on acme/widgets#12",
		},
		{
			name: "an answered question beats auto_approve",
			st: func() *state.State {
				s := atDeploy()
				answer(s, "production", reviewed, "B", "devin")
				reached(s)
				return s
			},
			cfg: autoApprove,
			req: req(reviewed), verdict: Reject, reason: AnsweredReject,
		},
		{
			name: "auto_approve approves a step reached by an answer",
			st:   func() *state.State { s := atDeploy(); reached(s); return s },
			cfg:  autoApprove,
			req:  req(reviewed), verdict: Approve, reason: AutoApproved, says: "deploy_gate.auto_approve",
		},
		{
			name: "auto_approve counts an answer in the second the step completed (GitHub's times are whole seconds)",
			st: func() *state.State {
				s := atDeploy()
				s.Completed[0].At = t0.Add(400 * time.Millisecond) // the engine's clock
				reached(s)                                         // the comment's created_at: t0
				return s
			},
			cfg: autoApprove,
			req: req(reviewed), verdict: Approve, reason: AutoApproved,
		},
		{
			name: "auto_approve asks when the step was reached without an answer",
			cfg:  autoApprove,
			req:  req(reviewed), verdict: Ask, reason: Asking,
		},
		{
			name: "auto_approve asks in a flow with no completed step",
			st:   func() *state.State { s := atDeploy(); s.Completed = nil; return s },
			cfg:  autoApprove,
			req:  req(reviewed), verdict: Ask, reason: Asking,
		},
		{
			name: "auto_approve does not count an earlier deploy answer as the step's answer",
			st:   func() *state.State { s := atDeploy(); answer(s, "staging", reviewed, "A", "maria"); return s },
			cfg:  autoApprove,
			req:  req(reviewed), verdict: Ask, reason: Asking,
		},
		{
			name: "auto_approve still rejects an unreviewed push",
			st:   func() *state.State { s := atDeploy(); reached(s); return s },
			cfg:  autoApprove,
			req:  req(later), verdict: Reject, reason: Unreviewed,
		},
		{
			name: "auto_approve still rejects a stopped flow",
			st:   func() *state.State { s := atDeploy(); reached(s); s.Run = state.RunStopped; return s },
			cfg:  autoApprove,
			req:  req(reviewed), verdict: Reject, reason: FlowStopped,
		},
		{
			name: "otherwise it asks",
			req:  req(reviewed), verdict: Ask, reason: Asking,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := atDeploy()
			if c.st != nil {
				st = c.st()
			}
			cfg := gateCfg()
			if c.cfg != nil {
				cfg = c.cfg(cfg)
			}
			d := Decide(st, cfg, c.req)
			if d.Verdict != c.verdict || d.Reason != c.reason {
				t.Fatalf("Decide = %s (%s): %s\nwant %s (%s)", d.Verdict, d.Reason, d.Comment, c.verdict, c.reason)
			}
			if !strings.Contains(d.Comment, c.says) {
				t.Errorf("comment %q lacks %q", d.Comment, c.says)
			}
			if d.Issue != 12 {
				t.Errorf("issue = %d, want 12", d.Issue)
			}
			if (d.Question != nil) != (d.Verdict == Ask) {
				t.Errorf("question %+v with verdict %s", d.Question, d.Verdict)
			}
			if d.Reason == AnsweredApprove || d.Reason == AnsweredReject {
				if d.By == "" || d.Link == "" {
					t.Errorf("an answer's verdict lacks who (%q) and where (%q)", d.By, d.Link)
				}
			}
		})
	}
}

func autoApprove(c config.DeployGate) config.DeployGate { c.AutoApprove = true; return c }

// reached records an answer at the moment the deploy step was entered (a
// confirm gate, a session boundary).
func reached(s *state.State) {
	s.Decisions = append(s.Decisions, state.Decision{Gate: "g8-confirm-deploy", Option: "A", By: "maria", At: t0})
}

func TestAskOpensTheDeployQuestion(t *testing.T) {
	d := Decide(atDeploy(), gateCfg(), req(reviewed))
	q := d.Question
	if q == nil {
		t.Fatalf("no question: %+v", d)
	}
	if q.Title != "Deploy 1111111 to production?" {
		t.Errorf("title %q", q.Title)
	}
	if q.Kind != Kind("production", reviewed) || !IsKind(q.Kind) {
		t.Errorf("kind %q", q.Kind)
	}
	if len(q.Options) != 2 || !strings.HasPrefix(q.Options[0], "approve") || !strings.HasPrefix(q.Options[1], "reject") {
		t.Errorf("options %q: want A) approve B) reject", q.Options)
	}
	details := strings.Join(q.Details, "\n")
	for _, want := range []string{reviewed, "refs/heads/main", "900"} {
		if !strings.Contains(details, want) {
			t.Errorf("details %q lack %q", details, want)
		}
	}
}

func TestKindTellsEnvironmentsAndCommitsApartAndFitsAGateID(t *testing.T) {
	kinds := map[state.GateKind]string{}
	for _, env := range []string{"production", "staging", "prod uction", "production-eu"} {
		for _, sha := range []string{reviewed, later} {
			k := Kind(env, sha)
			if prev, dup := kinds[k]; dup {
				t.Fatalf("%s@%s and %s share kind %q", env, sha, prev, k)
			}
			kinds[k] = env + "@" + sha
			if id := "g999999-" + string(k); len(id) > 64 {
				t.Errorf("gate id %q is longer than 64 characters", id)
			}
		}
	}
	if Kind("Production", strings.ToUpper(reviewed)) != Kind("production", reviewed) {
		t.Error("the kind depends on the case of the environment or the commit")
	}
	if IsKind("confirm-deploy") || IsKind(state.GateNextCycle) {
		t.Error("IsKind accepts another gate's kind")
	}
}

func TestDecideUnmatchedFollowsThePolicy(t *testing.T) {
	cases := []struct {
		name    string
		cfg     config.DeployGate
		m       Matched
		verdict Verdict
		reason  Reason
		says    string
	}{
		{"ignore by default", gateCfg(), Matched{}, Ignore, Unmatched, "deploy_gate.unmatched: ignore"},
		{"reject when configured", config.DeployGate{Unmatched: config.UnmatchedReject}, Matched{}, Reject, Unmatched, "matches no autopilot issue"},
		{"ambiguous is rejected even under ignore", gateCfg(), Matched{Ambiguous: []int{3, 12}}, Reject, Ambiguous, "#3, #12"},
		{"an environment not listed is ignored even under reject", config.DeployGate{Unmatched: config.UnmatchedReject, Environments: []string{"staging"}}, Matched{}, Ignore, EnvNotGated, "not listed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := DecideUnmatched(c.cfg, req(reviewed), c.m)
			if d.Verdict != c.verdict || d.Reason != c.reason || !strings.Contains(d.Comment, c.says) {
				t.Fatalf("DecideUnmatched = %s (%s) %q, want %s (%s) saying %q", d.Verdict, d.Reason, d.Comment, c.verdict, c.reason, c.says)
			}
		})
	}
}
