package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/state"
)

const dispatchCfg = jiraOff + "steps: {implement: {kind: dispatch, workflow: impl.yml, ref: main, timeout: 2h}}\n"

// toDispatch runs greenfield into the dispatched implement step and returns
// the result that dispatched it.
func toDispatch(t *testing.T) (*harness, Result) {
	t.Helper()
	h := newHarness(t, dispatchCfg)
	h.runTo("greenfield", "decompose")
	h.done("tasks")
	return h, h.say("maria", "A")
}

func TestDispatchExecutorEmitsDispatchWithInputs(t *testing.T) {
	h, res := toDispatch(t)
	s := res.State
	d := effectsOf(res.Effects, state.EffDispatch)
	if len(d) != 1 {
		t.Fatalf("dispatch effects = %+v", d)
	}
	want(t, "workflow", d[0].Workflow, "impl.yml")
	want(t, "ref", d[0].Ref, "main")
	session := s.Exec.Session
	wantDeep(t, "inputs", d[0].Inputs, map[string]string{"issue": "12", "step": "implement", "sub_step": "0 awaiting-invocation", "attempt": "1", "session": session})
	want(t, "marker is the session", d[0].Marker, session)
	if !strings.HasPrefix(session, "ap-12-implement-c1-a1-s") {
		t.Errorf("session = %q", session)
	}
	want(t, "executor", s.Exec.Executor, "dispatch")
	want(t, "dispatched at", s.Exec.DispatchedAt, h.now())
	want(t, "action", prose.NextAction(s), "waiting for the dispatched workflow run")
	if !hasBody(res.Effects, "dispatched workflow `impl.yml` (session `"+session+"`)") {
		t.Errorf("announcement = %q", bodies(res.Effects))
	}
}

func TestDispatchedRecordsRunID(t *testing.T) {
	h, _ := toDispatch(t)
	session := h.st.Exec.Session
	res := h.apply(events.Dispatched{Session: "ap-other", RunID: 1})
	want(t, "other session ignored", res.State.Exec.RunID, int64(0))
	res = h.apply(events.Dispatched{Session: session, RunID: 777})
	want(t, "run id", res.State.Exec.RunID, int64(777))
	want(t, "changed", res.Changed, true)
	res = h.apply(events.Dispatched{Session: session, RunID: 777})
	want(t, "same report again", res.Changed, false)
}

func TestDispatchErrorRunsTheRetryProtocol(t *testing.T) {
	h, _ := toDispatch(t)
	first := h.st.Exec.Session
	res := h.apply(events.Dispatched{Session: first, Err: "HTTP 422: workflow has no workflow_dispatch trigger"})
	s := res.State
	want(t, "retry_count", s.RetryCount, 1)
	want(t, "failed waves", s.Limits.FailedWaves, 1)
	if s.Exec.Session == first || len(effectsOf(res.Effects, state.EffDispatch)) != 1 {
		t.Errorf("no fresh dispatch after the failure")
	}
	want(t, "attempt 2", effectsOf(res.Effects, state.EffDispatch)[0].Inputs["attempt"], "2")
	if !strings.Contains(s.RetryLog[0].Reason, "dispatch failed: HTTP 422") {
		t.Errorf("retry log = %+v", s.RetryLog)
	}
}

// tokenRun is a completed run of the configured workflow that a dispatch
// without run details started: matched by its session token, dispatched
// (workflow_dispatch) on the base repository just after the dispatch.
func tokenRun(id int64, session, conclusion string) events.RunCompleted {
	return events.RunCompleted{RunID: id, DisplayTitle: "autopilot " + session, Conclusion: conclusion,
		Path: ".github/workflows/impl.yml", Event: "workflow_dispatch", HeadRepo: "acme/widgets", CreatedAt: t0.Add(24 * time.Hour)}
}

