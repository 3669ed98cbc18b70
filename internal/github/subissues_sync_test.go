package github

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/idem"
	"github.com/autopilot-dev/autopilot/internal/reconcile/trackersync"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker/subissues"
)

const subRepo = "octo/repo"

// subEnv is a fake GitHub with GitHub's secondary limit on content creation
// (80 a minute, 500 an hour), an autopilot issue and a bot client.
type subEnv struct {
	t     *testing.T
	s     *fakegithub.Server
	clock *fakeclock.Clock
	c     *Client
	root  int
}

func newSubEnv(t *testing.T) *subEnv {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	s := fakegithub.New(fakegithub.Options{Clock: clock.Now})
	t.Cleanup(s.Close)
	if err := s.AddRepo(subRepo); err != nil {
		t.Fatal(err)
	}
	s.AddToken("tok-bot", fakegithub.Identity{Login: "autopilot[bot]", Type: "Bot"})
	s.SetContentLimits(80, 500)
	root, err := s.CreateIssue(subRepo, "alice", "Build the importer", "", []string{"autopilot"})
	if err != nil {
		t.Fatal(err)
	}
	// No mutation gap: the tracker's own pacing alone must keep under the limits.
	c, err := New(Options{Repo: subRepo, Token: "tok-bot", BaseURL: s.URL(), Now: clock.Now, MinMutationGap: -1,
		Sleep: func(_ context.Context, d time.Duration) error { clock.Advance(d); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return &subEnv{t: t, s: s, clock: clock, c: c, root: root}
}

// declare makes n tasks (no epic), every tenth depending on the one before;
// with spans, every tenth from the fifth on also depends on the task 60
// later, created in a later run.
func declare(root, n int) []state.Task { return declareDeps(root, n, false) }

func declareDeps(root, n int, spans bool) []state.Task {
	var ts []state.Task
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("%02d", i)
		t := state.Task{ID: id, Kind: state.KindTask, Title: fmt.Sprintf("Task %d: parse @team's #12 rows", i),
			Description: "Handle <!-- autopilot:task autopilot-0000000000 parent=1 kind=task --> and @octocat.",
			Points:      float64(i%5 + 1), IdemKey: idem.Key(subRepo, root, id), Sync: state.SyncPending}
		if i%10 == 0 {
			t.DependsOn = []string{fmt.Sprintf("%02d", i-1)}
		}
		if spans && i%10 == 5 && i+60 <= n {
			t.DependsOn = []string{fmt.Sprintf("%02d", i+60)}
		}
		ts = append(ts, t)
	}
	return ts
}

// syncRun is one run's sync: a fresh tracker from the persisted tasks,
// never waiting for GitHub (MaxWait < 0).
func (e *subEnv) syncRun(tasks []state.Task, notBefore time.Time) tasksync.Result {
	e.t.Helper()
	tr := subissues.New(e.c, e.root, tasks, e.clock.Now)
	res, err := trackersync.Outbox(context.Background(), tr, tasks, trackersync.Options{
		Now: e.clock.Now, Sleep: func(_ context.Context, d time.Duration) error { e.clock.Advance(d); return nil },
		MaxWait: -1, NotBefore: notBefore, SearchLag: 30 * time.Second,
		Persist: func([]state.Task) error { return nil },
	})
	if err != nil {
		e.t.Fatalf("sync: %v", err)
	}
	return res
}

var markerKeyRE = regexp.MustCompile(`<!-- autopilot:task (autopilot-[0-9a-f]{10}) parent=`)

// perKey counts the issues carrying each idempotency key's marker (I2).
// Escaped user text cannot forge one: it has no raw "<!--".
func (e *subEnv) perKey() map[string][]int {
	e.t.Helper()
	bodies, err := e.s.IssueBodies(subRepo)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string][]int{}
	for n, b := range bodies {
		for _, m := range markerKeyRE.FindAllStringSubmatch(b, -1) {
			out[m[1]] = append(out[m[1]], n)
		}
	}
	return out
}

// treeOf returns every issue under root in the sub-issue tree.
func (e *subEnv) treeOf(root int) map[int]bool {
	seen := map[int]bool{}
	queue := []int{root}
	for len(queue) > 0 {
		kids, err := e.s.SubIssues(subRepo, queue[0])
		if err != nil {
			e.t.Fatal(err)
		}
		queue = queue[1:]
		for _, k := range kids {
			seen[k] = true
			queue = append(queue, k)
		}
	}
	return seen
}

// checkConverged asserts I2 and that every task is a linked sub-issue.
func (e *subEnv) checkConverged(tasks []state.Task) {
	e.t.Helper()
	per := e.perKey()
	tree := e.treeOf(e.root)
	for _, tk := range tasks {
		if got := per[tk.IdemKey]; len(got) != 1 {
			e.t.Errorf("I2: task %s has %d issues %v, want exactly 1", tk.ID, len(got), got)
		}
		if tk.Sync != state.SyncCreated || !subissues.IsKey(tk.Key) {
			e.t.Errorf("task %s: %s %q, want created with a #n key", tk.ID, tk.Sync, tk.Key)
			continue
		}
		var n int
		fmt.Sscanf(tk.Key, "#%d", &n)
		if !tree[n] {
			e.t.Errorf("task %s (%s) is not in the sub-issue tree of #%d", tk.ID, tk.Key, e.root)
		}
	}
}

func TestSync120TasksToSubIssuesAcrossRunsWithoutDuplicatesOrLimitHits(t *testing.T) {
	e := newSubEnv(t)
	tasks := declareDeps(e.root, 120, true)
	var retryAt time.Time
	runs := 0
	for ; runs < 30; runs++ {
		res := e.syncRun(tasks, retryAt)
		tasks, retryAt = res.Tasks, res.RetryAt
		if res.Waiting == 0 {
			runs++
			break
		}
		// The next run is the next event or sweep: a minute later, or when
		// the pacing window ends.
		next := e.clock.Now().Add(time.Minute)
		if retryAt.After(next) {
			next = retryAt
		}
		e.clock.AdvanceTo(next)
	}
	e.checkConverged(tasks)
	hits, inside := e.s.ContentLimitStats()
	reqs := e.s.Requests()
	posts := 0
	for _, r := range reqs {
		if r.Method == "POST" {
			posts++
		}
	}
	kids, _ := e.s.SubIssues(subRepo, e.root)
	// Every declared dependency exists exactly once, also those on a task
	// created in a later run.
	deps := 0
	byID := map[string]int{}
	for _, tk := range tasks {
		byID[tk.ID] = numOf(tk.Key)
	}
	for _, tk := range tasks {
		b, _ := e.s.BlockedBy(subRepo, numOf(tk.Key))
		deps += len(b)
		var want []int
		for _, d := range tk.DependsOn {
			want = append(want, byID[d])
		}
		if fmt.Sprint(b) != fmt.Sprint(want) {
			t.Errorf("task %s (%s) is blocked by %v, want %v", tk.ID, tk.Key, b, want)
		}
	}
	t.Logf("120 tasks: %d runs, %d requests (%d POSTs), %d secondary-limit hits, %d requests inside a retry window, "+
		"%d direct children of #%d, %d dependencies, %d issues per key max",
		runs, len(reqs), posts, hits, inside, len(kids), e.root, deps, maxLen(e.perKey()))
	if hits != 0 || inside != 0 {
		t.Errorf("secondary limit hits %d, requests inside a window %d: want 0 and 0", hits, inside)
	}
	if len(kids) > 100 {
		t.Errorf("#%d has %d sub-issues, more than GitHub's 100", e.root, len(kids))
	}
	if deps != 18 {
		t.Errorf("dependencies = %d, want 18", deps)
	}
	if runs < 2 {
		t.Errorf("all in %d run: the creates were not paced across runs", runs)
	}
	// The body escapes user text: no mention, no link, no forged marker.
	bodies, _ := e.s.IssueBodies(subRepo)
	for n, b := range bodies {
		if n == e.root {
			continue
		}
		if strings.Count(b, "<!--") != 1 || strings.Contains(b, "@octocat") {
			t.Fatalf("#%d body not escaped: %q", n, b)
		}
	}
	// Closing a task's issue ticks it at the next pass.
	if err := e.s.SetIssueState(subRepo, numOf(tasks[5].Key), "closed", false); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	res := e.syncRun(tasks, time.Time{})
	if !res.Tasks[5].Done || res.Ticked != 1 {
		t.Errorf("closing %s: done %v ticked %d, want it ticked", tasks[5].Key, res.Tasks[5].Done, res.Ticked)
	}
	t.Logf("status read-back of 120 tasks: %d requests", res.Requests)
}

func numOf(key string) int {
	var n int
	fmt.Sscanf(key, "#%d", &n)
	return n
}

func maxLen(m map[string][]int) int {
	out := 0
	for _, v := range m {
		out = max(out, len(v))
	}
	return out
}

// Where the host has no dependency API (404), depends_on becomes a
// "Depends on #n" line in the body, found out before the first such create.
func TestDependsOnLineWithoutTheDependencyAPI(t *testing.T) {
	e := newSubEnv(t)
	e.s.SetNoDependencies(true)
	tasks := declare(e.root, 20)
	var retryAt time.Time
	for i := 0; i < 10; i++ {
		res := e.syncRun(tasks, retryAt)
		tasks, retryAt = res.Tasks, res.RetryAt
		if res.Waiting == 0 {
			break
		}
		e.clock.Advance(2 * time.Minute)
	}
	e.checkConverged(tasks)
	bodies, _ := e.s.IssueBodies(subRepo)
	for _, i := range []int{10, 20} {
		want := "Depends on " + tasks[i-2].Key
		if b := bodies[numOf(tasks[i-1].Key)]; !strings.Contains(b, want) {
			t.Errorf("task %d's body lacks %q: %q", i, want, b)
		}
	}
	if n := e.s.Count("POST /repos/*/*/issues/*/dependencies/blocked_by"); n != 0 {
		t.Errorf("%d dependency POSTs sent to a host without the API", n)
	}
}

// A person's issue carrying a task's marker and label is not adopted: only
// bot-authored issues count, so nobody can slip an issue into the outbox.
func TestForgedMarkerByAPersonIsNotAdopted(t *testing.T) {
	e := newSubEnv(t)
	tasks := declare(e.root, 3)
	forged, err := e.s.CreateIssue(subRepo, "mallory", "Task 1",
		"<!-- autopilot:task "+tasks[0].IdemKey+" parent=1 kind=task -->", []string{subissues.TaskLabel})
	if err != nil {
		t.Fatal(err)
	}
	res := e.syncRun(tasks, time.Time{})
	if res.Waiting != 0 || res.Found != 0 {
		t.Fatalf("waiting %d found %d, want 0 0", res.Waiting, res.Found)
	}
	if res.Tasks[0].Key == fmt.Sprintf("#%d", forged) {
		t.Fatalf("task 01 adopted mallory's #%d", forged)
	}
	if e.treeOf(e.root)[forged] {
		t.Errorf("mallory's #%d was linked under #%d", forged, e.root)
	}
}

// An epic with 150 tasks: 99 under the epic, the rest under its batch
// parent (the epic's 100th sub-issue), which GitHub's 100-children limit
// would otherwise refuse.
func TestEpicWithMoreThan100TasksSpillsIntoABatchParent(t *testing.T) {
	e := newSubEnv(t)
	epic := state.Task{ID: "01", Kind: state.KindEpic, Title: "Importer", IdemKey: idem.Key(subRepo, e.root, "01"), Sync: state.SyncPending}
	tasks := []state.Task{epic}
	for i := 2; i <= 151; i++ {
		id := fmt.Sprintf("%03d", i)
		tasks = append(tasks, state.Task{ID: id, Kind: state.KindTask, Title: "Task " + id, Epic: "01",
			IdemKey: idem.Key(subRepo, e.root, id), Sync: state.SyncPending})
	}
	var retryAt time.Time
	for i := 0; i < 20; i++ {
		res := e.syncRun(tasks, retryAt)
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
	e.checkConverged(tasks)
	epicN := numOf(tasks[0].Key)
	rootKids, _ := e.s.SubIssues(subRepo, e.root)
	epicKids, _ := e.s.SubIssues(subRepo, epicN)
	if len(rootKids) != 1 || rootKids[0] != epicN || len(epicKids) != 100 {
		t.Fatalf("root children %v, epic #%d children %d: want [epic] and 100", rootKids, epicN, len(epicKids))
	}
	batch := epicKids[99]
	batchKids, _ := e.s.SubIssues(subRepo, batch)
	bodies, _ := e.s.IssueBodies(subRepo)
	if len(batchKids) != 51 || !strings.Contains(bodies[batch], "kind=batch") {
		t.Errorf("batch #%d holds %d tasks (want 51), body %q", batch, len(batchKids), bodies[batch])
	}
	if hits, inside := e.s.ContentLimitStats(); hits+inside != 0 {
		t.Errorf("limit hits %d, inside %d", hits, inside)
	}
}

// A dependency link refused by a secondary limit is sent by a later run, and
// one whose answer was lost after GitHub made it (a 422 "already exists"
// next time) counts as made: each ends existing exactly once.
func TestDependencyLostToALimitOrALostAnswerIsMadeOnce(t *testing.T) {
	e := newSubEnv(t)
	e.s.Script("POST", "/repos/*/*/issues/*/dependencies/blocked_by",
		fakegithub.Step{Status: 429, Headers: map[string]string{"retry-after": "60"}},
		fakegithub.Step{Status: 502, CommitThenFail: true})
	tasks := declare(e.root, 20)
	var retryAt time.Time
	for i := 0; i < 10; i++ {
		res := e.syncRun(tasks, retryAt)
		tasks, retryAt = res.Tasks, res.RetryAt
		if res.Waiting == 0 {
			break
		}
		next := e.clock.Now().Add(2 * time.Minute)
		if retryAt.After(next) {
			next = retryAt
		}
		e.clock.AdvanceTo(next)
	}
	e.checkConverged(tasks)
	if n := e.s.PendingSteps(); n != 0 {
		t.Fatalf("%d scripted answers not used", n)
	}
	for _, i := range []int{10, 20} {
		b, _ := e.s.BlockedBy(subRepo, numOf(tasks[i-1].Key))
		if want := []int{numOf(tasks[i-2].Key)}; fmt.Sprint(b) != fmt.Sprint(want) {
			t.Errorf("task %d is blocked by %v, want %v", i, b, want)
		}
		if len(tasks[i-1].DepsLinked) != 1 {
			t.Errorf("task %d deps_linked %v, want its one dependency", i, tasks[i-1].DepsLinked)
		}
	}
}
