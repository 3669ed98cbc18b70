package transcript_test

// Engine transcripts: testdata/engine/*.txt drive engine.Apply with one
// event per directive and record, after each, the state fields that
// changed, the writes in order and the labels. Two functions touch the
// engine's API: engineEvent (directive → event) and engineOutput (result →
// text); everything else is bookkeeping.

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/approvals"
	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/labels"
	"github.com/autopilot-dev/autopilot/internal/engine/machine"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
	"github.com/autopilot-dev/autopilot/internal/tasks"
	"github.com/autopilot-dev/autopilot/internal/transcript"
)

var update = flag.Bool("update", false, "rewrite the transcripts under testdata/ with the outputs seen")

// t0 is the fixed clock's start; every event moves it on by one minute.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

const (
	repo  = "acme/widgets"
	issue = 12
)

func TestTranscriptEngine(t *testing.T) {
	files, err := filepath.Glob("testdata/engine/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no engine transcripts (%v)", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			transcript.Run(t, f, *update, newEngineDriver(t).do)
		})
	}
}

func newEngineDriver(t *testing.T) *engineDriver {
	return &engineDriver{t: t, set: machine.Settings{Config: config.Default(), AnswerPermission: "write", Repo: repo},
		clock: t0, nextID: 1000, prs: map[int]*evidence.PullFacts{}, applied: map[string]bool{}, actions: map[string]bool{}, posted: map[string]bool{},
		effects: map[string]int{}, shows: map[string]string{}, showed: map[string]string{}}
}

// engineDriver is one engine scenario: settings, the state so far, a
// fixed clock and the linked PRs as the bot would read them.
type engineDriver struct {
	t      *testing.T
	set    machine.Settings
	st     *state.State
	clock  time.Time
	nextID int64
	prs    map[int]*evidence.PullFacts
	labels []string
	// checks is the last rendering of the PR checks the engine wants.
	checks string
	// buttons: check runs offer buttons (App mode).
	buttons bool
	// effects counts the effects written, by kind.
	effects map[string]int
	// posted are the markers of the comments and dispatches performed: the
	// thread shows them from the next pass on.
	posted map[string]bool
	// shows and showed are the text of each comment performed, by marker,
	// and what it showed before its last edit (shown lost).
	shows, showed map[string]string
	// applied are the engine event types applied and actions the gate
	// actions taken (for the coverage test).
	applied, actions map[string]bool
	// asked are the queries of the last event (approvers answers one).
	asked []events.Query
	// held is the hold App mode's carrier steps into every pass of the
	// issue after the pass's own event, until a sweep pass (tick) takes
	// it over (directive held).
	held *events.BackgroundHeld
}

func gateOf(s *state.State) *state.Gate {
	if s == nil {
		return nil
	}
	return s.Gate
}

func (d *engineDriver) do(c *transcript.Case) string {
	switch c.Cmd {
	case "config":
		return d.config(c)
	case "advance":
		dur, err := time.ParseDuration(c.Args[0].Key)
		if err != nil {
			return "error: " + err.Error()
		}
		d.clock = d.clock.Add(dur)
		return "now " + d.clock.Format("2006-01-02 15:04")
	case "pr":
		return d.pull(c)
	case "show":
		return d.show(c)
	case "comments":
		return d.comments(c)
	case "held":
		ev, err := d.engineEvent(&transcript.Case{Cmd: "background-held", Args: c.Args})
		if err != nil {
			return "error: " + err.Error()
		}
		h := ev.(events.BackgroundHeld)
		d.held = &h
		return fmt.Sprintf("carried into every pass until a sweep's: held until %s (%s)", h.Until.Format("15:04"), h.Reason)
	}
	ev, err := d.engineEvent(c)
	if err != nil {
		return "error: " + err.Error()
	}
	d.clock = d.clock.Add(time.Minute)
	d.applied[fmt.Sprintf("%T", ev)] = true
	res, err := engine.Apply(d.set, d.st, ev, d.clock)
	if err != nil {
		return "engine error: " + err.Error()
	}
	if _, sweep := ev.(events.Tick); sweep {
		d.held = nil // a sweep pass takes the hold over
	}
	if d.held != nil && res.State != nil {
		d.applied[fmt.Sprintf("%T", *d.held)] = true
		carried, err := engine.Apply(d.set, res.State, *d.held, d.clock)
		if err != nil {
			return "engine error: " + err.Error()
		}
		res.State, res.Changed = carried.State, res.Changed || carried.Changed
		res.Effects, res.Queries = append(res.Effects, carried.Effects...), append(res.Queries, carried.Queries...)
	}
	d.asked = res.Queries
	if g := gateOf(d.st); res.Decision != "" && g != nil {
		for _, o := range g.Options {
			if o.Letter == res.Decision {
				kind, _, _ := strings.Cut(string(o.Action), ":")
				d.actions[kind] = true
			}
		}
	}
	return d.engineOutput(res)
}

