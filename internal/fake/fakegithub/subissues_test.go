package fakegithub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

func (e *env) issueID(n int) int64 {
	e.t.Helper()
	resp, b := e.do("GET", fmt.Sprintf("/repos/%s/issues/%d", testRepo, n), humanTok, "", nil)
	if resp.StatusCode != 200 {
		e.t.Fatalf("GET #%d: %d %s", n, resp.StatusCode, b)
	}
	var is struct {
		ID int64 `json:"id"`
	}
	must(e.t, json.Unmarshal(b, &is))
	return is.ID
}

func TestSubIssuesLinkListAndRefuseASecondParentOrA101stChild(t *testing.T) {
	e := newEnv(t)
	parent, other := e.issue("parent"), e.issue("other")
	resp, b := e.do("POST", "/repos/"+testRepo+"/issues", humanTok, `{"title":"child","body":"b","labels":["autopilot/task"]}`, nil)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	var child struct {
		ID     int64 `json:"id"`
		Number int   `json:"number"`
	}
	must(t, json.Unmarshal(b, &child))
	path := fmt.Sprintf("/repos/%s/issues/%d/sub_issues", testRepo, parent)
	// The POST takes the numeric id; the number is not an id.
	if resp, _ := e.do("POST", path, humanTok, fmt.Sprintf(`{"sub_issue_id":%d}`, child.Number), nil); resp.StatusCode != 422 {
		t.Fatalf("linking by number: %d, want 422", resp.StatusCode)
	}
	if resp, b := e.do("POST", path, humanTok, fmt.Sprintf(`{"sub_issue_id":%d}`, child.ID), nil); resp.StatusCode != 201 {
		t.Fatalf("link: %d %s", resp.StatusCode, b)
	}
	otherPath := fmt.Sprintf("/repos/%s/issues/%d/sub_issues", testRepo, other)
	if resp, _ := e.do("POST", otherPath, humanTok, fmt.Sprintf(`{"sub_issue_id":%d}`, child.ID), nil); resp.StatusCode != 422 {
		t.Fatalf("second parent: %d, want 422", resp.StatusCode)
	}
	resp, b = e.do("GET", path, humanTok, "", nil)
	var list []struct {
		Number int `json:"number"`
	}
	must(t, json.Unmarshal(b, &list))
	if resp.StatusCode != 200 || len(list) != 1 || list[0].Number != child.Number {
		t.Fatalf("list: %d %s", resp.StatusCode, b)
	}
	for i := 1; i < 100; i++ {
		n := e.issue(fmt.Sprint("kid ", i))
		if resp, b := e.do("POST", path, humanTok, fmt.Sprintf(`{"sub_issue_id":%d}`, e.issueID(n)), nil); resp.StatusCode != 201 {
			t.Fatalf("kid %d: %d %s", i, resp.StatusCode, b)
		}
	}
	n := e.issue("kid 101")
	if resp, _ := e.do("POST", path, humanTok, fmt.Sprintf(`{"sub_issue_id":%d}`, e.issueID(n)), nil); resp.StatusCode != 422 {
		t.Fatalf("101st child: %d, want 422", resp.StatusCode)
	}
	kids, err := e.s.SubIssues(testRepo, parent)
	must(t, err)
	if len(kids) != 100 {
		t.Fatalf("children = %d, want 100", len(kids))
	}
}

func TestDependenciesTakeTheBlockersIDAndCanBeSwitchedOff(t *testing.T) {
	e := newEnv(t)
	a, b := e.issue("a"), e.issue("b")
	path := fmt.Sprintf("/repos/%s/issues/%d/dependencies/blocked_by", testRepo, b)
	if resp, body := e.do("POST", path, humanTok, fmt.Sprintf(`{"issue_id":%d}`, e.issueID(a)), nil); resp.StatusCode != 201 {
		t.Fatalf("add: %d %s", resp.StatusCode, body)
	}
	got, err := e.s.BlockedBy(testRepo, b)
	must(t, err)
	if len(got) != 1 || got[0] != a {
		t.Fatalf("blocked by %v, want [%d]", got, a)
	}
	e.s.SetNoDependencies(true)
	if resp, _ := e.do("POST", path, humanTok, fmt.Sprintf(`{"issue_id":%d}`, e.issueID(a)), nil); resp.StatusCode != 404 {
		t.Fatalf("without dependencies: %d, want 404", resp.StatusCode)
	}
}

func TestContentLimitAnswers403WithRetryAfterAndCountsRequestsInsideTheWindow(t *testing.T) {
	e := newEnv(t)
	e.s.SetContentLimits(3, 100)
	create := func() *http.Response {
		resp, _ := e.do("POST", "/repos/"+testRepo+"/issues", humanTok, `{"title":"t"}`, nil)
		return resp
	}
	for i := 0; i < 3; i++ {
		if r := create(); r.StatusCode != 201 {
			t.Fatalf("create %d: %d", i, r.StatusCode)
		}
	}
	r := create()
	if r.StatusCode != 403 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("4th create: %d retry-after %q, want 403 with retry-after", r.StatusCode, r.Header.Get("Retry-After"))
	}
	if hits, inside := e.s.ContentLimitStats(); hits != 1 || inside != 0 {
		t.Fatalf("hits %d inside %d, want 1 0", hits, inside)
	}
	e.clock.Advance(10 * time.Second)
	if r := create(); r.StatusCode != 403 {
		t.Fatalf("inside the window: %d, want 403", r.StatusCode)
	}
	if _, inside := e.s.ContentLimitStats(); inside != 1 {
		t.Fatalf("inside = %d, want 1", inside)
	}
	e.clock.Advance(2 * time.Minute)
	if r := create(); r.StatusCode != 201 {
		t.Fatalf("after the window: %d", r.StatusCode)
	}
}
