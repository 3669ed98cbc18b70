package deploygate

import (
	"reflect"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
)

func TestMatchPrefersTheDispatchedRunThenPullRequestsNeverTitles(t *testing.T) {
	cands := []Candidate{
		{Issue: 3, LinkedPRs: []int{5}},
		{Issue: 12, RunID: 900, Session: "s-12-deploy-1", LinkedPRs: []int{7}},
		{Issue: 20, LinkedPRs: []int{8}},
	}
	cases := []struct {
		name string
		req  Request
		want Matched
	}{
		{"run id", Request{RunID: 900, PRs: []PR{{Number: 5}}}, Matched{Issue: 12, How: ByRun}},
		{"session token of the run's name", Request{RunID: 901, Session: "s-12-deploy-1"}, Matched{Issue: 12, How: ByRun}},
		{"a linked pull request", Request{RunID: 901, PRs: []PR{{Number: 8}}}, Matched{Issue: 20, How: ByPullRequest}},
		{"a pull request linking the issue", Request{RunID: 901, PRs: []PR{{Number: 99, LinkedIssues: []int{3}}}}, Matched{Issue: 3, How: ByPullRequest}},
		{"two pull requests of one issue", Request{PRs: []PR{{Number: 5}, {Number: 6, LinkedIssues: []int{3}}}}, Matched{Issue: 3, How: ByPullRequest}},
		{"pull requests of two issues", Request{PRs: []PR{{Number: 8}, {Number: 5}}}, Matched{Ambiguous: []int{3, 20}}},
		{"nothing in common", Request{RunID: 1, PRs: []PR{{Number: 40, LinkedIssues: []int{41}}}}, Matched{}},
		{"no run id and no pull request", Request{}, Matched{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Match(c.req, cands); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Match = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestCandidateOfReadsTheDispatchedRunAndLinkedPRs(t *testing.T) {
	st := &state.State{Issue: 12, LinkedPRs: []int{5, 6}, Exec: &state.Execution{RunID: 900, Session: "s1"}}
	want := Candidate{Issue: 12, RunID: 900, Session: "s1", LinkedPRs: []int{5, 6}}
	if got := CandidateOf(st); !reflect.DeepEqual(got, want) {
		t.Fatalf("CandidateOf = %+v, want %+v", got, want)
	}
	if got := CandidateOf(&state.State{Issue: 4}); got.RunID != 0 || got.Session != "" {
		t.Fatalf("no execution gives run %d session %q", got.RunID, got.Session)
	}
}
