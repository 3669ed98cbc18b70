package reliability

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// One task can never stop the others (PRODUCT §10 "Trackers"): fault cases
// on the sub-issue tracker, each run with a fresh client as an Action run
// has (so no request is held back by the previous run's memory). Measure:
// I2 for the untroubled tasks, each troubled task's outcome recorded on it,
// no request repeated unchanged, none inside a retry window.
func TestOneTaskTroubleIsThatTasksAlone(t *testing.T) {
	t.Run("deleted_transferred_and_closed", troubleGone)
	t.Run("link_refused_for_good", troubleRefusedLink)
	t.Run("limit_on_the_last_link", troubleLimitOnLink)
	t.Run("impostor_issues", troubleImpostors)
}

// noteRequestsInside counts requests sent inside a window [from, to).
func requestsInside(rs []fakegithub.Request, from, to time.Time) int {
	n := 0
	for _, r := range rs {
		if !r.Time.Before(from) && r.Time.Before(to) {
			n++
		}
	}
	return n
}

func (w *subWorld) num(i int) int {
	var n int
	fmt.Sscanf(w.tasks[i].Key, "#%d", &n)
	return n
}

// A deleted (410) and a transferred (301) task issue, and a closed one: the
// closed one ticks in the same run, the others record their outcome, and no
// later run reads the gone issues again.
func troubleGone(t *testing.T) {
	w := newSubWorld(t, 5)
	if err := w.gh.AddRepo("octo/archive"); err != nil {
		t.Fatal(err)
	}
	w.untilDone(10)
	w.checkI2()
	deleted, moved, closed := w.num(1), w.num(2), w.num(3)
	if err := w.gh.DeleteIssue(subRepo, deleted); err != nil {
		t.Fatal(err)
	}
	if _, err := w.gh.TransferIssue(subRepo, moved, "octo/archive"); err != nil {
		t.Fatal(err)
	}
	if err := w.gh.SetIssueState(subRepo, closed, "closed", false); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(time.Hour)
	w.run(0)
	if w.tasks[1].Gone != state.IssueDeleted || w.tasks[2].Gone != state.IssueTransferred || !w.tasks[3].Done {
		t.Fatalf("outcomes: %q %q done %v; want deleted, transferred, ticked", w.tasks[1].Gone, w.tasks[2].Gone, w.tasks[3].Done)
	}
	w.gh.ResetLog()
	for i := 0; i < 3; i++ {
		w.clock.Advance(time.Hour)
		w.run(0)
	}
	for _, n := range []int{deleted, moved} {
		if c := w.gh.Count(fmt.Sprintf("GET /repos/*/*/issues/%d", n)); c != 0 {
			t.Errorf("#%d read %d times after its outcome was recorded", n, c)
		}
	}
}

// The task issue was created but its link failed (500); a person then filed
// it under another issue. The link's 422 is final: sent at most once over
// many runs, the task adopted where it is, the others created and linked.
func troubleRefusedLink(t *testing.T) {
	w := newSubWorld(t, 4)
	w.gh.AddToken("tok-maria", fakegithub.Identity{Login: "maria"})
	other, err := w.gh.CreateIssue(subRepo, "maria", "Another plan", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	w.gh.Script("POST", "/repos/*/*/issues/*/sub_issues", fakegithub.Fail(500))
	w.run(0) // the epic is created, its link fails
	bodies, _ := w.gh.IssueBodies(subRepo)
	orphan := 0
	for n, b := range bodies {
		if strings.Contains(b, w.tasks[0].IdemKey) {
			orphan = n
		}
	}
	if orphan == 0 {
		t.Fatal("the epic's issue was not created")
	}
	id := issueID(t, w, orphan)
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/repos/%s/issues/%d/sub_issues", w.gh.URL(), subRepo, other),
		strings.NewReader(fmt.Sprintf(`{"sub_issue_id":%d}`, id)))
	req.Header.Set("Authorization", "token tok-maria")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 201 {
		t.Fatalf("maria files #%d under #%d: %v %v", orphan, other, resp, err)
	}
	for i := 0; i < 8; i++ {
		w.clock.Advance(time.Minute)
		w.run(0)
	}
	refused := 0
	for _, r := range w.gh.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/sub_issues") && strings.Contains(r.Body, fmt.Sprint(id)) && r.Status == 422 {
			refused++
		}
	}
	if refused > 1 {
		t.Errorf("the refused link was sent %d times, want at most once", refused)
	}
	for _, tk := range w.tasks {
		if tk.Sync != state.SyncCreated {
			t.Errorf("task %s: %s (remark %q), want created", tk.ID, tk.Sync, tk.Remark)
		}
	}
	if w.tasks[0].Key != fmt.Sprintf("#%d", orphan) || w.tasks[0].Remark == "" {
		t.Errorf("epic: %s remark %q, want #%d adopted with a remark", w.tasks[0].Key, w.tasks[0].Remark, orphan)
	}
}

