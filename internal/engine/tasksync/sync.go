package tasksync

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// Result is the outcome of one sync. The caller persists Tasks.
type Result struct {
	// Tasks are the input tasks with their new sync state.
	Tasks []state.Task
	// Created counts issues created; Found tasks whose earlier create was
	// found by idempotency key; Failed tasks the tracker rejected; Ticked
	// tasks whose Done flag changed.
	Created, Found, Failed, Ticked int
	// Waiting counts tasks still in the outbox (or owing dependency links).
	Waiting int
	// Paused is PausedAuth when the tracker refused the credentials.
	Paused string
	// RetryAt, when set, is the earliest time the next sync may send a
	// request (the next sync's Options.NotBefore).
	RetryAt time.Time
	// Requests counts requests sent, retries included.
	Requests int
	// Note says, for people, why work was left over.
	Note string
}

// WaitingNote is what the state says about tasks the sync left waiting
// (the Tasks section already says "<tracker>: pending (n)"; the note says
// why); empty when none waits.
func (r Result) WaitingNote() string {
	if r.Waiting == 0 {
		return ""
	}
	if r.Note == "" {
		return "waiting for the next sync"
	}
	return r.Note
}

type phase int

const (
	pStart phase = iota
	pLookup
	pEpics
	pTasks
	pLinks
	pStatuses
	pDone
)

// Sync is one pass of the outbox over an issue's tasks: look up the outbox
// tasks by idempotency key (adopting issues that exist), create the rest
// (epics first, persisting the "sending" marks before each kind is sent),
// link dependencies, read back the statuses of issues created before.
// Tracker trouble never fails it: it stops early and says why.
type Sync struct {
	core
	tasks      []state.Task
	res        Result
	ph         phase
	stale      map[int]bool // "sending" tasks not found past the search lag
	createdNow map[int]bool // created (or found) in this sync
	err        error

	// the kind being created: its tasks, their state before the "sending"
	// mark, and the next chunk
	idx   []int
	prev  []state.Task
	start int
}

// NewSync starts a sync of tasks (not modified). It fails only for bad
// input: an outbox task without a usable, unique idempotency key.
func NewSync(tasks []state.Task, o Options) (*Sync, error) {
	o = o.withDefaults()
	s := &Sync{core: core{o: o, now: o.Now}, tasks: Clone(tasks), stale: map[int]bool{}, createdNow: map[int]bool{}}
	if err := checkIdemKeys(s.tasks); err != nil {
		s.done = true
		return s, err
	}
	return s, nil
}

// Next is the op to perform now; nil when the sync is over.
func (s *Sync) Next() Op {
	for !s.done {
		if op := s.pending(); op != nil {
			return op
		}
		s.step()
	}
	return nil
}

// Apply feeds the outcome of the op Next returned.
func (s *Sync) Apply(o Outcome) {
	if s.cur == nil {
		return
	}
	s.answer(o)
}

// Err is the sync's failure: a Persist refused (nothing was sent after it).
func (s *Sync) Err() error { return s.err }

// Result ends the sync with what the tracker remembers (remarks, a limit
// window) and returns its outcome.
func (s *Sync) Result(x Extras) Result {
	for key, text := range x.Remarks {
		text = textsafe.Truncate(text, maxRemark)
		for i := range s.tasks {
			if t := &s.tasks[i]; t.IdemKey == key && t.Remark != text {
				t.Remark = text
				s.note("task %s: %s", t.ID, text)
			}
		}
	}
	s.limited(x.LimitedUntil)
	s.res.Waiting = 0
	for i, t := range s.tasks {
		if e, _, _ := s.owedDeps(i); inOutbox(t) || len(e) > 0 {
			s.res.Waiting++
		}
	}
	s.res.Tasks = s.tasks
	s.res.Paused, s.res.RetryAt, s.res.Requests = s.paused, s.retryAt, s.requests
	s.res.Note = strings.Join(s.notes, "; ")
	return s.res
}

func (s *Sync) halt() { s.done = true }

