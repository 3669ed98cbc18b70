// Package subissues is the GitHub sub-issue tracker (tracker: github):
// tasks become issues linked as sub-issues of their epic or of the autopilot
// issue, on any forge that implements tracker.SubIssueAPI. It keeps
// the outbox guarantees (engine/tasksync) with consistent reads and paces
// its creates under GitHub's secondary limits; it never decides which tasks
// to send (the engine and tasksync do).
package subissues

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/state"
	hidden "github.com/autopilot-dev/autopilot/internal/state/marker"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// TaskLabel marks every issue the sub-issue tracker creates.
const TaskLabel = "autopilot/task"

// The rules the tracker asks (engine/tasksync): its pace under GitHub's
// secondary limits (tasksync.GitHubPace), where a child goes when a
// parent is full (tasksync.Place), whose issues it adopts
// (tasksync.Owner), when a bulk create stops (tasksync.OnCreate), the
// "Depends on" line without dependency links (tasksync.DependsOnText),
// and the batch parents' keys and texts (tasksync.BatchKey, BatchText).

// taskArgsRE reads the arguments of the hidden task marker every created
// issue carries on a line of its own (state/marker: task KEY parent=N kind=K).
var taskArgsRE = regexp.MustCompile(`^(autopilot-[0-9a-z-]{1,60}) parent=([1-9][0-9]{0,9}) kind=(epic|task|batch)$`)

type marker struct {
	key    string
	parent int
	kind   string
}

func readMarker(body string) (marker, bool) {
	for _, line := range strings.Split(body, "\n") {
		args, ok := hidden.Args(strings.TrimSpace(line), hidden.Task)
		if !ok {
			continue
		}
		if m := taskArgsRE.FindStringSubmatch(args); m != nil {
			p, _ := strconv.Atoi(m[2])
			return marker{key: m[1], parent: p, kind: m[3]}, true
		}
	}
	return marker{}, false
}

func (m marker) String() string {
	return hidden.Build(hidden.Task, m.key, "parent="+strconv.Itoa(m.parent), "kind="+m.kind)
}

// Tracker is the sub-issue tracker: epics are sub-issues of the autopilot
// issue, tasks sub-issues of their epic (or of the autopilot issue). Keys
// are "#123". It keeps Sync's outbox guarantees with consistent reads: an
// idempotency key is looked up in the parents' sub-issue lists, and then in
// the repository's issues labelled autopilot/task (which also finds an issue
// whose create succeeded but whose link to the parent never happened, and
// links it), before anything is created again.
//
// Creates are paced under GitHub's secondary limits: the budget spent in the
// last minute and hour is worked out from the tasks' SentAt (recorded in the
// state before every create, so the next run knows it), and an item over
// budget comes back as a *RateLimitError naming when the budget frees; the
// flow never waits for it.
type Tracker struct {
	api  tracker.SubIssueAPI
	root int // the autopilot issue
	now  func() time.Time
	// sent are the create times of earlier runs (from the state).
	sent []time.Time
	// spent are this tracker's own content-creating requests.
	spent []time.Time
	// deps is false once the host answered 404 to a dependency request;
	// depsProbed: the autopilot issue's dependency list was read to find out
	// before the first create that has dependencies.
	deps, depsProbed bool
	// tree is what the last walk found: key → issue, and the parents'
	// child counts (batch parents included).
	byKey    map[string]tracker.GHIssue
	children map[int][]tracker.GHIssue
	// detached are batch parents standing on their own, by the parent
	// that was already full (100 sub-issues) when it was needed.
	detached map[int]tracker.GHIssue
	// labeled caches one walk's list of autopilot/task issues.
	labeled []tracker.GHIssue
	walked  bool
	// Requests counts API calls, for tests and logs.
	Requests int
	// limitedUntil is the end of the last limit window GitHub announced
	// (guard.go).
	limitedUntil time.Time
	// owner and ownerApp are our own bot (Trust); impostors are the
	// remarks about marked issues anyone else wrote, remarks the other
	// remarks, both by idempotency key (trust.go).
	owner     string
	ownerApp  int64
	impostors map[string]string
	remarks   map[string]string
}

