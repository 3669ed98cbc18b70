package reliability

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/idem"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

// Violation is one broken invariant.
type Violation struct {
	// Inv is "I1" … "I7".
	Inv string
	Msg string
}

func (v Violation) String() string { return v.Inv + ": " + v.Msg }

// Limits checked by I6 and I7.
const (
	// EventBudget is the most API calls one event's run may cost
	// (RELIABILITY.md §6 I6: at 1,000 requests/hour, ~66 events/hour).
	EventBudget = 15
	// MaxAck is the longest an App-mode webhook answer may take: a second
	// (I6), times raceSlowdown under the race detector, which slows the
	// handler several-fold and, on a loaded 2-core machine, has answered
	// a 202 in 1.002 s. The production figure is the load benchmark's
	// (internal/server/loadtest: ack p99 in milliseconds).
	MaxAck = time.Second * raceSlowdown
	// MaxRunes is the most characters a posted body may have (I7 asserts
	// 60,000, leaving headroom under GitHub's 65,536).
	MaxRunes = 60000
	// GitHubMaxRunes is GitHub's own limit.
	GitHubMaxRunes = 65536
)

// CheckOptions selects what Check asserts for one issue.
type CheckOptions struct {
	Issue int
	// Expect, when set, is the oracle's prediction (I3).
	Expect *Expected
	// Budget overrides EventBudget; negative skips the per-event budget.
	Budget int
	// Unclassified are comment ids I1 must not require (e.g. a comment a
	// case deletes before any run could see it).
	Unclassified []int64
	// Unpersisted, when set, tolerates a comment missing from the stored
	// ledger when it returns true (the random schedules use it for known
	// product bug B1: read-only classifications ride along with a later
	// write that may never come). Tolerated ids are reported through it.
	Unpersisted func(id int64) bool
}

// Check runs I1–I7 on an issue after quiescence (plus one reconcile pass,
// which the caller makes) and returns every violation.
func (w *World) Check(o CheckOptions) []Violation {
	var v []Violation
	v = append(v, w.CheckLedger(o.Issue, o.Unclassified, o.Unpersisted)...)
	v = append(v, w.CheckEffects(o.Issue)...)
	v = append(v, w.CheckJiraOrphans()...)
	v = append(v, w.CheckConvergence(o.Issue, o.Expect)...)
	v = append(v, w.CheckAuthorised(o.Issue)...)
	v = append(v, w.CheckMonotonic(o.Issue)...)
	budget := EventBudget
	if o.Budget != 0 {
		budget = o.Budget
	}
	v = append(v, w.CheckPolite(budget)...)
	v = append(v, w.CheckBounds(o.Issue)...)
	return v
}

func violation(inv, format string, args ...any) Violation {
	return Violation{Inv: inv, Msg: fmt.Sprintf(format, args...)}
}

// firstLine is a comment's first line, trimmed.
func firstLine(body string) string {
	l, _, _ := strings.Cut(body, "\n")
	return strings.TrimSpace(l)
}

// humanComments are the comments of issue n (and of the PRs its state
// links) that the bot did not write, created at or after the run started.
func (w *World) humanComments(n int, s *state.State) []fakegithub.Comment {
	var out []fakegithub.Comment
	convs := append([]int{n}, s.LinkedPRs...)
	for _, conv := range convs {
		for _, c := range w.GH.Comments(Repo, conv) {
			if w.trusted(c) || c.CreatedAt.Before(s.StartedAt.Truncate(time.Second)) {
				continue
			}
			out = append(out, c)
		}
	}
	return out
}