// step moves on to the next phase's first op, or ends the sync.
func (s *Sync) step() {
	switch s.ph {
	case pStart:
		s.ph = pLookup
		if !s.hasWork() {
			s.halt()
			return
		}
		if s.now.Before(s.o.NotBefore) {
			s.retryAt = s.o.NotBefore
			s.note("%s asked us to wait until %s", s.o.Name, stamp(s.o.NotBefore))
			s.halt()
		}
	case pLookup:
		s.ph = pEpics
		s.lookup()
	case pEpics:
		s.ph = pTasks
		s.createKind(state.KindEpic)
	case pTasks:
		s.ph = pLinks
		s.createKind(state.KindTask)
	case pLinks:
		if !s.nextLink() {
			s.ph = pStatuses
		}
	case pStatuses:
		s.ph = pDone
		s.statuses()
	default:
		s.halt()
	}
}

func (s *Sync) hasWork() bool {
	for _, t := range s.tasks {
		if inOutbox(t) || (t.Sync == state.SyncCreated && t.Key != "" && t.Gone == "") {
			return true
		}
	}
	return false
}

// haltOn notes an error the politeness rules did not already explain and
// stops.
func (s *Sync) haltOn(what string, e *Refusal, halted bool) {
	if !halted {
		s.note("%s: %v", what, e.Msg)
	}
	s.halt()
}

// lookup looks up every outbox task by idempotency key before anything is
// created. A "sending" task's create was sent but its outcome never
// recorded; a "pending" one may exist when the state was lost and restored.
// Found tasks are adopted; a "sending" one not found is sent again only
// once the search lag is over.
func (s *Sync) lookup() {
	var idx []int
	var keys []string
	for i, t := range s.tasks {
		if inOutbox(t) {
			idx = append(idx, i)
			keys = append(keys, t.IdemKey)
		}
	}
	if len(idx) == 0 {
		return
	}
	s.send(Lookup{IdemKeys: keys}, true, func(o Outcome, halted bool) {
		if o.Err != nil {
			s.haltOn("look up tasks by idempotency key", o.Err, halted)
			return
		}
		lagging := 0
		for _, i := range idx {
			t := &s.tasks[i]
			if is, ok := o.Found[t.IdemKey]; ok {
				markCreated(t, is)
				s.createdNow[i] = true
				s.res.Found++
				continue
			}
			if t.Sync != state.SyncSending {
				continue
			}
			if s.now.Sub(t.SentAt) < s.o.SearchLag {
				lagging++
				continue
			}
			s.stale[i] = true
		}
		if lagging > 0 {
			s.note("%d waiting for %s search lag", lagging, s.o.Name)
		}
	})
}

// createKind marks the tasks of one kind that can be sent now "sending"
// and asks for that to be persisted before the first chunk goes out.
func (s *Sync) createKind(kind state.TaskKind) {
	s.idx = s.readyToCreate(kind)
	if len(s.idx) == 0 {
		return
	}
	s.prev = make([]state.Task, len(s.idx))
	for n, i := range s.idx {
		s.prev[n] = s.tasks[i]
		t := &s.tasks[i]
		t.Sync, t.SentAt, t.Error = state.SyncSending, s.now, ""
	}
	s.send(Persist{Tasks: Clone(s.tasks)}, false, func(o Outcome, _ bool) {
		if o.Failed != nil {
			s.restore(0)
			s.err = fmt.Errorf("persist outbox before %s create: %w", s.o.Name, o.Failed)
			s.halt()
			return
		}
		s.start = 0
		s.chunk()
	})
}

// restore puts the kind's tasks from index from on back as they were
// before the "sending" mark: they were never sent.
func (s *Sync) restore(from int) {
	for n := from; n < len(s.idx); n++ {
		s.tasks[s.idx[n]] = s.prev[n]
	}
}

// chunk sends the next at most MaxBulk tasks of the kind.
func (s *Sync) chunk() {
	if s.start >= len(s.idx) {
		return
	}
	start, end := s.start, min(s.start+MaxBulk, len(s.idx))
	chunk := s.idx[start:end]
	items := make([]Item, len(chunk))
	for n, i := range chunk {
		items[n] = s.item(s.tasks[i])
	}
	s.send(Create{Items: items}, false, func(o Outcome, halted bool) {
		e := o.Err
		switch {
		case e == nil:
			if s.applyResults(chunk, o.Results) {
				s.restore(end)
				s.halt()
				return
			}
		case e.Class == Rejected && !halted:
			for _, i := range chunk {
				s.fail(&s.tasks[i], e)
			}
		case halted && (e.Class == Auth || e.Class == RateLimited):
			// Not committed: the tracker refused the request as a whole.
			s.restore(start)
			s.halt()
			return
		default:
			// Its outcome is unknown: it stays "sending" for the next lookup.
			s.note("%d create outcomes unknown (%v); looked up by idempotency key at the next sync", len(chunk), e.Msg)
			s.restore(end)
			s.haltOn("create issues", e, halted)
			return
		}
		s.start = end
		s.chunk()
	})
}