// comments posts each input line in turn as a comment by the first
// argument's login, times=<n> rounds, and prints a summary instead of each
// output: for long runs (many decisions) whose steps are all alike.
func (d *engineDriver) comments(c *transcript.Case) string {
	n, _ := strconv.Atoi(c.Or("times", "1"))
	lines := strings.Split(c.Input, "\n")
	kinds := map[string]int{}
	before := maps.Clone(d.effects)
	for i := 0; i < n; i++ {
		for _, l := range lines {
			out := d.do(&transcript.Case{Cmd: "comment", Args: c.Args[:1], Input: l})
			if strings.HasPrefix(out, "error: ") || strings.HasPrefix(out, "engine error: ") {
				return fmt.Sprintf("round %d, %q: %s", i+1, l, out)
			}
		}
	}
	for k, v := range d.effects {
		if v-before[k] > 0 {
			kinds[k] = v - before[k]
		}
	}
	var parts []string
	for _, k := range sortedKeys(kinds) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, kinds[k]))
	}
	return fmt.Sprintf("posted %d comments; effects: %s\nnow: %s, %s %s, %d decisions in the state",
		n*len(lines), strings.Join(parts, ", "), d.st.Run, d.st.Slug, d.st.Status, len(d.st.Decisions))
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// config sets the configuration file (the input) and the settings that
// come from the environment: jira (credentials given), subissues (the
// forge can create sub-issues), buttons (App mode: the PR check offers
// the options as buttons), answer=<permission>.
func (d *engineDriver) config(c *transcript.Case) string {
	cfg, err := config.Parse([]byte(c.Input))
	if err != nil {
		return "error: " + err.Error()
	}
	d.set.Config = cfg
	d.set.TrackerConfigured = c.Has("jira")
	d.set.SubIssues = c.Has("subissues")
	d.buttons = c.Has("buttons")
	setStr(&d.set.AnswerPermission, c.Or("answer", "write"))
	return "flows: " + strings.Join(cfg.All.Names(), ", ")
}

// pull records a linked PR as the bot reads it: pr <n> author=<login>
// [perm=write] [head=<sha>] [fork] [unlinked].
func (d *engineDriver) pull(c *transcript.Case) string {
	n, _ := strconv.Atoi(c.Args[0].Key)
	if p := d.prs[n]; p != nil && c.Has("head") {
		p.HeadSHA = c.Or("head", "")
		return fmt.Sprintf("PR #%d pushed: head %s", n, p.HeadSHA)
	}
	p := &evidence.PullFacts{Number: n, Author: c.Or("author", "devin"),
		HeadSHA: c.Or("head", "abc1234"), Fork: c.Has("fork"), Links: !c.Has("unlinked"), Body: "Fixes #12"}
	setStr(&p.AuthorPerm, c.Or("perm", "write"))
	d.prs[n] = p
	return fmt.Sprintf("PR #%d by @%s at %s", n, p.Author, p.HeadSHA)
}

// show prints a rendering of the current state: banner (the status
// summary) or comment (the human part of the state comment).
func (d *engineDriver) show(c *transcript.Case) string {
	if d.st == nil {
		return "no state"
	}
	switch c.Args[0].Key {
	case "banner":
		return prose.Banner(d.set.Config.All, d.st)
	case "comment":
		s := *d.st
		body, err := codec.Render(&s, stateView(d.set.Config, &s), nil)
		if err != nil {
			return "error: " + err.Error()
		}
		human, _, _ := strings.Cut(body, "<!-- autopilot:data ")
		return human
	}
	return "show banner|comment"
}

