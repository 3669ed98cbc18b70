package action_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/fake/fakejira"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

// jiraRig is one issue driven through the binary against the fake GitHub
// and a fake Jira.
type jiraRig struct {
	*harness
	fj  *fakejira.Server
	n   int
	env []string
}

// newJiraRig starts both fakes, writes the repository config and opens an
// issue. cfg is the jira: section's body (indented two spaces).
func newJiraRig(t *testing.T, deployment, cfg string) *jiraRig {
	t.Helper()
	h := newHarness(t)
	fj := fakejira.New(fakejira.Options{Deployment: deployment})
	t.Cleanup(fj.Close)
	fo := fj.Options()
	env := []string{"INPUT_JIRA_URL=" + fj.URL(), "INPUT_JIRA_TOKEN=" + fo.Token, "INPUT_JIRA_PROJECT=" + fo.Project}
	if deployment == fakejira.Cloud {
		env = append(env, "INPUT_JIRA_USER="+fo.User)
	}
	if err := h.gh.SetFile(repo, ".github/autopilot.yml", []byte("default_flow: greenfield\njira:\n"+cfg)); err != nil {
		t.Fatal(err)
	}
	n, err := h.gh.CreateIssue(repo, "maria", "Add CSV export", "Users want CSV.", nil)
	if err != nil {
		t.Fatal(err)
	}
	return &jiraRig{harness: h, fj: fj, n: n, env: env}
}

// event runs the binary for one event with the Jira inputs and requires
// exit 0.
func (r *jiraRig) event(what, name string, payload []byte) result {
	r.t.Helper()
	res := r.run(name, payload, r.env...)
	r.mustOK(res, what)
	return res
}

// say posts a comment as who and runs the binary for it.
func (r *jiraRig) say(who, body string) result {
	r.t.Helper()
	return r.event(fmt.Sprintf("%s: %.40q", who, body), "issue_comment", r.comment(r.n, who, body))
}

// sweep runs the scheduled sweep.
func (r *jiraRig) sweep() result {
	r.t.Helper()
	return r.event("sweep", "schedule", ghtest.WithRepo(r.t, ghtest.Payload(r.t, "schedule.json"), repo))
}

// start labels the issue and reports problem and research done, so the
// next step is plan (the first Jira step).
func (r *jiraRig) start() {
	r.t.Helper()
	r.addLabel(r.n, "autopilot")
	r.event("start", "issues", r.labeled(r.n, "maria"))
	r.say("devin", "/autopilot done problem finished")
	r.say("devin", "/autopilot done research finished")
}

const (
	planReport = "/autopilot done plan finished\n\n```autopilot-epics\n" +
		"- title: CSV export\n  description: Export reports as CSV.\n" +
		"- title: Docs\n```\n"
	decomposeReport = "/autopilot done decomposed\n\n```autopilot-tasks\n" +
		"- title: Streaming CSV writer\n  epic: CSV export\n  points: 3\n" +
		"- title: Export endpoint\n  epic: CSV export\n  depends_on: [Streaming CSV writer]\n  points: 2\n" +
		"- title: User guide page\n  epic: Docs\n" +
		"- title: Loose end\n```\n"
)

// plannedTitles are the epics and tasks of planReport and decomposeReport.
var plannedTitles = []string{"CSV export", "Docs", "Streaming CSV writer", "Export endpoint", "User guide page", "Loose end"}

