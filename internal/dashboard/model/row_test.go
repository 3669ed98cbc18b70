package model

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/statetest"
)

// sample is statetest.Sample edited by edit.
func sample(edit func(s *state.State)) *state.State {
	s := statetest.Sample()
	if edit != nil {
		edit(s)
	}
	return s
}

func TestBuildRowFromState(t *testing.T) {
	at := statetest.At
	tests := []struct {
		name  string
		pass  Pass
		check func(t *testing.T, r Row)
	}{
		{"open decision waits for the people it names and earlier deciders, since the gate opened",
			Pass{Installation: 7, Repo: "octo-org/hello-world", Issue: 12, Listed: true, State: sample(func(s *state.State) {
				s.Run = state.RunAwaitingDecision
				s.Gate.Details = []string{"@alice and @org/security should look; mail bob@example.com"}
				s.Decisions = append(s.Decisions, state.Decision{By: "autopilot[bot]"}, state.Decision{By: `"><img>`})
			})},
			func(t *testing.T, r Row) {
				w := r.Wait
				if w == nil || w.Kind != WaitDecision || w.What != "DECISION REQUIRED: accept the plan?" || !w.Since.Equal(at("2026-11-22T14:11:00Z")) {
					t.Fatalf("wait = %+v", w)
				}
				if strings.Join(w.From, ",") != "alice,octocat" || w.Who != "anyone with write access" {
					t.Errorf("from = %v, who = %q", w.From, w.Who)
				}
				if w.Link != "https://github.com/octo-org/hello-world/issues/12#issuecomment-1010" {
					t.Errorf("link = %q", w.Link)
				}
				if !w.Waits("Alice") || w.Waits("bob") || w.Waits("security") || w.Waits("") {
					t.Errorf("Waits wrong for alice/bob/security/empty")
				}
				if r.Installation != 7 || r.Key() != "octo-org/hello-world#12" || r.Title != "Add login" || r.Step != "plan" || r.Flow != "greenfield" {
					t.Errorf("row = %+v", r)
				}
			}},
		{"answer permission comes from the kept configuration",
			Pass{Listed: true, State: sample(func(s *state.State) { s.ConfigYAML = "default_flow: greenfield\nanswer_permission: maintain\n" })},
			func(t *testing.T, r Row) {
				if r.Wait.Who != "anyone with maintain access" {
					t.Errorf("who = %q", r.Wait.Who)
				}
				if r.URL != "https://github.com/octo-org/hello-world/issues/12" {
					t.Errorf("url from the state's repo = %q", r.URL)
				}
			}},
		{"a decision asked in the state comment (no comment of its own) links the issue",
			Pass{Listed: true, State: sample(func(s *state.State) { s.Gate.CommentID = 0 })},
			func(t *testing.T, r Row) {
				if r.Wait.Link != "https://github.com/octo-org/hello-world/issues/12" {
					t.Errorf("link = %q", r.Wait.Link)
				}
			}},
		{"a dispatched step waits for its executor",
			Pass{Listed: true, State: sample(func(s *state.State) { s.Gate = nil })},
			func(t *testing.T, r Row) {
				if w := r.Wait; w == nil || w.Kind != WaitExecutor || w.What != "step Plan (workflow run 99)" || !w.Since.Equal(at("2026-11-22T14:08:00Z")) {
					t.Errorf("wait = %+v", w)
				}
			}},
		{"a stopped run says why and waits for nobody",
			Pass{Listed: true, State: sample(func(s *state.State) {
				s.Run = state.RunStopped
				s.Stop = &state.Stop{Reason: "max-hours-exceeded", Hint: "raise limits.max_hours", At: at("2026-11-23T00:00:00Z")}
			})},
			func(t *testing.T, r Row) {
				if r.Wait != nil || r.Stopped != "max-hours-exceeded: raise limits.max_hours" {
					t.Errorf("wait %+v stopped %q", r.Wait, r.Stopped)
				}
				if last := r.Timeline[len(r.Timeline)-1]; last.Kind != ItemStop {
					t.Errorf("last item = %+v", last)
				}
			}},
		{"a failed run gives the last retry's reason",
			Pass{Listed: true, State: sample(func(s *state.State) { s.Run, s.Gate = state.RunFailed, nil })},
			func(t *testing.T, r Row) {
				if r.Failed != "workflow run 99 failed" {
					t.Errorf("failed = %q", r.Failed)
				}
			}},
		{"tasks not in the tracker are listed; a done local one is not",
			Pass{Listed: true, State: sample(nil)},
			func(t *testing.T, r Row) {
				var ids []string
				for _, w := range r.TrackerWaiting {
					ids = append(ids, w.ID+":"+string(w.Sync))
				}
				if strings.Join(ids, ",") != "03:failed,04:sending" || r.TrackerNote != "paused: 401" {
					t.Errorf("tracker waiting = %v note %q", ids, r.TrackerNote)
				}
			}},
		{"with nothing else to wait for, the run waits for its tracker",
			Pass{Listed: true, State: sample(func(s *state.State) {
				s.Gate, s.Exec = nil, nil
				s.Tasks[3].SentAt = at("2026-11-22T13:00:00Z")
			})},
			func(t *testing.T, r Row) {
				if w := r.Wait; w == nil || w.Kind != WaitTracker || !w.Since.Equal(at("2026-11-22T13:00:00Z")) {
					t.Errorf("wait = %+v", w)
				}
			}},
		{"the timeline has steps, decisions, retries, the open gate and reviews in time order, with comment links",
			Pass{Listed: true, URL: "https://ghe.example/octo-org/hello-world/issues/12", State: sample(func(s *state.State) {
				statetest.ArchivedTwo(s)
				s.Review = &state.ReviewLoop{Architect: &state.Approval{By: "arch", At: at("2026-11-22T13:00:00Z"), Link: "https://ghe.example/x#issuecomment-7"}}
			})},
			func(t *testing.T, r Row) {
				var kinds []string
				for _, it := range r.Timeline {
					kinds = append(kinds, string(it.Kind))
				}
				want := "archive,archive,step,step,review,decision,retry,wait"
				if strings.Join(kinds, ",") != want {
					t.Fatalf("kinds = %v, want %s", kinds, want)
				}
				if l := r.Timeline[len(r.Timeline)-1].Link; l != "https://ghe.example/octo-org/hello-world/issues/12#issuecomment-1010" {
					t.Errorf("gate link = %q", l)
				}
				if d := r.Timeline[5]; d.Label != "B: Proceed to plan — octocat" || d.Link == "" {
					t.Errorf("decision = %+v", d)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := Build(tt.pass)
			if !ok {
				t.Fatal("no row")
			}
			tt.check(t, r)
		})
	}
}

func TestBuildHasNoRowForClosedUnlabelledOrRunlessIssues(t *testing.T) {
	for name, p := range map[string]Pass{
		"closed or unlabelled": {State: statetest.Sample(), Listed: false},
		"no run":               {Listed: true},
	} {
		if _, ok := Build(p); ok {
			t.Errorf("%s: got a row", name)
		}
	}
}
