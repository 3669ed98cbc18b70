package appmode

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	gh "github.com/autopilot-dev/autopilot/internal/github"
	"github.com/autopilot-dev/autopilot/internal/reconcile"
	"github.com/autopilot-dev/autopilot/internal/server"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/metrics"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
	"github.com/autopilot-dev/autopilot/internal/state"
)

const repo = apptest.Repo

// TestDeliveriesRunTheReconcileAsTheAppsBot: a labelled issue gets a state
// comment written by the App's bot through the App (so it is trusted), its
// labels and first step; a writer's command moves it on (👍); a stranger's
// is refused with 😕 and one reply; the API calls are counted per
// installation.
func TestDeliveriesRunTheReconcileAsTheAppsBot(t *testing.T) {
	r := newRig(t, nil)
	if r.bot != apptest.BotLogin {
		t.Fatalf("bot login from GET /app = %q, want %q", r.bot, apptest.BotLogin)
	}
	n := r.gh.Issue(repo, "Add CSV export")
	r.mustProcess(r.gh.Labeled(repo, n, apptest.Maintainer, "autopilot"))

	states := r.gh.States(repo, n)
	if len(states) != 1 {
		t.Fatalf("%d state comments by %s through App %d, want 1: %+v", len(states), apptest.BotLogin, apptest.AppID, r.gh.Comments(repo, n))
	}
	st := r.gh.State(repo, n)
	if st.Slug != "problem" || st.Version != 1 {
		t.Fatalf("after the label: step %s version %d", st.Slug, st.Version)
	}
	for _, l := range []string{"autopilot/step:problem", "autopilot/flow:greenfield"} {
		if !r.gh.HasLabel(repo, n, l) {
			t.Errorf("labels %v lack %s", r.gh.Labels(repo, n), l)
		}
	}

	done := r.gh.Say(repo, n, apptest.Writer, "/autopilot done problem understood")
	r.mustProcess(done)
	if st := r.gh.State(repo, n); st.Slug != "research" {
		t.Fatalf("after /autopilot done: step %s", st.Slug)
	}
	if id := commentID(t, done); !r.gh.Reacted(id, "+1") {
		t.Errorf("no 👍 from the App on the applied command: %+v", r.gh.Reactions(id))
	}

	refused := r.gh.Say(repo, n, apptest.Stranger, "/autopilot done research")
	r.mustProcess(refused)
	id := commentID(t, refused)
	if st := r.gh.State(repo, n); st.Slug != "research" {
		t.Fatalf("a stranger's command was applied: step %s", st.Slug)
	}
	if !r.gh.Reacted(id, "confused") || r.gh.RepliesTo(repo, n, id) != 1 {
		t.Errorf("stranger: reactions %+v, %d replies; want 😕 and one reply", r.gh.Reactions(id), r.gh.RepliesTo(repo, n, id))
	}
	if len(r.gh.States(repo, n)) != 1 {
		t.Errorf("the state comment was not edited in place: %d state comments", len(r.gh.States(repo, n)))
	}
	calls := r.metric(fmt.Sprintf(`autopilot_github_api_calls_total{installation="%d"}`, apptest.Installation))
	rate := r.metric(fmt.Sprintf(`autopilot_github_rate_limit_remaining{installation="%d",resource="core"}`, apptest.Installation))
	if calls == "" || strings.HasSuffix(calls, " 0") || rate == "" {
		t.Errorf("per-installation metrics missing:\n%s\n%s", calls, rate)
	}
}

func commentID(t *testing.T, d apptest.Delivery) int64 {
	t.Helper()
	ev, err := ghevent.Decode(d.Event, d.Body)
	if err != nil || ev.Comment == nil {
		t.Fatalf("not a comment delivery: %v", err)
	}
	return ev.Comment.ID
}

// TestOnlyTheAppsOwnStateCommentIsTrusted: a copy of the App's state
// comment posted by github-actions[bot] (another App) or by a person is
// never read as state: the App keeps editing its own comment.
func TestOnlyTheAppsOwnStateCommentIsTrusted(t *testing.T) {
	for _, copier := range []string{fakegithub.ActionsBotLogin, apptest.Maintainer} {
		t.Run(copier, func(t *testing.T) {
			r := newRig(t, nil)
			n := r.gh.Issue(repo, "Trust")
			r.mustProcess(r.gh.Labeled(repo, n, apptest.Maintainer, "autopilot"))
			own := r.gh.States(repo, n)[0]
			copied, err := r.gh.AddComment(repo, n, copier, own.Body)
			if err != nil {
				t.Fatal(err)
			}
			r.mustProcess(r.gh.Say(repo, n, apptest.Writer, "/autopilot done problem"))
			if st := r.gh.State(repo, n); st.Slug != "research" || st.Version != 2 {
				t.Fatalf("step %s version %d, want research v2", st.Slug, st.Version)
			}
			if c, _ := r.gh.Comment(copied.ID); len(c.Edits) != 0 {
				t.Errorf("the copy by %s was edited: %+v", copier, c.Edits)
			}
			if c, _ := r.gh.Comment(own.ID); len(c.Edits) != 1 {
				t.Errorf("the App's own state comment has %d edits, want 1", len(c.Edits))
			}
		})
	}
}