func TestRunCompletedMatching(t *testing.T) {
	tests := []struct {
		name  string
		ev    func(session string) events.RunCompleted
		match bool
	}{
		{name: "by run id", ev: func(string) events.RunCompleted { return events.RunCompleted{RunID: 777, Conclusion: "success"} }, match: true},
		{name: "by session token in display title", ev: func(s string) events.RunCompleted {
			return tokenRun(900, s, "success")
		}, match: true},
		{name: "different token", ev: func(s string) events.RunCompleted {
			return tokenRun(901, s+"x", "success")
		}, match: false},
		{name: "token as a substring only", ev: func(s string) events.RunCompleted {
			r := tokenRun(902, s, "success")
			r.DisplayTitle = "autopilot-" + s
			return r
		}, match: false},
		{name: "another run id", ev: func(string) events.RunCompleted { return events.RunCompleted{RunID: 778, Conclusion: "success"} }, match: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := toDispatch(t)
			session := h.st.Exec.Session
			if tc.name == "by run id" || tc.name == "another run id" {
				h.apply(events.Dispatched{Session: session, RunID: 777})
			}
			res := h.apply(tc.ev(session))
			if !tc.match {
				want(t, "ignored", res.Changed, false)
				want(t, "still implementing", res.State.Slug, "implement")
				return
			}
			want(t, "completed", progressOf(res.State, "implement"), state.Completed)
			want(t, "next", res.State.Slug, "run-tests")
			if !strings.HasPrefix(res.State.Completed[len(res.State.Completed)-1].Outcome, "workflow run succeeded") {
				t.Errorf("outcome = %q", res.State.Completed[len(res.State.Completed)-1].Outcome)
			}
		})
	}
}

func TestFailedRunRetriesThenFailedWaveStopsAtBoundary(t *testing.T) {
	h, _ := toDispatch(t)
	first := h.st.Exec.Session
	runURL := "https://github.com/acme/widgets/actions/runs/1"
	ev := tokenRun(1, first, "failure")
	ev.URL = runURL
	res := h.apply(ev)
	s := res.State
	want(t, "retry_count", s.RetryCount, 1)
	want(t, "still in progress", s.Status, state.InProgress)
	want(t, "failed waves", s.Limits.FailedWaves, 1)
	failed := "workflow run 1 (session " + first + ") concluded failure — " + runURL
	want(t, "retry log reason", s.RetryLog[0].Reason, failed)
	second := s.Exec.Session
	if second == first {
		t.Fatal("no new session for the retry")
	}
	// The old run reporting again is not the current execution.
	want(t, "stale run", h.apply(tokenRun(1, first, "success")).Changed, false)
	res = h.apply(tokenRun(2, second, "success"))
	wantStopped(t, res, stops.KillFailedWave)
	want(t, "step completed before the stop", progressOf(res.State, "implement"), state.Completed)
	want(t, "retry log cleared by the success", len(res.State.RetryLog), 0)
	// The stop says which run failed, though the retry log is cleared.
	want(t, "stop detail", res.State.LastSession.Notes, "1 executor batch(es) failed in this session, during Implement; the failed run: "+failed)
	if !hasBody(res.Effects, "the failed run: workflow run 1 (session") {
		t.Errorf("stop notice does not name the failed run: %q", bodies(res.Effects))
	}
}

func TestDispatchTimeoutFailsTheStep(t *testing.T) {
	h, _ := toDispatch(t)
	h.advance(time.Hour)
	res := h.apply(events.Tick{})
	want(t, "within timeout", res.State.RetryCount, 0)
	h.advance(2 * time.Hour)
	res = h.apply(events.Tick{})
	s := res.State
	want(t, "retry_count", s.RetryCount, 1)
	if !strings.Contains(s.RetryLog[0].Reason, "did not report within 2h0m0s") {
		t.Errorf("retry log = %+v", s.RetryLog)
	}
	want(t, "re-dispatched", len(effectsOf(res.Effects, state.EffDispatch)), 1)
}