func stateView(cfg *config.Config, s *state.State) codec.View {
	v := codec.View{Action: prose.NextAction(s)}
	if f := cfg.All[s.Flow]; f != nil {
		for i, st := range f.Steps {
			v.Steps = append(v.Steps, codec.StepInfo{Slug: st.Slug, Name: st.Name, Label: f.LabelOf(i + 1)})
		}
	}
	return v
}

// engineEvent maps a directive to the engine event it stands for.
func (d *engineDriver) engineEvent(c *transcript.Case) (events.Event, error) {
	at := d.clock.Add(time.Minute)
	switch c.Cmd {
	case "start":
		var cands []string
		if v, ok := c.Get("candidates"); ok {
			cands = strings.Split(v, ",")
		}
		return events.Start{Issue: issue, Flow: c.Or("flow", ""), Candidates: cands, Actor: c.Or("actor", "maria"),
			Title: "Add CSV export to reports", Body: "## Desired outcome\nCSV downloads\n## Constraints\nno new deps",
			URL: "https://github.com/acme/widgets/issues/12"}, nil
	case "label-removed":
		return events.LabelRemoved{Actor: c.Or("by", "maria")}, nil
	case "closed":
		return events.Closed{Actor: c.Or("by", "maria")}, nil
	case "comment":
		return d.comment(c, at), nil
	case "review", "pull-read", "checks", "pr-linked", "pull-seen", "check-shown", "click":
		return d.pullEvent(c, at)
	case "dispatched", "run-completed":
		return d.runEvent(c), nil
	case "jira-auth":
		return events.TrackerAuth{OK: c.Has("ok"), Detail: c.Input}, nil
	case "jira-synced":
		return d.trackerSynced(c), nil
	case "tick":
		return events.Tick{BudgetLow: c.Has("budget-low")}, nil
	case "background-held":
		in, err := time.ParseDuration(c.Or("for", "40m"))
		if err != nil {
			return nil, fmt.Errorf("background-held for=: %w", err)
		}
		return events.BackgroundHeld{Until: at.Add(in), Reason: state.HoldReason(c.Or("reason", string(state.HeldAtReserve)))}, nil
	case "approvers":
		return d.approvers(c)
	case "recovered":
		ev := events.Recovered{Restored: c.Has("restored"), Lost: c.Has("lost"), Deleted: c.Has("deleted")}
		ev.Comment, _ = strconv.ParseInt(c.Or("comment", "0"), 10, 64)
		ev.Version, _ = strconv.ParseInt(c.Or("version", "0"), 10, 64)
		return ev, nil
	case "deployment-requested":
		return deploymentRequested(c)
	case "deploy-approvals":
		run, _ := strconv.ParseInt(c.Or("run", "900"), 10, 64)
		ev := events.DeployApprovalsRead{RunID: run}
		for _, line := range strings.Split(strings.TrimSpace(c.Input), "\n") {
			f := strings.Fields(line)
			if len(f) < 3 {
				continue
			}
			ev.Approvals = append(ev.Approvals, events.DeployApproval{User: f[0], State: f[1], Environments: []string{f[2]}, Comment: strings.Join(f[3:], " ")})
		}
		return ev, nil
	case "deploy-answered":
		run, _ := strconv.ParseInt(c.Or("run", "900"), 10, 64)
		return events.DeployAnswered{Marker: state.DeployMarker(run, c.Or("env", "production")), Done: !c.Has("failed"),
			AlreadyDecided: c.Has("decided")}, nil
	case "config-read":
		return events.ConfigRead{YAML: c.Input}, nil
	case "shown":
		return d.shown(c), nil
	case "refused":
		return events.Refused{Request: c.Args[0].Key}, nil
	case "unmanaged":
		d.nextID++
		ev := events.Unmanaged{ID: d.nextID, Author: c.Args[0].Key, Bot: c.Has("bot"), Body: c.Input}
		if v, ok := c.Get("perm"); ok {
			p := evidence.PermRead{}
			setStr(&p.Perm, v)
			ev.Perms = map[string]evidence.PermRead{ev.Author: p}
		}
		return ev, nil
	}
	return nil, fmt.Errorf("unknown directive %q", c.Cmd)
}