// readyToCreate lists the outbox tasks of one kind that can be sent now:
// pending ones, and "sending" ones not found past the search lag. Tasks
// whose epic is still on its way are held.
func (s *Sync) readyToCreate(kind state.TaskKind) []int {
	var idx []int
	held := 0
	for i, t := range s.tasks {
		if kindOf(t) != kind {
			continue
		}
		if t.Sync != "" && t.Sync != state.SyncPending && !(t.Sync == state.SyncSending && s.stale[i]) {
			continue
		}
		if _, ready := s.epicFor(t); !ready {
			held++
			continue
		}
		idx = append(idx, i)
	}
	if held > 0 {
		s.note("%d held until their epic is in %s", held, s.o.Name)
	}
	return idx
}

// epicFor resolves a task's epic reference (local id, epic title or a
// tracker key) to a tracker key. ready is false while the epic itself is
// still on its way. A task whose epic failed, or whose epic's issue is
// gone, is created unlinked rather than blocked on a person.
func (s *Sync) epicFor(t state.Task) (key string, ready bool) {
	ref := strings.TrimSpace(t.Epic)
	if ref == "" {
		return "", true
	}
	for _, e := range s.tasks {
		if e.Kind != state.KindEpic || (e.ID != ref && !strings.EqualFold(strings.TrimSpace(e.Title), ref)) {
			continue
		}
		switch {
		case e.Sync == state.SyncCreated && e.Gone != "":
			return "", true
		case e.Sync == state.SyncCreated:
			return e.Key, true
		case e.Sync == state.SyncFailed:
			return "", true
		default:
			return "", false
		}
	}
	if IsKey(ref) {
		return ref, true
	}
	return "", true
}

func (s *Sync) item(t state.Task) Item {
	epic, _ := s.epicFor(t)
	return Item{
		IdemKey:     t.IdemKey,
		Kind:        kindOf(t),
		Title:       SafeTitle(t.Title),
		Description: t.Description,
		EpicKey:     epic,
		Points:      t.Points,
		DependsOn:   s.depKeys(t),
	}
}

// depKeys resolves a task's depends_on (local ids or titles) to the
// idempotency keys of those tasks.
func (s *Sync) depKeys(t state.Task) []string {
	var out []string
	for _, d := range t.DependsOn {
		d = strings.TrimSpace(d)
		for _, o := range s.tasks {
			if o.IdemKey != t.IdemKey && (o.ID == d || strings.EqualFold(strings.TrimSpace(o.Title), d)) {
				out = append(out, o.IdemKey)
				break
			}
		}
	}
	return out
}

func (s *Sync) fail(t *state.Task, e *Refusal) {
	t.Sync = state.SyncFailed
	t.Error = e.Msg
	s.res.Failed++
}

// applyResults records the per-item outcomes of one bulk create. It
// reports whether items were rate-limited (they go back to the outbox and
// nothing more is sent in this sync).
func (s *Sync) applyResults(chunk []int, results []ItemResult) (limited bool) {
	byKey := make(map[string]ItemResult, len(results))
	for _, r := range results {
		byKey[r.IdemKey] = r
	}
	unknown := 0
	for _, i := range chunk {
		t := &s.tasks[i]
		r, ok := byKey[t.IdemKey]
		switch {
		case !ok:
			unknown++ // stays "sending": found by idempotency key later
		case r.Err == nil:
			markCreated(t, r.Issue)
			s.createdNow[i] = true
			s.res.Created++
		case r.Err.Class == Rejected:
			s.fail(t, r.Err)
		case r.Err.Class == RateLimited:
			t.Sync, t.SentAt, t.Error = state.SyncPending, time.Time{}, ""
			wait := r.Err.RetryAfter
			if wait <= 0 {
				wait = DefaultRetryAfter
			}
			if at := s.now.Add(wait); at.After(s.retryAt) {
				s.retryAt = at
			}
			limited = true
		default:
			// The tracker reported this item as not created: back to the outbox.
			t.Sync, t.SentAt, t.Error = state.SyncPending, time.Time{}, r.Err.Msg
		}
	}
	if unknown > 0 {
		s.note("%d create outcomes missing from %s's answer; looked up by idempotency key at the next sync", unknown, s.o.Name)
	}
	if limited {
		s.note("%s rate limit; next create not before %s", s.o.Name, stamp(s.retryAt))
	}
	return limited
}

