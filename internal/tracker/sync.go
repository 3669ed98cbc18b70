package tracker

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// Defaults of SyncOptions.
const (
	DefaultSearchLag  = 90 * time.Second
	DefaultMaxWait    = 60 * time.Second
	DefaultAttempts   = 3
	DefaultBackoff    = 2 * time.Second
	DefaultRetryAfter = 60 * time.Second // when a 429 names no Retry-After
)

// PausedAuth is SyncResult.Paused after the tracker refused the credentials.
const PausedAuth = "auth"

// maxRateWaits bounds how often one request waits out a 429 inside one Sync.
const maxRateWaits = 3

// SyncOptions configures Sync. Zero values take the defaults above.
type SyncOptions struct {
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Sleep waits; default a timer that honours ctx.
	Sleep func(context.Context, time.Duration) error
	// SearchLag is how long a created issue may stay invisible to search
	// (Jira Cloud search is eventually consistent); default 90s. A task
	// whose create outcome is unknown is re-created only after this long.
	SearchLag time.Duration
	// MaxWait is the longest single wait (Retry-After or backoff) Sync may
	// sleep through; longer waits stop the sync and report RetryAt.
	// Default 60s; negative means never wait.
	MaxWait time.Duration
	// Persist writes the tasks to the state (the caller's state comment).
	// Sync calls it after marking tasks "sending" and before sending their
	// create, and sends nothing if it fails. Required when there is
	// anything to create.
	Persist func([]state.Task) error
	// NotBefore is the end of a Retry-After window reported by an earlier
	// sync; Sync sends no request before it.
	NotBefore time.Time
	// Rand returns a number in [0, 1) for backoff jitter; default math/rand/v2.
	Rand func() float64
	// Attempts is how many times an idempotent request (search, status) is
	// tried on transient errors; default 3. Creates are never re-sent on a
	// transient error: their outcome is looked up by idempotency key.
	Attempts int
	// Backoff is the first retry delay, doubled per attempt, with jitter;
	// default 2s.
	Backoff time.Duration
	// Name is the tracker's name in notes and errors: "Jira", or "GitHub"
	// for sub-issues; default "Tracker".
	Name string
}