// CheckLedger is I1: every human comment on the managed issue (and on its
// linked PRs) created after the bot activated is classified exactly once —
// applied, rejected:<reason> or not-a-command — with at most one reply.
// skip lists comments not required; lazy (may be nil) tolerates a missing
// entry when it returns true.
func (w *World) CheckLedger(n int, skip []int64, lazy func(int64) bool) []Violation {
	s := w.State(n)
	if s == nil {
		return []Violation{violation("I1", "#%d has no valid state", n)}
	}
	var v []Violation
	count := map[int64]int{}
	outcome := map[int64]string{}
	for _, e := range s.Ledger {
		count[e.CommentID]++
		outcome[e.CommentID] = string(e.Outcome)
	}
	for id, c := range count {
		if c > 1 {
			v = append(v, violation("I1", "comment %d is in the ledger %d times", id, c))
		}
	}
	replies := map[string]int{}
	for _, c := range w.BotComments(n) {
		replies[firstLine(c.Body)]++
	}
	for _, c := range w.humanComments(n, s) {
		if slices.Contains(skip, c.ID) {
			continue
		}
		o, ok := outcome[c.ID]
		switch {
		case !ok && c.ID <= s.LedgerFloor:
			// Folded: classified long ago, listed no more (the ledger's
			// compact form for a long thread).
		case !ok && lazy != nil && lazy(c.ID):
		case !ok:
			v = append(v, violation("I1", "comment %d by %s (%.40q) was never classified", c.ID, c.Author.Login, c.Body))
		case o != Applied && o != NotACommand && !strings.HasPrefix(o, "rejected:"):
			v = append(v, violation("I1", "comment %d by %s has outcome %q", c.ID, c.Author.Login, o))
		}
		if r := replies[fmt.Sprintf("<!-- autopilot:reply %d -->", c.ID)]; r > 1 {
			v = append(v, violation("I1", "comment %d got %d replies", c.ID, r))
		}
	}
	return v
}

// CheckEffects is I2: at most one bot comment per hidden marker, and
// exactly one Jira issue per task idempotency key.
func (w *World) CheckEffects(n int) []Violation {
	var v []Violation
	seen := map[string]int{}
	for _, c := range w.BotComments(n) {
		if m := firstLine(c.Body); strings.HasPrefix(m, "<!-- autopilot:") {
			seen[m]++
		}
	}
	for m, k := range seen {
		if k > 1 {
			v = append(v, violation("I2", "#%d has %d bot comments with marker %s", n, k, m))
		}
	}
	if w.Jira == nil {
		return v
	}
	s := w.State(n)
	if s == nil {
		return v
	}
	for _, t := range s.Tasks {
		got := w.Jira.CountLabel(t.IdemKey)
		switch {
		case got > 1:
			v = append(v, violation("I2", "task %s (%s) has %d Jira issues", t.ID, t.IdemKey, got))
		case t.Sync == state.SyncCreated && got != 1:
			v = append(v, violation("I2", "task %s is created as %s but Jira holds %d issues for %s", t.ID, t.Key, got, t.IdemKey))
		}
	}
	return v
}

// CheckJiraOrphans is the other half of I2: every Jira issue carrying an
// idempotency key belongs to a task of a managed issue.
func (w *World) CheckJiraOrphans() []Violation {
	if w.Jira == nil {
		return nil
	}
	keys := map[string]bool{}
	for _, n := range w.Issues() {
		if s := w.State(n); s != nil {
			for _, t := range s.Tasks {
				keys[t.IdemKey] = true
			}
		}
	}
	var v []Violation
	for _, is := range w.Jira.Issues() {
		for _, l := range is.Labels {
			if idem.Valid(l) && !keys[l] {
				v = append(v, violation("I2", "Jira issue %s carries %s, which no task holds", is.Key, l))
			}
		}
	}
	return v
}

// DerivedLabels are the autopilot labels a state implies (PRODUCT.md §5),
// derived here independently of the engine.
func DerivedLabels(s *state.State) []string {
	if s == nil {
		return nil
	}
	var out []string
	if s.Slug != "" {
		out = append(out, "autopilot/step:"+s.Slug)
	}
	out = append(out, "autopilot/status:"+string(s.Run))
	if s.Flow != "" {
		out = append(out, "autopilot/flow:"+s.Flow)
	}
	for _, t := range s.Tasks {
		if t.Sync == state.SyncPending || t.Sync == state.SyncSending {
			out = append(out, "autopilot/jira:pending")
			break
		}
	}
	sort.Strings(out)
	return out
}

func managedLabel(l string) bool {
	return strings.HasPrefix(l, "autopilot/step:") || strings.HasPrefix(l, "autopilot/status:") ||
		strings.HasPrefix(l, "autopilot/flow:") || l == "autopilot/jira:pending"
}

// CheckConvergence is I3: the labels are those derived from the state and,
// when want is given, the state is what the oracle expects.
func (w *World) CheckConvergence(n int, want *Expected) []Violation {
	s := w.State(n)
	if s == nil {
		return []Violation{violation("I3", "#%d has no valid state", n)}
	}
	var v []Violation
	var have []string
	for _, l := range w.GH.Labels(Repo, n) {
		if managedLabel(l) {
			have = append(have, l)
		}
	}
	sort.Strings(have)
	if d := DerivedLabels(s); !slices.Equal(have, d) {
		v = append(v, violation("I3", "#%d labels %v, derived from the state %v", n, have, d))
	}
	if want == nil {
		return v
	}
	return append(v, compare(s, want)...)
}

