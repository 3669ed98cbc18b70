package transcript_test

// Reconcile transcripts: testdata/reconcile/*.txt deliver events to a
// reconcile.Reconciler on a forge.Sandbox and record, after each, what the
// bot changed on the repository in order (comments, state comment
// versions, labels, reactions, dispatches) and the API calls it made.
// reconcileEvent maps a directive to the sandbox action and the event
// delivered; reconcileOutput renders what the sandbox saw.

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/reconcile"
	"github.com/autopilot-dev/autopilot/internal/reconcile/route"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
	"github.com/autopilot-dev/autopilot/internal/tracker"
	"github.com/autopilot-dev/autopilot/internal/transcript"
)

const (
	botLogin = "github-actions[bot]"
	stateKey = "transcript-state-key"
)

func TestTranscriptReconcile(t *testing.T) {
	files, err := filepath.Glob("testdata/reconcile/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no reconcile transcripts (%v)", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			transcript.Run(t, f, *update, newReconcileDriver(t).do)
		})
	}
}

// reconcileDriver is a sandbox repository acme/widgets with maria (admin),
// devin (write) and reader (read), a fixed clock and a reconciler.
type reconcileDriver struct {
	t     *testing.T
	sb    *forge.Sandbox
	rec   *reconcile.Reconciler
	mu    sync.Mutex // guards changes (the sandbox reports from the pass)
	clock *fakeclock.Clock
	// changes are the bot's mutations since the last directive.
	changes []forge.Change
	writes  int
	issue   int
	pulls   map[int]forge.Pull
	// tr is the sandbox Jira (setup jira), nil without one.
	tr *tracker.Sandbox
	// last is the last comment a directive posted (edit changes it).
	last forge.Comment
	// delivered are the event kinds delivered (for the coverage test).
	delivered map[string]bool
}

func newReconcileDriver(t *testing.T) *reconcileDriver {
	d := &reconcileDriver{t: t, clock: fakeclock.New(t0), pulls: map[int]forge.Pull{}, delivered: map[string]bool{}}
	d.sb = forge.NewSandbox(repo, forge.User{Login: botLogin, ID: 41898282, Type: "Bot"}, d.now)
	d.sb.AddUser(forge.User{Login: "maria"}, "admin")
	d.sb.AddUser(forge.User{Login: "devin"}, "write")
	d.sb.AddUser(forge.User{Login: "bob"}, "write")
	d.sb.AddUser(forge.User{Login: "reader"}, "read")
	d.sb.OnChange = func(c forge.Change) {
		if c.Actor == botLogin {
			d.mu.Lock()
			d.changes = append(d.changes, c)
			d.mu.Unlock()
		}
	}
	return d
}

// appID is the App's id in App-mode transcripts (setup app).
const appID = 4242

