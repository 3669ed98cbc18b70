package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// A deleted issue answers 410 Gone on every issue path and leaves the
// parent's sub-issue list; the other issues are untouched.
func TestDeletedIssueAnswers410AndLeavesItsParent(t *testing.T) {
	e := newEnv(t)
	parent, child, other := e.issue("parent"), e.issue("child"), e.issue("other")
	path := fmt.Sprintf("/repos/%s/issues/%d/sub_issues", testRepo, parent)
	for _, n := range []int{child, other} {
		if resp, b := e.do("POST", path, humanTok, fmt.Sprintf(`{"sub_issue_id":%d}`, e.issueID(n)), nil); resp.StatusCode != 201 {
			t.Fatalf("link #%d: %d %s", n, resp.StatusCode, b)
		}
	}
	must(t, e.s.DeleteIssue(testRepo, child))
	for _, p := range []string{"", "/comments", "/sub_issues"} {
		resp, b := e.do("GET", fmt.Sprintf("/repos/%s/issues/%d%s", testRepo, child, p), humanTok, "", nil)
		var body struct{ Message string }
		_ = json.Unmarshal(b, &body)
		if resp.StatusCode != http.StatusGone || body.Message != "This issue was deleted" {
			t.Errorf("GET #%d%s: %d %s, want 410 This issue was deleted", child, p, resp.StatusCode, b)
		}
	}
	if resp, _ := e.do("PATCH", fmt.Sprintf("/repos/%s/issues/%d", testRepo, child), humanTok, `{"state":"closed"}`, nil); resp.StatusCode != http.StatusGone {
		t.Errorf("PATCH a deleted issue: %d, want 410", resp.StatusCode)
	}
	kids, err := e.s.SubIssues(testRepo, parent)
	must(t, err)
	if fmt.Sprint(kids) != fmt.Sprint([]int{other}) {
		t.Errorf("sub-issues after the delete: %v, want [%d]", kids, other)
	}
	if resp, _ := e.do("GET", fmt.Sprintf("/repos/%s/issues/%d", testRepo, other), humanTok, "", nil); resp.StatusCode != 200 {
		t.Errorf("another issue: %d, want 200", resp.StatusCode)
	}
	if resp, _ := e.do("GET", fmt.Sprintf("/repos/%s/issues/%d", testRepo, 999), humanTok, "", nil); resp.StatusCode != 404 {
		t.Errorf("an issue that never was: %d, want 404", resp.StatusCode)
	}
}

// A transferred issue answers 301 with a Location by repository id, which
// serves the issue in its new repository; it leaves its old parent.
func TestTransferredIssueAnswers301ToItsNewAddress(t *testing.T) {
	e := newEnv(t)
	must(t, e.s.AddRepo("octo/other"))
	parent, child := e.issue("parent"), e.issue("child")
	path := fmt.Sprintf("/repos/%s/issues/%d/sub_issues", testRepo, parent)
	if resp, b := e.do("POST", path, humanTok, fmt.Sprintf(`{"sub_issue_id":%d}`, e.issueID(child)), nil); resp.StatusCode != 201 {
		t.Fatalf("link: %d %s", resp.StatusCode, b)
	}
	moved, err := e.s.TransferIssue(testRepo, child, "octo/other")
	must(t, err)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/repos/%s/issues/%d", e.s.URL(), testRepo, child), nil)
	req.Header.Set("Authorization", "token "+humanTok)
	resp, err := noFollow.Do(req)
	must(t, err)
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusMovedPermanently || loc == "" {
		t.Fatalf("GET a transferred issue: %d Location %q, want 301 with a Location", resp.StatusCode, loc)
	}
	// Followed (as go-github's client does), the redirect reads the issue in
	// its new repository.
	var is struct {
		Number  int    `json:"number"`
		HTMLURL string `json:"html_url"`
	}
	if r := e.doJSON("GET", fmt.Sprintf("/repos/%s/issues/%d", testRepo, child), humanTok, "", &is); r.StatusCode != 200 ||
		is.Number != moved || is.HTMLURL != fmt.Sprintf("https://github.com/octo/other/issues/%d", moved) {
		t.Fatalf("followed: %d %+v, want #%d of octo/other", r.StatusCode, is, moved)
	}
	if kids, _ := e.s.SubIssues(testRepo, parent); len(kids) != 0 {
		t.Errorf("old parent still lists %v", kids)
	}
}

// An issue created with an App's installation token carries
// performed_via_github_app, as the App's comments do; a person's does not.
func TestIssueCreatedThroughAnAppNamesIt(t *testing.T) {
	e, _ := appEnv(t)
	e.s.AddToken("ghs_app", Identity{Login: "autopilot-test[bot]", Type: "Bot", AppID: testAppID, InstallationID: testInstall})
	var is struct {
		Via *struct {
			ID int64 `json:"id"`
		} `json:"performed_via_github_app"`
	}
	if r := e.doJSON("POST", "/repos/"+testRepo+"/issues", "ghs_app", `{"title":"t","body":"b"}`, &is); r.StatusCode != 201 || is.Via == nil || is.Via.ID != testAppID {
		t.Fatalf("App's issue: %d via %+v, want app %d", r.StatusCode, is.Via, testAppID)
	}
	is.Via = nil
	if r := e.doJSON("POST", "/repos/"+testRepo+"/issues", humanTok, `{"title":"t","body":"b"}`, &is); r.StatusCode != 201 || is.Via != nil {
		t.Fatalf("person's issue: %d via %+v, want none", r.StatusCode, is.Via)
	}
}
