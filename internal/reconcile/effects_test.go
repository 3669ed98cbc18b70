package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/labels"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/reconcile/repofiles"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// failDir is a Forge whose ListDir fails.
type failDir struct{ *forge.Sandbox }

func (failDir) ListDir(context.Context, string) ([]string, bool, error) {
	return nil, false, &forge.TransientError{Status: 502, Err: errors.New("bad gateway")}
}

// TestStartDetectsTheFlow: without default_flow, the repository's files
// pick the flow; a flow label wins over detection.
func TestStartDetectsTheFlow(t *testing.T) {
	t.Run("existing code", func(t *testing.T) {
		w := newWorld(t, nil)
		w.sb.SetFile(".github/autopilot.yml", []byte("jira:\n  enabled: false\n"))
		w.sb.SetFile("go.mod", []byte("module x\n"))
		n := w.issue("Issue")
		w.start(n)
		if st := w.state(n); st.Flow != "existing-code" {
			t.Errorf("flow %q, want existing-code", st.Flow)
		}
	})
	t.Run("a flow label wins", func(t *testing.T) {
		w := newWorld(t, nil)
		w.sb.SetFile(".github/autopilot.yml", []byte("jira:\n  enabled: false\n"))
		w.sb.SetFile("go.mod", []byte("module x\n"))
		n := w.issue("Issue")
		w.sb.LabelIssue("maria", n, "autopilot/flow:greenfield")
		before := w.sb.Calls()["GET contents"]
		w.start(n)
		if st := w.state(n); st.Flow != "greenfield" {
			t.Errorf("flow %q, want greenfield", st.Flow)
		}
		if got := w.sb.Calls()["GET contents"] - before; got != 1 {
			t.Errorf("%d contents reads, want 1 (the config; no detection)", got)
		}
	})
	t.Run("detection failure fails the run", func(t *testing.T) {
		w := newWorld(t, nil)
		w.sb.SetFile(".github/autopilot.yml", []byte("jira:\n  enabled: false\n"))
		rec, err := New(Options{Forge: failDir{w.sb}, BotLogin: bot, StateKey: []byte(testKey), Now: w.now})
		if err != nil {
			t.Fatal(err)
		}
		n := w.issue("Issue")
		w.sb.LabelIssue("maria", n, "autopilot")
		ev := w.event("issues", "labeled", n, "maria")
		ev.Label = "autopilot"
		if _, err := rec.Handle(context.Background(), ev); err == nil {
			t.Error("a failed listing started a run anyway")
		}
	})
}

func TestBrokenConfigIsAConfigError(t *testing.T) {
	w := newWorld(t, nil)
	w.sb.SetFile(".github/autopilot.yml", []byte("limits: [1, 2\n"))
	n := w.issue("Issue")
	w.sb.LabelIssue("maria", n, "autopilot")
	ev := w.event("issues", "labeled", n, "maria")
	ev.Label = "autopilot"
	_, err := w.handle(ev)
	var ce *repofiles.ConfigError
	if !errors.As(err, &ce) || ce.Path != ".github/autopilot.yml" || errors.Unwrap(ce) == nil {
		t.Fatalf("err = %v, want a ConfigError naming the file", err)
	}
	if w.mutations() != 0 {
		t.Errorf("%d mutations on a broken config", w.mutations())
	}
}

func TestConfigReadErrorIsReturned(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Issue")
	w.sb.LabelIssue("maria", n, "autopilot")
	w.sb.FailNext("GET contents", &forge.TransientError{Status: 503, Err: errors.New("unavailable")})
	ev := w.event("issues", "labeled", n, "maria")
	ev.Label = "autopilot"
	var te *forge.TransientError
	if _, err := w.handle(ev); !errors.As(err, &te) {
		t.Fatalf("err = %v, want the transient error", err)
	}
}