// setup chooses how the reconciler runs, before the first delivery: app
// (App mode: the PR check offers buttons, comments carry the App's id),
// jira (a sandbox Jira tracker), jira-auth=fail (its credentials fail).
func (d *reconcileDriver) setup(c *transcript.Case) string {
	o := reconcile.Options{Forge: d.sb, BotLogin: botLogin, StateKey: []byte(stateKey), Now: d.now,
		Logger:       slog.New(slog.NewTextHandler(testWriter{d.t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
		WriteID:      func() string { d.writes++; return fmt.Sprintf("w%04d", d.writes) },
		TrackerSleep: func(context.Context, time.Duration) error { return nil }}
	if c != nil && c.Has("app") {
		o.AppID, o.CheckButtons, d.sb.AppID = appID, true, appID
	}
	if c != nil && c.Has("jira") {
		d.tr = tracker.NewSandbox(tracker.SandboxOptions{Project: "PROJ", Now: d.now})
		d.tr.SetAuth(c.Or("jira-auth", "ok") == "ok")
		o.Tracker = d.tr
	}
	rec, err := reconcile.New(o)
	if err != nil {
		return "error: " + err.Error()
	}
	d.rec = rec
	return "ok"
}

func (d *reconcileDriver) now() time.Time { return d.clock.Now() }

func (d *reconcileDriver) tick(dur time.Duration) { d.clock.Advance(dur) }

func (d *reconcileDriver) do(c *transcript.Case) string {
	if c.Cmd == "setup" {
		return d.setup(c)
	}
	if d.rec == nil {
		d.setup(nil)
	}
	d.tick(time.Minute)
	before := d.snapshot()
	ev, out := d.reconcileEvent(c)
	if ev == nil {
		return out
	}
	d.mu.Lock()
	d.changes = nil
	d.mu.Unlock()
	d.delivered[ev.Name] = true
	outs, err := d.rec.Handle(context.Background(), ev)
	return d.reconcileOutput(outs, err, before)
}

// counts is what a pass is measured against: API calls by kind, check runs
// created per PR head, tracker calls.
type counts struct {
	calls   map[string]int
	checks  map[string]int
	tracker int
}

func (d *reconcileDriver) snapshot() counts {
	c := counts{calls: d.sb.Calls(), checks: map[string]int{}}
	for _, p := range d.pulls {
		c.checks[p.HeadSHA] = len(d.sb.CreatedCheckRuns(p.HeadSHA))
	}
	for _, h := range []string{"queue1", "queue2"} { // merge queue heads
		c.checks[h] = len(d.sb.CreatedCheckRuns(h))
	}
	if d.tr != nil {
		c.tracker = len(d.tr.Calls())
	}
	return c
}

// reconcileEvent carries out a directive on the sandbox and returns the
// event to deliver, or nil and the directive's own output.
func (d *reconcileDriver) reconcileEvent(c *transcript.Case) (*ghevent.Event, string) {
	who := ""
	if len(c.Args) > 0 {
		who = c.Args[0].Key
	}
	if out, ok := d.arrange(c, who); ok {
		return nil, out
	}
	switch c.Cmd {
	case "comment", "edit":
		return d.commentEvent(c, who)
	case "label":
		d.sb.LabelIssue(who, d.issue, c.Or("name", "autopilot"))
		ev := d.event("issues", "labeled", d.issue, who)
		ev.Label = c.Or("name", "autopilot")
		return ev, ""
	case "unlabel":
		d.sb.UnlabelIssue(who, d.issue, c.Or("name", "autopilot"))
		ev := d.event("issues", "unlabeled", d.issue, who)
		ev.Label = c.Or("name", "autopilot")
		return ev, ""
	case "merge-queue":
		n, _ := strconv.Atoi(c.Or("pr", "2"))
		return &ghevent.Event{Name: "merge_group", Action: "checks_requested", Repo: repo, Handled: true, Sender: d.sb.User(who),
			MergeGroup: &ghevent.MergeGroup{HeadSHA: c.Or("head", "queue1"), PR: n}}, ""
	case "pr":
		p := d.sb.CreatePull(who, "CSV export", c.Input, c.Or("head", "abc1234"))
		d.pulls[p.Number] = p
		ev := d.event("pull_request", "opened", p.Number, who)
		ev.Pull, ev.LinkedIssues = &p, []int{d.issue}
		return ev, ""
	case "review":
		n, _ := strconv.Atoi(c.Or("pr", "2"))
		p := d.pulls[n]
		rv := d.sb.AddReview(n, who, c.Or("state", "APPROVED"), c.Input)
		ev := d.event("pull_request_review", "submitted", n, who)
		ev.Pull, ev.Review, ev.LinkedIssues = &p, &rv, []int{d.issue}
		return ev, ""
	case "run-completes":
		runs := d.sb.Runs()
		if len(runs) == 0 {
			return nil, "error: no workflow run"
		}
		r, _ := d.sb.CompleteRun(runs[len(runs)-1].ID, c.Or("conclusion", "success"))
		return &ghevent.Event{Name: "workflow_run", Action: "completed", Repo: repo, Handled: true, Sender: d.sb.User(botLogin),
			WorkflowRun: &forge.WorkflowRun{ID: r.ID, DisplayTitle: r.DisplayTitle, Conclusion: r.Conclusion, URL: r.URL}}, ""
	case "click":
		return d.click(c, who)
	case "deployment":
		return d.deployment(c, who)
	case "sweep":
		return &ghevent.Event{Name: c.Or("event", "schedule"), Handled: true, Sweep: true, Repo: repo}, ""
	}
	return nil, fmt.Sprintf("error: unknown directive %q", c.Cmd)
}

// commentEvent posts a comment (or edits the last one) and returns its
// issue_comment delivery.
func (d *reconcileDriver) commentEvent(c *transcript.Case, who string) (*ghevent.Event, string) {
	switch c.Cmd {
	case "comment":
		cm, err := d.sb.Comment(who, d.issue, c.Input)
		if err != nil {
			return nil, "error: " + err.Error()
		}
		d.last = cm
		ev := d.event("issue_comment", "created", d.issue, who)
		ev.Comment = &cm
		return ev, ""
	case "edit":
		// The last comment, edited by who; the delivery proves who wrote
		// the new text.
		if err := d.sb.EditAs(who, d.last.ID, c.Input); err != nil {
			return nil, "error: " + err.Error()
		}
		cm, err := d.sb.GetComment(context.Background(), d.last.ID)
		if err != nil {
			return nil, "error: " + err.Error()
		}
		ev := d.event("issue_comment", "edited", d.issue, who)
		ev.Comment = &cm
		return ev, ""
	}
	return nil, ""
}

// arrange carries out a directive that changes the repository or the clock
// without a delivery (ok false: the directive is a delivery).
func (d *reconcileDriver) arrange(c *transcript.Case, who string) (out string, ok bool) {
	switch c.Cmd {
	case "config":
		d.sb.SetFile(".github/autopilot.yml", []byte(c.Input))
		return "wrote .github/autopilot.yml", true
	case "issue":
		d.issue = d.sb.CreateIssue("maria", "Add CSV export to reports", "Users want CSV downloads.").Number
		return fmt.Sprintf("opened #%d", d.issue), true
	case "advance":
		dur, err := time.ParseDuration(who)
		if err != nil {
			return "error: " + err.Error(), true
		}
		d.tick(dur)
		return "now " + d.now().Format("2006-01-02 15:04"), true
	case "checks":
		var cs []forge.Check
		for _, a := range c.Args {
			if a.Key == "sha" {
				continue
			}
			status, conclusion, _ := strings.Cut(a.Val, "/")
			cs = append(cs, forge.Check{Name: a.Key, Status: status, Conclusion: conclusion})
		}
		d.sb.SetChecks(c.Or("sha", "abc1234"), cs...)
		return "checks set", true
	case "jira-auth":
		if d.tr == nil {
			return "error: no Jira (setup jira)", true
		}
		d.tr.SetAuth(who == "ok")
		return "jira credentials: " + who, true
	}
	return "", false
}

// click presses the button for letter=<L> on the newest check run on PR
// pr=<n>'s head: check_run.requested_action.
func (d *reconcileDriver) click(c *transcript.Case, who string) (*ghevent.Event, string) {
	n, _ := strconv.Atoi(c.Or("pr", "2"))
	p := d.pulls[n]
	runs := d.sb.CreatedCheckRuns(p.HeadSHA)
	if len(runs) == 0 {
		return nil, "error: no check run on " + p.HeadSHA
	}
	run := runs[len(runs)-1]
	for _, a := range run.Actions {
		if strings.HasSuffix(a.Identifier, "."+c.Or("letter", "A")) {
			return &ghevent.Event{Name: "check_run", Action: "requested_action", Repo: repo, Handled: true, Sender: d.sb.User(who),
				LinkedIssues: []int{d.issue}, CheckAction: &ghevent.CheckAction{CheckRunID: 9100, URL: "https://github.com/acme/widgets/runs/9100",
					Name: run.Name, HeadSHA: run.HeadSHA, ExternalID: run.ExternalID, AppID: appID, Identifier: a.Identifier, PRs: []int{n}}}, ""
		}
	}
	return nil, "error: the newest check run has no button " + c.Or("letter", "A")
}

// event is a delivery about issue (or PR) n as its payload carries it.
func (d *reconcileDriver) event(name, action string, n int, sender string) *ghevent.Event {
	is, _ := d.sb.Snapshot(n)
	return &ghevent.Event{Name: name, Action: action, Repo: repo, Sender: d.sb.User(sender), Handled: true,
		Issue: n, IsPR: is.IsPR, Labels: is.Labels, Title: is.Title, Body: is.Body, IssueState: is.State}
}

// reconcileOutput renders a pass: the bot's changes in order, the pass
// outcome, and the API calls made (by kind, with counts).
func (d *reconcileDriver) reconcileOutput(outs []route.Outcome, err error, before counts) string {
	var b strings.Builder
	if err != nil {
		fmt.Fprintf(&b, "error: %v\n", err)
	}
	d.mu.Lock()
	changes := d.changes
	d.mu.Unlock()
	for _, c := range changes {
		b.WriteString(d.changeText(c) + "\n")
	}
	b.WriteString(d.sideWrites(before))
	for _, o := range outs {
		fmt.Fprintf(&b, "outcome: #%d %s %s→%s %s", o.Issue, o.Flow, o.StepBefore, o.Step, o.Status)
		if o.Decision != "" {
			fmt.Fprintf(&b, " decision=%s", o.Decision)
		}
		if o.Stop != "" {
			fmt.Fprintf(&b, " stop=%s", o.Stop)
		}
		if o.Wrote {
			fmt.Fprintf(&b, " wrote v%d", o.Version)
		}
		b.WriteString("\n")
		for _, n := range o.Notes {
			fmt.Fprintf(&b, "  note: %s\n", n)
		}
	}
	after := d.sb.Calls()
	var calls []string
	for k, v := range after {
		if n := v - before.calls[k]; n > 0 {
			calls = append(calls, fmt.Sprintf("%s ×%d", k, n))
		}
	}
	sort.Strings(calls)
	fmt.Fprintf(&b, "calls: %s\n", strings.Join(calls, ", "))
	return b.String()
}

// sideWrites are the check runs the pass created and the Jira calls it
// made (neither shows as a sandbox change).
func (d *reconcileDriver) sideWrites(before counts) string {
	var b strings.Builder
	heads := make([]string, 0, len(d.pulls))
	for _, p := range d.pulls {
		heads = append(heads, p.HeadSHA)
	}
	for h := range before.checks {
		if !slices.Contains(heads, h) {
			heads = append(heads, h)
		}
	}
	sort.Strings(heads)
	for _, h := range heads {
		for _, r := range d.sb.CreatedCheckRuns(h)[before.checks[h]:] {
			status := r.Status
			if r.Conclusion != "" {
				status += "/" + r.Conclusion
			}
			fmt.Fprintf(&b, "check run %q on %s: %s — %s\n", r.Name, h, status, r.Title)
			for _, a := range r.Actions {
				fmt.Fprintf(&b, "  button %q (%s)\n", a.Label, a.Identifier)
			}
		}
	}
	if d.tr != nil {
		for _, tc := range d.tr.Calls()[before.tracker:] {
			fmt.Fprintf(&b, "jira %s items=%d", tc.Op, tc.Items)
			if tc.Err != nil {
				fmt.Fprintf(&b, " error=%v", tc.Err)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// changeText is one change the bot made. The state comment is shown by
// its version and position (its machine block and banner are the engine
// transcripts' business); other comments in full.
func (d *reconcileDriver) changeText(c forge.Change) string {
	switch c.Kind {
	case "comment", "edit":
		body := c.Comment.Body
		if strings.HasPrefix(body, state.Marker) {
			s, err := codec.Parse(body, codec.Want{Repo: repo, Issue: c.Issue, Key: []byte(stateKey)})
			if err != nil {
				return fmt.Sprintf("%s state comment on #%d: unreadable: %v", c.Kind, c.Issue, err)
			}
			return fmt.Sprintf("%s state comment on #%d: v%d %s · %s %s", c.Kind, c.Issue, s.Version, s.Run, s.Slug, s.Status)
		}
		return fmt.Sprintf("%s on #%d:\n  │ %s", c.Kind, c.Issue, strings.ReplaceAll(body, "\n", "\n  │ "))
	case "label+", "label-":
		return fmt.Sprintf("%s %s on #%d", c.Kind, c.Label, c.Issue)
	case "react":
		return fmt.Sprintf("react %s on comment %d", c.Content, c.Comment.ID)
	case "dispatch":
		return "dispatch: " + c.Content
	case "deployment-rule":
		return "deployment protection rule: " + c.Content
	}
	return fmt.Sprintf("%s on #%d %s %s", c.Kind, c.Issue, c.Label, c.Content)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// deployment is a deployment_protection_rule delivery: the newest
// dispatched run (run=last) or run=<id> deploying sha= to env= for the
// pull requests pr= (their descriptions as the sandbox holds them).
func (d *reconcileDriver) deployment(c *transcript.Case, who string) (*ghevent.Event, string) {
	var run int64 = 4242
	if v := c.Or("run", "last"); v == "last" {
		runs := d.sb.Runs()
		if len(runs) == 0 {
			return nil, "error: no workflow run"
		}
		run = runs[len(runs)-1].ID
	} else if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		run = n
	}
	ev := &ghevent.Event{Name: "deployment_protection_rule", Action: "requested", Repo: repo, Handled: true, Sender: d.sb.User(who)}
	req := events.DeploymentRequested{Environment: c.Or("env", "production"), SHA: c.Or("sha", "abc1234"), RunID: run, Sender: who}
	if v, ok := c.Get("pr"); ok {
		n, _ := strconv.Atoi(v)
		p := d.pulls[n]
		linked := ghevent.LinkedIssues(p.Body)
		req.PRs = append(req.PRs, events.DeployPR{Number: n, LinkedIssues: linked})
		ev.LinkedIssues = linked
	}
	ev.Carries = req
	return ev, ""
}
