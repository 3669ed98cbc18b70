package action_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

// greenfieldConfig pins the flow so a start needs no detection.
const greenfieldConfig = "default_flow: greenfield\njira:\n  enabled: false\n"

// startRun opens an issue, labels it and runs the binary for the label.
func (h *harness) startRun(title string) int {
	h.t.Helper()
	if err := h.gh.SetFile(repo, ".github/autopilot.yml", []byte(greenfieldConfig)); err != nil {
		h.t.Fatal(err)
	}
	n, err := h.gh.CreateIssue(repo, "maria", title, "Users want it.", nil)
	if err != nil {
		h.t.Fatal(err)
	}
	h.addLabel(n, "autopilot")
	h.mustOK(h.run("issues", h.labeled(n, "maria")), "start")
	return n
}

// toGate drives issue n to the decompose gate (a Choose block).
func (h *harness) toGate(n int) {
	h.t.Helper()
	for _, s := range []string{"problem", "research", "plan"} {
		h.mustOK(h.run("issue_comment", h.comment(n, "devin", "/autopilot done "+s+" finished")), "done "+s)
	}
	h.mustOK(h.run("issue_comment", h.comment(n, "devin", "/autopilot done decomposed\n\n```autopilot-tasks\n- title: Writer\n- title: Endpoint\n```")), "decompose")
	if st := h.state(n); st.Gate == nil {
		h.t.Fatal("no gate after decompose")
	}
}

// requestsSince returns the fake's log from index i on.
func (h *harness) requestsSince(i int) []fakegithub.Request { return h.gh.Requests()[i:] }

// mutations counts mutating requests in rs.
func mutations(rs []fakegithub.Request) int {
	k := 0
	for _, r := range rs {
		if r.IsMutation() {
			k++
		}
	}
	return k
}

// stateComment returns the bot's state comment of issue n.
func (h *harness) stateComment(n int) fakegithub.Comment {
	h.t.Helper()
	for _, c := range h.gh.Comments(repo, n) {
		if c.Author.Login == fakegithub.ActionsBotLogin && strings.HasPrefix(c.Body, state.Marker) {
			return c
		}
	}
	h.t.Fatalf("#%d has no state comment", n)
	return fakegithub.Comment{}
}

// botComments counts the bot's comments on n whose first line contains s.
func (h *harness) botComments(n int, s string) int {
	k := 0
	for _, c := range h.gh.Comments(repo, n) {
		first, _, _ := strings.Cut(c.Body, "\n")
		if c.Author.Login == fakegithub.ActionsBotLogin && strings.Contains(first, s) {
			k++
		}
	}
	return k
}

// editedEvent is issue_comment.edited for the bot's comment c, edited by
// editor to its current body.
func (h *harness) editedEvent(n int, c fakegithub.Comment, editor, before string) []byte {
	app := map[string]any{"id": fakegithub.ActionsAppID, "slug": "github-actions"}
	return ghtest.Mutate(h.t, ghtest.WithRepo(h.t, ghtest.Payload(h.t, "issue_comment.edited.json"), repo), map[string]any{
		"issue.number": n, "issue.labels": h.labels(n), "comment.id": c.ID, "comment.body": c.Body,
		"comment.user.login": fakegithub.ActionsBotLogin, "comment.user.type": "Bot", "comment.performed_via_github_app": app,
		"changes.body.from": before, "sender.login": editor, "sender.type": "User",
	})
}

// botComment posts a comment by another bot account and returns its
// payload, built from GitHub's example of a bot's comment.
func (h *harness) botComment(n int, login, body string) []byte {
	h.t.Helper()
	h.gh.AddUser(login, "Bot")
	c, err := h.gh.AddComment(repo, n, login, body)
	if err != nil {
		h.t.Fatal(err)
	}
	return ghtest.Mutate(h.t, ghtest.WithRepo(h.t, ghtest.Payload(h.t, "issue_comment.created.bot.json"), repo), map[string]any{
		"issue.number": n, "issue.labels": h.labels(n), "comment.id": c.ID, "comment.body": body,
		"comment.user.login": login, "comment.created_at": c.CreatedAt.UTC().Format(time.RFC3339),
		"sender.login": login, "sender.type": "Bot",
	})
}

