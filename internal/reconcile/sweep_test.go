package reconcile

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/reconcile/repofiles"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestSweepReadsConfigOnce: one configuration read per sweep, however many
// issues it visits; none when there is nothing to sweep.
func TestSweepReadsConfigOnce(t *testing.T) {
	for _, issues := range []int{0, 1, 3} {
		w := newWorld(t, nil)
		for i := 0; i < issues; i++ {
			w.start(w.issue("Issue"))
		}
		before := w.sb.Calls()["GET contents"]
		outs := w.sweep()
		if len(outs) != issues {
			t.Fatalf("%d issues: %d outcomes", issues, len(outs))
		}
		want := 0
		if issues > 0 {
			want = 1
		}
		if got := w.sb.Calls()["GET contents"] - before; got != want {
			t.Errorf("%d issues: sweep read the config %d times, want %d", issues, got, want)
		}
	}
}

// TestSweepKeepsTheConfigItRead: a changed config reaches the state copy
// at the next sweep, and later events use that copy without a read.
func TestSweepKeepsTheConfigItRead(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Issue")
	w.start(n)
	changed := greenfieldConfig + "limits:\n  max_sessions: 7\n"
	w.sb.SetFile(".github/autopilot.yml", []byte(changed))
	w.sweep()
	if st := w.state(n); st.ConfigYAML != changed {
		t.Errorf("state config copy = %q, want the file read by the sweep", st.ConfigYAML)
	}
	before := w.sb.Calls()["GET contents"]
	w.comment(n, "devin", "/autopilot done problem framed")
	if got := w.sb.Calls()["GET contents"] - before; got != 0 {
		t.Errorf("a comment event read the config %d times; the state copy should serve", got)
	}
}

func TestSweepConfigErrorStopsTheSweep(t *testing.T) {
	w := newWorld(t, nil)
	for i := 0; i < 2; i++ {
		w.start(w.issue("Issue"))
	}
	w.sb.SetFile(".github/autopilot.yml", []byte("default_flow: [not, a, name]\n"))
	before := w.sb.Calls()["GET contents"]
	_, err := w.handle(&ghevent.Event{Name: "schedule", Handled: true, Sweep: true, Repo: testRepo})
	var ce *repofiles.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a ConfigError", err)
	}
	if got := w.sb.Calls()["GET contents"] - before; got != 1 {
		t.Errorf("config read %d times, want 1", got)
	}
}

func TestSweepStopsEarlyOnLowBudget(t *testing.T) {
	calls := 0
	w := newWorld(t, func(o *Options) {
		o.BudgetLow = func() bool { calls++; return calls > 3 }
	})
	for i := 0; i < 3; i++ {
		w.start(w.issue("Issue"))
	}
	outs := w.sweep()
	last := outs[len(outs)-1]
	if !strings.Contains(strings.Join(last.Notes, " "), "stopped early") {
		t.Fatalf("outcomes %+v: want a note that the sweep stopped early", outs)
	}
}

// linkPR opens a PR by devin whose body links issue n and delivers
// pull_request.opened.
func (w *world) linkPR(n int, body string) int {
	w.t.Helper()
	w.tick(time.Minute)
	p := w.sb.CreatePull("devin", "Add the CSV writer", body, "abc123")
	ev := w.event("pull_request", "opened", p.Number, "devin")
	ev.Pull, ev.LinkedIssues = &p, ghevent.LinkedIssues(body)
	w.mustHandle(ev)
	return p.Number
}

// prCommentEvent is issue_comment.created for a comment on PR pr.
func (w *world) prCommentEvent(c forge.Comment, prBody string) *ghevent.Event {
	ev := w.commentEvent(c)
	ev.LinkedIssues = ghevent.LinkedIssues(prBody)
	return ev
}

// TestSweepRecoversPRAnswer: a maintainer answers on the linked PR, the
// event is lost; the sweep reads the PR conversation (one call) and applies
// the answer. Other bots' comments there are not answers.
func TestSweepRecoversPRAnswer(t *testing.T) {
	w := newWorld(t, nil)
	w.sb.AddUser(forge.User{Login: "lint-bot[bot]", Type: "Bot"}, access.Write)
	n := w.issue("Add CSV export")
	w.start(n)
	w.toGate(n)
	pr := w.linkPR(n, "Fixes #1")
	if st := w.state(n); len(st.LinkedPRs) != 1 || st.LinkedPRs[0] != pr {
		t.Fatalf("linked PRs %v, want [%d]", st.LinkedPRs, pr)
	}
	w.say(pr, "lint-bot[bot]", "B")
	answer := w.say(pr, "maria", "A") // its event is lost
	if st := w.state(n); st.Gate == nil {
		t.Fatal("applied before any run")
	}
	before := w.sb.Calls()["GET comments"]
	w.sweep()
	st := w.state(n)
	if st.Gate != nil || len(st.Decisions) != 1 || st.Decisions[0].Option != "A" || st.Decisions[0].CommentID != answer.ID {
		t.Fatalf("after the sweep: gate %v decisions %+v", st.Gate, st.Decisions)
	}
	// Issue comments, the version re-read and one read of the PR (no
	// read-back: the pass posted no comment).
	if got := w.sb.Calls()["GET comments"] - before; got != 3 {
		t.Errorf("sweep listed comments %d times, want 3", got)
	}
	if r := w.sb.Reactions(answer.ID); len(r) != 1 {
		t.Errorf("reactions on the PR answer = %v, want one", r)
	}
}