// shown is what the thread shows of the bot's comments: each as last
// posted or edited; with lost, the open question's Choose comment shows
// what it showed before its last edit (the edit lost to a crash after the
// state write).
func (d *engineDriver) shown(c *transcript.Case) events.ChooseShown {
	if g := gateOf(d.st); c.Has("lost") && g != nil {
		mk := prose.GateMarker(g.ID)
		d.shows[mk] = d.showed[mk]
	}
	return events.ChooseShown{Bodies: maps.Clone(d.shows)}
}

// pullEvent maps a directive about a linked PR: its reviews, checks, link,
// reads, PR check and clicks.
func (d *engineDriver) pullEvent(c *transcript.Case, at time.Time) (events.Event, error) {
	switch c.Cmd {
	case "review":
		return d.review(c, at)
	case "pull-read":
		return d.pullRead(c, at)
	case "checks":
		p, err := d.pr(c)
		if err != nil {
			return nil, err
		}
		n := p.Number
		var failed []string
		if v, ok := c.Get("failed"); ok {
			failed = strings.Split(v, ",")
		}
		cp := *p
		return events.Checks{PR: n, SHA: p.HeadSHA, State: c.Or("state", "success"), Failed: failed,
			URL: fmt.Sprintf("https://github.com/acme/widgets/pull/%d/checks", n), IDs: []int64{9001}, Pull: &cp}, nil
	case "pr-linked":
		n, _ := strconv.Atoi(c.Or("pr", "40"))
		return events.PRLinked{PR: n, URL: fmt.Sprintf("https://github.com/acme/widgets/pull/%d", n)}, nil
	case "pull-seen":
		p, err := d.pr(c)
		if err != nil {
			return nil, err
		}
		return events.PullSeen{Pull: p}, nil
	case "check-shown":
		p, err := d.pr(c)
		if err != nil {
			return nil, err
		}
		ev := events.CheckShown{PR: p.Number, Head: p.HeadSHA, Pending: c.Has("pending")}
		for _, cr := range checkview.DesiredChecks(d.set.Config, d.set.AnswerPermission, d.st, checkview.CheckOptions{Buttons: d.buttons}) {
			if cr.PR == p.Number {
				ev.Hash = cr.Hash()
			}
		}
		return ev, nil
	case "click":
		gate := "g0-gone"
		if d.st != nil && d.st.Gate != nil && !c.Has("stale") {
			gate = d.st.Gate.ID
		}
		ev := events.Click{Identifier: checkview.GateToken(gate) + "." + c.Or("letter", "A"), Sender: c.Args[0].Key,
			PermErr: c.Has("permerr"), At: at, URL: "https://github.com/acme/widgets/runs/9100"}
		setStr(&ev.Perm, c.Or("perm", "write"))
		return ev, nil
	}
	return nil, fmt.Errorf("unknown directive %q", c.Cmd)
}

// runEvent maps a directive about a dispatched workflow run.
func (d *engineDriver) runEvent(c *transcript.Case) events.Event {
	switch c.Cmd {
	case "dispatched":
		ev := events.Dispatched{Err: c.Input}
		if d.st != nil && d.st.Exec != nil {
			ev.Session = d.st.Exec.Session
		}
		if v, ok := c.Get("run"); ok {
			ev.RunID, _ = strconv.ParseInt(v, 10, 64)
		}
		return ev
	case "run-completed":
		ev := events.RunCompleted{Conclusion: c.Or("conclusion", "success"), URL: "https://github.com/acme/widgets/actions/runs/1"}
		if v, ok := c.Get("run"); ok {
			ev.RunID, _ = strconv.ParseInt(v, 10, 64)
		} else if d.st != nil && d.st.Exec != nil {
			ev.RunID = d.st.Exec.RunID
		}
		return ev
	}
	return nil
}

