package action_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestFirstDay is a maintainer's first day, measured end to end: a fresh
// repository with only the documented workflow (no labels, no
// .github/autopilot.yml, no Jira inputs), and the events that workflow
// delivers in order — the label, the executor's reports, the first Choose
// block, its answer — each run through the real binary as the runner runs
// it. It prints the API calls per event, the labels created and the
// comments posted, and holds the budgets: a start ≤ 8 calls once its labels
// exist (plus one per label it creates, never one it does not apply), an
// answer ≤ 6, no question about Jira, no label nobody applied.
func TestFirstDay(t *testing.T) {
	h := newHarness(t)
	n, err := h.gh.CreateIssue(repo, "maria", "Add CSV export", "Users want to download reports as CSV.", nil)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		event           string
		calls           int
		labelsCreated   []string
		commentsPosted  int
		status, outStep string
	}
	var rows []row
	applied := map[string]bool{} // every label the bot ever put on an issue
	step := func(what, event string, payload func() []byte) row {
		t.Helper()
		before := repoLabelSet(h.gh)
		posted := botComments(h.gh, n)
		r := h.run(event, payload(), documentedJiraInputs...)
		h.mustOK(r, what)
		var created []string
		for _, l := range h.gh.RepoLabels(repo) {
			if !before[l.Name] {
				created = append(created, l.Name)
			}
		}
		sort.Strings(created)
		for _, l := range h.gh.Labels(repo, n) {
			applied[l] = true
		}
		w := row{event: what, calls: r.calls, labelsCreated: created, commentsPosted: botComments(h.gh, n) - posted,
			status: r.outputs["status"], outStep: r.outputs["step"]}
		rows = append(rows, w)
		return w
	}

	h.addLabel(n, "autopilot")
	start := step("issues.labeled (maria adds autopilot)", "issues", func() []byte { return h.labeled(n, "maria") })
	report := func(what, body string) row {
		return step(what, "issue_comment", func() []byte { return h.comment(n, "devin", body) })
	}
	report("issue_comment (first report: problem)", "/autopilot done Problem: users need CSV downloads of every report.")
	report("issue_comment (research)", "/autopilot done Research: encoding/csv streams fine.")
	report("issue_comment (plan, one epic)", "/autopilot done Plan: a streaming writer.\n\n```autopilot-epics\n- title: CSV export\n```")
	choose := report("issue_comment (decompose → first Choose)", "/autopilot done Two tasks.\n\n```autopilot-tasks\n- title: Writer\n  epic: CSV export\n- title: Endpoint\n  epic: CSV export\n```")
	answer := step("issue_comment (maria answers A)", "issue_comment", func() []byte { return h.comment(n, "maria", "A") })

	// The steady state: a second issue in the same repository, its labels
	// already there.
	n2, err := h.gh.CreateIssue(repo, "maria", "Add JSON export", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	h.addLabel(n2, "autopilot")
	before := repoLabelSet(h.gh)
	r := h.run("issues", h.labeled(n2, "maria"), documentedJiraInputs...)
	h.mustOK(r, "second start")
	secondStart := r.calls
	for _, l := range h.gh.RepoLabels(repo) {
		if !before[l.Name] {
			t.Errorf("the second start created label %s although the first run had made it", l.Name)
		}
	}

	total, posted, created := 0, 0, 0
	t.Logf("first day in a fresh repository (no labels, no config, no Jira inputs):")
	t.Logf("  (calls: billed requests, 304s not counted; comments: posted besides the state comment)")
	t.Logf("  %-44s %5s  %-8s  %s", "event", "calls", "comments", "labels created")
	for _, w := range rows {
		t.Logf("  %-44s %5d  %-8d  %s", w.event, w.calls, w.commentsPosted, strings.Join(w.labelsCreated, ", "))
		total, posted, created = total+w.calls, posted+w.commentsPosted, created+len(w.labelsCreated)
	}
	t.Logf("  %-44s %5d  %-8d  %d labels", "total", total, posted, created)
	t.Logf("  a start once its labels exist (second issue): %d calls", secondStart)

	// Budgets (PRODUCT §13): a start ≤ 8 once its labels exist; the first
	// start pays one request per label it creates, and creates only the
	// labels it applies; an answer ≤ 6.
	if secondStart > 8 {
		t.Errorf("a start with its labels in place cost %d calls, budget 8", secondStart)
	}
	if start.calls > 8+len(start.labelsCreated) {
		t.Errorf("the first start cost %d calls for %d new labels, budget 8 + 1 per label", start.calls, len(start.labelsCreated))
	}
	if want := []string{"autopilot/flow:greenfield", "autopilot/status:in-progress", "autopilot/step:problem"}; strings.Join(start.labelsCreated, ",") != strings.Join(want, ",") {
		t.Errorf("the first start created labels %v, want exactly the ones it applied %v", start.labelsCreated, want)
	}
	if answer.calls > 6 {
		t.Errorf("answering the Choose block cost %d calls, budget 6", answer.calls)
	}
	if choose.status != string(state.RunAwaitingDecision) || answer.outStep != "implement" || answer.status != string(state.RunInProgress) {
		t.Errorf("the Choose block and its answer: status %q, then step %q status %q", choose.status, answer.outStep, answer.status)
	}
	// Every label in the repository was applied by a run, with its colour
	// (the trigger label is the maintainer's own).
	for _, l := range h.gh.RepoLabels(repo) {
		if l.Name == "autopilot" {
			continue
		}
		if !applied[l.Name] {
			t.Errorf("label %s exists although no run applied it", l.Name)
		}
		if l.Color == forge.LabelAutoColor || l.Description == "" {
			t.Errorf("label %+v was left grey", l)
		}
	}
	// Jira is not configured: nobody was asked, nothing waits as pending.
	for _, c := range h.gh.Comments(repo, n) {
		if strings.Contains(c.Body, "Jira authentication failed") {
			t.Errorf("the bot asked about Jira, which nothing configures:\n%s", c.Body)
		}
	}
	if applied["autopilot/jira:pending"] {
		t.Error("autopilot/jira:pending was set although Jira is not configured")
	}
	st := h.state(n)
	if st.TrackerOff != state.TrackerNotConfigured || len(st.Tasks) != 3 || st.Tasks[1].ID != "02" || st.Tasks[1].Sync != state.SyncLocal {
		t.Errorf("tasks %+v (tracker_off %q), want three kept in the issue, numbered 01…", st.Tasks, st.TrackerOff)
	}
}

