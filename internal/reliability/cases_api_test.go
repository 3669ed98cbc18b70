package reliability

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/action"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/forge"
)

// lastRun returns the newest run.
func (w *World) lastRun() Run {
	rs := w.Runs()
	return rs[len(rs)-1]
}

// case11: the state PATCH answers 502 twice then 200; a comment POST
// answers 503 after committing. Bounded backoff with jitter; before
// re-sending the POST the bot looks for its comment by marker. Measure:
// I2 (exactly one bot comment), I3.
func case11(t *testing.T) {
	w, n := started(t, Options{})
	w.toGate(n)
	w.post(n, Maria, "A")
	// The implement report: its run writes the state (PATCH) and then
	// announces the next step (a marked comment, POST).
	w.GH.Script("PATCH", "/repos/*/*/issues/comments/*", fakegithub.Fail(502), fakegithub.Fail(502))
	w.GH.Script("POST", "/repos/*/*/issues/*/comments", fakegithub.AfterCommit(503))
	w.post(n, Devin, "/autopilot done implemented")
	if k := w.GH.PendingSteps(); k != 0 {
		t.Fatalf("%d scripted faults were never met", k)
	}
	calls := w.runCalls(w.lastRun().ID)
	var patches []Call
	postAt := -1
	for i, c := range calls {
		if c.Method == "PATCH" && strings.Contains(c.Path, "/issues/comments/") { // the state, not a new label's colour
			patches = append(patches, c)
		}
		if c.Method == "POST" && strings.HasSuffix(c.Path, "/comments") && c.Status == 503 {
			postAt = i
		}
	}
	if len(patches) != 3 || patches[2].Status != 200 {
		t.Fatalf("state PATCHes %+v, want 502, 502, 200", patches)
	}
	g1, g2 := patches[1].At.Sub(patches[0].At), patches[2].At.Sub(patches[1].At)
	if g1 < 500*time.Millisecond || g2 <= g1/2 || g2 < time.Second {
		t.Errorf("retry gaps %s then %s: want exponential backoff (≥ 0.5 s, then ≥ 1 s)", g1, g2)
	}
	if postAt < 0 {
		t.Fatal("no POST answered 503")
	}
	if rest := calls[postAt+1:]; len(rest) == 0 || rest[0].Method != "GET" || !strings.HasSuffix(rest[0].Path, "/comments") {
		t.Errorf("after the lost POST the bot sent %+v first, want a look for its marker (GET comments)", rest)
	}
	check(t, w, CheckOptions{Issue: n})
}

