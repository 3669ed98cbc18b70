package action_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
)

// threadLengths are the thread lengths PRODUCT §13 names for the
// calls-per-answer figures.
var threadLengths = []int{0, 150, 1000, 2500}

// lateLabelled is the length of the thread an issue had when it was
// labelled, in the row for an issue labelled late: its state comment is not
// among the first 100 comments.
const lateLabelled = 250

// TestCallsByThreadLength prints the billed calls (a 304 is free) of a
// start on an issue that already holds n comments, and of a plain chatter
// comment and a gate answer on an issue that collected n comments since its
// start, plus a row for an issue labelled after it had lateLabelled
// comments, and fails over PRODUCT §13's budgets: answer ≤ 6, chatter ≤ 3,
// start ≤ 8 at any length. CI runs it with -v so the log shows the table
// (.ci/run).
func TestCallsByThreadLength(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds up to 2,500 comments")
	}
	type row struct {
		n                               string
		start, chatter, answer, catchup int
	}
	var rows []row
	check := func(t *testing.T, r row) {
		t.Helper()
		rows = append(rows, r)
		if r.start > 8 || r.chatter > 3 || r.answer > 6 {
			t.Errorf("%s comments: start %d (≤ 8), chatter %d (≤ 3), answer %d (≤ 6) billed calls", r.n, r.start, r.chatter, r.answer)
		}
	}
	for _, n := range threadLengths {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			h := newHarness(t)
			// The first run in a repository creates its labels (PRODUCT
			// §13 budgets a start "once its labels exist").
			h.startRunAfter("Warm-up", 0)
			// A start on an issue that already has n comments (history:
			// the run has not begun).
			h.startRunAfter("Long before the label", n)
			startCalls := h.last.calls
			h.logCalls("start", h.starts[len(h.starts)-1])
			// An issue that lives long: n comments after the start.
			is := h.startRunAfter("Long thread", 0)
			h.toGate(is)
			// n more comments while the run waits, each handled by its
			// own run in real life; here one catch-up run reads them all
			// (its cost grows with what is new, which is the point).
			h.seedChatter(is, n)
			r := h.run("issue_comment", h.comment(is, "devin", "one more remark"))
			h.mustOK(r, "catch-up")
			catchup := r.calls
			h.assertNoPageTwice(is)
			chatter, answer := h.chatterAndAnswer(is, n)
			check(t, row{fmt.Sprint(n), startCalls, chatter, answer, catchup})
		})
	}
	t.Run(fmt.Sprintf("labelled after %d", lateLabelled), func(t *testing.T) {
		// Its state comment is not on the first page of the thread: each
		// event must still read only what is new.
		h := newHarness(t)
		h.startRunAfter("Warm-up", 0)
		is := h.startRunAfter("Labelled late", lateLabelled)
		startCalls := h.last.calls
		h.toGate(is)
		h.assertNoPageTwice(is)
		chatter, answer := h.chatterAndAnswer(is, lateLabelled)
		check(t, row{fmt.Sprintf("%d+late", lateLabelled), startCalls, chatter, answer, -1})
	})
	t.Log("billed API calls by thread length (PRODUCT §13: start ≤ 8, chatter ≤ 3, answer ≤ 6):")
	t.Logf("%10s %6s %8s %7s %14s", "comments", "start", "chatter", "answer", "catch-up(n new)")
	for _, r := range rows {
		catchup := "—" // no catch-up run in the late-labelled row
		if r.catchup >= 0 {
			catchup = fmt.Sprint(r.catchup)
		}
		t.Logf("%10s %6d %8d %7d %14s", r.n, r.start, r.chatter, r.answer, catchup)
	}
}

// chatterAndAnswer runs a plain chatter comment and then a gate answer on
// issue is (at the gate), checks that neither lists what earlier runs read,
// and returns their billed calls.
func (h *harness) chatterAndAnswer(is, n int) (chatter, answer int) {
	h.t.Helper()
	mark := len(h.gh.Requests())
	r := h.run("issue_comment", h.comment(is, "devin", "sounds good to me"))
	h.mustOK(r, "chatter")
	chatter = r.calls
	h.logCalls("chatter", mark)
	mark = len(h.gh.Requests())
	r = h.run("issue_comment", h.comment(is, "maria", "A"))
	h.mustOK(r, "answer")
	if r.outputs["decision"] != "A" {
		h.t.Fatalf("answer not applied at %d comments: %v\n%s", n, r.outputs, r.stdout)
	}
	answer = r.calls
	h.logCalls("answer", mark)
	h.assertNoPageTwice(is)
	return chatter, answer
}

