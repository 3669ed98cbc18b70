package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// wantStopped checks a kill-switch stop: status, reason, hint and notice.
func wantStopped(t *testing.T, res Result, reason state.StopReason) {
	t.Helper()
	s := res.State
	want(t, "run", s.Run, state.RunStopped)
	if s.Stop == nil {
		t.Fatalf("no stop record")
	}
	want(t, "reason", s.Stop.Reason, reason)
	want(t, "hint", s.Stop.Hint, stops.RecoveryHint(reason))
	if s.Stop.Hint == "" || s.Stop.Hint == stops.RecoveryHint("") {
		t.Errorf("reason %s has no specific recovery hint", reason)
	}
	if !hasBody(res.Effects, "Autopilot stopped", "`"+string(reason)+"`", "Recovery: "+s.Stop.Hint) {
		t.Errorf("stop notice = %q", bodies(res.Effects))
	}
}

func TestMaxHoursFiresAtTheNextStepCompletion(t *testing.T) {
	h := newHarness(t, jiraOff+"limits: {max_hours: 1}\n")
	h.start("greenfield")
	h.advance(61 * time.Minute)
	// A tick mid-step does not interrupt the running step.
	res := h.apply(events.Tick{})
	want(t, "mid-step tick", res.State.Run, state.RunInProgress)
	res = h.done("problem")
	wantStopped(t, res, stops.KillMaxHours)
	want(t, "boundary: step completed", progressOf(res.State, "problem"), state.Completed)
	want(t, "next step not entered", res.State.Slug, "problem")
	// Resume resets the clock and goes on to the next step.
	res = h.say("maria", "/autopilot resume")
	want(t, "slug after resume", res.State.Slug, "research")
	want(t, "status after resume", res.State.Status, state.InProgress)
	want(t, "clock reset", res.State.Limits.RunStartedAt, h.now())
}

func TestMaxHoursTickFiresOnlyAtABoundary(t *testing.T) {
	h := newHarness(t, jiraOff+"limits: {max_hours: 1}\n")
	h.runTo("greenfield", "decompose")
	h.done("tasks") // session boundary question
	h.advance(2 * time.Hour)
	res := h.apply(events.Tick{})
	wantStopped(t, res, stops.KillMaxHours)
	want(t, "gate kept for resume", res.State.Gate != nil, true)
}

func TestConfigClampingIsWhatTheEngineSees(t *testing.T) {
	t.Run("max_hours 0.1 clamps to 0.5", func(t *testing.T) {
		h := newHarness(t, jiraOff+"limits: {max_hours: 0.1}\n")
		want(t, "clamped", h.set.Config.Limits.MaxHours, 0.5)
		h.start("greenfield")
		h.advance(20 * time.Minute) // past 0.1 h, within 0.5 h
		want(t, "not stopped at 22 min", h.done("problem").State.Run, state.RunInProgress)
		h.advance(10 * time.Minute)
		wantStopped(t, h.done("research"), stops.KillMaxHours)
	})
	t.Run("max_sessions 500 clamps to 50", func(t *testing.T) {
		for used, wantRun := range map[int]state.RunStatus{49: state.RunInProgress, 50: state.RunStopped} {
			h := newHarness(t, jiraOff+"limits: {max_sessions: 500}\n")
			want(t, "clamped", h.set.Config.Limits.MaxSessions, 50)
			h.runTo("greenfield", "decompose")
			h.st.Limits.Sessions = used
			h.done("tasks")
			res := h.say("maria", "A") // session used+1
			want(t, "run after session "+itoa(int64(used+1)), res.State.Run, wantRun)
			want(t, "sessions", res.State.Limits.Sessions, 50)
		}
	})
	t.Run("confidence_threshold 7 clamps to 1", func(t *testing.T) {
		h := newHarness(t, jiraOff+"limits: {confidence_threshold: 7}\n")
		want(t, "clamped", h.set.Config.Limits.ConfidenceThreshold, 1.0)
		h.start("greenfield")
		res := h.say("maria", "/autopilot done --confidence 0.99 nearly sure")
		want(t, "gate", res.State.Gate != nil && res.State.Gate.Kind == "low-confidence", true)
	})
}

func TestMaxSessionsReachedOnFreshSessionBeyondLimit(t *testing.T) {
	h := newHarness(t, jiraOff+"limits: {max_sessions: 1}\n")
	h.runTo("greenfield", "decompose")
	h.done("tasks")
	res := h.say("maria", "A")
	wantStopped(t, res, stops.KillMaxSessions)
	want(t, "sessions capped", res.State.Limits.Sessions, 1)
	want(t, "next step waits", res.State.Status, state.NotStarted)
	want(t, "slug", res.State.Slug, "implement")
	// Resume grants sessions again and starts the step.
	res = h.say("maria", "/autopilot resume")
	want(t, "status", res.State.Status, state.InProgress)
	want(t, "run", res.State.Run, state.RunInProgress)
}

func TestContinuingTheSessionDoesNotCountAgainstTheLimit(t *testing.T) {
	h := newHarness(t, jiraOff+"limits: {max_sessions: 1}\n")
	h.runTo("greenfield", "decompose")
	h.done("tasks")
	res := h.say("maria", "B")
	want(t, "run", res.State.Run, state.RunInProgress)
	want(t, "sessions", res.State.Limits.Sessions, 1)
}