// TestLabelsFollowTheState: exactly one step and one status label, the
// flow label, colours created once, and labels autopilot does not manage
// left alone.
func TestLabelsFollowTheState(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Issue")
	w.sb.LabelIssue("maria", n, "bug")
	w.start(n)
	w.toGate(n)
	if l, ok := w.sb.RepoLabel("autopilot/status:awaiting-decision"); !ok || l.Color == "ededed" || l.Description == "" {
		t.Errorf("status label created as %+v, want a colour and a description", l)
	}
	w.comment(n, "maria", "A")
	ls := w.labels(n)
	count := func(prefix string) int {
		k := 0
		for _, l := range ls {
			if strings.HasPrefix(l, prefix) {
				k++
			}
		}
		return k
	}
	if count("autopilot/step:") != 1 || count("autopilot/status:") != 1 || !hasLabel(ls, "autopilot/flow:greenfield") || !hasLabel(ls, "bug") {
		t.Errorf("labels %v", ls)
	}
	if !hasLabel(ls, "autopilot/step:implement") || !hasLabel(ls, "autopilot/status:in-progress") {
		t.Errorf("labels %v, want step implement and in-progress", ls)
	}
	// Each label was created when a run first applied it and painted once;
	// the repository has no autopilot label that was never applied.
	managedLabels := 0
	for _, l := range w.sb.RepoLabels() {
		if !labels.Managed(l.Name) {
			continue
		}
		managedLabels++
		if l.Color == forge.LabelAutoColor || l.Description == "" {
			t.Errorf("label %+v left grey", l)
		}
		if strings.HasSuffix(l.Name, ":failed") || strings.HasSuffix(l.Name, ":done") || strings.HasSuffix(l.Name, ":stopped") || strings.HasSuffix(l.Name, "step:deploy") {
			t.Errorf("label %s created although no run applied it", l.Name)
		}
	}
	if got := w.sb.Calls()["PATCH label"]; got != managedLabels {
		t.Errorf("%d label paints for %d labels, want each painted exactly once", got, managedLabels)
	}
}

// TestDryRunWritesNothing: a dry run computes the run and prints what it
// would do, and sends no mutation.
func TestDryRunWritesNothing(t *testing.T) {
	w := newWorld(t, func(o *Options) { o.DryRun = true })
	n := w.issue("Issue")
	w.sb.LabelIssue("maria", n, "autopilot")
	ev := w.event("issues", "labeled", n, "maria")
	ev.Label = "autopilot"
	outs := w.mustHandle(ev)
	if w.mutations() != 0 {
		t.Errorf("%d mutations in dry-run: %v", w.mutations(), w.sb.Calls())
	}
	if len(outs) != 1 || outs[0].Step != "problem" || !outs[0].Wrote {
		t.Errorf("outcomes %+v: the dry run should still compute the run", outs)
	}
	all := strings.Join(w.printed, "\n")
	for _, want := range []string{"dry-run: would write state v1 of #1", "dry-run: would comment on #1"} {
		if !strings.Contains(all, want) {
			t.Errorf("dry-run output lacks %q:\n%s", want, all)
		}
	}
}

const dispatchCfg = "default_flow: greenfield\njira:\n  enabled: false\nexecutor:\n  kind: dispatch\n  workflow: autopilot-step.yml\n"

// TestDispatchExecutor: a dispatched step records its run, and the
// completed run (matched by the session token) completes the step.
func TestDispatchExecutor(t *testing.T) {
	w := newWorld(t, nil)
	w.sb.SetFile(".github/autopilot.yml", []byte(dispatchCfg))
	n := w.issue("Issue")
	w.start(n)
	runs := w.sb.Runs()
	st := w.state(n)
	if len(runs) != 1 || st.Exec == nil || st.Exec.Session == "" || !strings.Contains(runs[0].DisplayTitle, st.Exec.Session) {
		t.Fatalf("runs %+v exec %+v", runs, st.Exec)
	}
	if st.Exec.RunID != runs[0].ID {
		t.Errorf("exec run id %d, want %d", st.Exec.RunID, runs[0].ID)
	}
	done, _ := w.sb.CompleteRun(runs[0].ID, "success")
	w.mustHandle(&ghevent.Event{Name: "workflow_run", Action: "completed", Repo: testRepo, Handled: true, Sender: forge.User{Login: bot, Type: "Bot"},
		WorkflowRun: &forge.WorkflowRun{ID: done.ID, DisplayTitle: done.DisplayTitle, Conclusion: "success", URL: done.URL}})
	if st := w.state(n); st.Slug != "research" || len(w.sb.Runs()) != 2 {
		t.Errorf("after the run: step %s, %d runs; want research and a second dispatch", st.Slug, len(w.sb.Runs()))
	}
}