// actionStart starts a run the way the Action does: the same reconcile,
// as github-actions[bot] with the same state key.
func actionStart(t *testing.T, g *apptest.GitHub, n int) {
	t.Helper()
	g.AddActionsToken("ghs_actions", repo)
	client, err := gh.New(gh.Options{Repo: repo, Token: "ghs_actions", BaseURL: g.URL, MinMutationGap: -1, BotLogin: fakegithub.ActionsBotLogin})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := reconcile.New(reconcile.Options{Forge: client, BotLogin: fakegithub.ActionsBotLogin, StateKey: []byte(apptest.StateKey)})
	if err != nil {
		t.Fatal(err)
	}
	d := g.Labeled(repo, n, apptest.Maintainer, "autopilot")
	ev, err := ghevent.Decode(d.Event, d.Body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Handle(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
}

// actionState returns the Action's state comment on issue n.
func actionState(t *testing.T, g *apptest.GitHub, n int) fakegithub.Comment {
	t.Helper()
	for _, c := range g.Comments(repo, n) {
		if c.Author.Login == fakegithub.ActionsBotLogin && strings.HasPrefix(c.Body, state.Marker) {
			return c
		}
	}
	t.Fatal("the Action wrote no state comment")
	return fakegithub.Comment{}
}

// TestMigrationFromTheAction: with AUTOPILOT_BOT_LOGIN naming the Action's
// bot, the App adopts the Action's state (and its markers: nothing the
// Action posted is posted again), writes the next version as its own bot
// in a new comment and leaves the Action's untouched; after the window
// (option removed) it goes on from its own comment. Without the option the
// App does not trust the Action's comment and pauses the run, saying so.
func TestMigrationFromTheAction(t *testing.T) {
	t.Run("adopted during the window", func(t *testing.T) {
		g := apptest.New(t)
		n := g.Issue(repo, "Migrate")
		actionStart(t, g, n)
		legacy := actionState(t, g, n)
		announced := len(g.Comments(repo, n))

		r := newRigOn(t, g, func(o *Options) { o.AdoptFrom = fakegithub.ActionsBotLogin })
		r.mustProcess(g.Say(repo, n, apptest.Writer, "/autopilot done problem"))
		st := g.State(repo, n)
		if st == nil || st.Slug != "research" || st.Version != 2 {
			t.Fatalf("after adoption: %+v", st)
		}
		if c, _ := g.Comment(legacy.ID); len(c.Edits) != 0 || c.Deleted {
			t.Errorf("the Action's state comment was changed: edits %d deleted %v", len(c.Edits), c.Deleted)
		}
		if k := g.BotComments(repo, n, "state comment of this issue was"); k != 0 {
			t.Errorf("%d 'state lost' notices during adoption", k)
		}
		// The research announcement is the App's; the problem one stays the
		// Action's (not re-posted).
		if got := len(g.Comments(repo, n)) - announced; got > 3 {
			t.Errorf("%d new comments after one command, want at most 3 (the command, the state, an announcement)", got)
		}

		after := newRigOn(t, g, nil) // window over
		after.mustProcess(g.Say(repo, n, apptest.Writer, "/autopilot done research"))
		st = g.State(repo, n)
		if st.Slug != "plan" || st.Version != 3 || len(g.States(repo, n)) != 1 {
			t.Fatalf("after the window: step %s version %d, %d App state comments", st.Slug, st.Version, len(g.States(repo, n)))
		}
	})
	t.Run("not adopted without the option", func(t *testing.T) {
		g := apptest.New(t)
		n := g.Issue(repo, "Migrate")
		actionStart(t, g, n)
		r := newRigOn(t, g, nil)
		r.mustProcess(g.Say(repo, n, apptest.Writer, "/autopilot done problem"))
		if st := g.State(repo, n); st != nil {
			t.Fatalf("the App wrote state v%d without trusting the Action's", st.Version)
		}
		if k := g.BotComments(repo, n, "state comment of this issue was"); k != 1 {
			t.Errorf("%d 'state lost' notices, want 1", k)
		}
	})
}

// TestWorkflowRunLocksTheIssueOfItsSessionToken: a completed run whose
// title carries a session token is reconciled under that issue's lease; any
// other run costs no lease and no API call.
func TestWorkflowRunLocksTheIssueOfItsSessionToken(t *testing.T) {
	r := newRig(t, nil)
	n := r.gh.Issue(repo, "Runs")
	locker := newRecordingLocker()
	url := r.start(settings.Config{QueueSize: 16, Workers: 2, LockTTL: time.Second, DedupeTTL: settings.MinDedupeTTL, ShutdownTimeout: 5 * time.Second}, locker)
	before := len(r.gh.Requests())

	other := r.gh.WorkflowRun(repo, 9001, "CI on main", "success")
	if code := other.Post(t, url+settings.DefaultWebhookPath, apptest.Secret); code != http.StatusAccepted {
		t.Fatalf("other run: %d", code)
	}
	eventually(t, "the other run's job", func() bool {
		return strings.Contains(r.metric(`autopilot_jobs_total{event="workflow_run",outcome="ok"}`), " 1")
	})
	if got := locker.locked(); len(got) != 0 {
		t.Fatalf("a run without a session token took leases %v", got)
	}
	if q := r.gh.AppRequests(before); len(q) != 0 {
		t.Fatalf("a run without a session token made %d API calls: %+v", len(q), q)
	}

	ours := r.gh.WorkflowRun(repo, 9002, fmt.Sprintf("autopilot ap-%d-implement-c1-a1-s4", n), "success")
	if code := ours.Post(t, url+settings.DefaultWebhookPath, apptest.Secret); code != http.StatusAccepted {
		t.Fatalf("session run: %d", code)
	}
	eventually(t, "the session run's job", func() bool {
		return strings.Contains(r.metric(`autopilot_jobs_total{event="workflow_run",outcome="ok"}`), " 2")
	})
	if got, want := locker.locked(), []string{server.IssueLockKey(repo, n)}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("leases %v, want %v", got, want)
	}
}

// TestSweepCatchesUpEveryRepositoryOneLeaseAtATime: commands whose
// deliveries were lost, in two repositories of the installation, are
// applied by the sweep the server runs at start, each issue under its own
// lease and never two leases at once; an issue without the label is left
// alone.
func TestSweepCatchesUpEveryRepositoryOneLeaseAtATime(t *testing.T) {
	const other = "acme/gadgets"
	g := apptest.New(t, repo, other)
	r := newRigAt(t, g, g.SweepURL, nil)
	issues := map[string]int{}
	for _, rp := range []string{repo, other} {
		n := r.gh.Issue(rp, "Sweep me")
		r.mustProcess(r.gh.Labeled(rp, n, apptest.Maintainer, "autopilot"))
		r.gh.Say(rp, n, apptest.Writer, "/autopilot done problem") // delivery lost
		issues[rp] = n
	}
	plain := r.gh.Issue(repo, "Not managed")
	r.gh.Say(repo, plain, apptest.Writer, "/autopilot status")

	locker := newRecordingLocker()
	r.start(settings.Config{QueueSize: 16, Workers: 2, LockTTL: time.Second, DedupeTTL: settings.MinDedupeTTL,
		ShutdownTimeout: 5 * time.Second, SweepInterval: time.Hour}, locker)
	eventually(t, "the sweep", func() bool {
		return strings.Contains(r.metric(`autopilot_jobs_total{event="sweep"`), " 1")
	})
	if m := r.metric(`autopilot_jobs_total{event="sweep",outcome="ok"}`); m == "" {
		t.Fatalf("sweep failed: %s", r.metric(`autopilot_jobs_total`))
	}
	for rp, n := range issues {
		if st := r.gh.State(rp, n); st.Slug != "research" {
			t.Errorf("%s#%d: step %s after the sweep, want research", rp, n, st.Slug)
		}
	}
	// One lease per issue, in the order GitHub lists the repositories (the
	// fake lists them by name).
	want := []string{server.IssueLockKey(other, issues[other]), server.IssueLockKey(repo, issues[repo])}
	if got := locker.locked(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("leases %v, want %v (in listing order)", got, want)
	}
	if o := locker.overlaps(); len(o) != 0 {
		t.Errorf("the sweep held two leases at once: %v", o)
	}
	if len(r.gh.Comments(repo, plain)) != 1 {
		t.Errorf("the sweep touched an unmanaged issue: %+v", r.gh.Comments(repo, plain))
	}
	if m := r.metric(fmt.Sprintf(`autopilot_last_sweep_timestamp_seconds{installation="%d"}`, apptest.Installation)); m == "" {
		t.Error("no last-sweep timestamp for the installation")
	}
}

// TestSweepRecoversLostLabelDeliveries: the App's sweep starts a run on a
// labelled issue whose labeled delivery was lost, and stops a run whose
// trigger label was removed while its unlabeled delivery was lost.
func TestSweepRecoversLostLabelDeliveries(t *testing.T) {
	g := apptest.New(t, repo)
	r := newRigAt(t, g, g.SweepURL, nil)
	lost := r.gh.Issue(repo, "Labelled, delivery lost")
	if err := r.gh.LabelIssue(repo, lost, "autopilot"); err != nil {
		t.Fatal(err)
	}
	gone := r.gh.Issue(repo, "Label removed, delivery lost")
	r.mustProcess(r.gh.Labeled(repo, gone, apptest.Maintainer, "autopilot"))
	if err := r.gh.UnlabelIssue(repo, gone, "autopilot"); err != nil {
		t.Fatal(err)
	}
	r.start(settings.Config{QueueSize: 16, Workers: 2, LockTTL: time.Second, DedupeTTL: settings.MinDedupeTTL,
		ShutdownTimeout: 5 * time.Second, SweepInterval: time.Hour}, newRecordingLocker())
	eventually(t, "the sweep", func() bool {
		return strings.Contains(r.metric(`autopilot_jobs_total{event="sweep"`), " 1")
	})
	if st := r.gh.State(repo, lost); st == nil || st.Slug != "problem" || st.Run != "in-progress" {
		t.Errorf("labelled issue after the sweep: %+v, want a run at problem", st)
	}
	if st := r.gh.State(repo, gone); st == nil || st.Run != "stopped" {
		t.Errorf("unlabelled issue after the sweep: %+v, want the run stopped", st)
	}
}

// TestJiraOutboxGaugeSumsTheTasksWaiting: tasks declared while Jira is off
// stay "Jira: pending" in each issue's state; the gauge is their sum over
// issues, from the state comments the App wrote.
func TestJiraOutboxGaugeSumsTheTasksWaiting(t *testing.T) {
	r := newRig(t, nil)
	declared := map[int]int{}
	for i, tasks := range [][]string{{"Writer", "Endpoint"}, {"Docs"}} {
		n := r.gh.Issue(repo, fmt.Sprint("Issue ", i))
		r.mustProcess(r.gh.Labeled(repo, n, apptest.Maintainer, "autopilot"))
		for _, s := range []string{"problem", "research", "plan"} {
			r.mustProcess(r.gh.Say(repo, n, apptest.Writer, "/autopilot done "+s))
		}
		body := "/autopilot done decomposed\n\n```autopilot-tasks\n"
		for _, tk := range tasks {
			body += "- title: " + tk + "\n"
		}
		r.mustProcess(r.gh.Say(repo, n, apptest.Writer, body+"```"))
		declared[n] = len(tasks)
		if got := len(r.gh.State(repo, n).Tasks); got != len(tasks) {
			t.Fatalf("#%d: %d tasks in the state, want %d", n, got, len(tasks))
		}
	}
	if got := r.metric("autopilot_jira_outbox_size"); got != "autopilot_jira_outbox_size 3" {
		t.Fatalf("gauge %q, want 3 tasks waiting", got)
	}
}

func TestOutboxGaugeReplacesAnIssuesCount(t *testing.T) {
	pending := func(n int) *state.State {
		s := &state.State{}
		for range n {
			s.Tasks = append(s.Tasks, state.Task{Sync: state.SyncPending})
		}
		s.Tasks = append(s.Tasks, state.Task{Sync: state.SyncCreated}, state.Task{Sync: state.SyncFailed})
		return s
	}
	m := metrics.New()
	g := newOutboxGauge(m)
	steps := []struct {
		repo  string
		issue int
		tasks int
		want  int
	}{
		{"o/a", 1, 2, 2},
		{"o/b", 1, 3, 5},
		{"O/A", 1, 1, 4}, // same issue, repository case aside: replaced
		{"o/b", 1, 0, 1},
		{"o/a", 1, 0, 0},
	}
	for _, s := range steps {
		g.set(s.repo, s.issue, pending(s.tasks))
		g.mu.Lock()
		total := g.total
		g.mu.Unlock()
		if total != s.want {
			t.Fatalf("after %s#%d with %d pending: total %d, want %d", s.repo, s.issue, s.tasks, total, s.want)
		}
	}
	if len(g.per) != 0 {
		t.Errorf("issues with nothing waiting are still tracked: %v", g.per)
	}
}

func TestProcessWithoutAnInstallationFailsWithoutACall(t *testing.T) {
	r := newRig(t, nil)
	n := r.gh.Issue(repo, "x")
	d := r.gh.Labeled(repo, n, apptest.Maintainer, "autopilot")
	ev, err := ghevent.Decode(d.Event, d.Body)
	if err != nil {
		t.Fatal(err)
	}
	ev.Installation = 0
	before := len(r.gh.Requests())
	err = r.app.Process(context.Background(), job.Job{Delivery: "d", Event: ev})
	if err == nil || !strings.Contains(err.Error(), "installation") {
		t.Fatalf("err = %v, want one naming the missing installation", err)
	}
	if q := r.gh.AppRequests(before); len(q) != 0 {
		t.Fatalf("%d API calls", len(q))
	}
}

func TestNewRefusesIncompleteOptions(t *testing.T) {
	r := newRig(t, nil)
	good := Options{Clients: r.auth, AppID: 1, BotLogin: "x[bot]"}
	tests := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"no clients", func(o *Options) { o.Clients = nil }, "Clients"},
		{"no app id", func(o *Options) { o.AppID = 0 }, "AppID"},
		{"not a bot login", func(o *Options) { o.BotLogin = "octocat" }, "not an App bot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good
			tt.edit(&o)
			if _, err := New(o); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := New(good); err != nil {
		t.Fatalf("complete options refused: %v", err)
	}
}

func TestForgeCacheKeepsTheMostRecentlyUsed(t *testing.T) {
	built := 0
	fc := newForgeCache(2, func(inst int64, repo string) (*gh.Client, error) {
		built++
		if !strings.Contains(repo, "/") {
			return nil, errors.New("bad repo")
		}
		return gh.New(gh.Options{Repo: repo})
	})
	get := func(inst int64, repo string) *gh.Client {
		c, err := fc.get(inst, repo)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a := get(1, "o/a")
	get(1, "o/b")
	if get(1, "O/A") != a {
		t.Fatal("the same repository (case aside) got a second client")
	}
	get(2, "o/c") // evicts o/b, the least recently used
	if fc.len() != 2 || built != 3 {
		t.Fatalf("%d cached, %d built", fc.len(), built)
	}
	if get(1, "o/a") != a {
		t.Fatal("the most recently used client was evicted")
	}
	get(1, "o/b") // rebuilt; evicts o/c
	if built != 4 {
		t.Fatalf("o/b was not rebuilt after eviction (%d builds)", built)
	}
	get(2, "o/c") // rebuilt; evicts o/a
	if built != 5 {
		t.Fatalf("o/c was not rebuilt after eviction (%d builds)", built)
	}
	fc.forget(1)
	if fc.len() != 1 {
		t.Fatalf("forget left %d entries, want installation 2's only", fc.len())
	}
	if _, err := fc.get(1, "nope"); err == nil {
		t.Fatal("a bad repository name built a client")
	}
}

func TestSessionIssue(t *testing.T) {
	tests := []struct {
		title string
		want  int
	}{
		{"autopilot ap-12-implement-c1-a2-s7", 12},
		{"ap-3", 3},
		{"deploy ap-x-1 then ap-44-qa-c1-a1-s1", 44},
		{"CI on main", 0},
		{"ap--5-x", 0},
		{"ap-0-x", 0},
		{"snap-12-x", 0},
		{"", 0},
	}
	for _, tt := range tests {
		t.Run(tt.title, func(t *testing.T) {
			ev := &ghevent.Event{WorkflowRun: &forge.WorkflowRun{DisplayTitle: tt.title}}
			n, ok := SessionIssue(ev)
			if n != tt.want || ok != (tt.want > 0) {
				t.Fatalf("SessionIssue(%q) = %d, %v; want %d", tt.title, n, ok, tt.want)
			}
		})
	}
	if _, ok := SessionIssue(&ghevent.Event{}); ok {
		t.Fatal("an event without a run named an issue")
	}
}

func FuzzSessionIssue(f *testing.F) {
	for _, s := range []string{"autopilot ap-12-implement-c1-a2-s7", "ap-", "ap-9999999999999999999-x", "x ap-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, title string) {
		n, ok := SessionIssue(&ghevent.Event{WorkflowRun: &forge.WorkflowRun{DisplayTitle: title}})
		if ok != (n > 0) {
			t.Fatalf("ok %v with issue %d", ok, n)
		}
		if ok && !strings.Contains(title, fmt.Sprintf("ap-%d", n)) && !strings.Contains(title, "ap-+") && !strings.Contains(title, "ap-0") {
			t.Fatalf("issue %d is not named in %q", n, title)
		}
	})
}