func TestSweepSkipsPRsOfFinishedRuns(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	w.linkPR(n, "Autopilot-Issue: #1")
	ev := w.event("issues", "closed", n, "maria")
	w.mustHandle(ev)
	// A stopped run is still swept (it may be resumed); make it done instead.
	w.sb.UnlabelIssue("maria", n, "autopilot")
	before := w.sb.Calls()["GET comments"]
	w.sweep()
	if got := w.sb.Calls()["GET comments"] - before; got != 0 {
		t.Errorf("sweep of an unlabelled issue listed comments %d times", got)
	}
}

// TestPRAnswerEvent: an answer on the linked PR's conversation applies to
// the issue's gate, and the PR becomes linked even if its own event was
// lost; chatter on a PR costs no call; a deleted PR answer is ignored.
func TestPRAnswerEvent(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	w.toGate(n)
	body := "Implements the writer.\n\nAutopilot-Issue: #1"
	p := w.sb.CreatePull("devin", "CSV", body, "abc123") // pull_request.opened lost

	before := w.sb.TotalCalls()
	w.mustHandle(w.prCommentEvent(w.say(p.Number, "devin", "nice work"), body))
	if got := w.sb.TotalCalls() - before; got != 0 {
		t.Errorf("PR chatter made %d calls, want 0", got)
	}

	gone := w.say(p.Number, "reader", "B")
	w.sb.DeleteComment(gone.ID)
	w.mustHandle(w.prCommentEvent(gone, body))
	if st := w.state(n); st.Gate == nil || len(w.sb.Reactions(gone.ID)) != 0 {
		t.Fatalf("a deleted PR comment was acted on: gate %v", st.Gate)
	}

	c := w.say(p.Number, "maria", "A")
	outs := w.mustHandle(w.prCommentEvent(c, body))
	if len(outs) != 1 || outs[0].Decision != "A" || outs[0].Issue != n {
		t.Fatalf("outcomes %+v, want decision A on #%d", outs, n)
	}
	st := w.state(n)
	if st.Gate != nil || st.Decisions[0].CommentID != c.ID || len(st.LinkedPRs) != 1 || st.LinkedPRs[0] != p.Number {
		t.Errorf("gate %v decisions %+v linked %v", st.Gate, st.Decisions, st.LinkedPRs)
	}
}

func TestPRCommentOnUnlinkedPRChangesNothing(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Add CSV export")
	w.start(n)
	w.toGate(n)
	p := w.sb.CreatePull("devin", "Unrelated", "Refactors the exporter (see #1 for context).", "abc")
	v := w.state(n).Version
	before := w.mutations()
	w.mustHandle(w.prCommentEvent(w.say(p.Number, "maria", "A"), p.Body))
	if st := w.state(n); st.Gate == nil || st.Version != v || w.mutations() != before {
		t.Errorf("an unlinked PR's answer changed the issue: gate %v v%d→v%d", st.Gate, v, st.Version)
	}
}

// TestRouting: events autopilot does not act on cost no API call; the
// others reach the right issue.
func TestRouting(t *testing.T) {
	w := newWorld(t, nil)
	managed := w.issue("Managed")
	w.start(managed)
	plain := w.issue("Plain")
	w.sb.AddUser(forge.User{Login: "other-bot[bot]", Type: "Bot"}, access.Write)

	comment := func(n int, who, body string) *ghevent.Event { return w.commentEvent(w.say(n, who, body)) }
	label := func(n int, action, l string) *ghevent.Event {
		ev := w.event("issues", action, n, "maria")
		ev.Label = l
		return ev
	}
	edited := comment(managed, "devin", "typo")
	edited.Action = "edited"
	own := comment(managed, "devin", "/autopilot status")
	own.Sender = forge.User{Login: bot, Type: "Bot"}
	closedPR := w.event("pull_request", "closed", managed, "devin")
	run := &ghevent.Event{Name: "workflow_run", Action: "completed", Repo: testRepo, Handled: true, Sender: forge.User{Login: bot, Type: "Bot"},
		WorkflowRun: &forge.WorkflowRun{ID: 9, DisplayTitle: "nightly build", Conclusion: "success"}}
	tests := []struct {
		name string
		ev   *ghevent.Event
	}{
		{"nil event", nil},
		{"unhandled event", &ghevent.Event{Name: "star", Handled: false}},
		{"another label added", label(plain, "labeled", "bug")},
		{"another label removed", label(managed, "unlabeled", "bug")},
		{"issue opened", w.event("issues", "opened", plain, "maria")},
		{"closed without the trigger label", w.event("issues", "closed", plain, "maria")},
		{"reopened without the trigger label", w.event("issues", "reopened", plain, "maria")},
		{"chatter on an unmanaged issue", comment(plain, "devin", "+1")},
		{"a bot's command on an unmanaged issue", comment(plain, "other-bot[bot]", "/autopilot status")},
		{"edit of a human comment (audit only)", edited},
		{"the bot's own event", own},
		{"pull request closed", closedPR},
		{"workflow run without a session token", run},
		{"issue_comment without a comment", &ghevent.Event{Name: "issue_comment", Action: "created", Handled: true, Issue: managed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := w.sb.TotalCalls()
			outs, err := w.handle(tt.ev)
			if err != nil || len(outs) != 0 {
				t.Errorf("outcomes %v, err %v; want none", outs, err)
			}
			if got := w.sb.TotalCalls() - before; got != 0 {
				t.Errorf("%d API calls, want 0", got)
			}
		})
	}
}