// documentedJiraInputs is what the documented workflow passes when the
// repository has no JIRA_* variables or secret: the inputs, empty.
var documentedJiraInputs = []string{"INPUT_JIRA_URL=", "INPUT_JIRA_USER=", "INPUT_JIRA_TOKEN=", "INPUT_JIRA_PROJECT="}

func repoLabelSet(gh *fakegithub.Server) map[string]bool {
	m := map[string]bool{}
	for _, l := range gh.RepoLabels(repo) {
		m[l.Name] = true
	}
	return m
}

func botComments(gh *fakegithub.Server, n int) int {
	k := 0
	for _, c := range gh.Comments(repo, n) {
		if c.Author.Login == fakegithub.ActionsBotLogin && !strings.HasPrefix(c.Body, state.Marker) {
			k++
		}
	}
	return k
}

// TestPartialJiraInputsAreAUsageError: Jira inputs that cannot make a
// working Jira (no project anywhere, or Jira Cloud without jira_user) end
// the run with exit 2 and a message naming what is missing, before anything
// is written; a lone input is refused before any request.
func TestPartialJiraInputsAreAUsageError(t *testing.T) {
	for _, c := range []struct {
		name string
		env  []string
		want string
	}{
		{"no project", []string{"INPUT_JIRA_URL=https://jira.acme.internal", "INPUT_JIRA_TOKEN=pat"}, "jira_project"},
		{"cloud without user", []string{"INPUT_JIRA_URL=https://acme.atlassian.net", "INPUT_JIRA_TOKEN=t", "INPUT_JIRA_PROJECT=PROJ"}, "jira_user"},
		{"a project alone", []string{"INPUT_JIRA_PROJECT=PROJ"}, "jira_url and jira_token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			n, err := h.gh.CreateIssue(repo, "maria", "Add CSV export", "", nil)
			if err != nil {
				t.Fatal(err)
			}
			h.addLabel(n, "autopilot")
			before := len(h.gh.Requests())
			r := h.run("issues", h.labeled(n, "maria"), c.env...)
			if r.code != 2 || !strings.Contains(r.stdout, c.want) {
				t.Fatalf("exit %d, want 2 naming %s:\n%s", r.code, c.want, r.stdout)
			}
			for _, q := range h.gh.Requests()[before:] {
				if q.IsMutation() {
					t.Errorf("a misconfigured run wrote: %s %s", q.Method, q.Path)
				}
			}
		})
	}
}
