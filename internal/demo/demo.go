// Package demo runs a complete autopilot scenario on the in-process sandbox
// forge and sandbox Jira: no network, no token, a fixed clock and fixed ids,
// so its transcript is deterministic and golden-tested. Every step goes
// through the same reconcile path the Action and the App use.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/reconcile"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// Options selects the scenario and the output.
type Options struct {
	Flow string // greenfield (default), existing-code, meta-repo, review-loop
	// Jira configures the sandbox Jira. Its token is refused at first, so
	// the run asks "Jira authentication failed"; the token is fixed and the
	// retry succeeds. Without it Jira is not configured: no question, tasks
	// stay in the issue.
	Jira bool
	// Tracker is where the tasks go: "" (the issue only, unless Jira is
	// set), "local" (the issue only), "jira" (as Jira), "github" (sub-issues
	// of the issue on the sandbox forge). With Jira set it may only be ""
	// or "jira".
	Tracker string
	JSON    bool // machine-readable transcript
	Quiet   bool // summary only
}

// UsageError is a bad option (exit code 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Entry is one line of the transcript.
type Entry struct {
	At    time.Time `json:"at"`
	Actor string    `json:"actor"`
	Kind  string    `json:"kind"` // open, comment, state, label+, label-, react, dispatch, pr, review, checks, jira
	// Run numbers the bot's pass (the event) an entry of the bot belongs to.
	Run    int    `json:"run,omitempty"`
	Issue  int    `json:"issue,omitempty"`
	Body   string `json:"body,omitempty"`
	Label  string `json:"label,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Summary is the closing table.
type Summary struct {
	Flow           string         `json:"flow"`
	Status         string         `json:"status"`
	StepsCompleted int            `json:"steps_completed"`
	StepsSkipped   int            `json:"steps_skipped"`
	Decisions      []string       `json:"decisions"`
	CommentsPosted int            `json:"comments_posted"`
	StateVersion   int64          `json:"state_version"`
	Tasks          int            `json:"tasks"`
	TasksPending   int            `json:"tasks_pending"` // not in their tracker yet
	JiraIssues     int            `json:"jira_issues"`
	SubIssues      int            `json:"sub_issues,omitempty"`
	APICalls       map[string]int `json:"api_calls"`
	APICallsTotal  int            `json:"api_calls_total"`
	Runs           int            `json:"runs"`
}

// Transcript is the --json output.
type Transcript struct {
	Entries []Entry `json:"entries"`
	Summary Summary `json:"summary"`
	State   string  `json:"final_state_comment"`
}

const (
	repo = "acme/reports"
	bot  = "github-actions[bot]"
)

// world is the sandbox a scenario runs in.
type world struct {
	sb   *forge.Sandbox
	tr   *tracker.Sandbox
	jira bool // the sandbox Jira is configured
	// subIssues: tracker github, tasks become sub-issues on the forge.
	subIssues bool
	rec       *reconcile.Reconciler
	clock     time.Time
	entries   []Entry
	writes    int // state writes, for deterministic write ids
	issue     int
	runs      int
	posted    int
	lastVer   int64
	err       error
	subs      int // sub-issues the bot created
}

func (w *world) now() time.Time { return w.clock }

// tick advances the fixed clock.
func (w *world) tick(d time.Duration) { w.clock = w.clock.Add(d) }

// Run executes the scenario and writes the transcript to out.
func Run(ctx context.Context, o Options, out io.Writer) (Transcript, error) {
	if o.Flow == "" {
		o.Flow = "greenfield"
	}
	cfg, err := scenarioConfig(&o)
	if err != nil {
		return Transcript{}, err
	}
	w, err := newWorld(o, cfg)
	if err != nil {
		return Transcript{}, err
	}
	switch o.Flow {
	case "greenfield":
		w.greenfield(ctx)
	default:
		w.generic(ctx, o.Flow)
	}
	if w.err != nil {
		return Transcript{}, w.err
	}
	t := w.transcript()
	return t, w.print(out, o, t)
}

// scenarioConfig is the repository configuration the scenario runs with:
// the defaults, the roles the review loop needs, and the tracker asked for
// (o.Tracker "jira" sets o.Jira).
func scenarioConfig(o *Options) (*config.Config, error) {
	cfg := config.Default()
	if _, ok := cfg.All[o.Flow]; !ok {
		return nil, &UsageError{fmt.Sprintf("unknown flow %q (have %s)", o.Flow, strings.Join(cfg.All.Names(), ", "))}
	}
	if o.Flow == "review-loop" {
		var err error
		cfg, err = config.Parse([]byte("roles:\n  architect: [ada]\n  critic: [grace]\n"))
		if err != nil {
			return nil, err
		}
	}
	if o.Jira && o.Tracker != "" && o.Tracker != config.TrackerJira {
		return nil, &UsageError{fmt.Sprintf("--jira and --tracker %s contradict each other: --jira sends the tasks to the sandbox Jira (as --tracker jira); pass one of them", o.Tracker)}
	}
	switch o.Tracker {
	case "", config.TrackerLocal:
	case config.TrackerJira:
		o.Jira = true
	case config.TrackerGitHub:
		c := *cfg
		c.Tracker, c.CloseChildren = config.TrackerGitHub, true
		cfg = &c
	default:
		return nil, &UsageError{fmt.Sprintf("unknown tracker %q (have jira, github, local)", o.Tracker)}
	}
	return cfg, nil
}

// newWorld builds the sandbox forge with the scenario's people, the
// sandbox Jira (its token refused at first) and the reconciler on both.
func newWorld(o Options, cfg *config.Config) (*world, error) {
	w := &world{clock: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC), subIssues: o.Tracker == config.TrackerGitHub}
	w.sb = forge.NewSandbox(repo, forge.User{Login: bot, ID: 41898282, Type: "Bot"}, w.now)
	w.sb.OnChange = w.record
	w.jira = o.Jira
	w.tr = tracker.NewSandbox(tracker.SandboxOptions{Project: "REP", Now: w.now})
	var tr tracker.Tracker
	if o.Jira {
		w.tr.SetAuth(false) // the first check fails: the token has expired
		tr = w.tr
	}
	for _, u := range []struct {
		login string
		perm  access.Level
	}{{"maria", access.Admin}, {"devin", access.Write}, {"ada", access.Maintain}, {"grace", access.Write}, {"drive-by", access.Read}} {
		w.sb.AddUser(forge.User{Login: u.login}, u.perm)
	}
	var err error
	w.rec, err = reconcile.New(reconcile.Options{
		Forge: w.sb, Tracker: tr, Config: cfg, BotLogin: bot, Now: w.now,
		StateKey:     []byte("demo-state-key"),
		TrackerSleep: func(context.Context, time.Duration) error { return nil },
		// Deterministic, so the transcript (and its --json state) repeats.
		WriteID: func() string { w.writes++; return fmt.Sprintf("demo-%04d", w.writes) },
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// print writes the transcript as o asks: JSON, the summary alone, or the
// whole conversation.
func (w *world) print(out io.Writer, o Options, t Transcript) error {
	switch {
	case o.JSON:
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(t)
	case o.Quiet:
		printSummary(out, t.Summary)
	default:
		printTranscript(out, w, t)
	}
	return nil
}

// record turns sandbox changes into transcript entries.
func (w *world) record(c forge.Change) {
	e := Entry{At: c.At, Actor: c.Actor, Kind: c.Kind, Issue: c.Issue, Label: c.Label}
	if c.Actor == bot {
		e.Run = w.runs
	}
	switch c.Kind {
	case "comment":
		if c.Actor == bot {
			w.posted++
		}
		if strings.HasPrefix(c.Comment.Body, state.Marker) {
			e.Kind = "state"
			e.Detail = w.stateLine(c.Comment.Body)
			break
		}
		e.Body = c.Comment.Body
	case "edit":
		if !strings.HasPrefix(c.Comment.Body, state.Marker) {
			return
		}
		e.Kind = "state"
		e.Detail = w.stateLine(c.Comment.Body)
	case "react":
		e.Detail = c.Content + " on @" + c.Comment.Author.Login + "'s comment"
	case "dispatch":
		e.Detail = c.Content
	case "issue":
		e.Detail = fmt.Sprintf("#%d “%s”", c.Issue, c.Content)
		if c.Actor == bot {
			w.subs++
		}
	}
	w.entries = append(w.entries, e)
}

func (w *world) stateLine(body string) string {
	s, err := codec.Parse(body, codec.Want{Repo: repo, Issue: w.issue, Key: []byte("demo-state-key")})
	if err != nil {
		return "state comment (unreadable: " + err.Error() + ")"
	}
	w.lastVer = s.Version
	line := fmt.Sprintf("v%d · %s", s.Version, s.Run)
	if s.Step > 0 {
		line += fmt.Sprintf(" · step %d %s (%s)", s.Step, s.Name, s.Status)
	}
	if s.RetryCount > 0 {
		line += fmt.Sprintf(" · retry %d/3", s.RetryCount)
	}
	if n := tasksync.PendingCount(s); n > 0 {
		line += fmt.Sprintf(" · %s: pending (%d)", state.TrackerLabel(s.TrackerInUse), n)
	}
	return line
}

// say posts a human comment and delivers the issue_comment event.
func (w *world) say(ctx context.Context, who, body string) {
	if w.err != nil {
		return
	}
	w.tick(2 * time.Minute)
	c, err := w.sb.Comment(who, w.issue, body)
	if err != nil {
		w.err = err
		return
	}
	w.tick(20 * time.Second)
	is := w.snapshot()
	u := w.sb.User(who)
	c.Author = u
	w.deliver(ctx, &ghevent.Event{Name: "issue_comment", Action: "created", Repo: repo, Sender: u, Handled: true,
		Issue: w.issue, Labels: is.Labels, Title: is.Title, Body: is.Body, IssueState: "open", Comment: &c})
}

// label adds the trigger label and delivers issues.labeled.
func (w *world) label(ctx context.Context, who, label string) {
	w.tick(time.Minute)
	w.sb.LabelIssue(who, w.issue, label)
	w.tick(15 * time.Second)
	is := w.snapshot()
	w.deliver(ctx, &ghevent.Event{Name: "issues", Action: "labeled", Repo: repo, Sender: w.sb.User(who), Handled: true,
		Issue: w.issue, Labels: is.Labels, Label: label, Title: is.Title, Body: is.Body, IssueState: "open"})
}

// snapshot reads the issue the way a webhook payload carries it (not an API call).
func (w *world) snapshot() forge.Issue {
	is, ok := w.sb.Snapshot(w.issue)
	if !ok {
		w.err = fmt.Errorf("issue #%d vanished", w.issue)
	}
	return is
}

func (w *world) deliver(ctx context.Context, ev *ghevent.Event) {
	if w.err != nil {
		return
	}
	w.runs++
	if _, err := w.rec.Handle(ctx, ev); err != nil {
		w.err = fmt.Errorf("run %d (%s.%s): %w", w.runs, ev.Name, ev.Action, err)
	}
}

func (w *world) state() *state.State {
	for _, c := range w.sb.Comments(w.issue) {
		if c.Author.Login == bot && strings.HasPrefix(c.Body, state.Marker) {
			s, err := codec.Parse(c.Body, codec.Want{Repo: repo, Issue: w.issue, Key: []byte("demo-state-key")})
			if err == nil {
				return s
			}
		}
	}
	return nil
}

func (w *world) stateBody() string {
	for _, c := range w.sb.Comments(w.issue) {
		if c.Author.Login == bot && strings.HasPrefix(c.Body, state.Marker) {
			return c.Body
		}
	}
	return ""
}

func (w *world) transcript() Transcript {
	s := w.state()
	sum := Summary{APICalls: w.sb.Calls(), Runs: w.runs, CommentsPosted: w.posted, JiraIssues: len(w.tr.Issues()), SubIssues: w.subs}
	for _, n := range sum.APICalls {
		sum.APICallsTotal += n
	}
	if s != nil {
		sum.Flow, sum.Status, sum.StateVersion = s.Flow, string(s.Run), s.Version
		for _, st := range s.Steps {
			switch st.Status {
			case state.Completed:
				sum.StepsCompleted++
			case state.Skipped:
				sum.StepsSkipped++
			}
		}
		for _, d := range s.Decisions {
			sum.Decisions = append(sum.Decisions, fmt.Sprintf("%s → %s (@%s)", d.Question, d.Option, d.By))
		}
		sum.Tasks = len(s.Tasks)
		sum.TasksPending = tasksync.PendingCount(s)
	}
	return Transcript{Entries: w.entries, Summary: sum, State: w.stateBody()}
}

func printSummary(out io.Writer, s Summary) {
	fmt.Fprintf(out, "\n══ Summary ═════════════════════════════════════════════\n")
	fmt.Fprintf(out, " %-22s %s\n", "Flow", s.Flow)
	fmt.Fprintf(out, " %-22s %s\n", "Final status", s.Status)
	fmt.Fprintf(out, " %-22s %d completed, %d skipped\n", "Steps", s.StepsCompleted, s.StepsSkipped)
	fmt.Fprintf(out, " %-22s %d\n", "Decisions", len(s.Decisions))
	for _, d := range s.Decisions {
		fmt.Fprintf(out, "   - %s\n", d)
	}
	fmt.Fprintf(out, " %-22s %d\n", "Comments posted", s.CommentsPosted)
	fmt.Fprintf(out, " %-22s v%d\n", "State version", s.StateVersion)
	switch {
	case s.SubIssues > 0:
		fmt.Fprintf(out, " %-22s %d (GitHub sub-issues created: %d, pending: %d)\n", "Tasks", s.Tasks, s.SubIssues, s.TasksPending)
	case s.JiraIssues > 0:
		fmt.Fprintf(out, " %-22s %d (Jira issues created: %d, pending: %d)\n", "Tasks", s.Tasks, s.JiraIssues, s.TasksPending)
	default:
		fmt.Fprintf(out, " %-22s %d (kept in the issue, no tracker; pending: %d)\n", "Tasks", s.Tasks, s.TasksPending)
	}
	fmt.Fprintf(out, " %-22s %d\n", "Runs (events)", s.Runs)
	fmt.Fprintf(out, " %-22s %d\n", "API calls", s.APICallsTotal)
	kinds := make([]string, 0, len(s.APICalls))
	for k := range s.APICalls {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(out, "   %-20s %d\n", k, s.APICalls[k])
	}
	fmt.Fprintf(out, "════════════════════════════════════════════════════════\n")
}