func (o SyncOptions) withDefaults() SyncOptions {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
	if o.SearchLag <= 0 {
		o.SearchLag = DefaultSearchLag
	}
	if o.MaxWait == 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	if o.Attempts <= 0 {
		o.Attempts = DefaultAttempts
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.Name == "" {
		o.Name = "Tracker"
	}
	return o
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// SyncResult is the outcome of one Sync. The caller persists Tasks.
type SyncResult struct {
	// Tasks are the input tasks with their new sync state.
	Tasks []state.Task
	// Created counts issues created by this sync; Found counts tasks whose
	// earlier create was found by idempotency key; Failed counts tasks Jira
	// rejected in this sync; Ticked counts tasks whose Done flag changed.
	Created, Found, Failed, Ticked int
	// Waiting counts tasks still in the outbox (pending or sending) after
	// this sync: "Jira sync pending (n)".
	Waiting int
	// Paused is PausedAuth when the tracker refused the credentials; the
	// caller says so once and stops syncing until told to retry.
	Paused string
	// RetryAt, when set, is the earliest time the next sync may send a
	// request (pass it back as SyncOptions.NotBefore).
	RetryAt time.Time
	// Requests counts calls made to the tracker, retries included.
	Requests int
	// Note says, for people, why work was left over (empty when none was).
	Note string
}

// haltError stops a sync without failing it; the cause is kept.
type haltError struct{ cause error }

func (h *haltError) Error() string { return "sync halted: " + h.cause.Error() }
func (h *haltError) Unwrap() error { return h.cause }

// Sync moves tasks through the outbox: it looks up the outbox tasks by
// idempotency key (adopting issues that already exist, e.g. after a lost
// response or a restored state), creates the rest (epics first, at most MaxBulk per
// request, persisting the "sending" mark before each batch is sent), and
// reads back the status of created ones. Trouble with the tracker never
// makes Sync fail: it stops early and says why in the result. Sync returns an
// error only for bad input (a task without an idempotency key) or when
// Persist fails, and then nothing was sent after the failure.
func Sync(ctx context.Context, tr Tracker, tasks []state.Task, opts SyncOptions) (SyncResult, error) {
	s := &syncer{
		tr:         tr,
		o:          opts.withDefaults(),
		res:        SyncResult{Tasks: cloneTasks(tasks)},
		stale:      map[int]bool{},
		createdNow: map[int]bool{},
	}
	if err := checkIdemKeys(s.res.Tasks); err != nil {
		return s.res, err
	}
	err := s.run(ctx)
	s.finish()
	var h *haltError
	if err != nil && !errors.As(err, &h) {
		return s.res, err
	}
	return s.res, nil
}

type syncer struct {
	tr         Tracker
	o          SyncOptions
	res        SyncResult
	notes      []string
	stale      map[int]bool // "sending" tasks not found past the search lag
	createdNow map[int]bool // created (or found) in this sync
}

func (s *syncer) note(format string, args ...any) {
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
}

func (s *syncer) run(ctx context.Context) error {
	if !s.hasWork() {
		return nil
	}
	if now := s.o.Now(); now.Before(s.o.NotBefore) {
		s.res.RetryAt = s.o.NotBefore
		s.note("%s asked us to wait until %s", s.o.Name, s.o.NotBefore.UTC().Format(time.RFC3339))
		return &haltError{cause: errors.New("inside a Retry-After window")}
	}
	if err := s.reconcile(ctx); err != nil {
		return err
	}
	for _, kind := range []string{state.KindEpic, state.KindTask} {
		if err := s.createPhase(ctx, kind); err != nil {
			return err
		}
	}
	if err := s.linkPhase(ctx); err != nil {
		return err
	}
	return s.backSync(ctx)
}

func (s *syncer) hasWork() bool {
	for _, t := range s.res.Tasks {
		if inOutbox(t) || (t.Sync == state.SyncCreated && t.Key != "" && t.Gone == "") {
			return true
		}
	}
	return false
}

// owedDeps returns, for task i, the depends_on entries whose link is still
// owed, with the index of the blocking task; ready tells whether both
// issues exist. Entries naming no task, or a task that failed, are not owed.
func (s *syncer) owedDeps(i int) (entries []string, blockers []int, ready []bool) {
	t := s.res.Tasks[i]
	if _, ok := s.tr.(DependencyLinker); !ok {
		return nil, nil, nil
	}
	for _, d := range t.DependsOn {
		if slices.Contains(t.DepsLinked, d) {
			continue
		}
		d = strings.TrimSpace(d)
		for j, o := range s.res.Tasks {
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

// linkPhase sends the dependency links still owed whose two issues exist,
// one by one; a rate limit stops it until RetryAt, and a later run goes on.
// A link is never sent twice on purpose, and one that already exists counts
// as sent, so a lost answer costs nothing.
func (s *syncer) linkPhase(ctx context.Context) error {
	dl, ok := s.tr.(DependencyLinker)
	if !ok {
		return nil
	}
	for i := range s.res.Tasks {
		entries, blockers, ready := s.owedDeps(i)
		for k, d := range entries {
			if !ready[k] {
				continue
			}
			t := &s.res.Tasks[i]
			blocker := s.res.Tasks[blockers[k]].Key
			s.res.Requests++
			err := dl.LinkDependency(ctx, t.Key, blocker)
			var ve *ValidationError
			var rl *RateLimitError
			var gone *GoneError
			switch {
			case err == nil || errors.Is(err, ErrNoDependencies):
				t.DepsLinked = append(t.DepsLinked, d)
			case errors.As(err, &ve):
				t.DepsLinked = append(t.DepsLinked, d)
				s.note("dependency of %s on %s refused: %v", t.Key, blocker, ve)
			case errors.As(err, &gone):
				t.DepsLinked = append(t.DepsLinked, d)
				s.note("dependency of %s on %s not made: %v", t.Key, blocker, gone)
			case errors.As(err, &rl):
				wait := rl.RetryAfter
				if wait <= 0 {
					wait = DefaultRetryAfter
				}
				if at := s.o.Now().Add(wait); at.After(s.res.RetryAt) {
					s.res.RetryAt = at
				}
				s.note("tracker rate limit; dependency links go on after %s", s.res.RetryAt.UTC().Format(time.RFC3339))
				return &haltError{cause: err}
			default:
				return s.haltOn("link dependencies", err)
			}
		}
	}
	return nil
}

func inOutbox(t state.Task) bool {
	return t.Sync == "" || t.Sync == state.SyncPending || t.Sync == state.SyncSending
}

func kindOf(t state.Task) string {
	if t.Kind == state.KindEpic {
		return state.KindEpic
	}
	return state.KindTask
}

// reconcile looks up every outbox task by idempotency key before anything
// is created. A "sending" task's create was sent but its outcome never
// recorded; a "pending" one may still exist in Jira when the state was lost
// and restored, or the task declared again. Found tasks are adopted; a
// "sending" task not found is re-created only once the search lag is over.
func (s *syncer) reconcile(ctx context.Context) error {
	var idx []int
	var keys []string
	for i, t := range s.res.Tasks {
		if inOutbox(t) {
			idx = append(idx, i)
			keys = append(keys, t.IdemKey)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	var found map[string]Issue
	err := s.call(ctx, true, func(ctx context.Context) error {
		var err error
		found, err = s.tr.FindByIdemKeys(ctx, keys)
		return err
	})
	if err != nil {
		return s.haltOn("look up tasks by idempotency key", err)
	}
	now := s.o.Now()
	lagging := 0
	for _, i := range idx {
		t := &s.res.Tasks[i]
		if is, ok := found[t.IdemKey]; ok {
			markCreated(t, is)
			s.createdNow[i] = true
			s.res.Found++
			continue
		}
		if t.Sync != state.SyncSending {
			continue
		}
		if now.Sub(t.SentAt) < s.o.SearchLag {
			lagging++
			continue
		}
		s.stale[i] = true
	}
	if lagging > 0 {
		s.note("%d waiting for %s search lag", lagging, s.o.Name)
	}
	return nil
}

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

// epicFor resolves a task's epic reference (local id, epic title or Jira
// key) to a Jira key. ready is false while the epic itself is still on its
// way to Jira.
func (s *syncer) epicFor(t state.Task) (key string, ready bool) {
	ref := strings.TrimSpace(t.Epic)
	if ref == "" {
		return "", true
	}
	for _, e := range s.res.Tasks {
		if e.Kind != state.KindEpic || (e.ID != ref && !strings.EqualFold(strings.TrimSpace(e.Title), ref)) {
			continue
		}
		switch {
		case e.Sync == state.SyncCreated && e.Gone != "":
			return "", true // its issue is gone: the task goes under the autopilot issue
		case e.Sync == state.SyncCreated:
			return e.Key, true
		case e.Sync == state.SyncFailed:
			return "", true // create unlinked rather than block on a human
		default:
			return "", false
		}
	}
	if IsJiraKey(ref) {
		return ref, true
	}
	return "", true
}

// createPhase creates the ready outbox tasks of one kind, MaxBulk at a time,
// after persisting them as "sending".
func (s *syncer) createPhase(ctx context.Context, kind string) error {
	idx := s.readyToCreate(kind)
	if len(idx) == 0 {
		return nil
	}
	restore, err := s.markSending(idx)
	if err != nil {
		return err
	}
	for start := 0; start < len(idx); start += MaxBulk {
		end := min(start+MaxBulk, len(idx))
		sent, err := s.createChunk(ctx, idx[start:end])
		if err == nil {
			continue
		}
		if sent {
			restore(end)
		} else {
			restore(start)
		}
		return err
	}
	return nil
}

// readyToCreate lists the outbox tasks of one kind that can be sent now:
// pending ones, and "sending" ones not found past the search lag. Tasks
// whose epic is still on its way are held (and noted).
func (s *syncer) readyToCreate(kind string) []int {
	var idx []int
	held := 0
	for i, t := range s.res.Tasks {
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

// markSending marks the tasks "sending" and persists that before anything
// is sent, so a crash after the send finds them by idempotency key.
// restore(from) puts idx[from:] back as they were, for the tasks never sent.
func (s *syncer) markSending(idx []int) (restore func(from int), err error) {
	prev := make([]state.Task, len(idx))
	now := s.o.Now()
	for n, i := range idx {
		prev[n] = s.res.Tasks[i]
		t := &s.res.Tasks[i]
		t.Sync, t.SentAt, t.Error = state.SyncSending, now, ""
	}
	restore = func(from int) {
		for n := from; n < len(idx); n++ {
			s.res.Tasks[idx[n]] = prev[n]
		}
	}
	if s.o.Persist == nil {
		restore(0)
		return nil, errors.New("tracker sync: SyncOptions.Persist is required before creating issues")
	}
	if err := s.o.Persist(cloneTasks(s.res.Tasks)); err != nil {
		restore(0)
		return nil, fmt.Errorf("persist outbox before jira create: %w", err)
	}
	return restore, nil
}

// createChunk sends one bulk create and records its outcome. An error stops
// the sync: nothing after the chunk is sent, and sent says whether the chunk
// itself may have reached the tracker (when not, it goes back to the outbox
// with the rest).
func (s *syncer) createChunk(ctx context.Context, chunk []int) (sent bool, err error) {
	items := make([]Item, len(chunk))
	for n, i := range chunk {
		items[n] = s.item(s.res.Tasks[i])
	}
	var results []CreateResult
	err = s.call(ctx, false, func(ctx context.Context) error {
		var err error
		results, err = s.tr.CreateBulk(ctx, items)
		return err
	})
	var ve *ValidationError
	var ae *AuthError
	var rl *RateLimitError
	switch {
	case err == nil:
		if s.apply(chunk, results) {
			return true, &haltError{cause: errors.New("rate limited")}
		}
		return true, nil
	case errors.As(err, &ve):
		for _, i := range chunk {
			s.fail(&s.res.Tasks[i], ve)
		}
		return true, nil
	case errors.As(err, &ae) || errors.As(err, &rl):
		// Not committed: the tracker refused the request as a whole.
		return false, s.haltOn("create issues", err)
	default:
		// Its outcome is unknown: it stays "sending" for the next lookup.
		s.note("%d create outcomes unknown (%v); looked up by idempotency key at the next sync", len(chunk), unwrapHalt(err))
		return true, s.haltOn("create issues", err)
	}
}

func (s *syncer) item(t state.Task) Item {
	epic, _ := s.epicFor(t)
	return Item{
		IdemKey:     t.IdemKey,
		Kind:        kindOf(t),
		Title:       safeTitle(t.Title),
		Description: t.Description,
		EpicKey:     epic,
		Points:      t.Points,
		DependsOn:   s.depKeys(t),
	}
}

// safeTitle is a task's title as the tracker gets it: the same text safety
// as every user text the bot echoes (one line, no tab, no control or
// bidirectional override, no mention, reference, fence or marker).
func safeTitle(title string) string { return strings.TrimSpace(textsafe.Code(title)) }

// depKeys resolves a task's depends_on (local ids or titles) to the
// idempotency keys of those tasks.
func (s *syncer) depKeys(t state.Task) []string {
	var out []string
	for _, d := range t.DependsOn {
		d = strings.TrimSpace(d)
		for _, o := range s.res.Tasks {
			if o.IdemKey != t.IdemKey && (o.ID == d || strings.EqualFold(strings.TrimSpace(o.Title), d)) {
				out = append(out, o.IdemKey)
				break
			}
		}
	}
	return out
}

func (s *syncer) fail(t *state.Task, err error) {
	t.Sync = state.SyncFailed
	t.Error = err.Error()
	s.res.Failed++
}

// apply records the per-item outcomes of one bulk create. It reports
// whether the tracker rate-limited items (they go back to the outbox and
// RetryAt is set: nothing more is sent in this sync).
func (s *syncer) apply(chunk []int, results []CreateResult) (limited bool) {
	byKey := make(map[string]CreateResult, len(results))
	for _, r := range results {
		byKey[r.IdemKey] = r
	}
	unknown := 0
	for _, i := range chunk {
		t := &s.res.Tasks[i]
		r, ok := byKey[t.IdemKey]
		r.Err = Named(r.Err, s.o.Name)
		var ve *ValidationError
		var rl *RateLimitError
		switch {
		case !ok:
			unknown++ // stays "sending": found by idempotency key later
		case r.Err == nil:
			markCreated(t, r.Issue)
			s.createdNow[i] = true
			s.res.Created++
		case errors.As(r.Err, &ve):
			s.fail(t, ve)
		case errors.As(r.Err, &rl):
			t.Sync, t.SentAt, t.Error = state.SyncPending, time.Time{}, ""
			wait := rl.RetryAfter
			if wait <= 0 {
				wait = DefaultRetryAfter
			}
			if at := s.o.Now().Add(wait); at.After(s.res.RetryAt) {
				s.res.RetryAt = at
			}
			limited = true
		default:
			// The tracker reported this item as not created: back to the outbox.
			t.Sync, t.SentAt, t.Error = state.SyncPending, time.Time{}, r.Err.Error()
		}
	}
	if unknown > 0 {
		s.note("%d create outcomes missing from %s's answer; looked up by idempotency key at the next sync", unknown, s.o.Name)
	}
	if limited {
		s.note("%s rate limit; next create not before %s", s.o.Name, s.res.RetryAt.UTC().Format(time.RFC3339))
	}
	return limited
}

// backSync reads the status of issues created before this sync and ticks the
// tasks whose issue is done.
func (s *syncer) backSync(ctx context.Context) error {
	var keys []string
	for i, t := range s.res.Tasks {
		if t.Sync == state.SyncCreated && t.Key != "" && t.Gone == "" && !s.createdNow[i] {
			keys = append(keys, t.Key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	var got map[string]Issue
	err := s.call(ctx, true, func(ctx context.Context) error {
		var err error
		got, err = s.tr.Statuses(ctx, keys)
		return err
	})
	if err != nil {
		return s.haltOn("read issue statuses", err)
	}
	for i := range s.res.Tasks {
		t := &s.res.Tasks[i]
		is, ok := got[t.Key]
		if !ok || t.Sync != state.SyncCreated || t.Gone != "" || s.createdNow[i] {
			continue
		}
		if is.Gone != "" {
			// That task's alone: recorded, followed no more.
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
	return nil
}

// haltOn turns any tracker error into a halt, noting errors call did not
// already explain.
func (s *syncer) haltOn(what string, err error) error {
	var h *haltError
	if errors.As(err, &h) {
		return err
	}
	s.note("%s: %v", what, err)
	return &haltError{cause: err}
}

func unwrapHalt(err error) error {
	var h *haltError
	if errors.As(err, &h) {
		return h.cause
	}
	return err
}

func (s *syncer) finish() {
	if r, ok := s.tr.(Remarker); ok {
		for key, text := range r.Remarks() {
			text = textsafe.Truncate(text, maxRemark)
			for i := range s.res.Tasks {
				if t := &s.res.Tasks[i]; t.IdemKey == key && t.Remark != text {
					t.Remark = text
					s.note("task %s: %s", t.ID, text)
				}
			}
		}
	}
	s.limited(s.tr)
	s.res.Waiting = 0
	for i, t := range s.res.Tasks {
		if e, _, _ := s.owedDeps(i); inOutbox(t) || len(e) > 0 {
			s.res.Waiting++
		}
	}
	s.res.Note = strings.Join(s.notes, "; ")
}

// maxRemark bounds one task's remark in the state (runes).
const maxRemark = 300

// limited reports a limit window the tracker met as the retry time, also
// when the call that met it had no way to say so.
func (s *syncer) limited(tr any) {
	l, ok := tr.(Limiter)
	if !ok {
		return
	}
	if at := l.LimitedUntil(); at.After(s.res.RetryAt) && at.After(s.o.Now()) {
		s.res.RetryAt = at
		s.note("tracker rate limit; next request not before %s", at.UTC().Format(time.RFC3339))
	}
}

func cloneTasks(in []state.Task) []state.Task {
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
// outbox ("pending", error cleared), for `/autopilot jira retry` after a
// person fixed what Jira rejected, and every task whose issue was deleted
// or not found, to be created again. The input is not modified.
func RetryFailed(tasks []state.Task) []state.Task {
	out := cloneTasks(tasks)
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