// checkSynced fails unless every state task is created in Jira exactly once,
// carries its idempotency label, links its key in the rendered Tasks section
// and (for tasks) is linked to its epic the deployment's way.
func (r *jiraRig) checkSynced(deployment string) {
	r.t.Helper()
	st := r.state(r.n)
	if len(st.Tasks) != len(plannedTitles) {
		r.t.Fatalf("state has %d tasks, want %d: %+v", len(st.Tasks), len(plannedTitles), st.Tasks)
	}
	body := r.stateBody()
	byKey := map[string]fakejira.Issue{}
	for _, is := range r.fj.Issues() {
		byKey[is.Key] = is
	}
	epicKey := map[string]string{}
	for i, tk := range st.Tasks {
		if tk.Title != plannedTitles[i] {
			r.t.Errorf("task %d is %q, want %q", i, tk.Title, plannedTitles[i])
		}
		if tk.Sync != state.SyncCreated || !tasksync.IsKey(tk.Key) {
			r.t.Errorf("task %s %q: jira %q key %q error %q", tk.ID, tk.Title, tk.Sync, tk.Key, tk.Error)
			continue
		}
		if n := r.fj.CountLabel(tk.IdemKey); n != 1 {
			r.t.Errorf("task %s: %d Jira issues carry %s, want 1", tk.ID, n, tk.IdemKey)
		}
		is, ok := byKey[tk.Key]
		if !ok || is.Summary != tk.Title {
			r.t.Errorf("task %s: Jira issue %s is %+v", tk.ID, tk.Key, is)
		}
		link := fmt.Sprintf("[%s](%s/browse/%s)", tk.Key, r.fj.URL(), tk.Key)
		if !strings.Contains(body, link) {
			r.t.Errorf("state comment does not link %s as %s", tk.Key, link)
		}
		if tk.Kind == state.KindEpic {
			epicKey[tk.Title] = tk.Key
			if is.Type != "Epic" {
				r.t.Errorf("epic %s created as %s", tk.Key, is.Type)
			}
			if deployment == fakejira.DataCenter && is.EpicName != tk.Title {
				r.t.Errorf("epic %s: Epic Name %q, want %q", tk.Key, is.EpicName, tk.Title)
			}
			continue
		}
		want := epicKey[tk.Epic]
		got := is.Parent
		if deployment == fakejira.DataCenter {
			got = is.EpicLink
		}
		if got != want {
			r.t.Errorf("task %s %q: epic link %q, want %q (parent %q, epic link field %q)", tk.ID, tk.Title, got, want, is.Parent, is.EpicLink)
		}
	}
	if n := len(r.fj.Issues()); n != len(plannedTitles) {
		r.t.Errorf("fake Jira holds %d issues, want %d", n, len(plannedTitles))
	}
}

// stateBody is the newest state comment's text.
func (r *jiraRig) stateBody() string {
	r.t.Helper()
	best, ver := "", int64(-1)
	for _, c := range r.gh.Comments(repo, r.n) {
		if !strings.HasPrefix(c.Body, state.Marker) {
			continue
		}
		s, err := codec.Parse(c.Body, codec.Want{Repo: repo, Issue: r.n, Key: []byte(key)})
		if err == nil && s.Version > ver {
			best, ver = c.Body, s.Version
		}
	}
	return best
}

// createRequests counts create requests (bulk and single) sent so far.
func (r *jiraRig) createRequests() int {
	return len(r.fj.RequestsTo(fakejira.EndpointBulk)) + len(r.fj.RequestsTo(fakejira.EndpointCreate))
}

func (r *jiraRig) hasLabel(l string) bool {
	for _, x := range r.gh.Labels(repo, r.n) {
		if x == l {
			return true
		}
	}
	return false
}

// botComments counts the bot's comments (state comment excluded) containing s.
func (r *jiraRig) botComments(s string) int {
	n := 0
	for _, c := range r.gh.Comments(repo, r.n) {
		if c.Author.Login == fakegithub.ActionsBotLogin && !strings.HasPrefix(c.Body, state.Marker) && strings.Contains(c.Body, s) {
			n++
		}
	}
	return n
}

// jiraSince returns the Jira requests logged from index from on.
func (r *jiraRig) jiraSince(from int) []fakejira.Request {
	return r.fj.Requests()[from:]
}

func (r *jiraRig) logJira() {
	for _, q := range r.fj.Requests() {
		r.t.Logf("  jira %s %s %s → %d", q.At.Format("15:04:05.000"), q.Method, q.Path, q.Status)
	}
}