func TestHostileEventFiles(t *testing.T) {
	h := newHarness(t)
	n := h.startRun("Add CSV export")
	full := h.comment(n, "devin", "/autopilot done problem framed")
	tests := []struct {
		name    string
		event   string
		payload []byte
		code    int
		stdout  []string
	}{
		{"truncated event file", "issue_comment", full[:len(full)/2], 1, []string{"::error::", "event file", "issue_comment"}},
		{"empty event file", "issue_comment", nil, 1, []string{"::error::", "event file"}},
		{"not JSON at all", "issues", []byte("<html>502 Bad Gateway</html>"), 1, []string{"::error::", "event file"}},
		{"a handled event without its issue", "issue_comment", ghtest.Mutate(t, full, map[string]any{"issue": ghtest.Delete}), 1, []string{"::error::", "issue"}},
		{"unknown event", "star", ghtest.Payload(t, "star.created.json"), 0, []string{"not an event autopilot acts on"}},
		{"unknown action of a known event", "issues", ghtest.Payload(t, "issues.opened.json"), 0, []string{"not an event autopilot acts on"}},
		{"an event the docs never mention", "deployment_status", []byte(`{"action":"created"}`), 0, []string{"nothing to do"}},
		{"the bot's own comment", "issue_comment", ghtest.Mutate(t, full, map[string]any{"sender.login": fakegithub.ActionsBotLogin, "sender.type": "Bot"}), 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(h.gh.Requests())
			r := h.run(tt.event, tt.payload)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\n%s", r.code, tt.code, r.stdout)
			}
			for _, want := range tt.stdout {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("output lacks %q:\n%s", want, r.stdout)
				}
			}
			if got := len(h.gh.Requests()) - before; got != 0 {
				t.Errorf("%d API requests, want 0", got)
			}
		})
	}
	// The comment whose delivery was broken is still applied by the next run.
	h.mustOK(h.run("issue_comment", h.comment(n, "devin", "/autopilot status")), "status")
	if st := h.state(n); st.Slug != "research" {
		t.Errorf("step %s after the next run, want research", st.Slug)
	}
}

// TestUnauthorisedAndBotAnswers: a read-only user's answer gets 😕 and one
// reply per gate; another bot's "A" is not an answer and gets nothing.
func TestUnauthorisedAndBotAnswers(t *testing.T) {
	h := newHarness(t)
	n := h.startRun("Add CSV export")
	h.toGate(n)
	gate := h.state(n).Gate.ID

	for i, body := range []string{"A", "B"} {
		payload := h.comment(n, "reader", body)
		r := h.run("issue_comment", payload)
		h.mustOK(r, "reader answer")
		var id int64
		for _, c := range h.gh.Comments(repo, n) {
			if c.Author.Login == "reader" && c.Body == body {
				id = c.ID
			}
		}
		reacts := h.gh.Reactions(id)
		if len(reacts) != 1 || reacts[0].Content != "confused" || reacts[0].User.Login != fakegithub.ActionsBotLogin {
			t.Errorf("answer %d: reactions %+v, want one 😕 by the bot", i, reacts)
		}
		t.Logf("refused answer by a read-only user: %d API calls", r.calls)
	}
	if got := h.botComments(n, "autopilot:reply"); got != 1 {
		t.Errorf("%d replies to the reader, want 1 per gate", got)
	}
	st := h.state(n)
	if st.Gate == nil || st.Gate.ID != gate || len(st.Decisions) != 0 {
		t.Fatalf("a read-only user's answer was applied: gate %v decisions %v", st.Gate, st.Decisions)
	}

	before := len(h.gh.Requests())
	r := h.run("issue_comment", h.botComment(n, "lint-bot[bot]", "A"))
	h.mustOK(r, "bot answer")
	if st := h.state(n); st.Gate == nil || len(st.Decisions) != 0 {
		t.Fatalf("a bot's comment was applied as an answer")
	}
	for _, q := range h.requestsSince(before) {
		if strings.Contains(q.Path, "/collaborators/") || strings.Contains(q.Path, "/reactions") || q.Method == "POST" && strings.HasSuffix(q.Path, "/comments") {
			t.Errorf("a bot's comment caused %s %s", q.Method, q.Path)
		}
	}
	t.Logf("another bot's comment on a gate: %d API calls", r.calls)
	// The maintainer's answer still works afterwards.
	h.mustOK(h.run("issue_comment", h.comment(n, "maria", "A")), "maria")
	if st := h.state(n); st.Gate != nil || len(st.Decisions) != 1 || st.Decisions[0].By != "maria" {
		t.Errorf("maria's answer: gate %v decisions %+v", st.Gate, st.Decisions)
	}
}

