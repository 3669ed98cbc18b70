package action_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
)

// openPR opens a pull request by devin with body and returns its number.
func (h *harness) openPR(body string) int {
	h.t.Helper()
	pr, err := h.gh.CreatePull(repo, "devin", "Add the CSV writer", body, "csv-writer", "ec26c3e57ca3a959ca5aad62de7213c562f8c821")
	if err != nil {
		h.t.Fatal(err)
	}
	return pr
}

// prOpened is pull_request.opened for PR pr, from GitHub's example.
func (h *harness) prOpened(pr int, body string) []byte {
	return ghtest.Mutate(h.t, ghtest.WithRepo(h.t, ghtest.Payload(h.t, "pull_request.opened.json"), repo), map[string]any{
		"number": pr, "pull_request.number": pr, "pull_request.body": body,
		"pull_request.user.login": "devin", "pull_request.user.type": "User", "sender.login": "devin", "sender.type": "User",
	})
}

// prComment posts a comment on the PR's conversation and returns the
// issue_comment payload, from GitHub's example of a comment on a PR.
func (h *harness) prComment(pr int, prBody, who, body string) []byte {
	h.t.Helper()
	c, err := h.gh.AddComment(repo, pr, who, body)
	if err != nil {
		h.t.Fatal(err)
	}
	return ghtest.Mutate(h.t, ghtest.WithRepo(h.t, ghtest.Payload(h.t, "issue_comment.created.pr.json"), repo), map[string]any{
		"issue.number": pr, "issue.body": prBody, "issue.labels": h.labels(pr), "issue.user.login": "devin",
		"comment.id": c.ID, "comment.body": body, "comment.user.login": who, "comment.user.type": "User",
		"comment.created_at": c.CreatedAt.UTC().Format(time.RFC3339), "comment.performed_via_github_app": nil,
		"sender.login": who, "sender.type": "User",
	})
}

// TestPRLinkingAndAnswers: a PR is linked by a closing keyword or an
// Autopilot-Issue line; a Choose answered on the linked PR's conversation
// applies to the issue's gate.
func TestPRLinkingAndAnswers(t *testing.T) {
	for _, tt := range []struct{ name, body string }{
		{"closing keyword", "This is a pretty simple change that we need to pull into master.\n\nFixes #%d"},
		{"Autopilot-Issue line", "Writer and endpoint.\n\nAutopilot-Issue: #%d"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			n := h.startRun("Add CSV export")
			h.toGate(n)
			body := fmt.Sprintf(tt.body, n)
			pr := h.openPR(body)
			r := h.run("pull_request", h.prOpened(pr, body))
			h.mustOK(r, "pull_request.opened")
			t.Logf("pull_request.opened linking one issue: %d API calls", r.calls)
			if st := h.state(n); len(st.LinkedPRs) != 1 || st.LinkedPRs[0] != pr {
				t.Fatalf("linked PRs %v, want [%d]", st.LinkedPRs, pr)
			}

			r = h.run("issue_comment", h.prComment(pr, body, "devin", "Nice, thanks!"))
			h.mustOK(r, "PR chatter")
			if r.calls != 0 {
				t.Errorf("a plain comment on a PR made %d API calls, want 0", r.calls)
			}

			r = h.run("issue_comment", h.prComment(pr, body, "maria", "A"))
			h.mustOK(r, "answer on the PR")
			t.Logf("a gate answer on the linked PR's conversation: %d API calls", r.calls)
			if r.outputs["issue"] != fmt.Sprint(n) || r.outputs["decision"] != "A" || r.outputs["step"] != "implement" {
				t.Errorf("outputs %v, want decision A on #%d", r.outputs, n)
			}
			st := h.state(n)
			if st.Gate != nil || len(st.Decisions) != 1 || st.Decisions[0].By != "maria" || !strings.Contains(st.Decisions[0].Link, "/pull/") {
				t.Fatalf("gate %v decisions %+v", st.Gate, st.Decisions)
			}
			var answer int64
			for _, c := range h.gh.Comments(repo, pr) {
				if c.Author.Login == "maria" {
					answer = c.ID
				}
			}
			if rs := h.gh.Reactions(answer); len(rs) != 1 || rs[0].Content != "+1" {
				t.Errorf("reactions on the PR answer %+v, want one 👍", rs)
			}
			if strings.Contains(strings.Join(h.gh.Labels(repo, pr), ","), "autopilot/") {
				t.Errorf("the PR got autopilot labels: %v", h.gh.Labels(repo, pr))
			}
		})
	}
}