func TestDispatchFailureIsRecorded(t *testing.T) {
	w := newWorld(t, nil)
	w.sb.SetFile(".github/autopilot.yml", []byte(dispatchCfg))
	w.sb.FailNext("POST dispatch", fmt.Errorf("workflow boom: %w", forge.ErrNotFound))
	n := w.issue("Issue")
	w.start(n)
	st := w.state(n)
	// A refused dispatch (not a blip) is a failed attempt: logged, and retried.
	if len(st.RetryLog) != 1 || !strings.Contains(st.RetryLog[0].Reason, "boom") {
		t.Errorf("retry log %+v, want the dispatch failure", st.RetryLog)
	}
	if runs := w.sb.Runs(); len(runs) != 1 || st.Exec == nil || st.Exec.Attempt != 2 || st.Exec.RunID != runs[0].ID {
		t.Errorf("runs %v exec %+v, want attempt 2 dispatched once", runs, st.Exec)
	}
}

func TestDryRunDispatch(t *testing.T) {
	w := newWorld(t, func(o *Options) { o.DryRun = true })
	w.sb.SetFile(".github/autopilot.yml", []byte(dispatchCfg))
	n := w.issue("Issue")
	w.sb.LabelIssue("maria", n, "autopilot")
	ev := w.event("issues", "labeled", n, "maria")
	ev.Label = "autopilot"
	w.mustHandle(ev)
	if len(w.sb.Runs()) != 0 || !strings.Contains(strings.Join(w.printed, "\n"), "would dispatch autopilot-step.yml") {
		t.Errorf("runs %v printed %v", w.sb.Runs(), w.printed)
	}
}

// evidenceCfg has a review-evidence step and a checks-evidence step.
const evidenceCfg = `default_flow: ship
jira: {enabled: false}
flows:
  ship:
    steps:
      - {slug: review, name: Review, evidence: review}
      - {slug: verify, name: Verify, evidence: checks}
      - {slug: release, name: Release}
`

// TestEvidenceFromLinkedPR: linking a PR reads its reviews; the sweep
// reads its checks.
func TestEvidenceFromLinkedPR(t *testing.T) {
	w := newWorld(t, nil)
	w.sb.SetFile(".github/autopilot.yml", []byte(evidenceCfg))
	n := w.issue("Issue")
	w.start(n)
	w.tick(time.Minute)
	p := w.sb.CreatePull("devin", "Ship it", "Fixes #1", "abc123")
	w.sb.AddReview(p.Number, "maria", "APPROVED", "looks right")
	ev := w.event("pull_request", "opened", p.Number, "devin")
	ev.Pull, ev.LinkedIssues = &p, []int{n}
	w.mustHandle(ev)
	if st := w.state(n); st.Slug != "verify" {
		t.Fatalf("after an approving review: step %s, want verify", st.Slug)
	}
	w.sb.SetChecks("abc123", forge.Check{Name: "unit", Status: "completed", Conclusion: "success"}, forge.Check{Name: "lint", Status: "in_progress"})
	w.sweep()
	if st := w.state(n); st.Slug != "verify" {
		t.Fatalf("pending checks moved the run to %s", st.Slug)
	}
	w.sb.SetChecks("abc123", forge.Check{Name: "unit", Status: "completed", Conclusion: "success"}, forge.Check{Name: "lint", Status: "completed", Conclusion: "skipped"})
	w.sweep()
	if st := w.state(n); st.Slug != "release" {
		t.Errorf("green checks: step %s, want release", st.Slug)
	}
}

