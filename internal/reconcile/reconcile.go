// Package reconcile turns "something happened on issue N" into a converged
// issue: it re-reads the state comment, the comments since the ledger and
// the labels, feeds every unhandled input to the pure engine, writes the new
// state (re-reading its version first) and only then performs the effects,
// each idempotent by its hidden marker. Dropped, duplicated, reordered and
// replayed events are therefore harmless. Action mode and App mode share it.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/pass"
	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/grammar"
	"github.com/autopilot-dev/autopilot/internal/reconcile/comments"
	"github.com/autopilot-dev/autopilot/internal/reconcile/load"
	"github.com/autopilot-dev/autopilot/internal/reconcile/repofiles"
	"github.com/autopilot-dev/autopilot/internal/reconcile/route"
	"github.com/autopilot-dev/autopilot/internal/reconcile/trackersync"
	"github.com/autopilot-dev/autopilot/internal/reconcile/writes"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// Options configures a Reconciler.
type Options struct {
	Forge   forge.Forge
	Tracker tracker.Tracker // nil when Jira is not configured
	// TrackerFor, when set, builds the tracker from the repository's jira:
	// settings (field ids, issue types); it overrides Tracker.
	TrackerFor func(config.Jira) (tracker.Tracker, error)
	// Config, when set, is used instead of reading ConfigPath from the repo.
	Config     *config.Config
	ConfigPath string
	// AnswerPermission is the baseline (action input); the repository
	// config may raise it, never lower it.
	AnswerPermission access.Level
	TriggerLabel     string
	// BotLogin is the only author whose state comments are trusted; AppID,
	// when non-zero, must also match performed_via_github_app.id.
	BotLogin string
	AppID    int64
	StateKey []byte
	Now      func() time.Time
	Logger   *slog.Logger
	DryRun   bool
	// BudgetLow reports that the API budget is nearly spent.
	BudgetLow func() bool
	// Lease, when set, runs fn holding issue's lease (the App: an event
	// whose issue is found only while routing, a deployment
	// protection-rule request, is reconciled under it like any other).
	Lease func(ctx context.Context, issue int, fn func(context.Context) error) error
	// ClaimSettle, when positive, is how long a pass waits after writing the
	// state that claims Jira creates before it reads the comment back and
	// sends them: a run that overlaps this one (no concurrency group) and
	// passed the same version re-read has written by then, and only the
	// write that stands creates (no duplicate Jira issue). See
	// DefaultClaimSettle.
	ClaimSettle time.Duration
	// WriteID returns the random id of each state write (State.WriteID);
	// nil means crypto/rand. The demo makes it deterministic.
	WriteID func() string
	// TrackerSleep and TrackerMaxWait bound waits inside a tracker sync.
	TrackerSleep   func(context.Context, time.Duration) error
	TrackerMaxWait time.Duration
	// Print receives dry-run output.
	Print func(string)
	// CheckButtons offers a Choose block's options as buttons on the PR
	// check (App mode: GitHub sends the clicks to the App only).
	CheckButtons bool
	// Carry, when set, gives engine events the entry point adds to every
	// pass of issue (App mode: a sweep pass of it the GitHub budget cut,
	// events.BackgroundHeld), applied after the trigger's own.
	Carry func(ctx context.Context, issue int) []events.Event
}

// Reconciler reconciles issues of one repository.
type Reconciler struct {
	o   Options
	cfg *config.Config
	// spare is a write id drawn for a pass that wrote nothing: the next
	// pass uses it, so ids are drawn in the order writes use them.
	mu    sync.Mutex
	spare string
}

// takeID is the id of a state write: the spare one, else a new one.
func (r *Reconciler) takeID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id := r.spare; id != "" {
		r.spare = ""
		return id
	}
	return r.o.WriteID()
}

// giveBackID keeps the id ru drew and no write used for the next pass.
func (r *Reconciler) giveBackID(ru *run) {
	if ru.writeID == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.spare == "" {
		r.spare = ru.writeID
	}
	ru.writeID = ""
}