// TestPRAnswerWithoutLinkEvent: the pull_request event was lost; the answer
// on the PR still applies (the PR body in the comment payload links it),
// and the PR is recorded as linked.
func TestPRAnswerWithoutLinkEvent(t *testing.T) {
	h := newHarness(t)
	n := h.startRun("Add CSV export")
	h.toGate(n)
	body := fmt.Sprintf("Closes #%d", n)
	pr := h.openPR(body)
	h.mustOK(h.run("issue_comment", h.prComment(pr, body, "maria", "B")), "answer")
	st := h.state(n)
	if len(st.Decisions) != 1 || st.Decisions[0].Option != "B" || len(st.LinkedPRs) != 1 || st.LinkedPRs[0] != pr {
		t.Errorf("decisions %+v linked %v", st.Decisions, st.LinkedPRs)
	}
}

// TestPRNotLinkedChangesNothing: an answer on a PR that links no issue, or
// an issue autopilot does not manage, changes nothing.
func TestPRNotLinkedChangesNothing(t *testing.T) {
	h := newHarness(t)
	n := h.startRun("Add CSV export")
	h.toGate(n)
	plain, _ := h.gh.CreateIssue(repo, "maria", "Unmanaged", "", nil)
	v := h.state(n).Version
	for _, body := range []string{
		fmt.Sprintf("Refactor; see #%d for context.", n), // a mention is not a link
		fmt.Sprintf("Fixes #%d", plain),                  // links an unmanaged issue
		fmt.Sprintf("```\nFixes #%d\n```", n),            // inside a code block
	} {
		pr := h.openPR(body)
		before := len(h.gh.Requests())
		h.mustOK(h.run("pull_request", h.prOpened(pr, body)), "opened")
		h.mustOK(h.run("issue_comment", h.prComment(pr, body, "maria", "A")), "answer")
		if m := mutations(h.requestsSince(before)); m != 0 {
			t.Errorf("PR %q: %d mutations", body, m)
		}
	}
	if st := h.state(n); st.Gate == nil || st.Version != v {
		t.Errorf("the issue changed: gate %v v%d→v%d", st.Gate, v, st.Version)
	}
}

// TestSweepRecoversPRAnswer: the answer's event was lost; the scheduled
// sweep reads the linked PR's conversation and applies it.
func TestSweepRecoversPRAnswer(t *testing.T) {
	h := newHarness(t)
	n := h.startRun("Add CSV export")
	h.toGate(n)
	body := fmt.Sprintf("Fixes #%d", n)
	pr := h.openPR(body)
	h.mustOK(h.run("pull_request", h.prOpened(pr, body)), "opened")
	h.prComment(pr, body, "maria", "A") // delivery lost
	if st := h.state(n); st.Gate == nil {
		t.Fatal("applied without a run")
	}
	r := h.run("schedule", ghtest.WithRepo(t, ghtest.Payload(t, "schedule.json"), repo))
	h.mustOK(r, "sweep")
	t.Logf("sweep of one issue with one linked PR, applying an answer: %d API calls", r.calls)
	if st := h.state(n); st.Gate != nil || len(st.Decisions) != 1 || st.Decisions[0].Option != "A" {
		t.Errorf("after the sweep: gate %v decisions %+v", st.Gate, st.Decisions)
	}
}

// TestStartDetectsTheFlow: without default_flow, the start lists the
// repository root through the contents API (ListDir) to pick the flow, and
// stays within the start budget.
func TestStartDetectsTheFlow(t *testing.T) {
	h := newHarness(t)
	for path, data := range map[string]string{".github/autopilot.yml": "jira:\n  enabled: false\n", "go.mod": "module acme/widgets\n", "cmd/widgets/main.go": "package main\n"} {
		if err := h.gh.SetFile(repo, path, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	// A first run creates the repository's labels; measure the second.
	first, _ := h.gh.CreateIssue(repo, "maria", "First", "", nil)
	h.addLabel(first, "autopilot")
	h.mustOK(h.run("issues", h.labeled(first, "maria")), "first start")
	n, _ := h.gh.CreateIssue(repo, "maria", "Add CSV export", "", nil)
	h.addLabel(n, "autopilot")
	before := len(h.gh.Requests())
	r := h.run("issues", h.labeled(n, "maria"))
	h.mustOK(r, "start")
	t.Logf("starting a run with flow detection: %d API calls", r.calls)
	if r.calls > 8 {
		t.Errorf("start with detection made %d API calls, budget 8", r.calls)
	}
	listed, status := false, 0
	for _, q := range h.requestsSince(before) {
		if q.Method == "GET" && strings.TrimSuffix(q.Path, "/") == "/repos/"+repo+"/contents" {
			listed, status = true, q.Status
		}
	}
	if !listed {
		t.Fatal("the start did not list the repository root")
	}
	if status != 200 {
		t.Fatalf("root listing answered %d, want 200", status)
	}
	if got := r.outputs["flow"]; got != "existing-code" {
		t.Errorf("flow %q, want existing-code for a repository with Go code", got)
	}
}