// pullRead is a PR read for its evidence: one review per input line
// ("<login> <STATE> [<perm>]", given a minute before the read; a login
// without a permission is asked for) and checks=<name>:<status>[:<conclusion>],…
func (d *engineDriver) pullRead(c *transcript.Case, at time.Time) (events.Event, error) {
	p, err := d.pr(c)
	if err != nil {
		return nil, err
	}
	ev := events.PullRead{Pull: p, URL: fmt.Sprintf("https://github.com/acme/widgets/pull/%d", p.Number)}
	for _, line := range strings.Split(strings.TrimSpace(c.Input), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		d.nextID++
		ev.Reviews = append(ev.Reviews, evidence.ReviewRead{ID: d.nextID, Reviewer: f[0], State: f[1], At: at.Add(-time.Minute),
			CommitSHA: p.HeadSHA, URL: fmt.Sprintf("https://github.com/acme/widgets/pull/%d#pullrequestreview-%d", p.Number, d.nextID)})
		if len(f) > 2 {
			if ev.Perms == nil {
				ev.Perms = map[string]evidence.PermRead{}
			}
			pr := evidence.PermRead{}
			setStr(&pr.Perm, f[2])
			ev.Perms[f[0]] = pr
		}
	}
	if v, ok := c.Get("checks"); ok {
		ev.Checks = []evidence.CheckRead{}
		for i, spec := range strings.Split(v, ",") {
			parts := append(strings.Split(spec, ":"), "", "")
			ev.Checks = append(ev.Checks, evidence.CheckRead{ID: int64(9001 + i), Name: parts[0], Status: parts[1], Conclusion: parts[2]})
		}
	}
	return ev, nil
}

// pr is a copy of the PR named by pr=<n> (default 40) as last read.
func (d *engineDriver) pr(c *transcript.Case) (*evidence.PullFacts, error) {
	n, _ := strconv.Atoi(c.Or("pr", "40"))
	p := d.prs[n]
	if p == nil {
		return nil, fmt.Errorf("no pr %d: declare it with `pr %d`", n, n)
	}
	cp := *p
	cp.Approvals = append([]evidence.PullApproval(nil), p.Approvals...)
	return &cp, nil
}

// comment is a comment by the first argument's login: perm=<permission>
// (default write), permerr, bot, agent, pr=<n> (on a linked PR), edited
// (changed before it was read, nothing proves the author did it). Task
// blocks in a done report are parsed as the reconciler does.
func (d *engineDriver) comment(c *transcript.Case, at time.Time) events.Comment {
	d.nextID++
	ev := events.Comment{ID: d.nextID, Author: c.Args[0].Key, PermErr: c.Has("permerr"),
		Bot: c.Has("bot"), Agent: c.Has("agent"), Body: c.Input, At: at, EditUnproven: c.Has("edited"),
		URL: fmt.Sprintf("https://github.com/acme/widgets/issues/12#issuecomment-%d", d.nextID)}
	setStr(&ev.Perm, c.Or("perm", "write"))
	if v, ok := c.Get("pr"); ok {
		ev.OnPR, _ = strconv.Atoi(v)
	}
	if d.st != nil && d.st.Gate != nil {
		ev.GatePostedAt = d.st.Gate.OpenedAt
	}
	if first, _, _ := strings.Cut(c.Input, "\n"); strings.HasPrefix(first, "/autopilot done") {
		start := 1
		if d.st != nil {
			start = len(d.st.Tasks) + 1
		}
		ts, err := tasks.ParseComment(c.Input, tasks.Options{Start: start})
		if err != nil {
			ev.DeclaredErr = err.Error()
		} else {
			ev.Declared = ts
		}
	}
	return ev
}