// case12: secondary rate limits, with retry-after 60, without it, with
// x-ratelimit-remaining 0 and a reset; repeated; and a 403 that means
// "forbidden". No request inside a window, ≥ 60 s without a header,
// exponential when it repeats, a clean give-up with the state intact, no
// retry of a permission 403. Measure: I6 on FakeGitHub timestamps,
// mutations ≥ 1 s apart.
func case12(t *testing.T) {
	limited := func(t *testing.T, steps []fakegithub.Step, minWait time.Duration, wantErr bool) {
		w, n := started(t, Options{})
		w.toGate(n)
		base := w.mustState(n).Version
		w.GH.Script("PATCH", "/repos/*/*/issues/comments/*", steps...)
		w.Clock.Advance(time.Minute)
		a := w.Say(n, Maria, "A")
		r := w.ActionRun(context.Background(), w.CommentDelivery(a, "created"))
		var rl *forge.RateLimitError
		if wantErr != (r.Err != nil) || wantErr && !errors.As(r.Err, &rl) {
			t.Fatalf("run error %v, want a rate-limit error: %v", r.Err, wantErr)
		}
		// I6 on the fake's own timestamps: after each limited answer, no
		// request before the wait is over.
		reqs := w.GH.Requests()
		for i, q := range reqs {
			if q.Status != http.StatusForbidden && q.Status != http.StatusTooManyRequests {
				continue
			}
			if i+1 < len(reqs) && reqs[i+1].Time.Sub(q.Time) < minWait {
				t.Errorf("next request %s %s %s after the limit, want ≥ %s", reqs[i+1].Method, reqs[i+1].Path, reqs[i+1].Time.Sub(q.Time), minWait)
			}
			minWait *= 2 // a repeat waits longer
		}
		if wantErr {
			// Gave up cleanly: the state is the last good one, and the next
			// run completes.
			if s := w.mustState(n); s.Version != base || len(s.Decisions) != 0 {
				t.Errorf("state v%d with %d decisions after the give-up, want v%d untouched", s.Version, len(s.Decisions), base)
			}
			w.Clock.Advance(10 * time.Minute)
			w.MustSweep()
		}
		s := w.mustState(n)
		if len(s.Decisions) != 1 {
			t.Errorf("decisions %s, want maria's A", decisions(s))
		}
		check(t, w, CheckOptions{Issue: n})
	}
	t.Run("retry_after_60", func(t *testing.T) {
		limited(t, []fakegithub.Step{fakegithub.SecondaryRateLimit(60 * time.Second)}, 60*time.Second, false)
	})
	t.Run("no_header", func(t *testing.T) {
		limited(t, []fakegithub.Step{fakegithub.SecondaryRateLimit(0)}, 60*time.Second, false)
	})
	t.Run("remaining_0_with_reset", func(t *testing.T) {
		w, n := started(t, Options{})
		w.toGate(n)
		reset := w.Clock.Now().Add(time.Minute + 45*time.Second)
		w.GH.Script("PATCH", "/repos/*/*/issues/comments/*", fakegithub.PrimaryRateLimit(1000, reset))
		w.Clock.Advance(time.Minute)
		a := w.Say(n, Maria, "A")
		w.MustRun(w.CommentDelivery(a, "created"))
		reqs := w.GH.Requests()
		hit := -1
		for i, q := range reqs {
			if q.Status == http.StatusForbidden {
				hit = i
			}
		}
		if hit < 0 {
			t.Fatal("the limit was never met")
		}
		for _, q := range reqs[hit+1:] {
			if q.Time.Before(reset) {
				t.Errorf("%s %s at %s, inside the window until %s", q.Method, q.Path, q.Time.Format(time.TimeOnly), reset.Format(time.TimeOnly))
			}
		}
		check(t, w, CheckOptions{Issue: n})
	})
	t.Run("repeated_gives_up", func(t *testing.T) {
		limited(t, []fakegithub.Step{fakegithub.SecondaryRateLimit(0), fakegithub.SecondaryRateLimit(0)}, 60*time.Second, true)
	})
	t.Run("forbidden_not_retried", func(t *testing.T) {
		w, n := started(t, Options{})
		w.toGate(n)
		w.GH.Script("POST", "/repos/*/*/issues/comments/*/reactions", fakegithub.Step{Status: http.StatusForbidden,
			Body: `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/reactions/reactions#create-reaction-for-an-issue-comment"}`})
		w.Clock.Advance(time.Minute)
		a := w.Say(n, Maria, "A")
		before := w.GH.Count("POST /repos/*/*/issues/comments/*/reactions")
		w.ActionRun(context.Background(), w.CommentDelivery(a, "created"))
		if k := w.GH.Count("POST /repos/*/*/issues/comments/*/reactions") - before; k != 1 {
			t.Errorf("%d reaction POSTs, want exactly 1: a permission 403 is not retried", k)
		}
		checkOnly(t, w.CheckPolite(-1))
	})
}