func issueID(t *testing.T, w *subWorld, n int) int64 {
	t.Helper()
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/repos/%s/issues/%d", w.gh.URL(), subRepo, n), nil)
	req.Header.Set("Authorization", "token tok-bot")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var is struct {
		ID int64 `json:"id"`
	}
	if err := decodeJSON(resp, &is); err != nil {
		t.Fatal(err)
	}
	return is.ID
}

// A secondary limit (403 + retry-after 120) answers the link of the run's
// last create: the run records the window, and no run sends anything inside
// it; the outbox then drains without a duplicate.
func troubleLimitOnLink(t *testing.T) {
	w := newSubWorld(t, 1) // the epic alone
	w.gh.Script("POST", "/repos/*/*/issues/*/sub_issues", fakegithub.SecondaryRateLimit(120*time.Second))
	start := w.clock.Now()
	w.run(0)
	if w.retryAt.Before(start.Add(119 * time.Second)) {
		t.Fatalf("retry at %v after a 403 with retry-after 120 at %v", w.retryAt, start)
	}
	end := w.retryAt
	for i := 0; i < 3; i++ {
		w.clock.Advance(30 * time.Second)
		w.run(0)
	}
	w.untilDone(5)
	w.checkI2()
	var limitAt time.Time
	for _, r := range w.gh.Requests() {
		if r.Status == 403 {
			limitAt = r.Time
		}
	}
	if n := requestsInside(w.gh.Requests(), limitAt.Add(time.Nanosecond), end); n != 0 || limitAt.IsZero() {
		for _, r := range w.gh.Requests() {
			t.Logf("%v %s %s %d", r.Time.Sub(start), r.Method, r.Path, r.Status)
		}
		t.Errorf("%d requests inside the window", n)
	}
}

// github-actions[bot] plants issues carrying the tasks' markers (one names
// itself as parent). With our own bot trusted they are ignored, never
// linked, said once; every task is created by us and linked.
func troubleImpostors(t *testing.T) {
	w := newSubWorld(t, 3)
	w.trust = "autopilot[bot]"
	w.gh.AddActionsToken("tok-actions", subRepo)
	var planted []int
	for i, tk := range w.tasks {
		parent := w.root
		body := fmt.Sprintf(`{"title":"planted","body":"<!-- autopilot:task %s parent=%d kind=task -->","labels":["autopilot/task"]}`, tk.IdemKey, parent)
		req, _ := http.NewRequest("POST", fmt.Sprintf("%s/repos/%s/issues", w.gh.URL(), subRepo), strings.NewReader(body))
		req.Header.Set("Authorization", "token tok-actions")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var is struct {
			Number int `json:"number"`
		}
		if err := decodeJSON(resp, &is); err != nil {
			t.Fatal(err)
		}
		planted = append(planted, is.Number)
		if i == 2 {
			if err := w.gh.SetBody(subRepo, is.Number, fmt.Sprintf("<!-- autopilot:task %s parent=%d kind=task -->", tk.IdemKey, is.Number)); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.untilDone(6)
	w.run(0)
	for i, tk := range w.tasks {
		if tk.Key == fmt.Sprintf("#%d", planted[i]) {
			t.Errorf("task %s adopted the planted #%d", tk.ID, planted[i])
		}
		if !strings.Contains(tk.Remark, fmt.Sprintf("ignored #%d", planted[i])) {
			t.Errorf("task %s remark %q", tk.ID, tk.Remark)
		}
	}
	for _, n := range planted {
		if kids, _ := w.gh.SubIssues(subRepo, w.root); contains(kids, n) {
			t.Errorf("planted #%d linked under #%d", n, w.root)
		}
	}
}

func decodeJSON(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
