// Package statetest holds the fixtures the tests of state and its codec
// share: a fully populated state and the times it is built from.
package statetest

import (
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// At parses an RFC 3339 time; it panics on a malformed one (a test bug).
func At(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Sample is a fully populated state, as after a few steps of greenfield.
func Sample() *state.State {
	no := false
	return &state.State{
		Schema: state.SchemaVersion, Version: 7, Repo: "octo-org/hello-world", Issue: 12, Title: "Add login",
		Flow: "greenfield", Step: 3, Slug: "plan", Name: "Plan", Status: state.InProgress, Run: state.RunInProgress,
		SubStep:    state.SubStep{Phase: 4, Name: "architecture-review", Detail: "risk table"},
		RetryCount: 1, Cycle: 1,
		Steps: []state.StepProgress{
			{Slug: "problem", Status: state.Completed}, {Slug: "research", Status: state.Completed, Note: "2 drafts"},
			{Slug: "plan", Status: state.InProgress, Retries: 1}, {Slug: "decompose", Status: state.NotStarted},
			{Slug: "implement", Status: state.NotStarted}, {Slug: "run-tests", Status: state.NotStarted},
			{Slug: "security-audit", Status: state.NotStarted}, {Slug: "deploy", Status: state.NotStarted},
		},
		Completed: []state.CompletedStep{
			{Step: 1, Slug: "problem", Name: "Problem", At: At("2026-11-22T10:00:00Z"), Outcome: "Users can't log in | see #4"},
			{Step: 2, Slug: "research", Name: "Research", At: At("2026-11-22T12:30:00Z"), Outcome: "OAuth via <GitHub> — ping @org/security"},
		},
		Decisions: []state.Decision{{
			Gate: "research-rounds-1", Question: "Another research round?", Option: "B", OptionText: "Proceed to plan",
			By: "octocat", At: At("2026-11-22T14:05:00Z"), CommentID: 1001,
			Link: "https://github.com/octo-org/hello-world/issues/12#issuecomment-1001", Reason: "enough data",
		}},
		LastSession: state.Session{Date: At("2026-11-22T14:10:00Z"), EndedAt: "Step 3 Plan — SubStep 4 architecture-review",
			Reason: "retry", Notes: "executor run failed: ```\n<!-- autopilot:state -->"},
		RetryLog: []state.RetryEntry{{Attempt: 1, Step: 3, Name: "Plan", SubStep: "4 — architecture-review",
			Reason: "workflow run 99 failed", At: At("2026-11-22T14:09:00Z")}},
		Blockers: []string{"waiting for the security team (@org/security)"},
		Tasks: []state.Task{
			{ID: "01", Kind: state.KindEpic, Title: "Auth service", IdemKey: "ap-12-01", Sync: state.SyncCreated, Key: "PROJ-1",
				URL: "https://example.atlassian.net/browse/PROJ-1"},
			{ID: "02", Kind: state.KindTask, Title: "Token endpoint", Epic: "01", Points: 3, IdemKey: "ap-12-02", Sync: state.SyncPending, Done: true},
			{ID: "03", Kind: state.KindTask, Title: "Refresh tokens --> <!-- autopilot:state", Epic: "Auth service", IdemKey: "ap-12-03",
				Sync: state.SyncFailed, Error: "field 'priority' is required"},
			{ID: "04", Kind: state.KindTask, Title: "Docs", IdemKey: "ap-12-04", Sync: state.SyncSending, Carryover: true, Points: 0.5},
		},
		TrackerEnabled: &no, TrackerNote: "paused: 401", TrackerInUse: state.TrackerJira,
		Gate: &state.Gate{ID: "plan-review-3", Kind: "review", Title: "DECISION REQUIRED: accept the plan?",
			Options:   []state.Option{{Letter: "A", Text: "Accept", Action: state.ActApprove}, {Letter: "B", Text: "Revise", Action: state.ActChanges}},
			Recommend: "A", Reason: "architect approved", OpenedAt: At("2026-11-22T14:11:00Z"), CommentID: 1010},
		Ledger:    []state.LedgerEntry{{CommentID: 1001, Outcome: state.LedgerApplied}, {CommentID: 1005, Outcome: state.LedgerNotCommand}},
		Replies:   []string{"reply:plan-review-3:mallory"},
		Outbox:    []state.Effect{{Kind: state.EffReact, Target: 1001, Reaction: "+1"}},
		Limits:    state.Limits{Sessions: 2, Iterations: 3, RunStartedAt: At("2026-11-22T09:59:00Z")},
		Exec:      &state.Execution{Executor: "dispatch", Session: "ap-12-3-1", Attempt: 2, RunID: 99, DispatchedAt: At("2026-11-22T14:08:00Z")},
		LinkedPRs: []int{15},
		StartedAt: At("2026-11-22T09:59:00Z"), UpdatedAt: At("2026-11-22T14:11:00Z"),
	}
}

// ArchivedTwo makes s a state whose first 20 decisions went to two
// archive comments.
func ArchivedTwo(s *state.State) {
	s.DecisionsArchived = 20
	s.Archives = []state.DecisionArchive{
		{From: 1, To: 10, URL: "https://github.com/octo-org/hello-world/issues/12#issuecomment-501", Opened: At("2026-11-20T10:00:00Z")},
		{From: 11, To: 20, URL: "https://github.com/octo-org/hello-world/issues/12#issuecomment-502", Opened: At("2026-11-21T10:00:00Z")},
	}
}