// TestJiraUpCreatesEpicsAndTasksOnce: with Jira working, the plan report's
// epics and the decompose report's tasks become Jira issues (epics first,
// tasks linked to them the deployment's way, each carrying its idempotency
// label), the state links every key, and replaying every event creates
// nothing more.
func TestJiraUpCreatesEpicsAndTasksOnce(t *testing.T) {
	tests := []struct {
		name, deployment, cfg string
	}{
		{"cloud", fakejira.Cloud, "  deployment: cloud\n  points_field: customfield_10016\n"},
		{"data center with fields from the config", fakejira.DataCenter,
			"  deployment: datacenter\n  epic_link_field: customfield_10100\n  epic_name_field: customfield_10102\n  points_field: customfield_10016\n"},
		{"cloud detected from serverInfo", fakejira.Cloud, "  points_field: customfield_10016\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newJiraRig(t, tc.deployment, tc.cfg)
			r.start()
			// Entering plan (the first Jira step) checked the credentials once.
			var checks []string
			for _, q := range r.fj.Requests() {
				checks = append(checks, fmt.Sprintf("%s=%d", q.Endpoint, q.Status))
			}
			if got := strings.Join(checks, ","); got != "myself=200" && got != "serverInfo=200,myself=200" {
				t.Fatalf("Jira requests before the plan report: %s", got)
			}
			plan := r.comment(r.n, "devin", planReport)
			r.event("plan report", "issue_comment", plan)
			st := r.state(r.n)
			if st.Slug != "decompose" || len(st.Tasks) != 2 || st.Tasks[0].Sync != state.SyncCreated || st.Tasks[1].Sync != state.SyncCreated {
				t.Fatalf("after plan: step %s tasks %+v", st.Slug, st.Tasks)
			}
			decompose := r.comment(r.n, "devin", decomposeReport)
			r.event("decompose report", "issue_comment", decompose)
			st = r.state(r.n)
			if st.Gate == nil || st.Gate.Kind != "session-boundary" {
				t.Fatalf("after decompose: step %s gate %+v", st.Slug, st.Gate)
			}
			r.checkSynced(tc.deployment)
			if r.hasLabel("autopilot/jira:pending") {
				t.Error("autopilot/jira:pending set with nothing pending")
			}
			if st.TrackerNote != "" || strings.Contains(r.stateBody(), "Jira: pending (") {
				t.Errorf("state says Jira is behind: note %q", st.TrackerNote)
			}
			for _, is := range r.fj.Issues() {
				if !slicesContains(is.Labels, "autopilot") {
					t.Errorf("%s labels %v lack autopilot", is.Key, is.Labels)
				}
				if is.Summary == "Streaming CSV writer" && (is.Points == nil || *is.Points != 3) {
					t.Errorf("%s points %v, want 3", is.Key, is.Points)
				}
			}
			// Two syncs, one bulk create each (epics, then tasks).
			if n := r.createRequests(); n != 2 {
				t.Errorf("%d create requests, want 2", n)
			}
			for _, q := range r.fj.RequestsTo(fakejira.EndpointBulk) {
				if q.Header.Get("Idempotency-Key") != "" {
					t.Errorf("a create carried an Idempotency-Key header")
				}
			}

			// Replays (redelivered events, re-run jobs) and a sweep create
			// nothing more.
			before := r.createRequests()
			r.event("plan report again", "issue_comment", plan)
			r.event("decompose report again", "issue_comment", decompose)
			r.sweep()
			if n := r.createRequests() - before; n != 0 {
				t.Errorf("replaying the events sent %d more create requests", n)
			}
			r.checkSynced(tc.deployment)
			if st2 := r.state(r.n); st2.Slug != st.Slug || len(st2.Tasks) != len(st.Tasks) {
				t.Errorf("replays moved the run: step %s → %s, %d → %d tasks", st.Slug, st2.Slug, len(st.Tasks), len(st2.Tasks))
			}
			if t.Failed() {
				r.logJira()
			}
		})
	}
}