func TestManualReportOnDispatchedStepStillCounts(t *testing.T) {
	h, _ := toDispatch(t)
	res := h.done("done by hand")
	want(t, "moved", res.State.Slug, "run-tests")
	want(t, "executor cleared", res.State.Exec.Executor, "manual")
}

func TestCommentExecutorPromptMentionsTheAgent(t *testing.T) {
	h := newHarness(t, jiraOff+"executor: {kind: comment, agent: \"@claude\"}\nagents: [claude]\n")
	res := h.start("greenfield")
	prompts := bodies(res.Effects)
	if len(prompts) != 1 {
		t.Fatalf("comments = %q", prompts)
	}
	p := prompts[0]
	wantLines(t, "prompt", p, "@claude please run step **Step 1 — Problem**", "#12 (Add CSV export to reports)", "attempt 1", "from sub-step 0 awaiting-invocation", "Produce: a problem statement")
	// The agent reports; its failure re-prompts with the next attempt.
	c := h.comment("claude", "", "/autopilot fail missing credentials")
	c.Bot, c.Agent = true, true
	res = h.apply(c)
	if !hasBody(res.Effects, "@claude please run step", "attempt 2") {
		t.Errorf("retry prompt = %q", bodies(res.Effects))
	}
	c = h.comment("claude", "", "/autopilot done wrote the problem statement")
	c.Bot, c.Agent = true, true
	res = h.apply(c)
	if !hasBody(res.Effects, "@claude please run step **Step 2 — Research**", "- earlier: Problem — wrote the problem statement") {
		t.Errorf("next prompt = %q", bodies(res.Effects))
	}
}

func TestCommentExecutorCustomPrompt(t *testing.T) {
	h := newHarness(t, jiraOff+"executor: {kind: comment, agent: \"@bot\", prompt: \"do {{name}} for {{title}}\"}\n")
	res := h.start("greenfield")
	want(t, "prompt", strings.SplitN(bodies(res.Effects)[0], "\n", 2)[1], "@bot do Problem for Add CSV export to reports")
}

func TestBannerAndNextAction(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.start("greenfield")
	h.say("devin", "/autopilot progress 2 batch-loop batch 1 of 3")
	b := prose.Banner(h.set.Config.All, h.st)
	wantLines(t, "banner", b, "AUTOPILOT STATUS (greenfield)", "Problem", "Research", "batch-loop")
	tests := []struct {
		s    *state.State
		want string
	}{
		{&state.State{Run: state.RunDone}, "nothing — the run is complete"},
		{&state.State{Run: state.RunStopped, Stop: &state.Stop{Reason: "spiral"}}, "stopped (spiral); /autopilot resume continues"},
		{&state.State{Run: state.RunStopped}, "stopped; /autopilot resume continues"},
		{&state.State{Run: state.RunFailed, Gate: &state.Gate{Title: "SKILL FAILED: Plan"}}, "waiting for a decision: SKILL FAILED: Plan"},
		{&state.State{Run: state.RunInProgress, Name: "Plan"}, "waiting for the executor's report on Plan"},
	}
	for _, tc := range tests {
		want(t, "NextAction", prose.NextAction(tc.s), tc.want)
	}
	// The status reply of a finished run says so.
	h.runTo("greenfield", "deploy")
	h.done("shipped")
	if !strings.Contains(prose.Banner(h.set.Config.All, h.st), "nothing — the run is complete") {
		t.Errorf("done banner = %s", prose.Banner(h.set.Config.All, h.st))
	}
}

func TestReviewerWithoutPermissionCannotRequestChanges(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "code-review")
	rv := changes("randy", "nope")
	rv.Perm = access.Read
	res := h.apply(rv)
	want(t, "ignored", res.State.Slug, "code-review")
	rv = changes("bob", "nope")
	rv.State = "COMMENTED"
	want(t, "comment review ignored", h.apply(rv).State.Slug, "code-review")
}