func TestRetryFreshSessionBeyondLimitStops(t *testing.T) {
	h := newHarness(t, jiraOff+"limits: {max_sessions: 1}\n")
	h.start("greenfield")
	failThrice(h, "boom")
	wantStopped(t, h.say("maria", "A"), stops.KillMaxSessions)
}

func TestCarryoverTooHighAfterImplement(t *testing.T) {
	tests := []struct {
		name string
		done []bool // done flags of Jira-created tasks
		stop bool
	}{
		{name: "3 of 4 open", done: []bool{true, false, false, false}, stop: true},
		{name: "2 of 4 open is not more than half", done: []bool{true, true, false, false}, stop: false},
		{name: "no Jira-known tasks: nothing measured", done: nil, stop: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, jiraOff)
			h.runTo("greenfield", "decompose")
			c := h.comment("maria", access.Write, "/autopilot done tasks")
			c.Declared = []state.Task{{Kind: state.KindTask, Title: "a"}, {Kind: state.KindTask, Title: "b"}, {Kind: state.KindTask, Title: "c"}, {Kind: state.KindTask, Title: "d"}}
			h.apply(c)
			var synced []state.Task
			for i, d := range tc.done {
				synced = append(synced, state.Task{IdemKey: h.st.Tasks[i].IdemKey, Sync: state.SyncCreated, Key: "P-" + itoa(int64(i+1)), Done: d})
			}
			h.apply(events.TrackerSynced{Tasks: synced})
			h.say("maria", "A")
			want(t, "implementing", h.st.Slug, "implement")
			res := h.done("batch finished")
			if tc.stop {
				wantStopped(t, res, stops.KillCarryover)
				if !strings.Contains(res.State.LastSession.Notes, "3 of 4 tasks are still open after Implement") {
					t.Errorf("notes = %q", res.State.LastSession.Notes)
				}
				return
			}
			want(t, "run", res.State.Run, state.RunInProgress)
			want(t, "slug", res.State.Slug, "run-tests")
		})
	}
}

func TestLowConfidenceFirstIterationAsksLaterStops(t *testing.T) {
	t.Run("first iteration asks", func(t *testing.T) {
		for _, answer := range []string{"A", "B"} {
			t.Run(answer, func(t *testing.T) {
				h := newHarness(t, jiraOff)
				h.start("greenfield")
				res := h.say("maria", "/autopilot done --confidence 0.5 not sure about scope")
				s := res.State
				wantGate(t, s, "low-confidence")
				want(t, "run", s.Run, state.RunAwaitingDecision)
				want(t, "problem done", progressOf(s, "problem"), state.Completed)
				body := gateBody(t, res.Effects, s.Gate)
				wantLines(t, "block", body, "DECISION REQUIRED: Low confidence (0.50 < 0.85) after Problem — continue?", " A) Continue with the next step", " B) Stop here and take over by hand")
				res = h.say("maria", answer)
				if answer == "A" {
					want(t, "continues", res.State.Slug, "research")
					want(t, "confidence consumed", res.State.Limits.HasConfidence, false)
					return
				}
				wantStopped(t, res, stops.KillLowConfidence)
			})
		}
	})
	t.Run("later iteration stops", func(t *testing.T) {
		h := newHarness(t, jiraOff)
		h.start("greenfield")
		h.done("problem")
		res := h.say("maria", "/autopilot done --confidence 0.5")
		wantStopped(t, res, stops.KillLowConfidence)
		want(t, "research completed first", progressOf(res.State, "research"), state.Completed)
		res = h.say("maria", "/autopilot resume")
		want(t, "resumes into plan", res.State.Slug, "plan")
		want(t, "status", res.State.Status, state.InProgress)
	})
	t.Run("confident report goes on", func(t *testing.T) {
		h := newHarness(t, jiraOff)
		h.start("greenfield")
		res := h.say("maria", "/autopilot done --confidence 0.9")
		want(t, "slug", res.State.Slug, "research")
		want(t, "recorded", res.State.Limits.LastConfidence, 0.9)
	})
}

func TestResourceOverloadAtBoundary(t *testing.T) {
	t.Run("budget low at step completion", func(t *testing.T) {
		h := newHarness(t, jiraOff)
		h.start("greenfield")
		h.set.BudgetLow = true
		wantStopped(t, h.done("problem"), stops.KillResource)
	})
	t.Run("tick with budget low waits for a boundary", func(t *testing.T) {
		h := newHarness(t, jiraOff)
		h.runTo("greenfield", "decompose")
		want(t, "mid-step", h.apply(events.Tick{BudgetLow: true}).State.Run, state.RunInProgress)
		h.done("tasks")
		wantStopped(t, h.apply(events.Tick{BudgetLow: true}), stops.KillResource)
	})
}

func TestTickOnFinishedOrStoppedRunDoesNothing(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.start("greenfield")
	h.say("maria", "/autopilot stop")
	h.advance(48 * time.Hour)
	res := h.apply(events.Tick{BudgetLow: true})
	want(t, "reason kept", res.State.Stop.Reason, stops.KillUserAbort)
	want(t, "no effects", nEffects(res), 0)
}