func slicesContains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// TestJiraAuthFailureFallsBackLocallyThenSyncsLater: Jira refusing the
// credentials at the first Jira step asks "Jira authentication failed";
// B keeps the tasks in the issue as Jira: pending with the
// autopilot/jira:pending label and sends Jira nothing; once the token works,
// `/autopilot jira sync` creates them all and removes the label.
func TestJiraAuthFailureFallsBackLocallyThenSyncsLater(t *testing.T) {
	r := newJiraRig(t, fakejira.Cloud, "  deployment: cloud\n")
	r.fj.SetAuthValid(false)
	r.start()
	st := r.state(r.n)
	if st.Gate == nil || st.Gate.Kind != "jira-auth" || st.Run != state.RunAwaitingDecision {
		t.Fatalf("after research with a refused token: gate %+v run %s", st.Gate, st.Run)
	}
	if r.botComments("Jira authentication failed") != 1 || r.botComments("A) Retry authentication") != 1 {
		t.Fatal("the Jira authentication failed Choose was not posted once")
	}
	if q := r.fj.Requests(); len(q) != 1 || q[0].Status != http.StatusUnauthorized {
		t.Fatalf("auth check: %+v", q)
	}

	r.say("maria", "B")
	st = r.state(r.n)
	if st.TrackerEnabled == nil || *st.TrackerEnabled || st.Gate != nil || st.Slug != "plan" {
		t.Fatalf("after B: tracker_enabled %v gate %+v step %s", st.TrackerEnabled, st.Gate, st.Slug)
	}
	afterB := len(r.fj.Requests())
	r.say("devin", planReport)
	r.say("devin", decomposeReport)
	st = r.state(r.n)
	if st.Gate == nil || st.Gate.Kind != "session-boundary" {
		t.Fatalf("the flow did not go on without Jira: step %s gate %+v", st.Slug, st.Gate)
	}
	if q := r.jiraSince(afterB); len(q) != 0 {
		t.Fatalf("%d Jira requests after Continue without Jira", len(q))
	}
	if len(st.Tasks) != len(plannedTitles) {
		t.Fatalf("%d tasks kept, want %d", len(st.Tasks), len(plannedTitles))
	}
	body := r.stateBody()
	for i, tk := range st.Tasks {
		if want := fmt.Sprintf("%02d", i+1); tk.ID != want || tk.Sync != state.SyncPending || tk.Key != "" {
			t.Errorf("task %d: id %s jira %s key %q", i, tk.ID, tk.Sync, tk.Key)
		}
		if line := tk.ID + " "; !strings.Contains(body, line) {
			t.Errorf("state comment lacks task %s", tk.ID)
		}
	}
	if !strings.Contains(body, "Jira: pending") || !strings.Contains(body, fmt.Sprintf("Jira: pending (%d)", len(plannedTitles))) {
		t.Errorf("state comment does not show the tasks as Jira: pending:\n%s", body)
	}
	if !r.hasLabel("autopilot/jira:pending") {
		t.Fatalf("labels %v lack autopilot/jira:pending", r.gh.Labels(repo, r.n))
	}

	// The token is fixed; a person asks for the sync.
	r.fj.SetAuthValid(true)
	r.say("maria", "/autopilot jira sync")
	r.checkSynced(fakejira.Cloud)
	st = r.state(r.n)
	if st.TrackerEnabled == nil || !*st.TrackerEnabled {
		t.Errorf("tracker_enabled after the sync: %v", st.TrackerEnabled)
	}
	if r.hasLabel("autopilot/jira:pending") {
		t.Errorf("autopilot/jira:pending still set after the sync: %v", r.gh.Labels(repo, r.n))
	}
	if st.Gate == nil || st.Gate.Kind != "session-boundary" {
		t.Errorf("the sync disturbed the open gate: %+v", st.Gate)
	}
	if n := r.createRequests(); n != 2 {
		t.Errorf("%d create requests, want 2 (epics, then tasks linked to them)", n)
	}
	if t.Failed() {
		r.logJira()
	}
}

