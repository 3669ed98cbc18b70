package github

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/reconcile/trackersync"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// One task's trouble is that task's alone (PRODUCT §10 "Trackers"): these
// tests run the sub-issue tracker through the real client against the fake
// GitHub, which answers as GitHub does.

// untilSettled runs syncs (a minute apart, or at the retry time) until
// nothing waits or max runs; it returns the last result.
func (e *subEnv) untilSettled(tasks []state.Task, max int) tasksync.Result {
	e.t.Helper()
	var res tasksync.Result
	var retryAt time.Time
	for i := 0; i < max; i++ {
		res = e.syncRun(tasks, retryAt)
		tasks, retryAt = res.Tasks, res.RetryAt
		if res.Waiting == 0 {
			break
		}
		next := e.clock.Now().Add(time.Minute)
		if retryAt.After(next) {
			next = retryAt
		}
		e.clock.AdvanceTo(next)
	}
	return res
}

// personLinks links child under parent as a person does in the web UI.
func (e *subEnv) personLinks(parent, child int) {
	e.t.Helper()
	e.s.AddToken("tok-alice", fakegithub.Identity{Login: "alice"})
	is, err := e.c.ReadIssue(context.Background(), child)
	if err != nil {
		e.t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/repos/%s/issues/%d/sub_issues", e.s.URL(), subRepo, parent),
		strings.NewReader(fmt.Sprintf(`{"sub_issue_id":%d}`, is.ID)))
	req.Header.Set("Authorization", "token tok-alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		e.t.Fatalf("alice links #%d under #%d: %d %s", child, parent, resp.StatusCode, b)
	}
}

func (e *subEnv) requestsTo(method, path string) int {
	n := 0
	for _, r := range e.s.Requests() {
		if r.Method == method && r.Path == path {
			n++
		}
	}
	return n
}

