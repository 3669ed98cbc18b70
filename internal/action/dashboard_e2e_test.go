package action_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
)

// dashboardIssues lists the open issues whose body starts with the
// dashboard's marker, by author.
func (h *harness) dashboardIssues() (ours []fakegithub.Issue, others []fakegithub.Issue) {
	h.t.Helper()
	for i := 1; i < 100; i++ {
		is, ok := h.gh.Issue(repo, i)
		if !ok || is.IsPR || is.State != "open" || !strings.HasPrefix(is.Body, "<!-- autopilot:dashboard -->") {
			continue
		}
		if is.Author.Login == fakegithub.ActionsBotLogin {
			ours = append(ours, is)
		} else {
			others = append(others, is)
		}
	}
	return ours, others
}

func (h *harness) sweep() result {
	h.t.Helper()
	r := h.run("schedule", ghtest.WithRepo(h.t, ghtest.Payload(h.t, "schedule.json"), repo))
	h.mustOK(r, "sweep")
	return r
}

// issueWrites counts the requests of run i that create or edit an issue.
func (h *harness) issueWrites(from int) (creates, edits int) {
	for _, q := range h.gh.Requests()[from:] {
		switch {
		case q.Method == "POST" && q.Path == "/repos/"+repo+"/issues":
			creates++
		case q.Method == "PATCH" && strings.HasPrefix(q.Path, "/repos/"+repo+"/issues/") && !strings.Contains(q.Path, "/comments/"):
			edits++
		}
	}
	return creates, edits
}

// pinCalls counts the pinIssue mutations since request from.
func (h *harness) pinCalls(from int) int {
	n := 0
	for _, q := range h.gh.Requests()[from:] {
		if q.Path == "/graphql" && strings.Contains(q.Body, "pinIssue(") {
			n++
		}
	}
	return n
}

// TestActionDashboardIssue: with dashboard: true the scheduled sweep
// keeps one "autopilot dashboard" issue with a row per open autopilot
// issue: created on the first sweep, untouched by a sweep that changes
// nothing, edited once when a row changed; pinned right after it is
// created, with one pinIssue call and none on later sweeps; a look-alike issue another
// account wrote (the same marker in its body) is neither adopted nor
// edited, and a hostile title renders inert.
func TestActionDashboardIssue(t *testing.T) {
	h := newHarness(t)
	if err := h.gh.SetFile(repo, ".github/autopilot.yml", []byte("dashboard: true\njira:\n  enabled: false\n")); err != nil {
		t.Fatal(err)
	}
	forged, err := h.gh.CreateIssue(repo, "devin", "autopilot dashboard", "<!-- autopilot:dashboard -->\nforged", []string{"autopilot-dashboard"})
	if err != nil {
		t.Fatal(err)
	}
	const hostile = "Export <b>CSV</b> | @devin <!-- x -->"
	n, err := h.gh.CreateIssue(repo, "maria", hostile, "Users want CSV.", nil)
	if err != nil {
		t.Fatal(err)
	}
	h.addLabel(n, "autopilot")
	h.mustOK(h.run("issues", ghtest.Mutate(t, h.labeled(n, "maria"), map[string]any{"issue.title": hostile})), "label")
	if s := h.state(n); s == nil || s.Title != hostile {
		t.Fatalf("the run does not carry the hostile title: %+v", s)
	}

	from := len(h.gh.Requests())
	r := h.sweep()
	ours, others := h.dashboardIssues()
	if len(ours) != 1 || len(others) != 1 || others[0].Number != forged {
		t.Fatalf("after the first sweep: %d dashboards of ours, %d others (want 1 and the forged #%d)\n%s", len(ours), len(others), forged, r.stdout)
	}
	if c, e := h.issueWrites(from); c != 1 || e != 0 {
		t.Fatalf("first sweep: %d creates and %d issue edits, want 1 and 0", c, e)
	}
	dash := ours[0]
	if !dash.Pinned || h.pinCalls(from) != 1 {
		t.Fatalf("first sweep: the dashboard pinned %v with %d pinIssue calls, want pinned with 1\n%s", dash.Pinned, h.pinCalls(from), r.stdout)
	}
	for _, want := range []string{"| Issue |", "#" + strconv.Itoa(n), "greenfield", "| Problem |", "Export &lt;b&gt;CSV&lt;/b&gt; \\|"} {
		if !strings.Contains(dash.Body, want) {
			t.Errorf("the dashboard lacks %q:\n%s", want, dash.Body)
		}
	}
	for _, bad := range []string{"<b>", "| @devin", "<!-- x -->"} {
		if strings.Contains(dash.Body, bad) {
			t.Errorf("the hostile title is live in the dashboard (%q):\n%s", bad, dash.Body)
		}
	}
	if is, _ := h.gh.Issue(repo, forged); is.Body != "<!-- autopilot:dashboard -->\nforged" {
		t.Error("the forged dashboard was edited")
	}

	from = len(h.gh.Requests())
	h.sweep()
	if c, e := h.issueWrites(from); c != 0 || e != 0 || h.pinCalls(from) != 0 {
		t.Fatalf("a sweep that changed nothing: %d creates, %d issue edits, %d pins, want none", c, e, h.pinCalls(from))
	}

	h.mustOK(h.run("issue_comment", h.comment(n, "maria", "/autopilot done problem stated")), "done")
	from = len(h.gh.Requests())
	h.sweep()
	if c, e := h.issueWrites(from); c != 0 || e != 1 {
		t.Fatalf("a sweep after a step moved: %d creates and %d issue edits, want 0 and 1", c, e)
	}
	ours, _ = h.dashboardIssues()
	if len(ours) != 1 || ours[0].Number != dash.Number || !strings.Contains(ours[0].Body, "| Research |") {
		t.Fatalf("the dashboard was not updated in place: %+v", ours)
	}
}