// case13: the primary limit is spent (x-ratelimit-remaining 0, reset 40
// minutes away) in Action mode. The run exits non-zero with a clear
// "deferred" message and makes no partial mutations; the next run
// completes. Measure: I1 eventually, I5, I6.
func case13(t *testing.T) {
	w, n := started(t, Options{})
	w.toGate(n)
	w.Clock.Advance(time.Minute)
	a := w.Say(n, Maria, "A")
	d := w.CommentDelivery(a, "created")
	token := "ghs_exhausted"
	w.GH.AddActionsToken(token, Repo)
	reset := w.Clock.Now().Add(40 * time.Minute)
	must(t, w.GH.SetRateLimit(token, 1000, 0, reset))
	before := len(w.GH.Requests())
	code, stdout, stderr := runAction(t, w, d, token)
	if code != action.ExitFailure || !strings.Contains(stderr, "deferred: GitHub rate limit until") {
		t.Errorf("exit %d, stderr %q: want 1 and a clear deferred message", code, stderr)
	}
	for _, q := range w.GH.Requests()[before:] {
		if q.IsMutation() {
			t.Errorf("partial mutation %s %s while the budget was spent", q.Method, q.Path)
		}
		if q.Status != http.StatusForbidden {
			t.Errorf("%s %s answered %d inside the exhausted window", q.Method, q.Path, q.Status)
		}
	}
	if k := len(w.GH.Requests()) - before; k > 1 {
		t.Errorf("%d requests into the exhausted budget, want at most 1 (then wait for the reset)", k)
	}
	_ = stdout
	w.Clock.AdvanceTo(reset.Add(time.Second))
	w.MustRun(d) // the next run (a fresh token's budget, or the same after the reset)
	s := w.mustState(n)
	if len(s.Decisions) != 1 || outcome(s, a.ID) != Applied {
		t.Errorf("after the reset: decisions %s, answer %q", decisions(s), outcome(s, a.ID))
	}
	check(t, w, CheckOptions{Issue: n})
}

// runAction runs the real Action entry point in-process against the fake,
// as the runner would (event file, inputs in the environment).
func runAction(t *testing.T, w *World, d Delivery, token string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	ev := filepath.Join(dir, "event.json")
	must(t, os.WriteFile(ev, d.Payload, 0o600))
	env := map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": d.Event, "GITHUB_EVENT_PATH": ev,
		"GITHUB_REPOSITORY": Repo, "GITHUB_API_URL": w.GH.URL(),
		"GITHUB_OUTPUT": filepath.Join(dir, "out"), "GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary"),
		"INPUT_GITHUB_TOKEN": token, "INPUT_STATE_KEY": string(w.Key), "INPUT_TRIGGER_LABEL": "autopilot",
		"INPUT_ANSWER_PERMISSION": "write", "INPUT_DRY_RUN": "false", "AUTOPILOT_MUTATION_GAP": "0s", "AUTOPILOT_CLAIM_SETTLE": "30ms",
	}
	var out, errb bytes.Buffer
	code := action.Run(context.Background(), action.Env{Getenv: func(k string) string { return env[k] }, Stdout: &out, Stderr: &errb, Now: w.Clock.Now})
	return code, out.String(), errb.String()
}

// case14: 404s on deleted objects. A deleted answer is ignored; a state
// comment deleted under a run is written anew; one deleted at rest pauses
// the issue with one notice. Nothing loops. Measure: I2 (Jira creates =
// 0), at most one recovery comment.
func case14(t *testing.T) {
	t.Run("answer_deleted_before_processing", func(t *testing.T) {
		w, n := started(t, Options{})
		w.toGate(n)
		a := w.Say(n, Maria, "A")
		d := w.CommentDelivery(a, "created")
		must(t, w.GH.DeleteComment(a.ID))
		w.MustRun(d)
		if s := w.mustState(n); len(s.Decisions) != 0 || outcome(s, a.ID) != "" {
			t.Errorf("a deleted answer was acted on: decisions %s, outcome %q", decisions(s), outcome(s, a.ID))
		}
		w.MustSweep()
		check(t, w, CheckOptions{Issue: n, Unclassified: []int64{a.ID}})
	})
	t.Run("state_deleted_under_a_run", func(t *testing.T) {
		w, n := started(t, Options{})
		_, sc := w.stateComment(n)
		deleted := false
		w.OnCall(func(c Call, b []byte) ([]byte, bool) {
			if !deleted && c.ListsComments() {
				deleted = true
				must(t, w.GH.DeleteComment(sc.ID))
			}
			return nil, false
		})
		w.post(n, Devin, "/autopilot done problem")
		w.OnCall(nil)
		s := w.mustState(n)
		if s.Slug != "research" {
			t.Errorf("state at %s, want research (the write went to a new comment)", s.Slug)
		}
		if k := w.markers(n)["<!-- autopilot:state -->"]; k != 1 {
			t.Errorf("%d state comments, want 1", k)
		}
		w.MustSweep()
		check(t, w, CheckOptions{Issue: n})
	})
	t.Run("state_deleted_at_rest", func(t *testing.T) {
		stateDeletedAtRest(t)
	})
}

