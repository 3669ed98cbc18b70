// Package route turns a decoded event into "reconcile issue N" for every
// issue it concerns (the event handler table), and a sweep into the
// issues it reconciles; it carries no issue itself (Router.Issue does).
package route

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/engine/pass"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/reconcile/repofiles"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Trigger says why an issue is reconciled. All fields are optional: an empty
// trigger is a plain catch-up (sweep).
type Trigger struct {
	Start      bool
	StartActor string
	Unlabeled  bool
	Closed     bool
	Actor      string
	Sweep      bool
	// PR is a linked pull request on whose conversation a comment arrived:
	// its comments are re-read (the payload's copy may be stale or deleted)
	// and the PR is recorded as linked.
	PR       int
	Review   *events.Review
	Run      *events.RunCompleted
	PRLinked *events.PRLinked
	// Click is a button of the PR check (App mode); its sender's
	// permission is looked up here.
	Click *events.Click
	// AuthorEdit is an issue_comment.edited delivery whose sender is the
	// comment's author: the proof that the author wrote that text.
	AuthorEdit *forge.Comment
	// Comment is the comment an issue_comment.created delivery carries:
	// when it could act, its author's permission is asked before the
	// thread is read (prefetch).
	Comment *forge.Comment
	// Issue is the issue snapshot from the event payload, when there is one;
	// it saves a read (labels are only ever added or removed one by one, so
	// a slightly stale snapshot cannot clobber anyone's label).
	Issue *forge.Issue

	// SweepConfig carries the configuration a sweep read once for all its
	// issues (set by the sweep).
	SweepConfig *repofiles.Config
	// Adopt (set by the sweep): it found the trigger label on an issue without any
	// state (its labeled event was lost); start a run.
	Adopt bool

	// Events are engine events the event carried as they are (a kind the
	// event table routes by itself, ghevent.Event.Carries): applied in
	// order, without a field or a case of their own.
	Events []events.Event
}

// Outcome reports what one reconcile did.
type Outcome struct {
	Issue int    `json:"issue"`
	Flow  string `json:"flow"`
	Step  string `json:"step"`
	// StepBefore is the current step when the pass began ("" when the
	// issue had no run yet).
	StepBefore string           `json:"step_before,omitempty"`
	Status     string           `json:"status"`
	Decision   string           `json:"decision"`
	Wrote      bool             `json:"wrote"`
	Version    int64            `json:"version"`
	Stop       state.StopReason `json:"stop,omitempty"`
	Notes      []string         `json:"notes,omitempty"`
	// State is the state as the pass left it (nil: no run), Listed says the
	// issue is open and carries the trigger label, URL is its page: what
	// the dashboard's read model shows (not part of the JSON).
	State  *state.State `json:"-"`
	Listed bool         `json:"-"`
	URL    string       `json:"-"`
}

// Router routes one repository's events to Issue.
type Router struct {
	Forge            forge.Forge
	BotLogin         string
	AppID            int64
	TriggerLabel     string
	AnswerPermission access.Level
	CheckButtons     bool
	DryRun           bool
	Now              func() time.Time
	Logger           *slog.Logger
	Print            func(string)
	BudgetLow        func() bool
	// Config, when set, is every issue's configuration (no sweep reads it).
	Config     *config.Config
	ConfigPath string
	// Issue reconciles one issue.
	Issue func(ctx context.Context, number int, t Trigger) (Outcome, error)
	// Trusted reports a comment the configured bot wrote.
	Trusted func(c forge.Comment) bool
	// MergeGroup answers a merge queue's request for checks.
	MergeGroup func(ctx context.Context, ev *ghevent.Event) error
	// Lease, when set, runs fn holding the issue's lease: a deployment
	// protection-rule request names its issue only once routed, so its
	// job holds no lease until then.
	Lease func(ctx context.Context, issue int, fn func(context.Context) error) error
}