func TestNewValidatesAndDefaults(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("New without a forge succeeded")
	}
	r, err := New(Options{Forge: forge.NewSandbox(testRepo, forge.User{}, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if r.o.TriggerLabel != "autopilot" || r.o.AnswerPermission != access.Write || r.o.BotLogin != bot || r.o.ConfigPath != ".github/autopilot.yml" {
		t.Errorf("defaults %+v", r.o)
	}
}

// TestAnswerPermissionIsRaisedByConfig: the repository config may raise
// the action's baseline, never lower it.
func TestAnswerPermissionIsRaisedByConfig(t *testing.T) {
	for _, tt := range []struct {
		cfg     string
		applied bool
	}{
		{greenfieldConfig + "answer_permission: admin\n", false},
		{greenfieldConfig + "answer_permission: triage\n", true},
	} {
		w := newWorld(t, nil)
		w.sb.SetFile(".github/autopilot.yml", []byte(tt.cfg))
		n := w.issue("Issue")
		w.start(n)
		w.comment(n, "devin", "/autopilot done problem framed")
		if got := w.state(n).Slug == "research"; got != tt.applied {
			t.Errorf("%q: devin (write) applied = %v, want %v", tt.cfg, got, tt.applied)
		}
	}
}

func TestPermissionErrorFailsClosed(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Issue")
	w.start(n)
	w.sb.FailNext("GET permission", &forge.TransientError{Status: 502, Err: errors.New("bad gateway")})
	c := w.comment(n, "devin", "/autopilot done problem framed")
	st := w.state(n)
	if st.Slug != "problem" || outbox.Handled(st, c.ID) {
		t.Fatalf("a comment whose author could not be checked was applied or classified (step %s)", st.Slug)
	}
	w.comment(n, "devin", "/autopilot status")
	if st := w.state(n); st.Slug != "research" {
		t.Errorf("the deferred comment was not applied on the next run: step %s", st.Slug)
	}
}

func TestOutcomeReportsState(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Issue")
	w.start(n)
	outs := w.mustHandle(w.event("issues", "closed", n, "maria"))
	o := outs[0]
	st := w.state(n)
	if o.Issue != n || o.Flow != "greenfield" || o.Status != string(state.RunStopped) || o.Version != st.Version || o.Stop == "" || !o.Wrote {
		t.Errorf("outcome %+v vs state v%d", o, st.Version)
	}
}

// TestReadOnlyCommandIsNotReactedTwice: /autopilot status is not kept in
// the ledger unless something else is written, so the next run classifies
// it again; its reaction and reply are not sent again.
func TestReadOnlyCommandIsNotReactedTwice(t *testing.T) {
	w := newWorld(t, nil)
	n := w.issue("Issue")
	w.start(n)
	status := w.comment(n, "devin", "/autopilot status")
	reacts, perms := w.sb.Calls()["POST reaction"], w.sb.Calls()["GET permission"]
	w.comment(n, "reader", "/autopilot done problem framed")
	if got := w.sb.Calls()["POST reaction"] - reacts; got != 1 {
		t.Errorf("%d reactions sent by the next run, want 1 (the new comment only)", got)
	}
	if got := w.sb.Calls()["GET permission"] - perms; got != 1 {
		t.Errorf("%d permission lookups by the next run, want 1 (the new comment's author)", got)
	}
	if st := w.state(n); !outbox.Handled(st, status.ID) {
		t.Error("the status command is not in the ledger after the next write")
	}
	if r := w.sb.Reactions(status.ID); len(r) != 1 {
		t.Errorf("reactions on the status command %v", r)
	}
	if got := len(w.botComments(n, "autopilot:reply "+fmt.Sprint(status.ID))); got != 1 {
		t.Errorf("%d replies to the status command, want 1", got)
	}
}

// TestTransientDispatchErrorsDoNotEscalateAtOnce: a GitHub blip on the
// dispatch is not a failed attempt; the dispatch stays in the outbox and a
// later run sends it (after looking for a run that carries its token).
func TestTransientDispatchErrorsDoNotEscalateAtOnce(t *testing.T) {
	w := newWorld(t, nil)
	w.sb.SetFile(".github/autopilot.yml", []byte(dispatchCfg))
	for i := 0; i < 3; i++ {
		w.sb.FailNext("POST dispatch", &forge.TransientError{Status: 502, Err: errors.New("bad gateway")})
	}
	n := w.issue("Issue")
	w.start(n)
	if st := w.state(n); st.Gate != nil || st.Run == state.RunFailed || len(st.RetryLog) != 0 {
		t.Errorf("a 502 blip escalated the step: run %s, %d retries in one run", st.Run, len(st.RetryLog))
	}
	// The next runs (two more scripted 502s, then success) send it once.
	for i := 0; i < 3; i++ {
		w.sweep()
	}
	st := w.state(n)
	if st.Exec == nil || st.Exec.RunID == 0 || len(st.RetryLog) != 0 {
		t.Fatalf("after recovery: exec %+v, retry log %d", st.Exec, len(st.RetryLog))
	}
	if runs := w.sb.Runs(); len(runs) != 1 {
		t.Fatalf("%d workflow runs, want exactly 1", len(runs))
	}
	for _, e := range st.Outbox {
		if e.Kind == "dispatch" {
			t.Errorf("dispatch still in the outbox after it was sent: %+v", e)
		}
	}
}