// TestJiraRateLimitIsHonouredAcrossRuns: a 429 with Retry-After is waited
// out inside a run while short, and past that the window is kept in the
// state, so the next binary run sends Jira nothing until it ends, while the
// GitHub side goes on. No request ever lands inside a Retry-After window.
func TestJiraRateLimitIsHonouredAcrossRuns(t *testing.T) {
	r := newJiraRig(t, fakejira.Cloud, "  deployment: cloud\n")
	r.start()
	r.say("devin", planReport)
	// The decompose sync's lookup is rate limited: three short windows are
	// waited out inside the run, the fourth is left to a later run.
	const longWindow = 4 * time.Second
	r.fj.Script(fakejira.EndpointSearchJQL,
		fakejira.RateLimited(time.Second, "jira-quota-global-based"),
		fakejira.RateLimited(time.Second, "jira-quota-global-based"),
		fakejira.RateLimited(time.Second, "jira-quota-global-based"),
		fakejira.RateLimited(longWindow, "jira-quota-global-based"),
	)
	r.say("devin", decomposeReport)
	st := r.state(r.n)
	if st.Gate == nil || st.Gate.Kind != "session-boundary" {
		t.Fatalf("a rate-limited Jira held up the GitHub side: step %s gate %+v", st.Slug, st.Gate)
	}
	if st.TrackerRetryAt.IsZero() || tasksync.PendingCount(st) != 4 {
		t.Fatalf("after the 429s: retry at %v, %d pending", st.TrackerRetryAt, tasksync.PendingCount(st))
	}
	if !r.hasLabel("autopilot/jira:pending") {
		t.Errorf("labels %v lack autopilot/jira:pending while tasks wait", r.gh.Labels(repo, r.n))
	}
	limited := r.fj.RequestsTo(fakejira.EndpointSearchJQL)
	last := limited[len(limited)-1]
	if len(limited) != 5 || last.Status != http.StatusTooManyRequests {
		t.Fatalf("searches %+v", limited)
	}
	if end := last.At.Add(longWindow); st.TrackerRetryAt.Before(end) {
		t.Errorf("state keeps retry at %v, before the window's end %v", st.TrackerRetryAt, end)
	}

	// The next event, inside the window: GitHub side only.
	inside := len(r.fj.Requests())
	started := time.Now()
	r.say("maria", "A")
	if time.Now().After(st.TrackerRetryAt) {
		t.Skipf("the run took %v and ended past the window; cannot tell", time.Since(started))
	}
	if q := r.jiraSince(inside); len(q) != 0 {
		t.Fatalf("%d Jira requests inside the Retry-After window", len(q))
	}
	if st2 := r.state(r.n); st2.Slug != "implement" || tasksync.PendingCount(st2) != 4 {
		t.Fatalf("inside the window: step %s, %d pending", st2.Slug, tasksync.PendingCount(st2))
	}

	// After the window, the sweep drains the outbox.
	time.Sleep(time.Until(st.TrackerRetryAt) + 100*time.Millisecond)
	r.sweep()
	r.checkSynced(fakejira.Cloud)
	if r.hasLabel("autopilot/jira:pending") {
		t.Errorf("autopilot/jira:pending still set after the drain")
	}
	if st3 := r.state(r.n); !st3.TrackerRetryAt.IsZero() || st3.TrackerNote != "" {
		t.Errorf("after the drain: retry at %v note %q", st3.TrackerRetryAt, st3.TrackerNote)
	}
	if n := checkWindows(t, r.fj.Requests()); n != 4 {
		t.Errorf("%d Retry-After windows logged, want 4", n)
	}
	if t.Failed() {
		r.logJira()
	}
}

// checkWindows fails when any Jira request arrived inside the Retry-After
// window of an earlier answer (as the fake logged it), and returns how many
// windows there were.
func checkWindows(t *testing.T, log []fakejira.Request) int {
	t.Helper()
	windows, broken := fakejira.RetryAfterWindows(log)
	for _, b := range broken {
		t.Error(b)
	}
	return windows
}