// TestEditedStateComment: a maintainer changes the human part of the state
// comment; the next run restores it and posts one notice, and later runs
// stay quiet (no crash loop).
func TestEditedStateComment(t *testing.T) {
	h := newHarness(t)
	n := h.startRun("Add CSV export")
	h.toGate(n)
	good := h.state(n)
	sc := h.stateComment(n)
	edited := strings.Replace(sc.Body, "## Autopilot State", "## Autopilot State\n\n**Decided: A** — maria", 1)
	if edited == sc.Body {
		t.Fatal("no heading to edit")
	}
	if _, err := h.gh.EditComment(sc.ID, "maria", edited); err != nil {
		t.Fatal(err)
	}
	now := h.stateComment(n)
	for i := 0; i < 3; i++ {
		r := h.run("issue_comment", h.editedEvent(n, now, "maria", sc.Body))
		h.mustOK(r, fmt.Sprintf("edited event %d", i))
		if i == 0 && !strings.Contains(r.stdout, "::warning::") {
			t.Errorf("no warning annotation about the restore:\n%s", r.stdout)
		}
	}
	h.mustOK(h.run("issue_comment", h.comment(n, "devin", "/autopilot status")), "status")
	st := h.state(n) // fails the test if the comment does not verify
	if st.Version <= good.Version || st.Gate == nil || st.Gate.ID != good.Gate.ID || len(st.Decisions) != 0 {
		t.Errorf("restored: v%d gate %v decisions %v (good was v%d)", st.Version, st.Gate, st.Decisions, good.Version)
	}
	if got := h.botComments(n, "autopilot:notice tamper-"); got != 1 {
		t.Errorf("%d tamper notices, want 1", got)
	}
	if strings.Contains(h.stateComment(n).Body, "Decided: A") {
		t.Error("the edit is still in the state comment")
	}
}