// compare checks a state against the oracle.
func compare(s *state.State, e *Expected) []Violation {
	var v []Violation
	bad := func(format string, args ...any) { v = append(v, violation("I3", format, args...)) }
	if s.Flow != e.Flow || s.Slug != e.Slug || string(s.Run) != e.Run {
		bad("at %s/%s (%s), oracle says %s/%s (%s)", s.Flow, s.Slug, s.Run, e.Flow, e.Slug, e.Run)
	}
	stop := ""
	if s.Stop != nil {
		stop = string(s.Stop.Reason)
	}
	if stop != e.StopReason {
		bad("stop reason %q, oracle says %q", stop, e.StopReason)
	}
	gate := ""
	if s.Gate != nil {
		gate = string(s.Gate.Kind)
	}
	if gate != e.GateKind {
		bad("open gate %q, oracle says %q", gate, e.GateKind)
	}
	if len(s.Decisions) != len(e.Decisions) {
		bad("%d decisions %s, oracle says %d %v", len(s.Decisions), decisions(s), len(e.Decisions), e.Decisions)
	} else {
		for i, d := range s.Decisions {
			x := e.Decisions[i]
			if d.Option != x.Option || d.By != x.By || d.CommentID != x.CommentID || !strings.HasSuffix(d.Gate, "-"+x.GateKind) {
				bad("decision %d is %s %s by %s (comment %d), oracle says %s %s by %s (comment %d)", i+1, d.Gate, d.Option, d.By, d.CommentID, x.GateKind, x.Option, x.By, x.CommentID)
			}
		}
	}
	got := map[int64]string{}
	for _, l := range s.Ledger {
		got[l.CommentID] = string(l.Outcome)
	}
	ids := make([]int64, 0, len(e.Ledger))
	for id := range e.Ledger {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if o, ok := got[id]; ok && !Match(e.Ledger[id], o) {
			bad("comment %d classified %q, oracle says %q", id, o, e.Ledger[id])
		}
	}
	if len(s.Tasks) != len(e.Tasks) {
		bad("%d tasks, oracle says %d", len(s.Tasks), len(e.Tasks))
	} else {
		for i, t := range s.Tasks {
			if string(t.Kind) != e.Tasks[i].Kind || t.Title != e.Tasks[i].Title {
				bad("task %d is %s %q, oracle says %s %q", i+1, t.Kind, t.Title, e.Tasks[i].Kind, e.Tasks[i].Title)
			}
			synced := t.Sync == state.SyncCreated && t.Key != ""
			if synced != e.TrackerSynced {
				bad("task %s Jira %s %q, oracle says synced=%v", t.ID, t.Sync, t.Key, e.TrackerSynced)
			}
		}
	}
	prs := append([]int(nil), s.LinkedPRs...)
	want := append([]int(nil), e.LinkedPRs...)
	slices.Sort(prs)
	slices.Sort(want)
	if !slices.Equal(prs, want) {
		bad("linked PRs %v, oracle says %v", prs, want)
	}
	cycle := 0
	if s.Review != nil {
		cycle = s.Review.ReviewCycle
	}
	if cycle != e.ReviewCycle {
		bad("review cycle %d, oracle says %d", cycle, e.ReviewCycle)
	}
	return v
}

func decisions(s *state.State) string {
	var b []string
	for _, d := range s.Decisions {
		b = append(b, fmt.Sprintf("%s:%s@%s#%d", d.Gate, d.Option, d.By, d.CommentID))
	}
	return "[" + strings.Join(b, " ") + "]"
}

