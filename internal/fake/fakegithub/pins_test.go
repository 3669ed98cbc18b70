package fakegithub

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

const testPinMutation = `mutation AutopilotPinIssue($issueId: ID!) { pinIssue(input: {issueId: $issueId}) { issue { id isPinned } } }`

// pin sends the pinIssue mutation for the issue with that node id and
// returns isPinned and the GraphQL errors.
func (e *env) pin(tok, nodeID string) (bool, []gqlErr) {
	e.t.Helper()
	resp, b := e.do("POST", "/graphql", tok, gqlBody(PinIssueOp, testPinMutation, map[string]any{"issueId": nodeID}), nil)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("pinIssue: status %d: %s", resp.StatusCode, b)
	}
	var ans struct {
		Data *struct {
			PinIssue *struct {
				Issue struct {
					ID       string
					IsPinned bool
				}
			}
		}
		Errors []gqlErr
	}
	must(e.t, json.Unmarshal(b, &ans))
	if ans.Data == nil || ans.Data.PinIssue == nil {
		return false, ans.Errors
	}
	if ans.Data.PinIssue.Issue.ID != nodeID {
		e.t.Fatalf("pinIssue answered issue %q, want %q", ans.Data.PinIssue.Issue.ID, nodeID)
	}
	return ans.Data.PinIssue.Issue.IsPinned, ans.Errors
}

func (e *env) nodeIDOf(n int) string {
	e.t.Helper()
	var is struct {
		NodeID string `json:"node_id"`
	}
	e.doJSON("GET", "/repos/"+testRepo+"/issues/"+strconv.Itoa(n), humanTok, "", &is)
	if is.NodeID == "" {
		e.t.Fatalf("#%d has no node_id", n)
	}
	return is.NodeID
}

// TestPinIssueHoldsThreePinsARepository: GitHub's pinIssue mutation pins
// an issue (isPinned), pinning it again changes nothing, a fourth pin in
// the repository is refused with an error and no data (the three stay),
// an id that is no issue the token can see is NOT_FOUND; each call is a
// logged mutation.
func TestPinIssueHoldsThreePinsARepository(t *testing.T) {
	e := newEnv(t)
	var ns []int
	for _, title := range []string{"a", "b", "c", "d"} {
		ns = append(ns, e.issue(title))
	}
	for _, n := range ns[:3] {
		if pinned, errs := e.pin(humanTok, e.nodeIDOf(n)); !pinned || len(errs) != 0 {
			t.Fatalf("pin #%d: pinned %v, errors %+v", n, pinned, errs)
		}
	}
	if pinned, errs := e.pin(humanTok, e.nodeIDOf(ns[0])); !pinned || len(errs) != 0 {
		t.Fatalf("pinning a pinned issue again: pinned %v, errors %+v", pinned, errs)
	}
	pinned, errs := e.pin(humanTok, e.nodeIDOf(ns[3]))
	if pinned || len(errs) != 1 || !strings.Contains(errs[0].Message, "3 pinned issues") {
		t.Fatalf("a fourth pin: pinned %v, errors %+v; want refused, naming the limit of 3", pinned, errs)
	}
	for i, n := range ns {
		is, _ := e.s.Issue(testRepo, n)
		if is.Pinned != (i < 3) {
			t.Errorf("#%d pinned %v", n, is.Pinned)
		}
	}
	if _, errs := e.pin(humanTok, nodeID("Issue", 999999)); len(errs) != 1 || errs[0].Type != "NOT_FOUND" {
		t.Errorf("an unknown issue id: %+v, want NOT_FOUND", errs)
	}
	if got := len(e.s.MutationTimes()); got != 6 {
		t.Errorf("%d mutations logged, want the 6 pinIssue calls", got)
	}
	// The control API pins as a person would, under the same limit.
	if err := e.s.PinIssue(testRepo, ns[3]); err == nil {
		t.Error("the control API pinned a fourth issue")
	}
}

// gqlErr is one entry of a GraphQL answer's errors array.
type gqlErr struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}
