package action_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
)

// TestSecondaryLimitOnTheSubIssueLinkIsRecorded: with tracker: github, the
// sub-issue link answers a secondary limit (403, Retry-After: 120). The
// window is the tracker's: the run still writes its state, which carries
// the retry time, and ends with exit 0 and a warning (deferred tracker
// work, not a failure). The next run, inside the window, sends no tracker
// request.
func TestSecondaryLimitOnTheSubIssueLinkIsRecorded(t *testing.T) {
	h := newHarness(t)
	if err := h.gh.SetFile(repo, ".github/autopilot.yml", []byte("default_flow: greenfield\ntracker: github\n")); err != nil {
		t.Fatal(err)
	}
	n, err := h.gh.CreateIssue(repo, "maria", "Add CSV export", "Users want CSV.", nil)
	if err != nil {
		t.Fatal(err)
	}
	h.addLabel(n, "autopilot")
	h.mustOK(h.run("issues", h.labeled(n, "maria")), "start")
	for _, s := range []string{"problem", "research", "plan"} {
		h.mustOK(h.run("issue_comment", h.comment(n, "devin", "/autopilot done "+s+" finished")), "done "+s)
	}
	const window = 120 * time.Second
	h.gh.Script("POST", "/repos/*/*/issues/*/sub_issues", fakegithub.SecondaryRateLimit(window))
	before := len(h.gh.Requests())
	r := h.run("issue_comment", h.comment(n, "devin", "/autopilot done decomposed\n\n```autopilot-tasks\n- title: Writer\n- title: Endpoint\n```"))
	if r.code != 0 || !strings.Contains(r.stdout, "::warning::") || strings.Contains(r.stdout, "::error::") {
		t.Fatalf("exit %d, want 0 with a warning and no error:\n%s", r.code, r.stdout)
	}
	var limited fakegithub.Request
	for _, q := range h.requestsSince(before) {
		if q.Method == "POST" && strings.HasSuffix(q.Path, "/sub_issues") && q.Status == http.StatusForbidden {
			limited = q
		}
	}
	if limited.Time.IsZero() {
		t.Fatal("the scripted limit was never hit")
	}
	end := limited.Time.Add(window)
	st := h.state(n)
	if st == nil || st.TrackerRetryAt.Before(end.Add(-time.Second)) {
		t.Fatalf("state written by the limited run keeps retry at %v, want the window's end %v", st.TrackerRetryAt, end)
	}
	if st.Gate == nil {
		t.Errorf("the flow did not go on: step %s, no gate after decompose", st.Slug)
	}

	// The next run, inside the window: no tracker request.
	inside := len(h.gh.Requests())
	h.mustOK(h.run("issue_comment", h.comment(n, "maria", "/autopilot status")), "status inside the window")
	for _, q := range h.requestsSince(inside) {
		tracker := q.Method == "POST" && (strings.HasSuffix(q.Path, "/sub_issues") || strings.HasSuffix(q.Path, "/issues") || strings.Contains(q.Path, "/dependencies/")) ||
			q.Method == "PATCH" && !strings.Contains(q.Path, "/comments/")
		if tracker && q.Time.Before(end) {
			t.Errorf("%s %s sent at %v, inside the window ending %v", q.Method, q.Path, q.Time, end)
		}
	}
	if time.Now().After(end) {
		t.Skip("the runs outlasted the window; cannot tell")
	}
}