// CheckAuthorised is I4: every applied comment and every decision traces
// back to a comment whose author held answer_permission (write) when it
// was written, and no bot.
func (w *World) CheckAuthorised(n int) []Violation {
	s := w.State(n)
	if s == nil {
		return nil
	}
	var v []Violation
	applied := map[int64]bool{}
	for _, e := range s.Ledger {
		if e.Outcome != Applied {
			continue
		}
		applied[e.CommentID] = true
		c, ok := w.GH.Comment(e.CommentID)
		if !ok {
			v = append(v, violation("I4", "applied comment %d does not exist", e.CommentID))
			continue
		}
		if c.Author.IsBot() {
			v = append(v, violation("I4", "comment %d by bot %s was applied", c.ID, c.Author.Login))
		}
		if p := w.PermissionAt(c.Author.Login, c.CreatedAt); !p.AtLeast(access.Write) {
			v = append(v, violation("I4", "comment %d by %s (permission %s) was applied", c.ID, c.Author.Login, p))
		}
	}
	for _, d := range s.Decisions {
		if !applied[d.CommentID] {
			v = append(v, violation("I4", "decision %s %s by %s cites comment %d, which is not applied in the ledger", d.Gate, d.Option, d.By, d.CommentID))
			continue
		}
		if c, ok := w.GH.Comment(d.CommentID); ok && !strings.EqualFold(c.Author.Login, d.By) {
			v = append(v, violation("I4", "decision by %s cites comment %d by %s", d.By, d.CommentID, c.Author.Login))
		}
	}
	return v
}

// CheckMonotonic is I5: after every run the state version never went
// down, and no accepted decision (or applied comment) disappeared.
func (w *World) CheckMonotonic(n int) []Violation {
	var v []Violation
	obs := w.Versions(n)
	decided := map[int64]int{}
	applied := map[int64]int{}
	for i, o := range obs {
		if i > 0 && o.Version < obs[i-1].Version {
			v = append(v, violation("I5", "#%d version went from %d to %d after run %d", n, obs[i-1].Version, o.Version, o.Run))
		}
		for id, since := range decided {
			if !slices.Contains(o.Decisions, id) {
				v = append(v, violation("I5", "decision of comment %d (since run %d) vanished after run %d", id, since, o.Run))
				delete(decided, id)
			}
		}
		for id, since := range applied {
			if !slices.Contains(o.Applied, id) {
				v = append(v, violation("I5", "applied comment %d (since run %d) vanished from the ledger after run %d", id, since, o.Run))
				delete(applied, id)
			}
		}
		for _, id := range o.Decisions {
			if _, ok := decided[id]; !ok {
				decided[id] = o.Run
			}
		}
		for _, id := range o.Applied {
			if _, ok := applied[id]; !ok {
				applied[id] = o.Run
			}
		}
	}
	return v
}

// CheckPolite is I6: no request inside a window an answer asked for (per
// token for GitHub — each Action run has its own GITHUB_TOKEN —, across
// runs for Jira, whose windows the state carries); GitHub mutations at
// least 1 s apart per token; at most budget calls per event run; and every
// webhook answered within MaxAck. Times are the adapter's own (when it
// decided to send). The budget applies to runs that overlapped no other
// run, met no fault and classified at most one new comment (retries and catch-up cost
// extra by design); the one-time creation of the repository's labels is
// not counted. A negative budget skips the budget.
func (w *World) CheckPolite(budget int) []Violation {
	var v []Violation
	calls := w.Calls()
	overlapped := w.overlapping()
	byToken := map[string][]Call{}
	for _, c := range calls {
		byToken[c.Token] = append(byToken[c.Token], c)
	}
	for tok, cs := range byToken {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].Sent < cs[j].Sent })
		var lastMut *Call
		for i := range cs {
			c := cs[i]
			for _, o := range cs[:i] {
				if !o.Window.IsZero() && o.Answered < c.Sent && c.At.Before(o.Window) {
					v = append(v, violation("I6", "%s %s %s at %s inside the window until %s opened by %s %s (%d) at %s",
						tok, c.Method, c.Path, c.At.Format(time.TimeOnly), o.Window.Format(time.TimeOnly), o.Method, o.Path, o.Status, o.At.Format(time.TimeOnly)))
					break
				}
			}
			if c.Service == ServiceGitHub && c.Mutation() {
				if lastMut != nil && c.At.Sub(lastMut.At) < time.Second {
					v = append(v, violation("I6", "%s mutations %s %s and %s %s only %s apart", tok, lastMut.Method, lastMut.Path, c.Method, c.Path, c.At.Sub(lastMut.At)))
				}
				lastMut = &cs[i]
			}
		}
	}
	if budget > 0 {
		perRun := map[int]int{}
		// perIssue counts a sweep's calls made for its issues: not the
		// per-pass ones (the issue listings, the configuration) nor the
		// one-time colouring of a label a repository uses first.
		perIssue := map[int]int{}
		faulted := map[int]bool{}
		for _, c := range calls {
			if c.Faulted() {
				faulted[c.Run] = true
			}
			if c.Service != ServiceGitHub {
				continue
			}
			if c.Costs() && !(c.Method == http.MethodPost && strings.HasSuffix(c.Path, "/labels") && !strings.Contains(c.Path, "/issues/")) {
				perRun[c.Run]++
				if c.Path != "/repos/"+Repo+"/issues" && !strings.Contains(c.Path, "/contents/") && !(c.Method == http.MethodPatch && strings.HasPrefix(c.Path, "/repos/"+Repo+"/labels/")) {
					perIssue[c.Run]++
				}
			}
		}
		// A run that classified several comments did several events' work.
		busy := map[int]bool{}
		for _, n := range w.Issues() {
			prev := 0
			for _, o := range w.Versions(n) {
				if o.Ledger-prev > 1 {
					busy[o.Run] = true
				}
				prev = o.Ledger
			}
		}
		issues := max(1, len(w.Issues()))
		for _, r := range w.Runs() {
			if r.Delivery.Event == "schedule" && !faulted[r.ID] && !overlapped[r.ID] && perIssue[r.ID] > budget*issues {
				// A sweep is one pass over every issue: held to the
				// budget per issue (docs/reliability.md, "Sweeps").
				v = append(v, violation("I6", "sweep run %d made %d API calls for %d issue(s), budget %d per issue", r.ID, perIssue[r.ID], issues, budget))

			}
			if r.Delivery.Event == "schedule" || faulted[r.ID] || busy[r.ID] || overlapped[r.ID] {
				continue
			}
			if perRun[r.ID] > budget {
				v = append(v, violation("I6", "run %d for %s made %d API calls, budget %d", r.ID, r.Delivery, perRun[r.ID], budget))

			}
		}
	}
	for _, a := range w.Acks() {
		if a.Took >= MaxAck {
			v = append(v, violation("I6", "delivery %s answered %d after %s", a.Delivery, a.Status, a.Took))
		}
	}
	return v
}