var _ tracker.Tracker = (*Tracker)(nil)
var _ tracker.Closer = (*Tracker)(nil)

// New builds the sub-issue tracker for the autopilot issue root. tasks
// are the state's tasks: their SentAt tell how much of the creation budget
// earlier runs spent. now is the clock (nil: time.Now).
func New(api tracker.SubIssueAPI, root int, tasks []state.Task, now func() time.Time) *Tracker {
	if now == nil {
		now = time.Now
	}
	g := &Tracker{root: root, now: now, deps: true, sent: tasksync.Spent(tasks)}
	g.api = guard{api: api, g: g}
	return g
}

// IsKey reports whether s is a sub-issue tracker key such as "#12".
func IsKey(s string) bool {
	n, ok := keyNumber(s)
	return ok && n > 0
}

func keyNumber(key string) (int, bool) {
	rest, ok := strings.CutPrefix(key, "#")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n > 0
}

func ghKey(n int) string { return "#" + strconv.Itoa(n) }

func (g *Tracker) toIssue(is tracker.GHIssue, key string) tracker.Issue {
	st := "open"
	if is.Closed {
		st = "closed"
	}
	return tracker.Issue{Key: ghKey(is.Number), IdemKey: key, Status: st, Done: is.Closed, URL: is.URL}
}

// paced is the tracker's own rate limit when need requests do not fit
// the pace (tasksync.Pace.Room) now; nil when they do.
func (g *Tracker) paced(need int) error {
	if wait, ok := tasksync.GitHubPace.Room(g.now(), need, g.sent, g.spent); !ok {
		return &tracker.RateLimitError{RetryAfter: wait, Reason: "autopilot pacing"}
	}
	return nil
}

func (g *Tracker) spend() { g.spent = append(g.spent, g.now()) }

// CheckAuth reads the autopilot issue: the token can see the repository.
func (g *Tracker) CheckAuth(ctx context.Context) error {
	g.Requests++
	_, err := g.api.ReadIssue(ctx, g.root)
	return err
}

// walk lists the sub-issue tree under the autopilot issue: its children,
// and the children of every child that is an epic or a batch parent.
func (g *Tracker) walk(ctx context.Context) error {
	g.byKey, g.children, g.detached, g.labeled = map[string]tracker.GHIssue{}, map[int][]tracker.GHIssue{}, map[int]tracker.GHIssue{}, nil
	queue := []int{g.root}
	for len(queue) > 0 && len(g.children) < 10000 {
		p := queue[0]
		queue = queue[1:]
		g.Requests++
		kids, err := g.api.SubIssues(ctx, p)
		var gone *tracker.GoneError
		if p != g.root && errors.As(err, &gone) {
			// A deleted or transferred epic or batch parent: its own task
			// says so (Statuses); the rest of the tree goes on.
			g.children[p] = nil
			continue
		}
		if err != nil {
			return err
		}
		g.children[p] = kids
		batch := false
		for _, k := range kids {
			m, ok := g.trusted(k)
			if !ok {
				continue
			}
			g.byKey[m.key] = k
			if m.kind != string(state.KindTask) {
				queue = append(queue, k.Number)
			}
			batch = batch || m.kind == "batch"
		}
		if len(kids) >= tracker.MaxSubIssues && !batch {
			// Full without a batch child: its batch parent, if any, stands
			// on its own and is found by its marker.
			b, ok, err := g.detachedBatch(ctx, p)
			if err != nil {
				return err
			}
			if ok {
				g.detached[p] = b
				queue = append(queue, b.Number)
			}
		}
	}
	g.walked = true
	return nil
}

// labeledIssues lists the autopilot/task issues once per walk.
func (g *Tracker) labeledIssues(ctx context.Context) ([]tracker.GHIssue, error) {
	if g.labeled != nil {
		return g.labeled, nil
	}
	g.Requests++
	list, err := g.api.ListLabeled(ctx, TaskLabel, time.Time{})
	if err != nil {
		return nil, err
	}
	g.labeled = list
	if g.labeled == nil {
		g.labeled = []tracker.GHIssue{}
	}
	return g.labeled, nil
}