// TestRunMatchRules is PRODUCT §9's exact matching: a recorded run id is
// the only match; the session token counts only without one, and only for
// a run of the configured workflow, dispatched, on the base repository,
// after the dispatch. Ignored runs change nothing and post nothing.
func TestRunMatchRules(t *testing.T) {
	tests := []struct {
		name     string
		recorded int64
		ev       func(session string, dispatched time.Time) events.RunCompleted
		match    bool
		why      string
	}{
		{name: "recorded id", recorded: 777, match: true, ev: func(string, time.Time) events.RunCompleted {
			return events.RunCompleted{RunID: 777, Conclusion: "success"}
		}},
		{name: "token but not the recorded id", recorded: 777, why: "is not the recorded run 777", ev: func(s string, _ time.Time) events.RunCompleted {
			return tokenRun(900, s, "success")
		}},
		{name: "token, configured workflow, dispatch, base repo", match: true, ev: func(s string, _ time.Time) events.RunCompleted {
			return tokenRun(900, s, "success")
		}},
		{name: "workflow path with a ref suffix", match: true, ev: func(s string, _ time.Time) events.RunCompleted {
			r := tokenRun(900, s, "success")
			r.Path += "@main"
			return r
		}},
		{name: "another workflow file", why: "is not the configured", ev: func(s string, _ time.Time) events.RunCompleted {
			r := tokenRun(900, s, "success")
			r.Path = ".github/workflows/ci.yml"
			return r
		}},
		{name: "not a workflow_dispatch run", why: "is not workflow_dispatch", ev: func(s string, _ time.Time) events.RunCompleted {
			r := tokenRun(900, s, "success")
			r.Event = "pull_request"
			return r
		}},
		{name: "a fork's head", why: "head repository", ev: func(s string, _ time.Time) events.RunCompleted {
			r := tokenRun(900, s, "success")
			r.HeadRepo = "mallory/widgets"
			return r
		}},
		{name: "no head repository", why: "head repository", ev: func(s string, _ time.Time) events.RunCompleted {
			r := tokenRun(900, s, "success")
			r.HeadRepo = ""
			return r
		}},
		{name: "created before the dispatch", why: "before the dispatch", ev: func(s string, at time.Time) events.RunCompleted {
			r := tokenRun(900, s, "success")
			r.CreatedAt = at.Add(-evidence.RunClockSkew - time.Second)
			return r
		}},
		{name: "created within the clock skew", match: true, ev: func(s string, at time.Time) events.RunCompleted {
			r := tokenRun(900, s, "success")
			r.CreatedAt = at.Add(-evidence.RunClockSkew)
			return r
		}},
		{name: "no creation time", why: "before the dispatch", ev: func(s string, _ time.Time) events.RunCompleted {
			r := tokenRun(900, s, "success")
			r.CreatedAt = time.Time{}
			return r
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, conclusion := range []string{"success", "failure"} {
				h, _ := toDispatch(t)
				if tc.recorded != 0 {
					h.apply(events.Dispatched{Session: h.st.Exec.Session, RunID: tc.recorded})
				}
				ev := tc.ev(h.st.Exec.Session, h.st.Exec.DispatchedAt)
				ev.Conclusion = conclusion
				ok, why := MatchRun(h.set, h.st, ev)
				want(t, "MatchRun", ok, tc.match)
				if !strings.Contains(why, tc.why) {
					t.Errorf("reason %q lacks %q", why, tc.why)
				}
				res := h.apply(ev)
				if !tc.match {
					want(t, "ignored: changed", res.Changed, false)
					want(t, "ignored: effects", nEffects(res), 0)
					want(t, "ignored: retry_count", res.State.RetryCount, 0)
					want(t, "ignored: step", res.State.Slug, "implement")
					continue
				}
				if conclusion == "success" {
					want(t, "completed", res.State.Slug, "run-tests")
				} else {
					want(t, "retry", res.State.RetryCount, 1)
				}
			}
		})
	}
}