// review is a submitted review: review <login> pr=<n> state=APPROVED
// [perm=write] [stale] (given on an earlier commit) [commit=<sha>] (given
// on that commit); input is its body.
func (d *engineDriver) review(c *transcript.Case, at time.Time) (events.Event, error) {
	n, _ := strconv.Atoi(c.Or("pr", "40"))
	p := d.prs[n]
	if p == nil {
		return nil, fmt.Errorf("no pr %d: declare it with `pr %d`", n, n)
	}
	d.nextID++
	sha := p.HeadSHA
	if c.Has("stale") {
		sha = "0ld0000"
	}
	sha = c.Or("commit", sha)
	r := events.Review{ID: d.nextID, PR: n, PRAuthor: p.Author, Reviewer: c.Args[0].Key,
		State: c.Or("state", "APPROVED"), Body: c.Input, At: at, CommitSHA: sha,
		URL: fmt.Sprintf("https://github.com/acme/widgets/pull/%d#pullrequestreview-%d", n, d.nextID)}
	setStr(&r.Perm, c.Or("perm", "write"))
	if r.State == "APPROVED" {
		p.Approvals = append(p.Approvals, evidence.PullApproval{ID: r.ID, Reviewer: r.Reviewer, Perm: r.Perm, CommitSHA: sha})
	}
	cp := *p
	r.Pull = &cp
	return r, nil
}

// trackerSynced reports the outbox sent: created (every pending task gets a
// key), paused=auth, note=<word>.
func (d *engineDriver) trackerSynced(c *transcript.Case) events.TrackerSynced {
	ev := events.TrackerSynced{Paused: c.Or("paused", ""), Note: c.Input}
	if c.Has("created") && d.st != nil {
		for i, t := range d.st.Tasks {
			if t.Sync == state.SyncPending {
				t.Sync, t.Key = state.SyncCreated, fmt.Sprintf("PROJ-%d", i+1)
				t.URL, t.SentAt = "https://jira.example/browse/"+t.Key, d.clock
				if c.Has("subissues") { // created as sub-issues #21, #22, …
					t.Key = fmt.Sprintf("#%d", 21+i)
					t.URL = fmt.Sprintf("https://github.com/acme/widgets/issues/%d", 21+i)
				}
				ev.Tasks = append(ev.Tasks, t)
			}
		}
	}
	return ev
}

// engineOutput renders one event as one pass: the engine's result settled
// into the pass's Ready (outbox.Settle, every comment posted so far seen
// on the thread), then the state fields the write changes, the writes in
// order (the state with its outbox first, then the effects), what else
// the result asks, the PR check runs wanted and the labels when they
// changed.
func (d *engineDriver) engineOutput(res engine.Result) string {
	var b strings.Builder
	if res.Decision != "" {
		fmt.Fprintf(&b, "decision: %s\n", res.Decision)
	}
	classified := res.State != nil && (d.st == nil || len(res.State.Ledger) > len(d.st.Ledger))
	rd := outbox.Settle(res.State, res.Effects, outbox.Seen{Markers: d.posted}, res.Changed, classified)
	written := rd.State != nil && (rd.Write || classified)
	if written && (res.Changed || classified) {
		b.WriteString("state:\n")
		for _, l := range stateChanges(flatten(d.st), flatten(rd.State)) {
			b.WriteString("  " + l + "\n")
		}
	}
	var writes []string
	if rd.Write {
		writes = append(writes, "write state")
	}
	for _, e := range rd.Effects {
		d.effects[fmt.Sprint(e.Kind)]++
		writes = append(writes, effectText(e))
		if e.Marker != "" {
			d.posted[e.Marker] = true
		}
		if e.Kind == state.EffComment || e.Kind == state.EffEdit {
			d.showed[e.Marker], d.shows[e.Marker] = d.shows[e.Marker], e.Body
		}
	}
	if written && !rd.Write {
		writes = append(writes, "write state")
	}
	if len(writes) == 0 {
		b.WriteString("no writes\n")
	} else {
		b.WriteString("writes:\n")
		for i, w := range writes {
			fmt.Fprintf(&b, "  %d. %s\n", i+1, strings.ReplaceAll(w, "\n", "\n     "))
		}
	}
	b.WriteString(otherFields(res))
	if written {
		d.st = rd.State
	}
	if cs := checkRuns(d.set, d.st, d.buttons); cs != d.checks {
		b.WriteString(cs)
		d.checks = cs
	}
	if d.st != nil {
		ls := append([]string(nil), rd.Labels...)
		if !written {
			ls = labels.Labels(d.st)
		}
		sort.Strings(ls)
		if strings.Join(ls, " ") != strings.Join(d.labels, " ") {
			fmt.Fprintf(&b, "labels: %s\n", strings.Join(ls, " "))
			d.labels = ls
		}
	}
	return b.String()
}