// TestJiraLostCreateMakesExactlyOneIssuePerKey: a bulk create that Jira
// commits but whose answer never arrives (a 502 after the commit, or the
// process killed mid-request) leaves its tasks "sending" in the state; the
// re-run inside Jira's search lag finds nothing yet and creates nothing, and
// the run after the lag adopts the issues. Exactly one Jira issue per key.
func TestJiraLostCreateMakesExactlyOneIssuePerKey(t *testing.T) {
	tests := []struct {
		name  string
		fault fakejira.Fault
		kill  bool
	}{
		{"committed then 502", fakejira.Fault{Status: http.StatusBadGateway, Commit: true}, false},
		{"committed then the process dies", fakejira.Fault{Status: http.StatusBadGateway, Commit: true, Delay: 20 * time.Second}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Jira's search shows a new issue after 2 s; autopilot waits up
			// to 5 s (search_lag) before it would send a create again.
			const fakeLag = 2 * time.Second
			r := newJiraRig(t, fakejira.Cloud, "  deployment: cloud\n  search_lag: 5s\n")
			r.fj.SetSearchLag(fakeLag)
			r.start()
			r.say("devin", planReport)
			time.Sleep(fakeLag) // the epics are searchable, as in real life
			r.fj.Script(fakejira.EndpointBulk, tc.fault)
			decompose := r.comment(r.n, "devin", decomposeReport)
			if tc.kill {
				r.runKilled(decompose, func() bool { return len(r.fj.Issues()) == len(plannedTitles) })
			} else {
				r.event("decompose report", "issue_comment", decompose)
			}
			lostAt := time.Now()
			st := r.state(r.n)
			sending := 0
			for _, tk := range st.Tasks {
				if tk.Sync == state.SyncSending {
					sending++
				}
			}
			if sending != 4 {
				t.Fatalf("after the lost create: %d tasks sending, want 4: %+v", sending, st.Tasks)
			}
			if n := len(r.fj.Issues()); n != len(plannedTitles) {
				t.Fatalf("the fake holds %d issues, want %d (the create was committed)", n, len(plannedTitles))
			}
			// Re-run (a redelivery or a re-run job) inside the search lag:
			// it looks the keys up, finds nothing yet, and waits.
			searches := len(r.fj.RequestsTo(fakejira.EndpointSearchJQL))
			r.event("decompose report re-run", "issue_comment", decompose)
			if time.Since(lostAt) < fakeLag {
				if st := r.state(r.n); tasksync.PendingCount(st) != 4 || !strings.Contains(st.TrackerNote, "search lag") {
					t.Errorf("inside the lag: %d tasks waiting (want 4), note %q", tasksync.PendingCount(st), st.TrackerNote)
				}
				lookups := 0
				for _, q := range r.fj.RequestsTo(fakejira.EndpointSearchJQL)[searches:] {
					if strings.Contains(q.Query, "labels+in") {
						lookups++
					}
				}
				if lookups != 1 {
					t.Errorf("the re-run sent %d lookups by idempotency key, want 1", lookups)
				}
			}
			if n := r.createRequests(); n != 2 {
				t.Fatalf("%d create requests after the re-run, want 2 (nothing re-sent)", n)
			}
			st = r.state(r.n)
			if st.Gate == nil || st.Gate.Kind != "session-boundary" {
				t.Fatalf("the GitHub side did not go on: step %s gate %+v", st.Slug, st.Gate)
			}
			if r.botComments("DECISION REQUIRED") != 1 {
				t.Errorf("the session-boundary Choose was posted %d times, want 1", r.botComments("DECISION REQUIRED"))
			}
			// After Jira's lag, the next run adopts the issues.
			time.Sleep(time.Until(lostAt.Add(fakeLag + 200*time.Millisecond)))
			r.sweep()
			r.checkSynced(fakejira.Cloud)
			if n := r.createRequests(); n != 2 {
				t.Errorf("%d create requests, want 2", n)
			}
			if r.hasLabel("autopilot/jira:pending") {
				t.Errorf("autopilot/jira:pending still set")
			}
			if t.Failed() {
				r.logJira()
			}
		})
	}
}

