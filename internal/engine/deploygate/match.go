package deploygate

import (
	"slices"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// Candidate is what matching needs to know of one autopilot issue.
type Candidate struct {
	Issue int
	// RunID and Session name the workflow run autopilot dispatched for
	// the issue's current step (State.Exec), when it dispatched one.
	RunID   int64
	Session string
	// LinkedPRs are the pull requests the state records as linked.
	LinkedPRs []int
}

// CandidateOf is the candidate an issue's state makes.
func CandidateOf(st *state.State) Candidate {
	c := Candidate{Issue: st.Issue, LinkedPRs: st.LinkedPRs}
	if st.Exec != nil {
		c.RunID, c.Session = st.Exec.RunID, st.Exec.Session
	}
	return c
}

// How says how a request was matched to its issue.
type How string

// The ways a request matches.
const (
	ByRun         How = "dispatched-run" // the run autopilot dispatched: exact
	ByPullRequest How = "pull-request"   // a pull request the request names
)

// Matched is Match's result: the issue, or none (Issue 0). Ambiguous lists
// the issues when the pull requests named more than one.
type Matched struct {
	Issue     int
	How       How
	Ambiguous []int
}

// Match finds the autopilot issue a request is for: first the issue whose
// dispatched run is the request's run (by run id, or by the session token
// the run's name carries), else the one issue the request's pull requests
// link or are linked from. Titles never match. Several issues through pull
// requests is no match (Ambiguous lists them).
func Match(req Request, cands []Candidate) Matched {
	for _, c := range cands {
		if req.RunID != 0 && c.RunID == req.RunID || req.Session != "" && c.Session == req.Session {
			return Matched{Issue: c.Issue, How: ByRun}
		}
	}
	var found []int
	for _, c := range cands {
		for _, pr := range req.PRs {
			if slices.Contains(c.LinkedPRs, pr.Number) || slices.Contains(pr.LinkedIssues, c.Issue) {
				if !slices.Contains(found, c.Issue) {
					found = append(found, c.Issue)
				}
				break
			}
		}
	}
	switch len(found) {
	case 0:
		return Matched{}
	case 1:
		return Matched{Issue: found[0], How: ByPullRequest}
	}
	slices.Sort(found)
	return Matched{Ambiguous: found}
}