// startRunAfter creates an issue with n comments by people, then labels it
// and runs the start.
func (h *harness) startRunAfter(title string, n int) int {
	h.t.Helper()
	if err := h.gh.SetFile(repo, ".github/autopilot.yml", []byte(greenfieldConfig)); err != nil {
		h.t.Fatal(err)
	}
	is, err := h.gh.CreateIssue(repo, "maria", title, "Users want it.", nil)
	if err != nil {
		h.t.Fatal(err)
	}
	h.seedChatter(is, n)
	h.addLabel(is, "autopilot")
	h.last = h.run("issues", h.labeled(is, "maria"))
	h.mustOK(h.last, "start")
	return is
}

// seedChatter adds discussion comments straight into the fake (no run), a
// minute apart on the fake's clock, as a thread collects them over days.
func (h *harness) seedChatter(n, count int) {
	h.t.Helper()
	for i := range count {
		h.skew.Add(int64(time.Minute))
		if _, err := h.gh.AddComment(repo, n, "devin", fmt.Sprintf("remark %d: I had a look and it seems fine.", i)); err != nil {
			h.t.Fatal(err)
		}
	}
}

func (h *harness) logCalls(what string, from int) {
	if os.Getenv("E2E_LOG") == "" {
		return
	}
	for _, q := range h.gh.Requests()[from:] {
		h.t.Logf("  %s: %s %s?%s → %d", what, q.Method, q.Path, q.Query, q.Status)
	}
}

// assertNoPageTwice fails when a run lists a page of the issue's comments
// that an earlier run already processed: every comment on it (but the state
// comment, which each write edits) was read by an earlier run. Through REST
// the first page of the thread (where the state comment lives) is exempt; a
// 304 is free and carries nothing. Through GraphQL (most recently updated
// first) no page is exempt: the first one holds what is new.
func (h *harness) assertNoPageTwice(n int) {
	h.t.Helper()
	path := fmt.Sprintf("/repos/%s/issues/%d/comments", repo, n)
	var stateID int64
	for _, c := range h.gh.Comments(repo, n) {
		if c.Author.Login == fakegithub.ActionsBotLogin && strings.HasPrefix(c.Body, "<!-- autopilot:state -->") {
			stateID = c.ID
		}
	}
	reqs := h.gh.Requests()
	read := map[int64]bool{} // read by runs before the current one
	var current []int64
	run := 0
	for i, q := range reqs {
		for run+1 < len(h.starts) && h.starts[run+1] <= i {
			run++
			for _, id := range current {
				read[id] = true
			}
			current = nil
		}
		what := ""
		switch {
		case q.Method == "POST" && q.Path == "/graphql" && q.Status == 200:
			var body struct {
				Variables struct {
					Number int    `json:"number"`
					Before string `json:"before"`
				} `json:"variables"`
			}
			if json.Unmarshal([]byte(q.Body), &body) != nil || body.Variables.Number != n {
				continue
			}
			what = "GraphQL page"
			if body.Variables.Before != "" {
				what += " before " + body.Variables.Before
			}
		case q.Method == "GET" && q.Path == path && q.Status == 200:
			v, _ := url.ParseQuery(q.Query)
			if v.Get("since") == "" && (v.Get("page") == "" || v.Get("page") == "1") {
				current = append(current, q.ListedIDs()...)
				continue
			}
			what = q.Query
		default:
			continue
		}
		current = append(current, q.ListedIDs()...)
		fresh := len(q.ListedIDs()) == 0 // an empty thread: nothing to skip
		for _, id := range q.ListedIDs() {
			if id != stateID && !read[id] {
				fresh = true
			}
		}
		if !fresh {
			h.t.Errorf("run %d lists a page of #%d's comments that earlier runs already read (%s, %d comments)", run+1, n, what, len(q.ListedIDs()))
		}
	}
}