// owedDeps returns, for task i, the depends_on entries whose link is still
// owed, with the index of the blocking task; ready tells whether both
// issues exist. Entries naming no task, or a task that failed or is gone,
// are not owed.
func (s *Sync) owedDeps(i int) (entries []string, blockers []int, ready []bool) {
	if !s.o.DependencyLinks {
		return nil, nil, nil
	}
	t := s.tasks[i]
	for _, d := range t.DependsOn {
		d = strings.TrimSpace(d)
		if linked(t, d) {
			continue
		}
		for j, o := range s.tasks {
			if j == i || !(o.ID == d || strings.EqualFold(strings.TrimSpace(o.Title), d)) {
				continue
			}
			if o.Sync == state.SyncFailed || t.Sync == state.SyncFailed || o.Gone != "" || t.Gone != "" {
				break
			}
			entries, blockers = append(entries, d), append(blockers, j)
			ready = append(ready, t.Sync == state.SyncCreated && t.Key != "" && o.Sync == state.SyncCreated && o.Key != "")
			break
		}
	}
	return entries, blockers, ready
}

// linked reports whether the depends_on entry d (trimmed) is recorded as
// linked. Both sides are compared trimmed: DepsLinked holds trimmed
// entries, older states may hold them as written.
func linked(t state.Task, d string) bool {
	return slices.ContainsFunc(t.DepsLinked, func(l string) bool { return strings.TrimSpace(l) == d })
}

// nextLink sends the first dependency link still owed whose two issues
// exist; false when none is. A link is never sent twice on purpose, and
// one that exists already counts as sent, so a lost answer costs nothing.
// A rate limit stops the links until RetryAt; a later sync goes on.
func (s *Sync) nextLink() bool {
	for i := range s.tasks {
		entries, blockers, ready := s.owedDeps(i)
		for k, d := range entries {
			if !ready[k] {
				continue
			}
			t := &s.tasks[i]
			blocker := s.tasks[blockers[k]].Key
			s.sendRaw(LinkDep{Key: t.Key, Blocker: blocker}, func(o Outcome, _ bool) {
				e := o.Err
				switch {
				case e == nil || e.Class == NoDependencies:
					t.DepsLinked = append(t.DepsLinked, d)
				case e.Class == Rejected:
					t.DepsLinked = append(t.DepsLinked, d)
					s.note("dependency of %s on %s refused: %v", t.Key, blocker, e.Msg)
				case e.Class == Gone:
					t.DepsLinked = append(t.DepsLinked, d)
					s.note("dependency of %s on %s not made: %v", t.Key, blocker, e.Msg)
				case e.Class == RateLimited:
					wait := e.RetryAfter
					if wait <= 0 {
						wait = DefaultRetryAfter
					}
					if at := s.now.Add(wait); at.After(s.retryAt) {
						s.retryAt = at
					}
					s.note("tracker rate limit; dependency links go on after %s", stamp(s.retryAt))
					s.halt()
				default:
					s.haltOn("link dependencies", e, false)
				}
			})
			return true
		}
	}
	return false
}

// statuses reads the status of issues created before this sync: a task
// whose issue is done is ticked, one whose issue is gone is followed no
// more (that task's alone).
func (s *Sync) statuses() {
	var keys []string
	for i, t := range s.tasks {
		if t.Sync == state.SyncCreated && t.Key != "" && t.Gone == "" && !s.createdNow[i] {
			keys = append(keys, t.Key)
		}
	}
	if len(keys) == 0 {
		return
	}
	s.send(ReadStatuses{Keys: keys}, true, func(o Outcome, halted bool) {
		if o.Err != nil {
			s.haltOn("read issue statuses", o.Err, halted)
			return
		}
		for i := range s.tasks {
			t := &s.tasks[i]
			is, ok := o.Found[t.Key]
			if !ok || t.Sync != state.SyncCreated || t.Gone != "" || s.createdNow[i] {
				continue
			}
			if is.Gone != "" {
				t.Gone = is.Gone
				if is.Remark != "" {
					t.Remark = textsafe.Truncate(is.Remark, maxRemark)
				}
				s.note("task %s: issue %s %s", t.ID, t.Key, is.Gone)
				continue
			}
			if t.Done != is.Done {
				t.Done = is.Done
				s.res.Ticked++
			}
			if is.URL != "" {
				t.URL = is.URL
			}
		}
	})
}