// stateDeletedAtRest deletes the state comment of an issue with Jira tasks
// and drives several runs: one "state lost" notice, no Jira re-creates.
func stateDeletedAtRest(t *testing.T) (*World, int) {
	t.Helper()
	w, n := started(t, Options{Jira: true, SearchLag: 90 * time.Second})
	w.post(n, Devin, "/autopilot done problem")
	w.post(n, Devin, "/autopilot done research")
	w.post(n, Devin, epics)
	w.post(n, Devin, decompose)
	if len(w.Jira.Issues()) != 3 {
		t.Fatalf("Jira holds %d issues, want 3", len(w.Jira.Issues()))
	}
	_, jiraPosts := w.posts()
	_, sc := w.stateComment(n)
	must(t, w.GH.DeleteComment(sc.ID))
	for range 3 {
		w.Clock.Advance(time.Minute)
		w.post(n, Maria, "A")
		w.MustSweep()
	}
	if k := w.markers(n)["<!-- autopilot:notice state-lost -->"]; k != 1 {
		t.Errorf("%d state-lost notices, want exactly 1", k)
	}
	if _, jp := w.posts(); jp != jiraPosts {
		t.Errorf("%d Jira creates after the state was lost, want 0", jp-jiraPosts)
	}
	if len(w.Jira.Issues()) != 3 {
		t.Errorf("Jira holds %d issues, want still 3", len(w.Jira.Issues()))
	}
	return w, n
}

// case15: a 422 (an over-long body; an invalid label name) is not repeated
// as-is: corrected once, or given up. Measure: no identical 422 request
// repeated, I7.
func case15(t *testing.T) {
	refuse := func(t *testing.T, method, pattern, body string) {
		w, n := started(t, Options{})
		w.toGate(n)
		steps := make([]fakegithub.Step, 10)
		for i := range steps {
			steps[i] = fakegithub.Step{Status: http.StatusUnprocessableEntity, Body: body}
		}
		w.post(n, Maria, "A")
		w.GH.Script(method, pattern, steps...)
		w.Clock.Advance(time.Minute)
		done := w.Say(n, Devin, "/autopilot done implemented")
		for range 2 { // the event, and its re-run
			w.ActionRun(context.Background(), w.CommentDelivery(done, "created"))
			w.Clock.Advance(5 * time.Minute)
		}
		w.Sweep()
		if w.GH.PendingSteps() == len(steps) {
			t.Fatal("the refused request was never sent")
		}
		w.GH.ClearScripts()
		if vs := w.CheckBounds(n); len(vs) > 0 {
			checkOnly(t, vs)
		}
		if s := w.mustState(n); s.Slug != "run-tests" {
			t.Errorf("state at %s: the 422 blocked the report", s.Slug)
		}
	}
	t.Run("over_long_body", func(t *testing.T) {
		refuse(t, "POST", "/repos/*/*/issues/*/comments",
			`{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"custom","field":"body","message":"body is too long (maximum is 65536 characters)"}],"documentation_url":"https://docs.github.com/rest/issues/comments#create-an-issue-comment"}`)
	})
	t.Run("invalid_label_name", func(t *testing.T) {
		refuse(t, "POST", "/repos/*/*/issues/*/labels",
			`{"message":"Validation Failed","errors":[{"value":"autopilot/step:implement","resource":"Label","field":"name","code":"invalid"}],"documentation_url":"https://docs.github.com/rest/issues/labels#add-labels-to-an-issue"}`)
	})
}
