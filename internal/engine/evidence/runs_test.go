package evidence

import (
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

func dispatched(runID int64) *state.State {
	return &state.State{Status: state.InProgress, Exec: &state.Execution{Executor: "dispatch", Session: "ap-s3ss10n", RunID: runID, DispatchedAt: t0}}
}

func tokenRun() Run {
	return Run{ID: 99, DisplayTitle: "autopilot ap-s3ss10n step", Path: ".github/workflows/autopilot.yml", Event: "workflow_dispatch", HeadRepo: "acme/widgets", CreatedAt: t0.Add(time.Second)}
}

func TestRunRuleMatch(t *testing.T) {
	rr := RunRule{Workflow: "autopilot.yml", Repo: "acme/widgets"}
	cases := []struct {
		name   string
		s      *state.State
		run    func(r *Run)
		want   bool
		reason string
	}{
		{name: "no state", s: nil, reason: "no dispatched step"},
		{name: "manual executor", s: func() *state.State { s := dispatched(0); s.Exec.Executor = "manual"; return s }(), reason: "no dispatched step"},
		{name: "step not in progress", s: func() *state.State { s := dispatched(0); s.Status = "done"; return s }(), reason: "no dispatched step"},
		{name: "recorded run id matches", s: dispatched(42), run: func(r *Run) { r.ID = 42; r.DisplayTitle = ""; r.Event = "push"; r.HeadRepo = "evil/fork" }, want: true},
		{name: "recorded id: token run of another id ignored", s: dispatched(42), reason: "not the recorded run 42"},
		{name: "token fallback", s: dispatched(0), want: true},
		{name: "token must be a whole word", s: dispatched(0), run: func(r *Run) { r.DisplayTitle = "autopilot ap-s3ss10nX" }, reason: "session token"},
		{name: "no token in title", s: dispatched(0), run: func(r *Run) { r.DisplayTitle = "some run" }, reason: "session token"},
		{name: "no session recorded", s: func() *state.State { s := dispatched(0); s.Exec.Session = ""; return s }(), run: func(r *Run) { r.DisplayTitle = "" }, reason: "session token"},
		{name: "token but forked head", s: dispatched(0), run: func(r *Run) { r.HeadRepo = "evil/widgets" }, reason: "head repository"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := tokenRun()
			if c.run != nil {
				c.run(&r)
			}
			got, reason := rr.Match(c.s, r)
			if got != c.want {
				t.Fatalf("Match = %v (%q), want %v", got, reason, c.want)
			}
			if !got && !strings.Contains(reason, c.reason) {
				t.Errorf("reason %q does not contain %q", reason, c.reason)
			}
		})
	}
}

func TestTokenTrusted(t *testing.T) {
	ex := &state.Execution{Executor: "dispatch", Session: "ap-s3ss10n", DispatchedAt: t0}
	cases := []struct {
		name   string
		rule   RunRule
		run    func(r *Run)
		want   bool
		reason string
	}{
		{name: "all good", want: true},
		{name: "bare workflow path configured", rule: RunRule{Workflow: ".github/workflows/autopilot.yml", Repo: "acme/widgets"}, want: true},
		{name: "path with ref", run: func(r *Run) { r.Path = ".github/workflows/autopilot.yml@refs/heads/main" }, want: true},
		{name: "other workflow file", run: func(r *Run) { r.Path = ".github/workflows/other.yml" }, reason: "workflow file"},
		{name: "same name in another directory", run: func(r *Run) { r.Path = "x/autopilot.yml" }, reason: "workflow file"},
		{name: "empty workflow fails closed", rule: RunRule{Repo: "acme/widgets"}, run: func(r *Run) { r.Path = "" }, reason: "workflow file"},
		{name: "empty workflow, any path", rule: RunRule{Repo: "acme/widgets"}, reason: "workflow file"},
		{name: "push event", run: func(r *Run) { r.Event = "push" }, reason: "workflow_dispatch"},
		{name: "pull_request event", run: func(r *Run) { r.Event = "pull_request" }, reason: "workflow_dispatch"},
		{name: "fork head", run: func(r *Run) { r.HeadRepo = "mallory/widgets" }, reason: "head repository"},
		{name: "repo case-insensitive", run: func(r *Run) { r.HeadRepo = "ACME/Widgets" }, want: true},
		{name: "empty base repo fails closed", rule: RunRule{Workflow: "autopilot.yml"}, reason: "head repository"},
		{name: "created at skew boundary", run: func(r *Run) { r.CreatedAt = t0.Add(-RunClockSkew) }, want: true},
		{name: "created within skew", run: func(r *Run) { r.CreatedAt = t0.Add(-RunClockSkew / 2) }, want: true},
		{name: "created before skew", run: func(r *Run) { r.CreatedAt = t0.Add(-RunClockSkew - time.Second) }, reason: "before the dispatch"},
		{name: "created long before", run: func(r *Run) { r.CreatedAt = t0.Add(-time.Hour) }, reason: "before the dispatch"},
		{name: "no created time", run: func(r *Run) { r.CreatedAt = time.Time{} }, reason: "before the dispatch"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rr := c.rule
			if rr == (RunRule{}) {
				rr = RunRule{Workflow: "autopilot.yml", Repo: "acme/widgets"}
			}
			r := tokenRun()
			if c.run != nil {
				c.run(&r)
			}
			got, reason := rr.TokenTrusted(ex, r)
			if got != c.want {
				t.Fatalf("TokenTrusted = %v (%q), want %v", got, reason, c.want)
			}
			if !got && !strings.Contains(reason, c.reason) {
				t.Errorf("reason %q does not contain %q", reason, c.reason)
			}
		})
	}
}