// runKilled runs the binary for an issue_comment event like harness.run,
// and kills it (SIGKILL, no clean-up) as soon as dead() holds.
func (r *jiraRig) runKilled(payload []byte, dead func() bool) {
	r.t.Helper()
	r.harness.n++
	evPath := filepath.Join(r.dir, fmt.Sprintf("event-%d.json", r.harness.n))
	if err := os.WriteFile(evPath, payload, 0o644); err != nil {
		r.t.Fatal(err)
	}
	cmd := exec.Command(binary(r.t))
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + r.dir,
		"GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=issue_comment", "GITHUB_EVENT_PATH=" + evPath,
		"GITHUB_REPOSITORY=" + repo, "GITHUB_API_URL=" + r.gh.URL(),
		"INPUT_GITHUB_TOKEN=" + token, "INPUT_STATE_KEY=" + key, "INPUT_TRIGGER_LABEL=autopilot",
		"INPUT_ANSWER_PERMISSION=write", "INPUT_DRY_RUN=false", "AUTOPILOT_MUTATION_GAP=0s", "AUTOPILOT_CLAIM_SETTLE=50ms",
	}, r.env...)
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(15 * time.Second)
	for !dead() {
		select {
		case err := <-done:
			r.t.Fatalf("the run ended (%v) before it could be killed", err)
		case <-deadline:
			_ = cmd.Process.Kill()
			r.t.Fatal("the run never reached the point to kill it")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		r.t.Fatal(err)
	}
	<-done
}

// TestJiraRefusedMidRunPausesOnceAndTheFlowGoesOn: a 401 on the create
// (the token expired after the auth check) pauses the sync with one notice;
// later events send Jira nothing and post no second notice, while the flow
// goes on; `/autopilot jira retry` after the fix creates everything.
func TestJiraRefusedMidRunPausesOnceAndTheFlowGoesOn(t *testing.T) {
	const notice = "Jira rejected autopilot's credentials"
	r := newJiraRig(t, fakejira.Cloud, "  deployment: cloud\n")
	r.start()
	r.fj.Script(fakejira.EndpointBulk, fakejira.Fault{Status: http.StatusUnauthorized})
	r.say("devin", planReport)
	r.fj.SetAuthValid(false) // stays refused from now on
	st := r.state(r.n)
	if st.Slug != "decompose" || st.TrackerNote != "paused: authentication failed" {
		t.Fatalf("after the 401: step %s note %q", st.Slug, st.TrackerNote)
	}
	if n := r.botComments(notice); n != 1 {
		t.Fatalf("%d pause notices, want 1", n)
	}
	if len(r.fj.Issues()) != 0 || tasksync.PendingCount(st) != 2 {
		t.Fatalf("after a refused create: %d issues, %d waiting", len(r.fj.Issues()), tasksync.PendingCount(st))
	}
	paused := len(r.fj.Requests())
	r.say("devin", decomposeReport)
	r.sweep()
	r.say("maria", "A")
	st = r.state(r.n)
	if st.Slug != "implement" {
		t.Fatalf("the flow stopped with Jira paused: step %s gate %+v", st.Slug, st.Gate)
	}
	if q := r.jiraSince(paused); len(q) != 0 {
		t.Fatalf("%d Jira requests while paused (a retry storm)", len(q))
	}
	if n := r.botComments(notice); n != 1 {
		t.Errorf("%d pause notices, want 1", n)
	}
	if !r.hasLabel("autopilot/jira:pending") || tasksync.PendingCount(st) != len(plannedTitles) {
		t.Errorf("while paused: labels %v, %d waiting", r.gh.Labels(repo, r.n), tasksync.PendingCount(st))
	}
	r.fj.SetAuthValid(true)
	r.say("maria", "/autopilot jira retry")
	r.checkSynced(fakejira.Cloud)
	if st := r.state(r.n); st.TrackerNote != "" || r.hasLabel("autopilot/jira:pending") {
		t.Errorf("after the retry: note %q labels %v", st.TrackerNote, r.gh.Labels(repo, r.n))
	}
	if t.Failed() {
		r.logJira()
	}
}