// TestTamperedStateBlock: the signed machine block is replaced; autopilot
// pauses with one notice, acts on nothing, and later runs exit 0 quietly.
func TestTamperedStateBlock(t *testing.T) {
	h := newHarness(t)
	n := h.startRun("Add CSV export")
	h.toGate(n)
	sc := h.stateComment(n)
	forged := *h.state(n)
	forged.Gate, forged.Run = nil, state.RunDone
	body, err := codec.Render(&forged, codec.View{}, []byte("guessed-key"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.gh.EditComment(sc.ID, "maria", body); err != nil {
		t.Fatal(err)
	}
	labels := strings.Join(h.gh.Labels(repo, n), ",")
	edited := h.stateComment(n)
	h.mustOK(h.run("issue_comment", h.editedEvent(n, edited, "maria", sc.Body)), "edited event")
	for i := 0; i < 3; i++ {
		r := h.run("issue_comment", h.comment(n, "maria", "A"))
		h.mustOK(r, fmt.Sprintf("answer %d while paused", i))
	}
	if got := h.botComments(n, "autopilot:notice state-lost"); got != 1 {
		t.Errorf("%d state-lost notices, want 1", got)
	}
	if h.stateComment(n).Body != body {
		t.Error("the tampered comment was overwritten while paused")
	}
	if got := strings.Join(h.gh.Labels(repo, n), ","); got != labels {
		t.Errorf("labels changed while paused: %s → %s", labels, got)
	}
}

// TestDeletedStateComment: one "state lost" notice, exit 0 on every later
// run, no second notice.
func TestDeletedStateComment(t *testing.T) {
	h := newHarness(t)
	n := h.startRun("Add CSV export")
	if err := h.gh.DeleteComment(h.stateComment(n).ID); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		r := h.run("issue_comment", h.comment(n, "devin", "/autopilot done problem framed"))
		h.mustOK(r, fmt.Sprintf("run %d after the delete", i))
		if i == 0 && !strings.Contains(r.stdout, "paused: state lost") {
			t.Errorf("no pause warning:\n%s", r.stdout)
		}
	}
	if got := h.botComments(n, "autopilot:notice state-lost"); got != 1 {
		t.Errorf("%d state-lost notices, want 1", got)
	}
	if got := h.botComments(n, state.Marker); got != 0 {
		t.Errorf("%d state comments appeared while paused", got)
	}
}

// TestSecondaryRateLimitIsWaitedOut: the first comment POST gets a 403
// secondary limit with retry-after: 1; the run waits, then succeeds.
func TestSecondaryRateLimitIsWaitedOut(t *testing.T) {
	h := newHarness(t)
	n := h.startRun("Add CSV export")
	h.gh.Script("POST", "/repos/*/*/issues/*/comments", fakegithub.SecondaryRateLimit(time.Second))
	before := len(h.gh.Requests())
	start := time.Now()
	r := h.run("issue_comment", h.comment(n, "devin", "/autopilot done problem framed"))
	h.mustOK(r, "limited run")
	if time.Since(start) < time.Second {
		t.Errorf("the run took %v, less than the retry-after", time.Since(start))
	}
	var posts []fakegithub.Request
	for _, q := range h.requestsSince(before) {
		if q.Method == "POST" && strings.HasSuffix(q.Path, "/comments") {
			posts = append(posts, q)
		}
	}
	if len(posts) != 2 || posts[0].Status != 403 || posts[1].Status != 201 {
		t.Fatalf("comment POSTs %+v, want a 403 then a 201", posts)
	}
	if gap := posts[1].Time.Sub(posts[0].Time); gap < time.Second {
		t.Errorf("retried after %v, inside the 1 s window", gap)
	}
	if got := h.botComments(n, "autopilot:announce"); got != 2 {
		t.Errorf("%d announcements, want 2 (start and research)", got)
	}
	if h.gh.PendingSteps() != 0 {
		t.Error("the scripted limit was never hit")
	}
}

// TestPrimaryRateLimitDefers: the budget is exhausted until 40 minutes
// from now; the run exits 1 saying "deferred" without any mutation, and
// the next run after the reset applies the comment.
func TestPrimaryRateLimitDefers(t *testing.T) {
	h := newHarness(t)
	n := h.startRun("Add CSV export")
	if err := h.gh.SetRateLimit(token, 1000, 0, time.Now().Add(40*time.Minute)); err != nil {
		t.Fatal(err)
	}
	before := len(h.gh.Requests())
	r := h.run("issue_comment", h.comment(n, "devin", "/autopilot done problem framed"))
	if r.code != 1 || !strings.Contains(r.stdout, "::error::") || !strings.Contains(r.stdout, "deferred") {
		t.Fatalf("exit %d, want 1 with a deferred error:\n%s", r.code, r.stdout)
	}
	rs := h.requestsSince(before)
	if mutations(rs) != 0 {
		t.Errorf("%d mutations while rate limited", mutations(rs))
	}
	if len(rs) != 1 {
		t.Errorf("%d requests, want 1 (nothing inside the window)", len(rs))
	}
	if err := h.gh.SetRateLimit(token, 1000, 1000, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	h.mustOK(h.run("issue_comment", h.comment(n, "devin", "/autopilot status")), "after the reset")
	if st := h.state(n); st.Slug != "research" {
		t.Errorf("step %s after the reset, want research (the deferred comment applied)", st.Slug)
	}
}

// TestForbiddenIsNotRetried: a 403 that means "forbidden" fails the run at
// once; the next run performs the outstanding comment exactly once.
func TestForbiddenIsNotRetried(t *testing.T) {
	h := newHarness(t)
	n := h.startRun("Add CSV export")
	h.gh.Script("POST", "/repos/*/*/issues/*/comments", fakegithub.Step{Status: 403,
		Body: `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/issues/comments#create-an-issue-comment","status":"403"}`})
	before := len(h.gh.Requests())
	r := h.run("issue_comment", h.comment(n, "devin", "/autopilot done problem framed"))
	if r.code != 1 || !strings.Contains(r.stdout, "Resource not accessible by integration") {
		t.Fatalf("exit %d, want 1 naming the 403:\n%s", r.code, r.stdout)
	}
	posts := 0
	for _, q := range h.requestsSince(before) {
		if q.Method == "POST" && strings.HasSuffix(q.Path, "/comments") {
			posts++
		}
	}
	if posts != 1 {
		t.Errorf("%d comment POSTs, want 1 (a forbidden 403 is not retried)", posts)
	}
	h.mustOK(h.run("issue_comment", h.comment(n, "devin", "/autopilot status")), "next run")
	if got := h.botComments(n, "autopilot:announce"); got != 2 {
		t.Errorf("%d announcements after recovery, want 2", got)
	}
}

// TestDryRun: dry_run prints what it would do and changes nothing.
func TestDryRun(t *testing.T) {
	h := newHarness(t)
	if err := h.gh.SetFile(repo, ".github/autopilot.yml", []byte(greenfieldConfig)); err != nil {
		t.Fatal(err)
	}
	n, _ := h.gh.CreateIssue(repo, "maria", "Add CSV export", "", nil)
	h.addLabel(n, "autopilot")
	before := len(h.gh.Requests())
	r := h.run("issues", h.labeled(n, "maria"), "INPUT_DRY_RUN=true")
	h.mustOK(r, "dry run")
	if m := mutations(h.requestsSince(before)); m != 0 {
		t.Errorf("%d mutations in a dry run", m)
	}
	for _, want := range []string{"dry-run: would write state v1 of #1", "dry-run: would comment on #1", "<!-- autopilot:announce"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry-run output lacks %q:\n%s", want, r.stdout)
		}
	}
	if r.outputs["step"] != "problem" || r.outputs["status"] != "in-progress" {
		t.Errorf("outputs %v: a dry run still reports what it computed", r.outputs)
	}
	if len(h.gh.Comments(repo, n)) != 0 {
		t.Error("a dry run left comments")
	}
}

// TestOutputsSummaryAndTelemetry: outputs, the step summary and one
// telemetry line per run (schema 1, api_calls as the fake counted them).
func TestOutputsSummaryAndTelemetry(t *testing.T) {
	h := newHarness(t)
	n := h.startRun("Add CSV export")
	h.toGate(n)
	tel := filepath.Join(h.dir, "telemetry", "autopilot.jsonl")
	if err := os.MkdirAll(filepath.Dir(tel), 0o755); err != nil {
		t.Fatal(err)
	}
	// An earlier line without its newline must not be glued to ours.
	if err := os.WriteFile(tel, []byte(`{"schema_version":1,"event":"older"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	extra := []string{"INPUT_TELEMETRY_PATH=" + tel, "GITHUB_RUN_ID=7712345678"}
	r := h.run("issue_comment", h.comment(n, "maria", "A"), extra...)
	h.mustOK(r, "answer")
	want := map[string]string{"issue": fmt.Sprint(n), "flow": "greenfield", "step": "implement", "status": "in-progress", "decision": "A"}
	for k, v := range want {
		if r.outputs[k] != v {
			t.Errorf("output %s = %q, want %q", k, r.outputs[k], v)
		}
	}
	sum, err := os.ReadFile(filepath.Join(h.dir, fmt.Sprintf("summary-%d", h.n)))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"### autopilot — `issue_comment.created`", "| Issue | Flow | Step | Status | Decision |",
		fmt.Sprintf("| #%d | greenfield | implement | in-progress | A |", n), "API calls: "} {
		if !strings.Contains(string(sum), s) {
			t.Errorf("step summary lacks %q:\n%s", s, sum)
		}
	}
	answerCalls := r.calls

	// A comment on an unmanaged issue: nothing to do, still summarised.
	plain, _ := h.gh.CreateIssue(repo, "maria", "Plain", "", nil)
	r = h.run("issue_comment", h.comment(plain, "devin", "+1"), extra...)
	h.mustOK(r, "unmanaged")
	if r.outputs["issue"] != "" || r.outputs["decision"] != "" {
		t.Errorf("outputs for nothing to do: %v", r.outputs)
	}
	sum, _ = os.ReadFile(filepath.Join(h.dir, fmt.Sprintf("summary-%d", h.n)))
	if !strings.Contains(string(sum), "Nothing to do for this event.") {
		t.Errorf("summary for nothing to do:\n%s", sum)
	}

	f, err := os.Open(tel)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("telemetry line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 3 || lines[0]["event"] != "older" {
		t.Fatalf("telemetry has %d lines (%v), want the old one and 2 new", len(lines), lines)
	}
	got := lines[1]
	for k, v := range map[string]any{"schema_version": 1.0, "run_id": "7712345678", "event": "issue_comment.created", "issue": float64(n),
		"flow": "greenfield", "step_after": "implement", "status": "in-progress", "decision": "A", "api_calls": float64(answerCalls)} {
		if got[k] != v {
			t.Errorf("telemetry %s = %v, want %v", k, got[k], v)
		}
	}
	if _, err := time.Parse(time.RFC3339, fmt.Sprint(got["at"])); err != nil {
		t.Errorf("telemetry at %v: %v", got["at"], err)
	}
	if lines[2]["api_calls"] != 0.0 || lines[2]["issue"] != nil {
		t.Errorf("telemetry of the no-op run: %v", lines[2])
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(tel), ".autopilot-telemetry-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// TestGateAnswerAfterStatusStaysInBudget: a /autopilot status right before
// the answer (its classification stored with its reply: load, permission,
// state write, reaction, reply, read-back) must not push the answer over
// its budget of 6 calls.
func TestGateAnswerAfterStatusStaysInBudget(t *testing.T) {
	h := newHarness(t)
	n := h.startRun("Add CSV export")
	h.toGate(n)
	r := h.run("issue_comment", h.comment(n, "devin", "/autopilot status"))
	h.mustOK(r, "status")
	statusCalls := r.calls
	if statusCalls > 6 {
		t.Errorf("status at a gate: %d API calls, budget 6", statusCalls)
	}
	r = h.run("issue_comment", h.comment(n, "maria", "A"))
	h.mustOK(r, "answer")
	t.Logf("status at a gate %d calls; the answer after it %d calls", statusCalls, r.calls)
	if r.calls > 6 {
		t.Errorf("gate answer after a status command: %d API calls, budget 6", r.calls)
	}
}
