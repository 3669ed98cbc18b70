// Package model is the dashboard's read model: one Row per open autopilot
// issue, built purely from the state a reconcile pass left (Build), kept in
// a Store (in memory, or in Redis shared by replicas) and updated at the end
// of every pass through a Sink.
//
// Build must never do I/O or read the clock: ages are computed by the
// pages from the recorded times. Nothing here calls the GitHub API; the
// dashboard shows what the passes wrote, never what a page load fetched.
package model

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// Row is what the dashboard shows of one issue.
type Row struct {
	Installation int64  `json:"installation"`
	Repo         string `json:"repo"`
	Issue        int    `json:"issue"`
	Title        string `json:"title"`
	URL          string `json:"url"`
	Flow         string `json:"flow"`
	// Step is the current step's slug, StepName its display name.
	Step     string          `json:"step"`
	StepName string          `json:"step_name"`
	Status   state.RunStatus `json:"status"`
	// Version is the state's version: a store keeps the highest.
	Version int64 `json:"version"`
	// Wait is what the run waits for (nil: it is working, or done).
	Wait *Wait `json:"wait,omitempty"`
	// Stopped is why a stopped run stopped; Failed why a failed one failed.
	Stopped string `json:"stopped,omitempty"`
	Failed  string `json:"failed,omitempty"`
	// TrackerWaiting lists the tasks not yet in their tracker.
	TrackerWaiting []TaskWait `json:"tracker_waiting,omitempty"`
	// TrackerNote is what the tracker last said for the run (e.g. paused).
	TrackerNote string `json:"tracker_note,omitempty"`
	// Timeline is the run's history, oldest first.
	Timeline  []Item    `json:"timeline,omitempty"`
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Key is the row's key in a store: "owner/repo#12", the repository in
// lower case (GitHub's names are case-insensitive).
func (r Row) Key() string { return Key(r.Repo, r.Issue) }

// Key is the store key of issue n of repo.
func Key(repo string, n int) string { return fmt.Sprintf("%s#%d", strings.ToLower(repo), n) }

// WaitKind says what a run waits for.
type WaitKind string

// What a run can wait for.
const (
	WaitDecision WaitKind = "decision" // a person answers a Choose block
	WaitExecutor WaitKind = "executor" // the step's executor reports back
	WaitTracker  WaitKind = "tracker"  // the tracker takes the tasks
)

// Wait is what a run waits for, from whom, and since when.
type Wait struct {
	Kind WaitKind `json:"kind"`
	// What is the question or the thing awaited, for people.
	What string `json:"what"`
	// From names who can end the wait: logins (without @) when the state
	// names some, and Who in words ("anyone with write access").
	From []string `json:"from,omitempty"`
	Who  string   `json:"who"`
	// Since is when the wait began (the gate's opening, the dispatch).
	Since time.Time `json:"since"`
	// Link points at the comment asking (empty when none is known).
	Link string `json:"link,omitempty"`
}

// Waits reports whether the wait is a decision login can answer: login is
// named in From. An empty login matches nobody.
func (w *Wait) Waits(login string) bool {
	if w == nil || w.Kind != WaitDecision || login == "" {
		return false
	}
	for _, f := range w.From {
		if strings.EqualFold(f, login) {
			return true
		}
	}
	return false
}

// TaskWait is a task not yet in its tracker.
type TaskWait struct {
	ID    string          `json:"id"`
	Title string          `json:"title"`
	Sync  state.SyncState `json:"sync"`
	Error string          `json:"error,omitempty"`
}

// ItemKind is the kind of a timeline item.
type ItemKind string

// Timeline item kinds.
const (
	ItemStep     ItemKind = "step"     // a step completed
	ItemWait     ItemKind = "wait"     // a gate opened (still open)
	ItemDecision ItemKind = "decision" // a gate was answered
	ItemRetry    ItemKind = "retry"    // a step was retried
	ItemReview   ItemKind = "review"   // an approval or a verdict
	ItemStop     ItemKind = "stop"     // the run stopped
	ItemArchive  ItemKind = "archive"  // older decisions moved to a comment
)

// Item is one event of a run's timeline.
type Item struct {
	Kind  ItemKind  `json:"kind"`
	At    time.Time `json:"at"`
	Label string    `json:"label"`
	// Detail is a longer text (an outcome, a reason).
	Detail string `json:"detail,omitempty"`
	// Link points at the comment on GitHub (empty when none is known).
	Link string `json:"link,omitempty"`
}

// Pass is what a reconcile pass reports to a Sink when it ends.
type Pass struct {
	Installation int64
	Repo         string
	Issue        int
	// State is the state as the pass left it (nil: the issue has no run).
	State *state.State
	// Listed: the issue is open and carries the trigger label. A pass on
	// an issue that is closed or lost its label removes its row.
	Listed bool
	// URL is the issue's page on GitHub ("" builds a github.com one).
	URL string
}

// Build returns the row of the issue p reports, and false when the issue
// has no row (no run, closed, or unlabelled).
func Build(p Pass) (Row, bool) {
	s := p.State
	if s == nil || !p.Listed {
		return Row{}, false
	}
	repo := p.Repo
	if repo == "" {
		repo = s.Repo
	}
	n := p.Issue
	if n == 0 {
		n = s.Issue
	}
	url := p.URL
	if url == "" {
		url = fmt.Sprintf("https://github.com/%s/issues/%d", repo, n)
	}
	r := Row{
		Installation: p.Installation, Repo: repo, Issue: n, Title: s.Title, URL: url,
		Flow: s.Flow, Step: s.Slug, StepName: s.Name, Status: s.Run, Version: s.Version,
		TrackerNote: s.TrackerNote, StartedAt: s.StartedAt, UpdatedAt: s.UpdatedAt,
	}
	r.Wait = wait(s, url)
	if s.Run == state.RunStopped && s.Stop != nil {
		r.Stopped = joinNonEmpty(string(s.Stop.Reason), s.Stop.Hint)
	}
	if s.Run == state.RunFailed {
		r.Failed = failure(s)
	}
	for _, t := range s.Tasks {
		if t.Sync == state.SyncPending || t.Sync == state.SyncSending || t.Sync == state.SyncFailed {
			if t.Done && t.Sync == state.SyncPending {
				continue
			}
			r.TrackerWaiting = append(r.TrackerWaiting, TaskWait{ID: t.ID, Title: t.Title, Sync: t.Sync, Error: t.Error})
		}
	}
	if r.Wait == nil && len(r.TrackerWaiting) > 0 && s.Run != state.RunStopped && s.Run != state.RunDone {
		r.Wait = &Wait{Kind: WaitTracker, What: fmt.Sprintf("%d task(s) to reach the tracker", len(r.TrackerWaiting)),
			Who: "the tracker", Since: trackerSince(s)}
	}
	r.Timeline = timeline(s, url)
	return r, true
}

// commentLink is the link to comment id on the issue page url.
func commentLink(url string, id int64) string {
	if id <= 0 {
		return ""
	}
	return fmt.Sprintf("%s#issuecomment-%d", url, id)
}

// mention finds @logins (GitHub's login alphabet; team mentions
// @org/team are left out: no one signs in as a team).
var mention = regexp.MustCompile(`(?:^|[^\w/@])@([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))(?:[^\w/-]|$)`)

// loginShape is GitHub's login alphabet.
var loginShape = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)