// detachedBatch finds our batch parent of p that is no sub-issue of p.
func (g *Tracker) detachedBatch(ctx context.Context, p int) (tracker.GHIssue, bool, error) {
	list, err := g.labeledIssues(ctx)
	if err != nil {
		return tracker.GHIssue{}, false, err
	}
	for _, is := range list {
		if m, ok := g.trusted(is); ok && m.kind == "batch" && m.parent == p {
			return is, true, nil
		}
	}
	return tracker.GHIssue{}, false, nil
}

// FindByIdemKeys looks the keys up in the sub-issue tree, then among the
// repository's autopilot/task issues; one found there but not in the tree
// was created by a run that stopped before linking it, and is linked now to
// the parent its marker names.
func (g *Tracker) FindByIdemKeys(ctx context.Context, keys []string) (map[string]tracker.Issue, error) {
	if err := g.walk(ctx); err != nil {
		return nil, err
	}
	out := map[string]tracker.Issue{}
	var missing []string
	for _, k := range keys {
		if is, ok := g.byKey[k]; ok {
			out[k] = g.toIssue(is, k)
		} else {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	g.Requests++
	labeled, err := g.api.ListLabeled(ctx, TaskLabel, time.Time{})
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, k := range missing {
		want[k] = true
	}
	for _, is := range labeled {
		m, ok := readMarker(is.Body)
		if !ok || !want[m.key] {
			continue
		}
		if m, ok = g.trusted(is); !ok {
			continue
		}
		found := g.toIssue(is, m.key)
		if _, linked := g.byKey[m.key]; !linked {
			err := g.link(ctx, m.parent, is)
			switch g.onLink(err, m.parent, true) {
			case tasksync.LinkRefused:
				// Final for this task (a person filed it under another
				// parent, or the parent is full): adopted where it is,
				// the link never sent again, said on the task.
				found.Remark = tasksync.RefusedLinkRemark(m.parent, is.Number, refusal(err).Message)
				g.remark(m.key, found.Remark)
			case tasksync.LinkUnknown:
				return nil, err
			}
		}
		out[m.key] = found
		delete(want, m.key)
	}
	return out, nil
}

// onLink is the rules' verdict on a link's answer (tasksync.OnLink).
func (g *Tracker) onLink(err error, parent int, adopted bool) tasksync.LinkVerdict {
	return tasksync.OnLink(tracker.Classify(err, ""), parent == g.root, adopted)
}

// refusal words a link error that is final for its task: GitHub's 422,
// or a parent that is gone (deleted or transferred); nil for any other.
func refusal(err error) *tracker.ValidationError {
	var ve *tracker.ValidationError
	var gone *tracker.GoneError
	switch {
	case errors.As(err, &ve):
		return ve
	case errors.As(err, &gone):
		return &tracker.ValidationError{Field: "parent", Message: "the parent " + gone.Error()}
	}
	return nil
}

func (g *Tracker) remark(key, text string) {
	if g.remarks == nil {
		g.remarks = map[string]string{}
	}
	g.remarks[key] = text
}

// link adds child under parent, paced; a child that already has that parent
// (GitHub answers 422) counts as linked.
func (g *Tracker) link(ctx context.Context, parent int, child tracker.GHIssue) error {
	if err := g.paced(1); err != nil {
		return err
	}
	g.Requests++
	g.spend()
	err := g.api.AddSubIssue(ctx, parent, child.ID)
	var ve *tracker.ValidationError
	if errors.As(err, &ve) && g.walked && g.isChild(parent, child.Number) {
		err = nil
	}
	if err == nil {
		g.children[parent] = append(g.children[parent], child)
		if m, ok := readMarker(child.Body); ok {
			g.byKey[m.key] = child
		}
	}
	return err
}

func (g *Tracker) isChild(parent, n int) bool {
	for _, k := range g.children[parent] {
		if k.Number == n {
			return true
		}
	}
	return false
}

// errNotSent is a per-item error: an earlier item stopped the request.
var errNotSent = errors.New("not sent: an earlier create stopped this request")

// CreateBulk creates the items one by one: the issue (title, escaped
// description, points, marker, label) and its link to the parent; Sync
// sends the dependencies afterwards (LinkDependency). An item whose issue was created but not linked is left out
// of the results (outcome unknown): the next lookup finds it by its label
// and marker and links it. Items over the pacing budget, or after a
// secondary rate limit, come back as *RateLimitError, not created.
func (g *Tracker) CreateBulk(ctx context.Context, items []tracker.Item) ([]tracker.CreateResult, error) {
	if !g.walked {
		if err := g.walk(ctx); err != nil {
			return nil, err
		}
	}
	var out []tracker.CreateResult
	var stop error
	for _, it := range items {
		if stop != nil {
			out = append(out, tracker.CreateResult{IdemKey: it.IdemKey, Err: stop})
			continue
		}
		is, linked, err := g.createOne(ctx, it)
		v := tasksync.OnCreate(tracker.Classify(err, ""), len(out) == 0, is.Number != 0 && !linked)
		if v.Abort {
			return nil, err
		}
		switch {
		case v.Record && err == nil:
			res := g.toIssue(is, it.IdemKey)
			res.Remark = g.remarks[it.IdemKey]
			out = append(out, tracker.CreateResult{IdemKey: it.IdemKey, Issue: res})
		case v.Record:
			out = append(out, tracker.CreateResult{IdemKey: it.IdemKey, Err: itemErr(err)})
		}
		var rl *tracker.RateLimitError
		switch {
		case v.Stop == tasksync.StopLimited && errors.As(err, &rl):
			stop = rl
		case v.Stop != tasksync.StopNone:
			stop = errNotSent
		}
	}
	return out, nil
}

// itemErr is an item's error as CreateBulk answers it: the rate limit or
// the refusal itself, else the error.
func itemErr(err error) error {
	var rl *tracker.RateLimitError
	var ve *tracker.ValidationError
	switch {
	case errors.As(err, &rl):
		return rl
	case errors.As(err, &ve):
		return ve
	}
	return err
}

// parentFor picks where a child of parent p goes: p itself while it holds
// fewer than 99 children besides its batch parent; else p's batch parent,
// created as p's 100th child when first needed. So more than 100 children
// spill into numbered batch parents, each a sub-issue of the one before.
// A batch parent is looked up by its marker before it is created, like any
// task.
func (g *Tracker) parentFor(ctx context.Context, p, n int) (int, error) {
	real := 0
	var batch *tracker.GHIssue
	for i, k := range g.children[p] {
		if m, ok := g.trusted(k); ok && m.kind == "batch" {
			batch = &g.children[p][i]
			continue
		}
		real++
	}
	if b, ok := g.detached[p]; ok && batch == nil {
		batch = &b
	}
	switch tasksync.Place(real, batch != nil, n, tracker.MaxSubIssues) {
	case tasksync.PlaceHere:
		return p, nil
	case tasksync.PlaceInBatch:
		return g.parentFor(ctx, batch.Number, n+1)
	case tasksync.PlaceFull:
		return 0, &tracker.ValidationError{Field: "tasks", Message: tasksync.FullMessage(p, tracker.MaxSubIssues)}
	}
	key := tasksync.BatchKey(g.root, p, n+1)
	// A parent already holding GitHub's 100 sub-issues (people's, say)
	// cannot take its batch parent as a sub-issue: the batch parent then
	// stands on its own, found by its marker at every walk.
	full := len(g.children[p]) >= tracker.MaxSubIssues
	g.labeled = nil // a consistent read now, not the walk's
	labeled, err := g.labeledIssues(ctx)
	if err != nil {
		return 0, err
	}
	for _, is := range labeled {
		if m, ok := g.trusted(is); ok && m.key == key {
			return g.placeBatch(ctx, p, is, full, n)
		}
	}
	title, intro := tasksync.BatchText(g.root, p, n+1, full, tracker.MaxSubIssues)
	body := intro + "\n\n" + marker{key: key, parent: p, kind: "batch"}.String()
	is, err := g.createIssue(ctx, title, body)
	if err != nil {
		return 0, err
	}
	return g.placeBatch(ctx, p, is, full, n)
}

// placeBatch links the batch parent is under p, or, when p is full, keeps
// it on its own; it returns where p's next child goes.
func (g *Tracker) placeBatch(ctx context.Context, p int, is tracker.GHIssue, full bool, n int) (int, error) {
	if full {
		g.detached[p] = is
		return g.parentFor(ctx, is.Number, n+1)
	}
	if err := g.link(ctx, p, is); err != nil {
		return 0, err
	}
	return g.parentFor(ctx, is.Number, n+1)
}

func (g *Tracker) createIssue(ctx context.Context, title, body string) (tracker.GHIssue, error) {
	if err := g.paced(2); err != nil {
		return tracker.GHIssue{}, err
	}
	g.Requests++
	g.spend()
	return g.api.CreateIssue(ctx, title, body, []string{TaskLabel})
}

// createOne creates one item; linked tells whether the link stands.
func (g *Tracker) createOne(ctx context.Context, it tracker.Item) (tracker.GHIssue, bool, error) {
	logical := g.root
	if n, ok := keyNumber(it.EpicKey); ok && it.Kind != state.KindEpic {
		logical = n
	}
	if err := g.paced(2 + len(it.DependsOn)); err != nil {
		return tracker.GHIssue{}, false, err
	}
	parent, err := g.parentFor(ctx, logical, 1)
	if err != nil {
		return tracker.GHIssue{}, false, err
	}
	kind := state.KindTask
	if it.Kind == state.KindEpic {
		kind = state.KindEpic
	}
	var b strings.Builder
	if d := strings.TrimSpace(it.Description); d != "" {
		b.WriteString(textsafe.Clip(textsafe.Escape(d), 60000))
		b.WriteString("\n\n")
	}
	if it.Points > 0 {
		fmt.Fprintf(&b, "Points: %s\n\n", strconv.FormatFloat(it.Points, 'f', -1, 64))
	}
	if len(it.DependsOn) > 0 && !g.depsProbed {
		g.depsProbed = true
		g.Requests++
		if _, err := g.api.BlockedBy(ctx, g.root); errors.Is(err, tracker.ErrNoDependencies) {
			g.deps = false
		}
	}
	var blockers []int
	for _, d := range it.DependsOn {
		if is, ok := g.byKey[d]; ok {
			blockers = append(blockers, is.Number)
		}
	}
	if on := tasksync.DependsOnText(g.deps, blockers); on != "" {
		b.WriteString(on + "\n\n")
	}
	b.WriteString(marker{key: it.IdemKey, parent: parent, kind: string(kind)}.String())
	title := strings.TrimSpace(strings.ReplaceAll(it.Title, "\n", " "))
	if title == "" {
		title = "Task " + it.IdemKey
	}
	is, err := g.createIssue(ctx, textsafe.Truncate(title, 256), b.String())
	if err != nil {
		return tracker.GHIssue{}, false, err
	}
	err = g.link(ctx, parent, is)
	if g.onLink(err, parent, false) == tasksync.LinkToRoot {
		// Its epic (or batch parent) is gone: the autopilot issue takes it.
		var gone *tracker.GoneError
		errors.As(err, &gone)
		if err = g.link(ctx, g.root, is); err == nil {
			g.remark(it.IdemKey, tasksync.RootRemark(g.root, parent, gone.Gone))
			return is, true, nil
		}
	}
	switch g.onLink(err, g.root, false) {
	case tasksync.LinkRefused:
		// Final: the issue exists, unlinked; the task keeps it and says so.
		g.remark(it.IdemKey, tasksync.RefusedLinkRemark(parent, is.Number, refusal(err).Message))
		return is, true, nil
	case tasksync.LinkUnknown:
		return is, false, err
	}
	return is, true, nil
}

var _ tracker.DependencyLinker = (*Tracker)(nil)

// LinkDependency adds blocker to the issue key's blocked_by list, paced.
// GitHub answers 422 both for a link that exists and for one it refuses;
// the issue's list tells which.
func (g *Tracker) LinkDependency(ctx context.Context, key, blocker string) error {
	n, ok := keyNumber(key)
	b, okb := keyNumber(blocker)
	if !ok || !okb {
		return &tracker.ValidationError{Field: "key", Message: fmt.Sprintf("%q or %q is not an issue number such as #12", key, blocker)}
	}
	if !g.deps {
		return tracker.ErrNoDependencies
	}
	id, err := g.issueID(ctx, b)
	if err != nil {
		return err
	}
	if err := g.paced(1); err != nil {
		return err
	}
	g.Requests++
	g.spend()
	err = g.api.AddBlockedBy(ctx, n, id)
	if errors.Is(err, tracker.ErrNoDependencies) {
		g.deps = false
		return err
	}
	var ve *tracker.ValidationError
	if errors.As(err, &ve) {
		g.Requests++
		list, lerr := g.api.BlockedBy(ctx, n)
		if lerr != nil {
			return lerr
		}
		for _, is := range list {
			if is.Number == b {
				return nil
			}
		}
	}
	return err
}

// issueID returns the numeric id of issue n, from the last walk or read.
func (g *Tracker) issueID(ctx context.Context, n int) (int64, error) {
	for _, kids := range g.children {
		for _, k := range kids {
			if k.Number == n && k.ID != 0 {
				return k.ID, nil
			}
		}
	}
	g.Requests++
	is, err := g.api.ReadIssue(ctx, n)
	return is.ID, err
}

// Statuses reads the tree (a few list requests, not one per task) and
// reports every listed key; keys not in the tree are read one by one.
func (g *Tracker) Statuses(ctx context.Context, keys []string) (map[string]tracker.Issue, error) {
	if err := g.walk(ctx); err != nil {
		return nil, err
	}
	byNum := map[int]tracker.GHIssue{}
	for _, kids := range g.children {
		for _, k := range kids {
			byNum[k.Number] = k
		}
	}
	out := map[string]tracker.Issue{}
	for _, k := range keys {
		n, ok := keyNumber(k)
		if !ok {
			continue
		}
		is, ok := byNum[n]
		if !ok {
			g.Requests++
			got, err := g.api.ReadIssue(ctx, n)
			var ve *tracker.ValidationError
			var gone *tracker.GoneError
			if errors.As(err, &gone) {
				// That task's alone: it is followed no more.
				out[k] = tracker.Issue{Key: k, Gone: gone.Gone, Remark: goneRemark(gone)}
				continue
			}
			if errors.As(err, &ve) {
				continue
			}
			if err != nil {
				return nil, err
			}
			is = got
		}
		m, _ := readMarker(is.Body)
		out[k] = g.toIssue(is, m.key)
	}
	return out, nil
}

// goneRemark says where a transferred issue went.
func goneRemark(gone *tracker.GoneError) string {
	if gone.Gone == state.IssueTransferred && gone.MovedTo != "" {
		return "now " + gone.MovedTo
	}
	return ""
}

// CloseIssue closes a task's issue (close_children); a closed one is left
// alone.
func (g *Tracker) CloseIssue(ctx context.Context, key string) error {
	n, ok := keyNumber(key)
	if !ok {
		return &tracker.ValidationError{Field: "key", Message: fmt.Sprintf("%q is not an issue number such as #12", key)}
	}
	g.Requests++
	is, err := g.api.ReadIssue(ctx, n)
	if err != nil {
		return err
	}
	if is.Closed {
		return nil
	}
	if err := g.paced(1); err != nil {
		return err
	}
	g.Requests++
	g.spend()
	return g.api.CloseIssue(ctx, n)
}