// New checks options and returns a Reconciler.
func New(o Options) (*Reconciler, error) {
	if o.Forge == nil {
		return nil, errors.New("reconcile: no forge")
	}
	if o.TriggerLabel == "" {
		o.TriggerLabel = "autopilot"
	}
	if o.ConfigPath == "" {
		o.ConfigPath = config.DefaultPath
	}
	if o.AnswerPermission == "" {
		o.AnswerPermission = access.Write
	}
	if o.BotLogin == "" {
		o.BotLogin = "github-actions[bot]"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.WriteID == nil {
		o.WriteID = writes.NewID
	}
	if o.Print == nil {
		o.Print = func(string) {}
	}
	return &Reconciler{o: o, cfg: o.Config}, nil
}

// ErrConflict means the state comment changed between read and write.
var ErrConflict = errors.New("state comment changed during the run")

// errRecheck: the write went through, but the comments read back show a
// concurrent run's write or a comment this pass did not see; one more pass
// makes sure nothing is lost.
var errRecheck = fmt.Errorf("%w (seen after writing)", ErrConflict)

// maxPasses bounds the passes of one Issue call.
const maxPasses = 3

// Issue reconciles one issue, re-applying on a version conflict.
func (r *Reconciler) Issue(ctx context.Context, number int, t route.Trigger) (route.Outcome, error) {
	if r.o.Carry != nil {
		t.Events = append(slices.Clip(t.Events), r.o.Carry(ctx, number)...)
	}
	var out route.Outcome
	var done *route.Outcome // what earlier passes wrote stands
	var err error
	own := ""
	for pass := 1; ; pass++ {
		out, err = r.once(ctx, number, t, &own, pass == maxPasses)
		if done != nil {
			out.Wrote = true
			out.Notes = append(done.Notes, out.Notes...)
			out.StepBefore = done.StepBefore
			if out.Decision == "" {
				out.Decision = done.Decision
			}
		}
		if errors.Is(err, errRecheck) {
			o := out
			done = &o
		}
		if !errors.Is(err, ErrConflict) {
			return out, err
		}
		if pass == maxPasses {
			if errors.Is(err, errRecheck) {
				// The writes are done; what the read-back found is caught
				// up by that comment's own event or the next sweep.
				r.o.Logger.Warn("state still moving after the last pass; leaving it to the next event", "issue", number)
				return out, nil
			}
			return out, err
		}
		r.o.Logger.Warn("state conflict, re-applying", "issue", number, "pass", pass+1, "err", err)
	}
}

// run is one reconcile pass over an issue.
type run struct {
	r      *Reconciler
	ctx    context.Context
	number int
	set    machine.Settings
	loaded *load.Loaded
	// node is the engine's side of the pass: it holds the state as the
	// events left it and decides what to do next (pass.Node.Ready).
	node engineNode
	// writeID is the id the next state write carries (pass.Input).
	writeID string
	wrote   bool
	notes   []string
	perms   comments.Perms
	tracker tracker.Tracker
	caps    tasksync.Caps // the tracker's registration (trackersync.Registry)
	// sweep: this pass is the scheduled catch-up (Jira statuses are read back).
	sweep bool
	// before is the current step of the state as read (Outcome.StepBefore).
	before string
	// freshConfig: the configuration was read through the API this run
	// (configRaw is its text, kept in the state).
	freshConfig bool
	configRaw   string
	// own is the state body an earlier pass of this Issue call wrote.
	own string
	// rollback: the state read is older than the bot's own comments (its
	// write goes above every version they name).
	rollback bool
	// posted maps the comments this pass created to their markers.
	posted map[int64]string
	// wroteID and wroteBody are the state comment this pass wrote.
	wroteID   int64
	wroteBody string
	// authorEdit is the trigger's proof of an edit by a comment's author.
	authorEdit *forge.Comment
	// prSeen are the linked PRs' comments read (they bound the watermark).
	prSeen []forge.Comment
	// slowWrite: a state write came slowly after its re-read; the pass is
	// read back even if it posted nothing (verify).
	slowWrite bool
	// checks are the PR check runs the node planned, created after the
	// state write.
	checks []checkview.CheckRun
	// pulls are the PRs read this pass.
	pulls map[int]forge.Pull
	// last: the Issue call's last pass (checkVersion).
	last bool
	// parsed caches each comment's reply (parse).
	parsed comments.Parser
	// outside: the pass sent requests elsewhere than the forge (the
	// tracker), which the forge's request count does not show
	// (loadIsReread).
	outside bool
	// starting: a start was stepped in (the engine may hold it while it
	// reads which flow to run; what follows is stepped in after it).
	starting bool
}

func (r *Reconciler) once(ctx context.Context, number int, t route.Trigger, own *string, last bool) (route.Outcome, error) {
	ru := &run{r: r, ctx: ctx, perms: comments.Perms{Forge: r.o.Forge, Logger: r.o.Logger}, number: number, sweep: t.Sweep, own: *own, posted: map[int64]string{}, authorEdit: t.AuthorEdit, last: last}
	defer func() {
		if ru.wroteBody != "" {
			*own = ru.wroteBody
		}
	}()
	pre, err := ru.prefetch(t)
	if err != nil {
		return route.Outcome{Issue: number}, err
	}
	ld, err := r.loader().Load(ctx, number, t.Issue, t.Start || t.Adopt)
	if err != nil {
		return route.Outcome{Issue: number}, err
	}
	ru.loaded = ld
	if ld.State != nil {
		ru.before = ld.State.Slug
	}
	cfg, err := ru.config(t.Start || t.Sweep, t.SweepConfig)
	if err != nil {
		return route.Outcome{Issue: number}, err
	}
	if err := ru.start(cfg); err != nil {
		return ru.outcome(), err
	}
	for _, ev := range pre {
		if err := ru.step(ev); err != nil {
			return ru.outcome(), err
		}
	}
	if err := ru.collect(t); err != nil {
		return ru.outcome(), err
	}
	if (ru.state() != nil || ru.starting) && ru.freshConfig {
		// Kept in the state, so later events need not read it again.
		if err := ru.apply(events.ConfigRead{YAML: ru.configRaw}); err != nil {
			return ru.outcome(), err
		}
	}
	if err := ru.settle(); err != nil {
		return ru.outcome(), err
	}
	return ru.outcome(), nil
}

// start builds the pass's settings and its engine node, and tells the
// engine what the load found wrong with the state (load.Loaded.Recover).
func (ru *run) start(cfg *config.Config) error {
	r := ru.r
	perm := r.o.AnswerPermission
	if cfg.AnswerPermission != "" {
		if p := access.Level(cfg.AnswerPermission); p.AtLeast(perm) {
			perm = p
		}
	}
	src := trackersync.Source{SubIssues: trackersync.SubIssueAPI(r.o.Forge), Now: r.o.Now, TrackerFor: r.o.TrackerFor, Tracker: r.o.Tracker,
		BotLogin: r.o.BotLogin, AppID: r.o.AppID, MaxWait: r.o.TrackerMaxWait}
	var err error
	if ru.tracker, ru.caps, err = src.For(cfg, ru.loaded.State, ru.number); err != nil {
		return &repofiles.ConfigError{Path: r.o.ConfigPath, Err: err}
	}
	ru.set = machine.Settings{Config: cfg, AnswerPermission: perm, TrackerConfigured: ru.tracker != nil, SubIssues: src.SubIssues != nil, Repo: r.o.Forge.Repo(), TriggerLabel: r.o.TriggerLabel}
	if r.o.BudgetLow != nil {
		ru.set.BudgetLow = r.o.BudgetLow()
	}
	rc := ru.loaded.Recover()
	_, checks := r.o.Forge.(forge.CheckWriter)
	ru.node = newNode(ru.set, ru.loaded.State, pass.Options{
		Issue: ru.number, Sweep: ru.sweep, Closed: ru.loaded.Issue.State == "closed", Tracker: ru.caps,
		Checks: checks && !r.o.DryRun, Buttons: r.o.CheckButtons, Rewrite: rc.Rollback, MaxVersion: ru.loaded.MaxVersion,
		Posted: ru.loaded.Posted(), Signed: len(r.o.StateKey) > 0,
	})
	return ru.recover(rc)
}

// engineNode is the engine's side of a pass as the carrier uses it
// (pass.Node): events and outcomes in (Step), what to do out (Ready,
// acknowledged with Advance), and reads of the state as the events left
// it.
type engineNode interface {
	Step(ev any, now time.Time) error
	Ready(pass.Input) (pass.Ready, error)
	Advance(pass.Ready)
	State() *state.State
	Decision() string
}

// newNode starts the engine's side of a pass (a test counts its calls
// through it).
var newNode = func(set machine.Settings, st *state.State, opt pass.Options) engineNode {
	return pass.New(set, st, opt)
}

// state is the state as the events so far left it (the one read before
// the node exists).
func (ru *run) state() *state.State {
	if ru.node == nil {
		return ru.loaded.State
	}
	return ru.node.State()
}

func (ru *run) outcome() route.Outcome {
	o := route.Outcome{Issue: ru.number, Wrote: ru.wrote, Notes: ru.notes, StepBefore: ru.before}
	if ru.node != nil {
		o.Decision = ru.node.Decision()
	}
	if s := ru.state(); s != nil {
		o.Flow, o.Step, o.Status, o.Version = s.Flow, s.Slug, string(s.Run), s.Version
		if s.Stop != nil {
			o.Stop = s.Stop.Reason
		}
		o.State = s
	}
	if ld := ru.loaded; ld != nil {
		o.Listed, o.URL = ld.Issue.State != "closed" && ru.r.hasTrigger(ld.Issue.Labels), ld.Issue.URL
	}
	return o
}

// apply feeds one event to the engine.
func (ru *run) apply(ev events.Event) error { return ru.node.Step(ev, ru.r.o.Now()) }

// collect turns the trigger and every unhandled comment into engine
// events: a start first, then the comments in creation order, then what
// the trigger reports.
func (ru *run) collect(t route.Trigger) error {
	if err := ru.startIfAsked(t); err != nil {
		return err
	}
	if ru.state() == nil && !ru.starting {
		return nil
	}
	if err := ru.applyComments(t); err != nil {
		return err
	}
	return ru.applyTrigger(t)
}

// startIfAsked starts a run when the trigger asks for one (or the sweep
// adopts a labelled issue without state) and no run is going.
func (ru *run) startIfAsked(t route.Trigger) error {
	ld := ru.loaded
	// The sweep decided from a listing; the issue as read now has the last
	// word (its label may have come back or gone since).
	adopt := t.Adopt && ru.state() == nil && !ld.Lost && ld.Tampered == "" && ru.r.hasTrigger(ld.Issue.Labels)
	if !adopt && !(t.Start && (ru.state() == nil || ru.state().Run == state.RunStopped || ru.state().Run == state.RunDone)) {
		return nil
	}
	// A flow label names the flow; without one the engine picks it (the
	// default, or detection: pass.Node asks for the repository's files).
	is := ld.Issue
	ru.starting = true
	return ru.apply(events.Start{Flow: repofiles.LabelFlow(is.Labels, ru.set.Config), Issue: ru.number, Actor: t.StartActor, Title: is.Title, Body: is.Body, URL: is.URL, SeqFloor: ld.MaxSeq})
}

// applyComments applies every unhandled comment of the issue and of the
// linked PRs worth reading, in creation order.
func (ru *run) applyComments(t route.Trigger) error {
	cs := append([]forge.Comment(nil), ru.loaded.Human...)
	prComments, err := ru.prComments(t)
	if err != nil {
		return err
	}
	cs = append(cs, prComments...)
	comments.InOrder(cs)
	for _, c := range cs {
		if s := ru.state(); s != nil && outbox.Handled(s, c.ID) {
			continue
		}
		if err := ru.apply(ru.commentEvent(c)); err != nil {
			return err
		}
	}
	return nil
}

// applyTrigger applies what the trigger itself reports, with the facts
// each event needs (permissions, the PR as it is now).
func (ru *run) applyTrigger(t route.Trigger) error {
	var evs []events.Event
	if t.Review != nil {
		// The engine asks for the reviewer's permission and the PR as it
		// is now (the payload's may be stale: a push since).
		evs = append(evs, *t.Review)
	}
	if t.Click != nil {
		evs = append(evs, *t.Click)
	}
	if t.Run != nil {
		if ok, why := engine.MatchRun(ru.set, ru.state(), *t.Run); !ok {
			// Not this step's run (or a forged one): logged, nothing else.
			ru.r.o.Logger.Info("workflow run ignored", "issue", ru.number, "run", t.Run.RunID, "why", why)
		}
		evs = append(evs, *t.Run)
	}
	if err := ru.applyAll(evs...); err != nil {
		return err
	}
	if t.PRLinked != nil {
		if err := ru.applyLinked(*t.PRLinked); err != nil {
			return err
		}
	}
	evs = append([]events.Event(nil), t.Events...) // carried as they are (route.Trigger.Events)
	if t.PR != 0 && !linked(ru.state(), t.PR) {
		evs = append(evs, events.PRLinked{PR: t.PR})
	}
	if t.Unlabeled && !(t.Sweep && ru.r.hasTrigger(ru.loaded.Issue.Labels)) {
		evs = append(evs, events.LabelRemoved{Actor: t.Actor})
	}
	if t.Closed {
		evs = append(evs, events.Closed{Actor: t.Actor})
	}
	if t.Sweep {
		evs = append(evs, events.Tick{BudgetLow: ru.set.BudgetLow})
	}
	return ru.applyAll(evs...)
}

func (ru *run) applyAll(evs ...events.Event) error {
	for _, ev := range evs {
		if err := ru.apply(ev); err != nil {
			return err
		}
	}
	return nil
}

// applyLinked applies a PR that links the issue, with whether the
// delivered description links it (the engine asks for who wrote it and
// for the description now, then reads the PR for its check).
func (ru *run) applyLinked(e events.PRLinked) error {
	if e.Edit != nil {
		ed := *e.Edit
		ed.Links = slices.Contains(ghevent.LinkedIssues(ed.Delivered), ru.number)
		e.Edit = &ed
	}
	return ru.apply(e)
}

// prComments reads the conversations of linked PRs that may hold unhandled
// answers (engine.LinkedPRsToRead): on a sweep or when an issue comment is about to
// be applied, every PR the state knows. The bot's own comments are left
// out; a PR that is gone is skipped.
func (ru *run) prComments(t route.Trigger) ([]forge.Comment, error) {
	prs := engine.LinkedPRsToRead(t.PR, ru.number, ru.state(), t.Sweep || ru.pendingInput())
	out, err := comments.ReadPRs(prs, ru.listPR, ru.r.trusted)
	ru.prSeen = append(ru.prSeen, out...)
	return out, err
}

// pendingInput reports an unhandled issue comment that could act.
func (ru *run) pendingInput() bool {
	if ru.state() == nil {
		return false // a start the engine holds: no PR linked yet
	}
	return comments.Pending(ru.loaded.Human, ru.state(), ru.parse)
}

// parse parses a comment's body once per pass (comments.Parser).
func (ru *run) parse(c forge.Comment) grammar.Result { return ru.parsed.Parse(c) }

func linked(s *state.State, pr int) bool {
	if s == nil {
		return false
	}
	for _, n := range s.LinkedPRs {
		if n == pr {
			return true
		}
	}
	return false
}

// commentEvent builds the engine's view of a comment (comments.Event).
func (ru *run) commentEvent(c forge.Comment) events.Comment {
	return comments.Event(comments.Sources{Issue: ru.number, Config: ru.set.Config,
		AuthorEdit: ru.authorEdit, Parse: ru.parse, Replied: ru.replied}, ru.state(), c)
}

// replied reports whether the bot already replied to comment id.
func (ru *run) replied(id int64) bool {
	_, ok := ru.loaded.Markers[comments.ReplyMarker(id)]
	return ok
}

// config returns the repository configuration (repofiles.Current): read
// through the API when a run starts, once per sweep, and whenever the state
// holds no copy; else the copy the state carries.
func (ru *run) config(fresh bool, sw *repofiles.Config) (*config.Config, error) {
	sc, err := repofiles.Current(ru.ctx, ru.r.o.Forge, ru.r.o.ConfigPath, ru.r.cfg, sw, ru.loaded.State, fresh)
	if err != nil {
		return nil, err
	}
	ru.freshConfig, ru.configRaw = sc.Keep, sc.Raw
	return sc.Config, nil
}

// readConfig reads and parses the configuration file through the API
// (repofiles.ReadConfig).
func (r *Reconciler) readConfig(ctx context.Context) (*repofiles.Config, error) {
	return repofiles.ReadConfig(ctx, r.o.Forge, r.o.ConfigPath)
}