// A deleted task issue (410), one not found (404) and a transferred one
// (301) each get their own outcome in the task, the closed one still ticks,
// and a later pass sends nothing to the gone issues.
func TestGoneTaskIssuesAreTheirTasksAloneAndTheOthersTick(t *testing.T) {
	e := newSubEnv(t)
	if err := e.s.AddRepo("octo/elsewhere"); err != nil {
		t.Fatal(err)
	}
	tasks := e.untilSettled(declare(e.root, 5), 5).Tasks
	e.checkConverged(tasks)
	deleted, missing, moved, closed := numOf(tasks[0].Key), numOf(tasks[1].Key), numOf(tasks[2].Key), numOf(tasks[3].Key)
	if err := e.s.DeleteIssue(subRepo, deleted); err != nil {
		t.Fatal(err)
	}
	to, err := e.s.TransferIssue(subRepo, moved, "octo/elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	// #missing leaves the tree (someone unlinked it) and then reads 404.
	if err := e.s.DeleteIssue(subRepo, missing); err != nil {
		t.Fatal(err)
	}
	e.s.Script("GET", fmt.Sprintf("/repos/*/*/issues/%d", missing), fakegithub.Fail(404), fakegithub.Fail(404), fakegithub.Fail(404))
	if err := e.s.SetIssueState(subRepo, closed, "closed", false); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	res := e.syncRun(tasks, time.Time{})
	got := res.Tasks
	if !got[3].Done || res.Ticked != 1 {
		t.Errorf("closed task: done %v, ticked %d; want it ticked despite the others (note %q)", got[3].Done, res.Ticked, res.Note)
	}
	want := map[int]string{0: state.IssueDeleted, 1: state.IssueNotFound, 2: state.IssueTransferred, 3: "", 4: ""}
	for i, g := range want {
		if got[i].Gone != g {
			t.Errorf("task %s (%s): gone %q, want %q", got[i].ID, got[i].Key, got[i].Gone, g)
		}
	}
	if wantURL := fmt.Sprintf("https://github.com/octo/elsewhere/issues/%d", to); !strings.Contains(got[2].Remark, wantURL) {
		t.Errorf("transferred task's remark %q lacks %s", got[2].Remark, wantURL)
	}
	if !res.RetryAt.IsZero() || res.Waiting != 0 {
		t.Errorf("retry at %v, waiting %d: want neither", res.RetryAt, res.Waiting)
	}
	// A later pass reads none of them again, and closes none.
	e.s.ResetLog()
	e.clock.Advance(time.Hour)
	res = e.syncRun(got, time.Time{})
	for _, n := range []int{deleted, missing, moved} {
		if c := e.requestsTo("GET", fmt.Sprintf("/repos/%s/issues/%d", subRepo, n)); c != 0 {
			t.Errorf("#%d read %d times after its outcome was recorded", n, c)
		}
	}
	if res.Tasks[0].Gone != state.IssueDeleted || res.Tasks[3].Done != true {
		t.Errorf("second pass changed the outcomes: %+v", res.Tasks)
	}
	for _, tk := range res.Tasks[:3] {
		if tk.Closable() {
			t.Errorf("task %s is still closable (close_children would send to a gone issue)", tk.ID)
		}
	}
}

// A task issue created but not linked (500), then filed by a person under
// another parent: the link's 422 is final for that task (sent once, never
// again), and the other tasks are created and linked.
func TestTaskIssueFiledUnderAnotherParentIsFinalForThatTaskAlone(t *testing.T) {
	e := newSubEnv(t)
	other, err := e.s.CreateIssue(subRepo, "alice", "Someone else's epic", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.s.Script("POST", "/repos/*/*/issues/*/sub_issues", fakegithub.Fail(500))
	tasks := declare(e.root, 4)
	res := e.syncRun(tasks, time.Time{})
	tasks = res.Tasks
	if tasks[0].Sync != state.SyncSending {
		t.Fatalf("task 01 after a failed link: %s, want sending", tasks[0].Sync)
	}
	var orphan int
	for n, b := range mustBodies(t, e.s) {
		if strings.Contains(b, tasks[0].IdemKey) {
			orphan = n
		}
	}
	e.personLinks(other, orphan)
	linkPath := fmt.Sprintf("/repos/%s/issues/%d/sub_issues", subRepo, e.root)
	e.s.ResetLog()
	e.clock.Advance(time.Minute)
	res = e.untilSettled(tasks, 6)
	tasks = res.Tasks
	for _, tk := range tasks[1:] {
		if tk.Sync != state.SyncCreated || !e.treeOf(e.root)[numOf(tk.Key)] {
			t.Errorf("task %s: %s %s, want created and linked (note %q)", tk.ID, tk.Sync, tk.Key, res.Note)
		}
	}
	t0 := tasks[0]
	if t0.Sync != state.SyncCreated || t0.Key != fmt.Sprintf("#%d", orphan) ||
		!strings.Contains(t0.Remark, fmt.Sprintf("not a sub-issue of #%d", e.root)) || !strings.Contains(t0.Remark, "already has a parent") {
		t.Errorf("task 01: %s %s remark %q; want #%d adopted, saying why it is not under #%d", t0.Sync, t0.Key, t0.Remark, orphan, e.root)
	}
	sent := 0
	for _, r := range e.s.Requests() {
		if r.Method == "POST" && r.Path == linkPath && strings.Contains(r.Body, fmt.Sprint(mustID(t, e, orphan))) {
			sent++
		}
	}
	if sent > 1 {
		t.Errorf("the refused link of #%d was sent %d times, want at most once", orphan, sent)
	}
	if per := e.perKey(); len(per[t0.IdemKey]) != 1 {
		t.Errorf("I2: task 01 has issues %v", per[t0.IdemKey])
	}
	// Later passes send it no more.
	e.s.ResetLog()
	e.clock.Advance(time.Hour)
	e.syncRun(tasks, time.Time{})
	if n := e.s.Count("POST /repos/*/*/issues/*/sub_issues"); n != 0 {
		t.Errorf("%d sub-issue POSTs on a later pass, want 0", n)
	}
}

func mustBodies(t *testing.T, s *fakegithub.Server) map[int]string {
	t.Helper()
	b, err := s.IssueBodies(subRepo)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustID(t *testing.T, e *subEnv, n int) int64 {
	t.Helper()
	is, err := e.c.ReadIssue(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	return is.ID
}

// A secondary-limit answer (403 + Retry-After) to the sub-issue link is
// remembered: the sync reports the window as its retry time, and the next
// run sends nothing inside it.
func TestSecondaryLimitOnTheLinkReachesTheRetryTime(t *testing.T) {
	e := newSubEnv(t)
	e.s.Script("POST", "/repos/*/*/issues/*/sub_issues", fakegithub.SecondaryRateLimit(120*time.Second))
	tasks := declare(e.root, 1)
	start := e.clock.Now()
	res := e.syncRun(tasks, time.Time{})
	if res.RetryAt.Before(start.Add(119 * time.Second)) {
		t.Fatalf("retry at %v after a 403 with retry-after 120 at %v (note %q)", res.RetryAt, start, res.Note)
	}
	windowEnd := res.RetryAt
	// The next event comes 30 s later, inside the window.
	e.clock.Advance(30 * time.Second)
	res = e.syncRun(res.Tasks, res.RetryAt)
	for _, r := range e.s.Requests() {
		if r.Time.After(start) && r.Time.Before(windowEnd) {
			t.Errorf("%s %s sent at %v, inside the window ending %v", r.Method, r.Path, r.Time, windowEnd)
		}
	}
	e.clock.AdvanceTo(windowEnd)
	res = e.untilSettled(res.Tasks, 3)
	e.checkConverged(res.Tasks)
}

// plant creates an issue with tok (another bot) that carries a task's
// marker and label, as any workflow or App of the repository can.
func (e *subEnv) plant(tok, key string, parent int) int {
	e.t.Helper()
	body := fmt.Sprintf(`{"title":"Task","body":"<!-- autopilot:task %s parent=%d kind=task -->","labels":["autopilot/task"]}`, key, parent)
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/repos/%s/issues", e.s.URL(), subRepo), strings.NewReader(body))
	req.Header.Set("Authorization", "token "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		e.t.Fatalf("plant: %d %s", resp.StatusCode, b)
	}
	var n int
	fmt.Sscanf(string(b[strings.Index(string(b), `"number":`)+9:]), "%d", &n)
	return n
}

// Only our own bot's task issues are adopted: issues that a workflow
// (github-actions[bot]) or another App planted with a task's marker are
// ignored, never linked, and said once on the task; the tasks are created
// and linked under the autopilot issue. One planted issue names itself as
// parent, which would otherwise leave every task pending for good.
func TestOnlyOurOwnBotsTaskIssuesAreAdopted(t *testing.T) {
	for _, mode := range []struct {
		name  string
		login string
		appID int64
	}{{"action", "autopilot[bot]", 0}, {"app", "autopilot[bot]", 4242}} {
		t.Run(mode.name, func(t *testing.T) {
			e := newSubEnv(t)
			e.s.AddActionsToken("tok-actions", subRepo)
			e.s.AddToken("tok-other-app", fakegithub.Identity{Login: "other-app[bot]", Type: "Bot", AppID: 777})
			unrelated, err := e.s.CreateIssue(subRepo, "alice", "Unrelated", "", nil)
			if err != nil {
				t.Fatal(err)
			}
			tasks := declare(e.root, 3)
			a := e.plant("tok-actions", tasks[0].IdemKey, unrelated)
			b := e.plant("tok-other-app", tasks[1].IdemKey, unrelated)
			c := e.plant("tok-actions", tasks[2].IdemKey, 0)
			// the third names itself as its parent
			if err := e.s.SetBody(subRepo, c, fmt.Sprintf("<!-- autopilot:task %s parent=%d kind=task -->", tasks[2].IdemKey, c)); err != nil {
				t.Fatal(err)
			}
			src := trackersync.Source{SubIssues: e.c, Now: e.clock.Now, BotLogin: mode.login, AppID: mode.appID}
			var res tasksync.Result
			var retryAt time.Time
			for i := 0; i < 4; i++ {
				tr, _, err := src.For(&config.Config{Tracker: config.TrackerGitHub}, &state.State{Tasks: tasks}, e.root)
				if err != nil {
					t.Fatal(err)
				}
				res, err = trackersync.Outbox(context.Background(), tr, tasks, trackersync.Options{Now: e.clock.Now, MaxWait: -1, NotBefore: retryAt,
					SearchLag: 30 * time.Second, Persist: func([]state.Task) error { return nil }})
				if err != nil {
					t.Fatal(err)
				}
				if i == 1 && strings.Contains(res.Note, "ignored") {
					t.Errorf("pass 2 says the impostors again: %q", res.Note)
				}
				tasks, retryAt = res.Tasks, res.RetryAt
				e.clock.Advance(2 * time.Minute)
			}
			for i, planted := range []int{a, b, c} {
				tk := tasks[i]
				if tk.Key == fmt.Sprintf("#%d", planted) {
					t.Errorf("task %s adopted the planted #%d", tk.ID, planted)
				}
				if tk.Sync != state.SyncCreated || !e.treeOf(e.root)[numOf(tk.Key)] {
					t.Errorf("task %s: %s %s, want created by us under #%d (note %q)", tk.ID, tk.Sync, tk.Key, e.root, res.Note)
				}
				if !strings.Contains(tk.Remark, fmt.Sprintf("ignored #%d", planted)) {
					t.Errorf("task %s remark %q does not say #%d was ignored", tk.ID, tk.Remark, planted)
				}
			}
			if kids, _ := e.s.SubIssues(subRepo, unrelated); len(kids) != 0 {
				t.Errorf("planted issues linked under the unrelated #%d: %v", unrelated, kids)
			}
		})
	}
}

// A parent that already holds GitHub's 100 sub-issues (people's): its batch
// parent cannot be its sub-issue, so it stands on its own, found by its
// marker; the tasks go under it, each exactly once, and later passes find
// them there (no second batch parent, no duplicate).
func TestBatchingWorksFromAParentAlreadyFull(t *testing.T) {
	e := newSubEnv(t)
	e.s.SetContentLimits(0, 0)
	for i := 0; i < 100; i++ {
		n, err := e.s.CreateIssue(subRepo, "alice", fmt.Sprint("people's ", i), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		e.personLinks(e.root, n)
	}
	tasks := declare(e.root, 5)
	res := e.untilSettled(tasks, 6)
	tasks = res.Tasks
	bodies := mustBodies(t, e.s)
	var batches []int
	for n, b := range bodies {
		if strings.Contains(b, "kind=batch") {
			batches = append(batches, n)
		}
	}
	if len(batches) != 1 {
		t.Fatalf("batch parents %v, want exactly one (note %q)", batches, res.Note)
	}
	under := e.treeOf(batches[0])
	for _, tk := range tasks {
		if tk.Sync != state.SyncCreated || !under[numOf(tk.Key)] {
			t.Errorf("task %s: %s %s, want created under the batch parent #%d (note %q)", tk.ID, tk.Sync, tk.Key, batches[0], res.Note)
		}
		if per := e.perKey(); len(per[tk.IdemKey]) != 1 {
			t.Errorf("I2: task %s has issues %v", tk.ID, per[tk.IdemKey])
		}
	}
	// A later pass reads them back through the batch parent: a closed one
	// ticks, nothing is created again.
	if err := e.s.SetIssueState(subRepo, numOf(tasks[2].Key), "closed", false); err != nil {
		t.Fatal(err)
	}
	e.s.ResetLog()
	e.clock.Advance(time.Hour)
	res = e.syncRun(tasks, time.Time{})
	if !res.Tasks[2].Done || e.s.Count("POST /repos/*/*/issues") != 0 {
		t.Errorf("later pass: task 03 done %v, creates %d", res.Tasks[2].Done, e.s.Count("POST /repos/*/*/issues"))
	}
	// Someone brings the pending list back (a restored state): the tasks
	// are found through the batch parent, not made again.
	again := declare(e.root, 5)
	res = e.syncRun(again, time.Time{})
	if res.Found != 5 || e.s.Count("POST /repos/*/*/issues") != 0 {
		t.Errorf("restored state: found %d, creates %d; want 5 and 0", res.Found, e.s.Count("POST /repos/*/*/issues"))
	}
}

// A task's title reaches its issue through the same text safety as every
// other user text: no tab, no right-to-left override, no mention, no
// reference, no marker.
func TestTaskTitleIsMadeSafeLikeEveryUserText(t *testing.T) {
	e := newSubEnv(t)
	tasks := declare(e.root, 1)
	tasks[0].Title = "Fix\tlogin \u202egnp.exe @octo/team #12 <!-- autopilot:task x -->"
	res := e.syncRun(tasks, time.Time{})
	is, ok := e.s.Issue(subRepo, numOf(res.Tasks[0].Key))
	if !ok {
		t.Fatalf("no issue for task 01 (%s)", res.Tasks[0].Key)
	}
	for _, bad := range []string{"\t", "\u202e", "@octo", "#12", "<!--"} {
		if strings.Contains(is.Title, bad) {
			t.Errorf("title %q contains %q", is.Title, bad)
		}
	}
	if !strings.Contains(is.Title, "Fix login") {
		t.Errorf("title %q lost its words", is.Title)
	}
}

// A deleted epic is its own task's trouble: its tasks are still read and
// ticked, and a task declared under it later goes under the autopilot
// issue instead of failing on the gone parent.
func TestDeletedEpicLeavesItsTasksGoingOn(t *testing.T) {
	t.Run("deleted", func(t *testing.T) { goneEpic(t, state.IssueDeleted) })
	t.Run("transferred", func(t *testing.T) { goneEpic(t, state.IssueTransferred) })
}

func goneEpic(t *testing.T, how string) {
	e := newSubEnv(t)
	if err := e.s.AddRepo("octo/elsewhere"); err != nil {
		t.Fatal(err)
	}
	epic := state.Task{ID: "01", Kind: state.KindEpic, Title: "Importer", IdemKey: "autopilot-e000000001", Sync: state.SyncPending}
	task := state.Task{ID: "02", Kind: state.KindTask, Title: "Parse", Epic: "01", IdemKey: "autopilot-e000000002", Sync: state.SyncPending}
	tasks := e.untilSettled([]state.Task{epic, task}, 4).Tasks
	if how == state.IssueDeleted {
		if err := e.s.DeleteIssue(subRepo, numOf(tasks[0].Key)); err != nil {
			t.Fatal(err)
		}
	} else if _, err := e.s.TransferIssue(subRepo, numOf(tasks[0].Key), "octo/elsewhere"); err != nil {
		t.Fatal(err)
	}
	if err := e.s.SetIssueState(subRepo, numOf(tasks[1].Key), "closed", false); err != nil {
		t.Fatal(err)
	}
	later := state.Task{ID: "03", Kind: state.KindTask, Title: "Load", Epic: "Importer", IdemKey: "autopilot-e000000003", Sync: state.SyncPending}
	e.clock.Advance(time.Hour)
	res := e.untilSettled(append(tasks, later), 4)
	got := res.Tasks
	if got[0].Gone != how || !got[1].Done {
		t.Errorf("epic gone %q, its task done %v; want %s and ticked (note %q)", got[0].Gone, got[1].Done, how, res.Note)
	}
	if got[2].Sync != state.SyncCreated || !e.treeOf(e.root)[numOf(got[2].Key)] {
		t.Errorf("task declared under the deleted epic: %s %s, want created under #%d (note %q)", got[2].Sync, got[2].Key, e.root, res.Note)
	}
}