// overlapping returns the runs that ran at the same time (wall clock) as
// another run: a version conflict makes them read again, so they are not
// held to one event's budget.
func (w *World) overlapping() map[int]bool {
	runs := w.Runs()
	out := map[int]bool{}
	for i, a := range runs {
		for _, b := range runs[i+1:] {
			if a.Cancelled || b.Cancelled {
				continue
			}
			if a.wallStart.Before(b.wallEnd) && b.wallStart.Before(a.wallEnd) {
				out[a.ID], out[b.ID] = true, true
			}
		}
	}
	return out
}

// CheckBounds is I7: every body the bot sent is at most MaxRunes
// characters, no request refused 422 was sent again unchanged (GitHub may
// suspend an App that does), and the state round-trips
// (parse(render(s)) == s). Creating a repository label that a concurrent
// run created first is answered 422 "already_exists" and is not a
// validation failure.
func (w *World) CheckBounds(n int) []Violation {
	var v []Violation
	refused := map[string]int{}
	for _, c := range w.Calls() {
		if c.Service != ServiceGitHub {
			continue
		}
		if c.Status == http.StatusUnprocessableEntity && !(c.Method == http.MethodPost && strings.HasSuffix(c.Path, "/labels") && !strings.Contains(c.Path, "/issues/")) {
			key := c.Method + " " + c.Path + " " + c.Body
			if refused[key]++; refused[key] == 2 {
				v = append(v, violation("I7", "%s %s was refused 422 and sent again unchanged", c.Method, c.Path))
			}
		}
		if !c.Mutation() || c.Body == "" {
			continue
		}
		var b struct {
			Body *string `json:"body"`
		}
		if json.Unmarshal([]byte(c.Body), &b) == nil && b.Body != nil {
			if k := utf8.RuneCountInString(*b.Body); k > MaxRunes {
				v = append(v, violation("I7", "%s %s sent a body of %d characters", c.Method, c.Path, k))
			}
		}
	}
	if s := w.State(n); s != nil {
		if err := RoundTrip(s, w.Key); err != nil {
			v = append(v, violation("I7", "#%d state does not round-trip: %v", n, err))
		}
	}
	return v
}

// RoundTrip renders s and parses it back, and reports any difference.
func RoundTrip(s *state.State, key []byte) error {
	c := *s
	body, err := codec.Render(&c, codec.View{}, key)
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	back, err := codec.Parse(body, codec.Want{Repo: s.Repo, Issue: s.Issue, Key: key})
	if err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	a, b := *s, *back
	a.Sig, b.Sig = "", ""
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		return fmt.Errorf("differs:\n%s\n%s", ja, jb)
	}
	return nil
}