// leased reconciles issue n holding its lease (Lease), so no other job
// on the issue runs meanwhile.
func (r *Router) leased(ctx context.Context, n int, t Trigger) (Outcome, error) {
	if r.Lease == nil {
		return r.Issue(ctx, n, t)
	}
	var out Outcome
	err := r.Lease(ctx, n, func(ctx context.Context) error {
		var err error
		out, err = r.Issue(ctx, n, t)
		return err
	})
	if out.Issue == 0 {
		out.Issue = n
	}
	return out, err
}

// Handle routes one decoded event to "reconcile issue N" for every issue it
// concerns. Irrelevant events return without any API call.
func (r *Router) Handle(ctx context.Context, ev *ghevent.Event) ([]Outcome, error) {
	if ev == nil || !ev.Handled {
		return nil, nil
	}
	k, ok := ghevent.KindOf(ev.Name)
	if !ok {
		return nil, nil
	}
	if ghevent.FromSelf(ev, r.BotLogin) {
		return nil, nil // our own writes never trigger work (no loops)
	}
	return r.dispatch(ctx, k, ev)
}

// dispatch routes ev by its row of the kinds table: to the kind's own
// handler, or to every issue the row says it concerns, with the engine
// event it carries.
func (r *Router) dispatch(ctx context.Context, k ghevent.Kind, ev *ghevent.Event) ([]Outcome, error) {
	if h, ok := eventHandlers[k.Name]; ok && k.Concerns == ghevent.ConcernsOwnHandler {
		return h(r, ctx, ev)
	}
	if ev.Carries == nil {
		return nil, nil
	}
	carry := func(int) Trigger { return Trigger{Events: []events.Event{ev.Carries}} }
	switch k.Concerns {
	case ghevent.ConcernsIssue:
		if ev.Labels == nil || ev.IsPR {
			// No label snapshot (or a PR's number): read the issue.
			return r.forLinked(ctx, []int{ev.Issue}, carry)
		}
		if ev.Issue <= 0 || !r.HasTrigger(ev.Labels) {
			return nil, nil
		}
		t := carry(ev.Issue)
		t.Issue = snapshot(ev)
		out, err := r.Issue(ctx, ev.Issue, t)
		return []Outcome{out}, err
	case ghevent.ConcernsLinked:
		return r.forLinked(ctx, ev.LinkedIssues, carry)
	}
	return nil, nil
}

// eventHandler handles one kind of event of ghevent's kinds table whose
// routing needs more than the table (ConcernsOwnHandler; a test checks
// every handled kind has a handler or a Concerns); which senders are
// ignored is the table's OwnWrites column.
type eventHandler func(r *Router, ctx context.Context, ev *ghevent.Event) ([]Outcome, error)

var eventHandlers = map[string]eventHandler{
	"issues":                     (*Router).issues,
	"issue_comment":              (*Router).issueComment,
	"pull_request":               (*Router).pullRequest,
	"pull_request_review":        (*Router).pullReview,
	"workflow_run":               (*Router).workflowRun,
	"check_run":                  (*Router).checkClick,
	"merge_group":                (*Router).mergeGroupEvent,
	"deployment_protection_rule": (*Router).deploymentRule,
	"schedule":                   (*Router).sweepEvent,
	"workflow_dispatch":          (*Router).sweepEvent,
}

func (r *Router) sweepEvent(ctx context.Context, _ *ghevent.Event) ([]Outcome, error) {
	return r.Sweep(ctx)
}

func (r *Router) mergeGroupEvent(ctx context.Context, ev *ghevent.Event) ([]Outcome, error) {
	return nil, r.MergeGroup(ctx, ev)
}