// otherFields renders the result's fields besides the state, effects,
// Changed and Decision (what the engine asks of its caller besides writes),
// each non-empty one as "<name>:" and its items, so a field added to the
// result shows up here without a change to this adapter.
func otherFields(res engine.Result) string {
	var b strings.Builder
	v := reflect.ValueOf(res)
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch name {
		case "State", "Effects", "Changed", "Decision":
			continue
		}
		if !v.Type().Field(i).IsExported() || f.IsZero() {
			continue
		}
		if f.Kind() != reflect.Slice {
			fmt.Fprintf(&b, "%s: %s\n", strings.ToLower(name), effectText(f.Interface()))
			continue
		}
		fmt.Fprintf(&b, "%s:\n", strings.ToLower(name))
		for j := 0; j < f.Len(); j++ {
			fmt.Fprintf(&b, "  %d. %s\n", j+1, strings.ReplaceAll(effectText(f.Index(j).Interface()), "\n", "\n     "))
		}
	}
	return b.String()
}

// checkRuns renders the PR check runs the engine wants (the banner, in
// every run's summary, is left out).
func checkRuns(set machine.Settings, s *state.State, buttons bool) string {
	var b strings.Builder
	for _, c := range checkview.DesiredChecks(set.Config, set.AnswerPermission, s, checkview.CheckOptions{Buttons: buttons}) {
		status := c.Status
		if c.Conclusion != "" {
			status += "/" + c.Conclusion
		}
		fmt.Fprintf(&b, "check %q on #%d at %s: %s — %s\n  step: %s; waiting for: %s\n", c.Name, c.PR, c.HeadSHA, status, c.Title, c.Step, c.Waiting)
		for _, a := range c.Actions {
			fmt.Fprintf(&b, "  button %q (%s): %s\n", a.Label, a.Identifier, a.Description)
		}
	}
	return b.String()
}

// effectText is one effect, read through its JSON form so that the
// rendering does not depend on the effect type's Go fields: a comment as
// its marker and body (each line behind "│ "), anything else as its kind
// and fields.
func effectText(e any) string {
	raw, err := json.Marshal(e)
	if err != nil {
		panic(err)
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber() // ids print as written
	if err := dec.Decode(&m); err != nil {
		return string(raw) // not an object
	}
	kind, _ := m["kind"].(string)
	delete(m, "kind")
	if body, ok := m["body"].(string); ok {
		marker, _ := m["marker"].(string)
		body = strings.TrimPrefix(strings.TrimPrefix(body, marker), "\n")
		delete(m, "body")
		delete(m, "marker")
		head := kind + " " + marker
		if rest := fields(m); rest != "" {
			head += " " + rest
		}
		return head + "\n│ " + strings.ReplaceAll(body, "\n", "\n│ ")
	}
	return strings.TrimSpace(kind + " " + fields(m))
}

// fields renders JSON fields as key=value, sorted by key, leaving out
// empty ones; a map's entries the same way, in braces.
func fields(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		switch v := m[k]; v {
		case nil, "", false, json.Number("0"):
			continue
		}
		switch v := m[k].(type) {
		case map[string]any:
			out = append(out, k+"={"+fields(v)+"}")
		default:
			out = append(out, fmt.Sprintf("%s=%v", k, v))
		}
	}
	return strings.Join(out, " ")
}

// setStr sets a string-typed field (a permission) whatever its package
// names the type.
func setStr[T ~string](dst *T, s string) { *dst = T(s) }

// field is one leaf of a state: its path ("steps[2].status") and JSON
// value.
type field struct{ path, val string }

// flatten lists a state's fields in the order the state encodes them.
// updated_at (it moves with every write) and zero times are left out.
func flatten(s *state.State) []field {
	if s == nil {
		return nil
	}
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // markers stay readable: "<!-- autopilot:… -->"
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	var out []field
	walk(json.RawMessage(buf.String()), "", &out)
	return out
}