// wait is what s waits for.
func wait(s *state.State, url string) *Wait {
	if g := s.Gate; g != nil && s.Run != state.RunStopped && s.Run != state.RunDone {
		// A Choose block without a comment of its own is in the state
		// comment: the issue's page shows it.
		w := &Wait{Kind: WaitDecision, What: g.Title, Since: g.OpenedAt, Link: cmpOr(commentLink(url, g.CommentID), url),
			Who: "anyone with " + answerPermission(s) + " access"}
		w.From = askedOf(s)
		return w
	}
	if e := s.Exec; e != nil && s.Run == state.RunInProgress && e.Executor != "" {
		since := e.DispatchedAt
		if since.IsZero() {
			since = e.StartedAt
		}
		what := "step " + nameOr(s.Name, s.Slug)
		if e.RunID > 0 {
			what += fmt.Sprintf(" (workflow run %d)", e.RunID)
		}
		return &Wait{Kind: WaitExecutor, What: what, Who: "the " + e.Executor + " executor", Since: since}
	}
	return nil
}

// askedOf lists the people the open gate names, then those who answered
// the run's earlier gates: who is likely to answer this one.
func askedOf(s *state.State) []string {
	var out []string
	add := func(login string) {
		if !loginShape.MatchString(login) {
			return // a bot ("[bot]"), or no GitHub login at all
		}
		if !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, login) }) {
			out = append(out, login)
		}
	}
	texts := append([]string{s.Gate.Title, s.Gate.Reason}, s.Gate.Details...)
	for _, t := range texts {
		for _, m := range mention.FindAllStringSubmatch(t, -1) {
			add(m[1])
		}
	}
	for i := len(s.Decisions) - 1; i >= 0; i-- {
		add(s.Decisions[i].By)
	}
	return out
}