// TestActionDashboardIssueWithThePinsTaken: the repository already has
// its 3 pinned issues, so the pin after creating the dashboard is refused:
// the run warns, naming what to do, and succeeds; the dashboard is kept
// (created once, unpinned), and the next sweep does not try again.
func TestActionDashboardIssueWithThePinsTaken(t *testing.T) {
	h := newHarness(t)
	if err := h.gh.SetFile(repo, ".github/autopilot.yml", []byte("dashboard: true\njira:\n  enabled: false\n")); err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"Roadmap", "Release notes", "Help wanted"} {
		n, err := h.gh.CreateIssue(repo, "maria", title, "pinned by hand", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.gh.PinIssue(repo, n); err != nil {
			t.Fatal(err)
		}
	}
	from := len(h.gh.Requests())
	r := h.sweep()
	ours, _ := h.dashboardIssues()
	if len(ours) != 1 || ours[0].Pinned {
		t.Fatalf("after the refused pin: %d dashboards of ours (want 1, unpinned): %+v\n%s", len(ours), ours, r.stdout)
	}
	if h.pinCalls(from) != 1 {
		t.Fatalf("%d pinIssue calls, want 1", h.pinCalls(from))
	}
	warn := "::warning::dashboard issue #" + strconv.Itoa(ours[0].Number) + " created but not pinned"
	if !strings.Contains(r.stdout, warn) || !strings.Contains(r.stdout, "3 pinned issues") || !strings.Contains(r.stdout, "Pin issue") {
		t.Fatalf("the run does not warn %q with GitHub's reason and what to do:\n%s", warn, r.stdout)
	}
	from = len(h.gh.Requests())
	r = h.sweep()
	if c, e := h.issueWrites(from); c != 0 || e != 0 || h.pinCalls(from) != 0 || strings.Contains(r.stdout, "::warning::") {
		t.Fatalf("the next sweep: %d creates, %d edits, %d pins (want none, no warning)\n%s", c, e, h.pinCalls(from), r.stdout)
	}
}
