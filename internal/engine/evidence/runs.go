package evidence

import (
	"fmt"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// RunClockSkew is how much earlier than the dispatch (bot clock) a run's
// created_at (GitHub's clock) may be and still match by session token.
const RunClockSkew = time.Minute

// Run is what the run rules read of a workflow run (workflow_run's
// fields).
type Run struct {
	ID           int64
	DisplayTitle string
	// Path is the run's workflow file (".github/workflows/x.yml", maybe
	// with "@ref").
	Path string
	// Event is what triggered the run.
	Event string
	// HeadRepo is the head repository's full name (a fork's for a fork's
	// branch).
	HeadRepo  string
	CreatedAt time.Time
}

// RunRule is what the run rules need of the settings: the workflow file
// configured for the step and the base repository.
type RunRule struct {
	Workflow string
	Repo     string
}

// Match decides whether a completed workflow run reports the dispatched
// step of s (PRODUCT §9). When the dispatch recorded a run id, only that id
// matches. Without one (a server that returned no run details) the session
// token in the display title matches, and only for a run of the configured
// workflow file, triggered by workflow_dispatch, on the base repository (not
// a fork), created after the dispatch: the token is printed on the issue,
// so anyone can put it in a title. The reason says why a run was ignored.
func (rr RunRule) Match(s *state.State, r Run) (bool, string) {
	if s == nil || s.Exec == nil || s.Exec.Executor != "dispatch" || s.Status != state.InProgress {
		return false, "no dispatched step is waiting for a run"
	}
	ex := s.Exec
	if ex.RunID != 0 {
		if r.ID == ex.RunID {
			return true, ""
		}
		return false, fmt.Sprintf("run %d is not the recorded run %d", r.ID, ex.RunID)
	}
	if ex.Session == "" || !CarriesToken(r.DisplayTitle, ex.Session) {
		return false, "the display title does not carry the session token " + ex.Session
	}
	return rr.TokenTrusted(ex, r)
}

// TokenTrusted checks a run that carries the session token but was not
// recorded by id: the configured workflow file, event workflow_dispatch,
// the base repository, created after the dispatch.
func (rr RunRule) TokenTrusted(ex *state.Execution, r Run) (bool, string) {
	wf := rr.Workflow
	file, _, _ := strings.Cut(r.Path, "@") // ".github/workflows/x.yml@main"
	switch {
	case wf == "" || file != wf && file != ".github/workflows/"+wf:
		return false, fmt.Sprintf("workflow file %q is not the configured %q", r.Path, wf)
	case r.Event != "workflow_dispatch":
		return false, fmt.Sprintf("event %q is not workflow_dispatch", r.Event)
	case rr.Repo == "" || !strings.EqualFold(r.HeadRepo, rr.Repo):
		return false, fmt.Sprintf("head repository %q is not %q", r.HeadRepo, rr.Repo)
	case r.CreatedAt.IsZero() || r.CreatedAt.Before(ex.DispatchedAt.Add(-RunClockSkew)):
		return false, fmt.Sprintf("created %s, before the dispatch at %s", r.CreatedAt.UTC().Format(time.RFC3339), ex.DispatchedAt.UTC().Format(time.RFC3339))
	}
	return true, ""
}

// CarriesToken reports whether title carries the session token as a
// whole word (a token inside another word is not it).
func CarriesToken(title, token string) bool {
	for _, f := range strings.Fields(title) {
		if f == token {
			return true
		}
	}
	return false
}