// permLine finds the configuration's answer_permission in the kept YAML.
var permLine = regexp.MustCompile(`(?m)^answer_permission:\s*["']?([a-z]+)["']?\s*(?:#.*)?$`)

// answerPermission is the access an answer needs, as the kept
// configuration says (write by default).
func answerPermission(s *state.State) string {
	if m := permLine.FindStringSubmatch(s.ConfigYAML); m != nil {
		switch m[1] {
		case "triage", "write", "maintain", "admin":
			return m[1]
		}
	}
	return "write"
}

// failure says why a failed run failed: the last retry's reason, else the
// last session's.
func failure(s *state.State) string {
	if g := s.Gate; g != nil && g.Kind == state.GateSkillFailed {
		return g.Title
	}
	if n := len(s.RetryLog); n > 0 {
		return s.RetryLog[n-1].Reason
	}
	return joinNonEmpty(s.LastSession.Reason, s.LastSession.Notes)
}

// trackerSince is the oldest create sent and not answered, else the last
// write.
func trackerSince(s *state.State) time.Time {
	var at time.Time
	for _, t := range s.Tasks {
		if t.Sync == state.SyncSending && !t.SentAt.IsZero() && (at.IsZero() || t.SentAt.Before(at)) {
			at = t.SentAt
		}
	}
	if at.IsZero() {
		return s.UpdatedAt
	}
	return at
}

// timeline lists the run's events, oldest first (stable for equal times).
func timeline(s *state.State, url string) []Item {
	var out []Item
	for _, c := range s.Completed {
		out = append(out, Item{Kind: ItemStep, At: c.At, Label: nameOr(c.Name, c.Slug), Detail: c.Outcome})
	}
	for _, a := range s.Archives {
		out = append(out, Item{Kind: ItemArchive, At: a.Opened, Label: fmt.Sprintf("decisions %d–%d archived", a.From, a.To), Link: a.URL})
	}
	for _, d := range s.Decisions {
		link := d.Link
		if link == "" {
			link = commentLink(url, d.CommentID)
		}
		out = append(out, Item{Kind: ItemDecision, At: d.At, Label: fmt.Sprintf("%s: %s — %s", d.Option, d.OptionText, d.By),
			Detail: joinNonEmpty(d.Question, d.Reason), Link: link})
	}
	for _, r := range s.RetryLog {
		out = append(out, Item{Kind: ItemRetry, At: r.At, Label: fmt.Sprintf("retry %d of %s", r.Attempt, nameOr(r.Name, fmt.Sprint(r.Step))), Detail: r.Reason})
	}
	if rv := s.Review; rv != nil {
		for _, a := range []struct {
			who string
			ap  *state.Approval
		}{{"architect", rv.Architect}, {"critic", rv.Critic}} {
			if a.ap != nil {
				out = append(out, Item{Kind: ItemReview, At: a.ap.At, Label: a.who + " approved — " + a.ap.By, Detail: a.ap.Note, Link: a.ap.Link})
			}
		}
		for _, v := range []struct {
			what string
			v    *state.Verdict
		}{{"review", rv.ReviewVerdict}, {"QA", rv.QAVerdict}} {
			if v.v == nil {
				continue
			}
			verdict := "changes asked"
			if v.v.Clean {
				verdict = "clean"
			}
			// A verdict records no time; it belongs to the current cycle.
			out = append(out, Item{Kind: ItemReview, At: s.UpdatedAt, Label: v.what + " verdict: " + verdict, Detail: v.v.Reason, Link: v.v.Evidence})
		}
	}
	if g := s.Gate; g != nil {
		out = append(out, Item{Kind: ItemWait, At: g.OpenedAt, Label: g.Title, Detail: g.Reason, Link: cmpOr(commentLink(url, g.CommentID), url)})
	}
	if st := s.Stop; st != nil && s.Run == state.RunStopped {
		out = append(out, Item{Kind: ItemStop, At: st.At, Label: "stopped: " + string(st.Reason), Detail: st.Hint})
	}
	slices.SortStableFunc(out, func(a, b Item) int { return a.At.Compare(b.At) })
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func nameOr(name, slug string) string {
	if name != "" {
		return name
	}
	return slug
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ": " + b
}