// pullRequest re-reconciles the issues a PR links to.
func (r *Router) pullRequest(ctx context.Context, ev *ghevent.Event) ([]Outcome, error) {
	if ev.Action == "closed" {
		return nil, nil
	}
	return r.forLinked(ctx, ev.LinkedIssues, func(int) Trigger {
		t := Trigger{PRLinked: &events.PRLinked{PR: ev.Issue, URL: prURL(ev)}}
		if ev.Action == "opened" || ev.Action == "edited" {
			// The sender opened the PR or edited it: when the
			// description changed, they wrote it as delivered.
			t.PRLinked.Edit = &evidence.PullEdit{Sender: ev.Sender.Login, BodyChanged: ev.Action == "opened" || ev.BodyEdited, Delivered: ev.Body}
		}
		return t
	})
}

// pullReview hands a submitted review to the issues its PR links to.
func (r *Router) pullReview(ctx context.Context, ev *ghevent.Event) ([]Outcome, error) {
	if ev.Review == nil || ev.Pull == nil {
		return nil, nil
	}
	rv := ev.Review
	return r.forLinked(ctx, ev.LinkedIssues, func(int) Trigger {
		return Trigger{Review: &events.Review{ID: rv.ID, PR: ev.Issue, PRAuthor: ev.Pull.Author.Login, Reviewer: rv.Reviewer.Login, State: rv.State, Body: rv.Body, At: rv.SubmittedAt, URL: rv.URL, CommitSHA: rv.CommitSHA}}
	})
}

// checkClick routes a click on a button of the PR check to the issue its
// external_id names. Only this App's check runs count (GitHub sends a
// click to the App that created the run; AppID, when known, checks it).
// Action mode offers no buttons, so it ignores clicks.
// The engine applies it only to the gate that is open now.
func (r *Router) checkClick(ctx context.Context, ev *ghevent.Event) ([]Outcome, error) {
	a := ev.CheckAction
	if a == nil || !r.CheckButtons || len(ev.LinkedIssues) != 1 || r.AppID != 0 && a.AppID != r.AppID {
		return nil, nil
	}
	out, err := r.Issue(ctx, ev.LinkedIssues[0], Trigger{Click: &events.Click{Identifier: a.Identifier, Sender: ev.Sender.Login, URL: a.URL, At: r.Now()}})
	return []Outcome{out}, err
}

func prURL(ev *ghevent.Event) string {
	if ev.Pull != nil {
		return ev.Pull.URL
	}
	return ""
}

// HasTrigger reports the trigger label among labels.
func (r *Router) HasTrigger(labels []string) bool {
	for _, l := range labels {
		if l == r.TriggerLabel {
			return true
		}
	}
	return false
}

func snapshot(ev *ghevent.Event) *forge.Issue {
	return &forge.Issue{Number: ev.Issue, Title: ev.Title, Body: ev.Body, State: ev.IssueState, Labels: append([]string(nil), ev.Labels...), IsPR: ev.IsPR}
}

func (r *Router) issues(ctx context.Context, ev *ghevent.Event) ([]Outcome, error) {
	if ev.IsPR {
		return nil, nil
	}
	t := Trigger{Issue: snapshot(ev), Actor: ev.Sender.Login}
	switch ev.Action {
	case "labeled":
		if ev.Label != r.TriggerLabel {
			return nil, nil
		}
		t.Start, t.StartActor = true, ev.Sender.Login
	case "unlabeled":
		if ev.Label != r.TriggerLabel {
			return nil, nil
		}
		t.Unlabeled = true
	case "closed":
		if !r.HasTrigger(ev.Labels) {
			return nil, nil
		}
		t.Closed = true
	case "reopened":
		if !r.HasTrigger(ev.Labels) {
			return nil, nil
		}
	default:
		return nil, nil
	}
	out, err := r.Issue(ctx, ev.Issue, t)
	return []Outcome{out}, err
}