// TestJiraDoneInJiraTicksTheTaskAtTheNextSweep: moving a task's Jira issue
// to Done ticks it in the issue's Tasks list at the next scheduled sweep.
func TestJiraDoneInJiraTicksTheTaskAtTheNextSweep(t *testing.T) {
	r := newJiraRig(t, fakejira.Cloud, "  deployment: cloud\n")
	r.start()
	r.say("devin", planReport)
	r.say("devin", decomposeReport)
	r.checkSynced(fakejira.Cloud)
	st := r.state(r.n)
	writer := st.Tasks[2]
	if writer.Title != "Streaming CSV writer" || writer.Done {
		t.Fatalf("task 03 %+v", writer)
	}
	if err := r.fj.Transition(writer.Key, "Done"); err != nil {
		t.Fatal(err)
	}
	r.sweep()
	st = r.state(r.n)
	for _, tk := range st.Tasks {
		if tk.Done != (tk.ID == writer.ID) {
			t.Errorf("task %s %q done=%v", tk.ID, tk.Title, tk.Done)
		}
	}
	line := fmt.Sprintf("- [x] %s %s", writer.ID, writer.Title)
	if !strings.Contains(r.stateBody(), line) {
		t.Errorf("state comment lacks %q", line)
	}
	// The next sweep has nothing new to say: no state write.
	v := st.Version
	r.sweep()
	if st := r.state(r.n); st.Version != v {
		t.Errorf("a sweep with no news wrote the state (v%d → v%d)", v, st.Version)
	}
}

// TestJiraUnavailableAtTheAuthCheckDoesNotBlockTheFlow: Jira answering 503
// (or 429) to the credentials check is not a refused token: the flow must not
// stop at "Jira authentication failed" for it.
func TestJiraUnavailableAtTheAuthCheckDoesNotBlockTheFlow(t *testing.T) {
	r := newJiraRig(t, fakejira.Cloud, "  deployment: cloud\n")
	r.fj.Script(fakejira.EndpointMyself, fakejira.Fault{Status: http.StatusServiceUnavailable})
	r.start()
	st := r.state(r.n)
	if st.Gate != nil && st.Gate.Kind == "jira-auth" {
		t.Fatalf("a 503 on the credentials check opened %q", st.Gate.Title)
	}
	r.say("devin", planReport)
	if st := r.state(r.n); st.Slug != "decompose" || len(r.fj.Issues()) != 2 {
		t.Fatalf("after plan: step %s, %d Jira issues, want the 2 epics", st.Slug, len(r.fj.Issues()))
	}
}

// TestJira120TasksTakeThreeCreateRequests: a decompose report declaring 120
// tasks reaches Jira in ceil(120/50) = 3 bulk creates, every task once.
func TestJira120TasksTakeThreeCreateRequests(t *testing.T) {
	r := newJiraRig(t, fakejira.Cloud, "  deployment: cloud\n")
	r.start()
	r.say("devin", planReport)
	var b strings.Builder
	b.WriteString("/autopilot done decomposed\n\n```autopilot-tasks\n")
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&b, "- title: Task %03d\n  epic: CSV export\n  points: 1\n", i)
	}
	b.WriteString("```\n")
	before := r.createRequests()
	res := r.say("devin", b.String())
	creates := r.createRequests() - before
	t.Logf("120 tasks: %d create requests, %d Jira requests in all, %d GitHub API calls", creates, len(r.fj.Requests()), res.calls)
	if creates != 3 {
		t.Errorf("%d create requests for 120 tasks, want 3", creates)
	}
	st := r.state(r.n)
	if len(st.Tasks) != 122 || tasksync.PendingCount(st) != 0 {
		t.Fatalf("%d tasks, %d waiting", len(st.Tasks), tasksync.PendingCount(st))
	}
	for _, tk := range st.Tasks {
		if tk.Sync != state.SyncCreated || r.fj.CountLabel(tk.IdemKey) != 1 {
			t.Fatalf("task %s: %s, %d issues", tk.ID, tk.Sync, r.fj.CountLabel(tk.IdemKey))
		}
	}
	if st.Gate == nil || st.Gate.Kind != "session-boundary" {
		t.Errorf("after decompose: gate %+v", st.Gate)
	}
}