func TestUnmanagedCommand(t *testing.T) {
	tests := []struct {
		who       string
		wantReply bool
	}{{"devin", true}, {"reader", false}}
	for _, tt := range tests {
		t.Run(tt.who, func(t *testing.T) {
			for _, dry := range []bool{false, true} {
				w := newWorld(t, func(o *Options) { o.DryRun = dry })
				n := w.issue("Plain")
				w.comment(n, tt.who, "/autopilot status")
				replies := len(w.botComments(n, "autopilot:reply"))
				want := 0
				if tt.wantReply && !dry {
					want = 1
				}
				if replies != want {
					t.Errorf("dry=%v: %d replies, want %d", dry, replies, want)
				}
				if dry && tt.wantReply && len(w.printed) == 0 {
					t.Error("dry run printed nothing")
				}
			}
		})
	}
}

func TestLifecycleEvents(t *testing.T) {
	t.Run("unlabeled stops the run", func(t *testing.T) {
		w := newWorld(t, nil)
		n := w.issue("Issue")
		w.start(n)
		w.sb.UnlabelIssue("maria", n, "autopilot")
		ev := w.event("issues", "unlabeled", n, "maria")
		ev.Label = "autopilot"
		w.mustHandle(ev)
		st := w.state(n)
		if st.Run != state.RunStopped || st.Stop == nil || st.Stop.Reason != "user-abort" {
			t.Errorf("run %s stop %+v, want stopped by user-abort", st.Run, st.Stop)
		}
		if !hasLabel(w.labels(n), "autopilot/status:stopped") {
			t.Errorf("labels %v", w.labels(n))
		}
	})
	t.Run("closed stops, reopened reconciles", func(t *testing.T) {
		w := newWorld(t, nil)
		n := w.issue("Issue")
		w.start(n)
		w.mustHandle(w.event("issues", "closed", n, "maria"))
		if st := w.state(n); st.Run != state.RunStopped {
			t.Errorf("after close: %s", st.Run)
		}
		outs := w.mustHandle(w.event("issues", "reopened", n, "maria"))
		if len(outs) != 1 || outs[0].Issue != n {
			t.Errorf("reopened outcomes %+v", outs)
		}
	})
	t.Run("workflow run is matched by its session token", func(t *testing.T) {
		w := newWorld(t, nil)
		n := w.issue("Issue")
		w.start(n)
		outs := w.mustHandle(&ghevent.Event{Name: "workflow_run", Action: "completed", Repo: testRepo, Handled: true,
			WorkflowRun: &forge.WorkflowRun{ID: 77, DisplayTitle: "autopilot ap-1-problem-1-x", Conclusion: "success"}})
		if len(outs) != 1 || outs[0].Issue != n {
			t.Errorf("outcomes %+v, want #%d reconciled", outs, n)
		}
	})
	t.Run("review on a linked PR reaches the issue", func(t *testing.T) {
		w := newWorld(t, nil)
		n := w.issue("Issue")
		w.start(n)
		body := "Fixes #1"
		pr := w.linkPR(n, body)
		p, _ := w.sb.GetPull(t.Context(), pr)
		rv := w.sb.AddReview(pr, "maria", "APPROVED", "ok")
		ev := w.event("pull_request_review", "submitted", pr, "maria")
		ev.Pull, ev.Review, ev.LinkedIssues = &p, &rv, []int{n}
		outs := w.mustHandle(ev)
		if len(outs) != 1 || outs[0].Issue != n {
			t.Errorf("outcomes %+v, want #%d reconciled", outs, n)
		}
	})
	t.Run("linked issue that is gone is skipped", func(t *testing.T) {
		w := newWorld(t, nil)
		p := w.sb.CreatePull("devin", "x", "Fixes #99", "abc")
		ev := w.event("pull_request", "opened", p.Number, "devin")
		ev.Pull, ev.LinkedIssues = &p, []int{99}
		if outs := w.mustHandle(ev); len(outs) != 0 {
			t.Errorf("outcomes %+v", outs)
		}
	})
}