func (r *Router) issueComment(ctx context.Context, ev *ghevent.Event) ([]Outcome, error) {
	c := ev.Comment
	if c == nil {
		return nil, nil
	}
	if ev.Action == "edited" {
		// Edits never change a decision (decisions are keyed by the comment
		// as created). An edit of the bot's own comment by someone else may
		// be tampering with the state: reconcile to verify it.
		if r.Trusted(*c) && strings.HasPrefix(c.Body, state.Marker) && r.HasTrigger(ev.Labels) {
			out, err := r.Issue(ctx, ev.Issue, Trigger{Issue: snapshot(ev)})
			return []Outcome{out}, err
		}
		if !r.Trusted(*c) && strings.EqualFold(ev.Sender.Login, c.Author.Login) && engine.Parse(c.Body).Acts() {
			// The author edited their own comment: this delivery proves who
			// wrote the text, so a comment not processed yet may be applied
			// as edited (one processed already is not changed by an edit).
			if ev.IsPR {
				pr := ev.Issue
				return r.forLinked(ctx, ev.LinkedIssues, func(int) Trigger { return Trigger{PR: pr, AuthorEdit: c} })
			}
			if r.HasTrigger(ev.Labels) {
				out, err := r.Issue(ctx, ev.Issue, Trigger{Issue: snapshot(ev), AuthorEdit: c})
				return []Outcome{out}, err
			}
		}
		r.Logger.Info("comment edited (audit only)", "issue", ev.Issue, "comment", c.ID, "editor", ev.Sender.Login)
		return nil, nil
	}
	if r.Trusted(*c) {
		return nil, nil
	}
	if ev.IsPR {
		// Only a comment that could act (a command, an answer, or
		// something close to one that earns a reply) is worth reading the
		// linked issues for; PR chatter costs no API call. The sweep
		// classifies it later.
		if !engine.Parse(c.Body).Acts() {
			return nil, nil
		}
		pr := ev.Issue
		return r.forLinked(ctx, ev.LinkedIssues, func(int) Trigger { return Trigger{PR: pr} })
	}
	if !r.HasTrigger(ev.Labels) {
		return r.unmanaged(ctx, ev)
	}
	out, err := r.Issue(ctx, ev.Issue, Trigger{Issue: snapshot(ev), Comment: c})
	return []Outcome{out}, err
}

// unmanaged answers an /autopilot command on an issue autopilot does not
// manage (once, to a permitted user); anything else costs no API call. The
// engine decides, driven by the carrier loop (pass.Drive).
func (r *Router) unmanaged(ctx context.Context, ev *ghevent.Event) ([]Outcome, error) {
	c := ev.Comment
	set := machine.Settings{AnswerPermission: r.AnswerPermission, TriggerLabel: r.TriggerLabel, Repo: r.Forge.Repo()}
	n := pass.New(set, nil, pass.Options{Issue: ev.Issue})
	if err := n.Step(events.Unmanaged{ID: c.ID, Author: c.Author.Login, Bot: c.Author.IsBot(), Body: c.Body}, r.Now()); err != nil {
		return nil, err
	}
	look := func(login string) (access.Level, error) { return r.Forge.Permission(ctx, login) }
	return nil, pass.Drive(n, func() pass.Input { return pass.Input{Now: r.Now()} }, func(rd pass.Ready) error {
		for _, q := range rd.Queries {
			if q.Kind != events.QPerms {
				continue
			}
			if err := n.Step(q.AnswerPerms(look), r.Now()); err != nil {
				return err
			}
		}
		return r.replyUnmanaged(ctx, ev.Issue, rd.Effects)
	})
}

// replyUnmanaged posts the engine's replies on an unmanaged issue.
func (r *Router) replyUnmanaged(ctx context.Context, issue int, effects []state.Effect) error {
	for _, e := range effects {
		if r.DryRun {
			r.Print(fmt.Sprintf("dry-run: would reply on #%d:\n%s", issue, e.Body))
			continue
		}
		if _, err := r.Forge.CreateComment(ctx, issue, e.Body); err != nil {
			return fmt.Errorf("reply on #%d: %w", issue, err)
		}
	}
	return nil
}