// stateChanges lists what differs between two flattened states: "path:
// old → new" for a changed field, "+ path = value" for a new one (both in
// the new state's order), then "- path = value" for each field gone.
func stateChanges(old, new []field) []string {
	was := map[string]string{}
	for _, f := range old {
		was[f.path] = f.val
	}
	is := map[string]bool{}
	var out []string
	for _, f := range new {
		is[f.path] = true
		switch v, ok := was[f.path]; {
		case !ok:
			out = append(out, "+ "+f.path+" = "+f.val)
		case v != f.val:
			out = append(out, f.path+": "+v+" → "+f.val)
		}
	}
	for _, f := range old {
		if !is[f.path] {
			out = append(out, "- "+f.path+" = "+f.val)
		}
	}
	return out
}

func walk(raw json.RawMessage, path string, out *[]field) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	switch {
	case len(raw) > 0 && raw[0] == '{':
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.Token() // {
		for dec.More() {
			k, _ := dec.Token()
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				panic(err)
			}
			key := k.(string)
			if path == "" && key == "updated_at" || strings.HasPrefix(path, "outbox[") && (key == "body" || key == "inputs") {
				continue // outbox bodies and inputs are in the writes
			}
			p := key
			if path != "" {
				p = path + "." + key
			}
			walk(v, p, out)
		}
	case len(raw) > 0 && raw[0] == '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			panic(err)
		}
		for i, it := range items {
			walk(it, fmt.Sprintf("%s[%d]", path, i), out)
		}
	case string(raw) == `"0001-01-01T00:00:00Z"`:
	default:
		*out = append(*out, field{path, string(raw)})
	}
}

// approvers answers the last event's QApprovers query with the facts the
// directive gives: the authors, the pusher, CODEOWNERS owners
// (owner:path,…) and team memberships (login:@org/team:state,…).
func (d *engineDriver) approvers(c *transcript.Case) (events.Event, error) {
	for _, q := range d.asked {
		if q.Kind != events.QApprovers {
			continue
		}
		f := approvals.Facts{IssueAuthor: c.Or("issue", ""), PRAuthor: c.Or("author", ""), Pusher: c.Or("pusher", ""),
			Teams: map[string]map[string]approvals.Membership{}, OwnedPaths: map[string]string{}}
		f.PR, _ = strconv.Atoi(c.Or("pr", "0"))
		for _, o := range strings.Split(c.Or("owners", ""), ",") {
			if who, path, ok := strings.Cut(o, ":"); ok {
				f.CodeOwners = append(f.CodeOwners, who)
				f.OwnedPaths[who] = path
			}
		}
		for _, m := range strings.Split(c.Or("member", ""), ",") {
			parts := strings.Split(m, ":")
			if len(parts) != 3 {
				continue
			}
			if f.Teams[parts[0]] == nil {
				f.Teams[parts[0]] = map[string]approvals.Membership{}
			}
			f.Teams[parts[0]][parts[1]] = approvals.Membership(parts[2])
		}
		return q.Approvers.Answer(f), nil
	}
	return nil, fmt.Errorf("the last event asked no approvers query")
}

// deploymentRequested is a deployment protection-rule request: run 900
// deploying sha to env for the PRs named (pr=40,41), which link the
// issues linked= (default: this issue); linked= is also the autopilot
// issues it was routed through (none: unmatched).
func deploymentRequested(c *transcript.Case) (events.Event, error) {
	run, err := strconv.ParseInt(c.Or("run", "900"), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("run=: %w", err)
	}
	ev := events.DeploymentRequested{Environment: c.Or("env", "production"), SHA: c.Or("sha", "abc1234"), Ref: "refs/heads/main",
		RunID: run, Session: c.Or("session", ""), Sender: c.Or("by", "devin")}
	var linked []int
	for _, v := range strings.Split(c.Or("linked", strconv.Itoa(issue)), ",") {
		if n, err := strconv.Atoi(v); err == nil {
			linked = append(linked, n)
		}
	}
	if v, ok := c.Get("pr"); ok {
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				return nil, fmt.Errorf("pr=: %w", err)
			}
			ev.PRs = append(ev.PRs, events.DeployPR{Number: n, LinkedIssues: linked})
		}
	}
	if !c.Has("unmatched") {
		ev.Linked = linked
	}
	return ev, nil
}