// maxRemark bounds one task's remark in the state (runes).
const maxRemark = 300

func markCreated(t *state.Task, is Issue) {
	t.Sync = state.SyncCreated
	t.Key = is.Key
	t.URL = is.URL
	t.Done = is.Done
	t.Error = ""
	if is.Remark != "" {
		t.Remark = textsafe.Truncate(is.Remark, maxRemark)
	}
}

func inOutbox(t state.Task) bool {
	return t.Sync == "" || t.Sync == state.SyncPending || t.Sync == state.SyncSending
}

func kindOf(t state.Task) state.TaskKind {
	if t.Kind == state.KindEpic {
		return state.KindEpic
	}
	return state.KindTask
}

// SafeTitle is a task's title as the tracker gets it: the same text
// safety as every user text the bot echoes.
func SafeTitle(title string) string { return strings.TrimSpace(textsafe.Code(title)) }

var keyRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]*-[1-9][0-9]*$`)

// IsKey reports whether s looks like a tracker issue key such as "PROJ-12".
func IsKey(s string) bool { return keyRE.MatchString(s) }

// Clone copies tasks deeply enough that the copy's slices are its own.
func Clone(in []state.Task) []state.Task {
	out := make([]state.Task, len(in))
	for i, t := range in {
		out[i] = t
		if t.DependsOn != nil {
			out[i].DependsOn = append([]string(nil), t.DependsOn...)
		}
		if t.DepsLinked != nil {
			out[i].DepsLinked = append([]string(nil), t.DepsLinked...)
		}
	}
	return out
}

// checkIdemKeys rejects outbox tasks without a usable, unique idempotency key.
func checkIdemKeys(tasks []state.Task) error {
	seen := map[string]string{}
	for _, t := range tasks {
		if !inOutbox(t) {
			continue
		}
		if t.IdemKey == "" || len(t.IdemKey) > 255 || strings.IndexFunc(t.IdemKey, unicode.IsSpace) >= 0 {
			return fmt.Errorf("tracker sync: task %s has no usable idempotency key %q", t.ID, t.IdemKey)
		}
		if other, dup := seen[t.IdemKey]; dup {
			return fmt.Errorf("tracker sync: tasks %s and %s share idempotency key %s", other, t.ID, t.IdemKey)
		}
		seen[t.IdemKey] = t.ID
	}
	return nil
}

// RetryFailed returns the tasks with every "failed" task put back in the
// outbox, for `/autopilot tasks retry` after a person fixed what the
// tracker rejected, and every task whose issue was deleted or not found,
// to be created again (a transferred one is followed no more). The input
// is not modified.
func RetryFailed(tasks []state.Task) []state.Task {
	out := Clone(tasks)
	for i := range out {
		t := &out[i]
		switch {
		case t.Sync == state.SyncFailed:
			t.Sync, t.Error, t.SentAt = state.SyncPending, "", time.Time{}
		case t.Gone == state.IssueDeleted || t.Gone == state.IssueNotFound:
			t.Sync, t.Key, t.URL, t.SentAt = state.SyncPending, "", "", time.Time{}
			t.Gone, t.Remark, t.Done, t.DepsLinked = "", "", false, nil
		}
	}
	return out
}

// FirstCreated is which of two issues carrying the same idempotency key is
// adopted (two runs both created it before either saw the other): the one
// created first, the lower number of its key ("PROJ-12" before
// "PROJ-13"); a, the one met first, on a tie.
func FirstCreated(a, b string) string {
	if keyNumber(b) < keyNumber(a) {
		return b
	}
	return a
}

// keyNumber is the numeric part of an issue key such as "PROJ-12".
func keyNumber(key string) int {
	n, _ := strconv.Atoi(key[strings.LastIndexByte(key, '-')+1:])
	return n
}