// forLinked reconciles each linked issue that carries the trigger label.
func (r *Router) forLinked(ctx context.Context, issues []int, mk func(int) Trigger) ([]Outcome, error) {
	var outs []Outcome
	var errs []error
	for _, n := range issues {
		is, err := r.Forge.GetIssue(ctx, n)
		if err != nil {
			if errors.Is(err, forge.ErrNotFound) {
				continue
			}
			errs = append(errs, fmt.Errorf("read linked issue #%d: %w", n, err))
			continue
		}
		if is.IsPR || !r.HasTrigger(is.Labels) {
			continue
		}
		t := mk(n)
		t.Issue = &is
		out, err := r.Issue(ctx, n, t)
		outs = append(outs, out)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return outs, errors.Join(errs...)
}

// workflowRun routes a completed workflow run. A run autopilot dispatched
// is matched to its issue through the session token in its display title
// ("autopilot ap-<issue>-<step>-…"); the engine then matches it exactly
// (engine.MatchRun: the recorded run id, or the token under strict
// conditions when none was recorded). Any other run that ran on pull requests' heads (CI) makes
// autopilot read those PRs' evidence again for the issues they link.
// Runs of neither kind cost no API call.
func (r *Router) workflowRun(ctx context.Context, ev *ghevent.Event) ([]Outcome, error) {
	wr := ev.WorkflowRun
	if wr == nil {
		return nil, nil
	}
	if n, ok := sessionIssue(wr.DisplayTitle); ok {
		out, err := r.Issue(ctx, n, Trigger{Run: &events.RunCompleted{RunID: wr.ID, DisplayTitle: wr.DisplayTitle, Conclusion: wr.Conclusion, URL: wr.URL,
			Path: wr.Path, Event: wr.Event, HeadRepo: wr.HeadRepo, CreatedAt: wr.CreatedAt}})
		return []Outcome{out}, err
	}
	var outs []Outcome
	var errs []error
	for _, pr := range ev.RunPRs {
		p, err := r.Forge.GetPull(ctx, pr)
		if errors.Is(err, forge.ErrNotFound) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("read PR #%d of workflow run %d: %w", pr, wr.ID, err))
			continue
		}
		o, err := r.forLinked(ctx, ghevent.LinkedIssues(p.Body), func(int) Trigger {
			return Trigger{PRLinked: &events.PRLinked{PR: pr, URL: p.URL}}
		})
		outs = append(outs, o...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return outs, errors.Join(errs...)
}

// sessionIssue finds the issue number in a session token of a display
// title ("autopilot ap-12-implement-c1-a1-s7" → 12).
func sessionIssue(title string) (int, bool) {
	for _, f := range strings.Fields(title) {
		rest, ok := strings.CutPrefix(f, "ap-")
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(rest, "-")
		if n, err := strconv.Atoi(num); err == nil && n > 0 {
			return n, true
		}
	}
	return 0, false
}

// Sweep reconciles every open issue with the trigger label: it catches up
// missed events, fires executor timeouts and wall-clock limits, and stops
// early (saying so) when the API budget runs low (SweepEach, each issue
// reconciled by Issue: the Action's sweep).
func (r *Router) Sweep(ctx context.Context) ([]Outcome, error) {
	return r.SweepEach(ctx, Sweeping{})
}

// Sweeping is how a caller of SweepEach runs each issue.
type Sweeping struct {
	// Run reconciles one issue (nil: Router.Issue). The App runs it under
	// the issue's lease.
	Run func(ctx context.Context, number int, t Trigger) (Outcome, error)
	// Reread: the trigger carries no snapshot of the listing, so the issue
	// is read again when reconciled (under a lease taken after the
	// listing, which may be stale by then).
	Reread bool
	// Stop reports an error after which the sweep stops (nil: none; each
	// issue's error is reported and the next is swept).
	Stop func(error) bool
}

// SweepEach is the one sweep loop, the Action's and the App's: every open
// issue with the trigger label (a run is started where none exists: its
// labeled delivery was lost), then every open issue whose labels say a
// run is active but whose trigger label is gone (the run is stopped;
// looked up after the labelled issues, so a low budget goes to those
// first). The configuration is read once for the whole sweep. A low API
// budget stops it, saying so in an outcome without an issue.
func (r *Router) SweepEach(ctx context.Context, how Sweeping) ([]Outcome, error) {
	list, err := r.Forge.ListOpenIssues(ctx, r.TriggerLabel)
	if err != nil {
		return nil, fmt.Errorf("sweep: list issues: %w", err)
	}
	if how.Run == nil {
		how.Run = r.Issue
	}
	sw := &sweeping{r: r, how: how}
	sw.run(ctx, list)
	if !sw.stopped {
		more, err := r.unlabeledRuns(ctx)
		if err != nil {
			sw.errs = append(sw.errs, err)
		}
		sw.run(ctx, more)
	}
	return sw.outs, errors.Join(sw.errs...)
}

// sweepTrigger is the sweep's trigger for a listed issue.
func (r *Router) sweepTrigger(is forge.Issue) Trigger {
	t := Trigger{Sweep: true, Issue: &is, Adopt: true}
	if !r.HasTrigger(is.Labels) {
		t.Adopt, t.Unlabeled = false, true
	}
	return t
}

// sweeping carries one sweep over its lists of issues.
type sweeping struct {
	r       *Router
	how     Sweeping
	cfg     *repofiles.Config // read once for the whole sweep, not per issue
	outs    []Outcome
	errs    []error
	stopped bool // the API budget ran low, or how.Stop said so
}

func (sw *sweeping) run(ctx context.Context, list []forge.Issue) {
	r := sw.r
	if sw.stopped {
		return
	}
	if len(list) > 0 && r.Config == nil && sw.cfg == nil {
		c, err := repofiles.ReadConfig(ctx, r.Forge, r.ConfigPath)
		if err != nil {
			sw.errs = append(sw.errs, fmt.Errorf("sweep: %w", err))
			sw.stopped = true
			return
		}
		sw.cfg = c
	}
	for i := range list {
		if r.BudgetLow != nil && r.BudgetLow() {
			var left []string
			for j, is := range list[i:] {
				if j == 10 {
					left = append(left, "…")
					break
				}
				left = append(left, fmt.Sprintf("#%d", is.Number))
			}
			sw.outs = append(sw.outs, Outcome{Notes: []string{fmt.Sprintf("sweep stopped early: the API rate budget is nearly spent; %d of %d issues left for the next sweep (%s)",
				len(list)-i, len(list), strings.Join(left, ", "))}})
			sw.stopped = true
			return
		}
		t := r.sweepTrigger(list[i])
		t.SweepConfig = sw.cfg
		if sw.how.Reread {
			t.Issue = nil
		}
		out, err := sw.how.Run(ctx, list[i].Number, t)
		sw.outs = append(sw.outs, out)
		if err != nil {
			sw.errs = append(sw.errs, fmt.Errorf("#%d: %w", list[i].Number, err))
			if sw.how.Stop != nil && sw.how.Stop(err) {
				sw.stopped = true
				return
			}
		}
	}
}

// unlabeledRuns lists open issues whose labels say a run is active but that
// lack the trigger label (one list call per active status).
func (r *Router) unlabeledRuns(ctx context.Context) ([]forge.Issue, error) {
	var out []forge.Issue
	seen := map[int]bool{}
	for _, st := range []state.RunStatus{state.RunInProgress, state.RunAwaitingDecision, state.RunFailed} {
		list, err := r.Forge.ListOpenIssues(ctx, "autopilot/status:"+string(st))
		if err != nil {
			return nil, fmt.Errorf("sweep: list issues with status %s: %w", st, err)
		}
		for _, is := range list {
			if !seen[is.Number] && !r.HasTrigger(is.Labels) {
				seen[is.Number] = true
				out = append(out, is)
			}
		}
	}
	return out, nil
}
