package state

import (
	"fmt"
	"math"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/autopilot-dev/autopilot/internal/choose"
)

// FieldError is returned by Valid: which field (by its JSON path, e.g.
// "tasks[3].key") holds an invalid value, and why.
type FieldError struct {
	Field   string
	Problem string
}

// Error returns "<field>: <problem>".
func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

func bad(field, format string, args ...any) error {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

var (
	slugRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	kebabRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	repoRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$`)
	loginRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?$`)
	taskRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	keyRE   = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,49}-[1-9][0-9]{0,11}$|^#[1-9][0-9]{0,9}$`) // Jira key or sub-issue #n
	hexRE   = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

var (
	stepStatuses = set(NotStarted, InProgress, Completed, Skipped, Failed)
	runStatuses  = set(RunInProgress, RunAwaitingDecision, RunFailed, RunDone, RunStopped)
	taskKinds    = set(KindEpic, KindTask)
	syncStates   = set(SyncPending, SyncSending, SyncCreated, SyncFailed, SyncLocal)
	trackerOffs  = set("", TrackerNotConfigured)
	goneStates   = set(IssueDeleted, IssueNotFound, IssueTransferred)
)

func set[T ~string](vs ...T) map[T]bool {
	m := make(map[T]bool, len(vs))
	for _, v := range vs {
		m[v] = true
	}
	return m
}

// Valid checks that s is a state the codec may write and accept. It is the
// schema of the machine block, beyond what JSON decoding checks:
//
//   - schema is SchemaVersion; version >= 0; repo is "owner/name"; issue >= 1;
//   - flow and step slugs are lower-case slugs ([a-z0-9_-], at most 64);
//   - status is one of the five step statuses, run one of the five run
//     statuses; retry_count is 0–3; cycle >= 1; step >= 0;
//   - sub_step.phase >= 0; sub_step.name is kebab-case, or empty only in
//     the zero sub-step (phase 0, no detail); the reserved name
//     "awaiting-invocation" requires phase 0, while phase 0 may carry other
//     names (seed 001's meta-repo example uses "awaiting-human-review");
//   - decisions name a valid gate id, a letter A–D, a GitHub login and an
//     http(s) link; tasks have unique ids, a known kind and sync state, a
//     tracker key like PROJ-12 or #12, finite non-negative points; the open gate is a
//     valid Choose block (choose.Block.Validate) whose options' actions
//     are gate actions (Action.Check);
//   - counters (seq, limits, failed_sessions per step slug) are
//     non-negative, confidence is within 0–1, linked PRs and
//     ledger comment ids are positive, sig is empty or 64 hex digits;
//   - every string is valid UTF-8 and every time is within years 0–9999
//     (so the JSON encoding round-trips exactly).
func Valid(s *State) error {
	if s == nil {
		return bad("state", "missing")
	}
	checks := []func(*State) error{validHeader, validCurrent, validHistory, validArchives, validTasks, validGate, validRest, validMarks, validHold}
	for _, check := range checks {
		if err := check(s); err != nil {
			return err
		}
	}
	return walk(reflect.ValueOf(*s), "")
}

func validHeader(s *State) error {
	switch {
	case s.Schema != SchemaVersion:
		return bad("schema", "is %d, this build reads %d", s.Schema, SchemaVersion)
	case s.Version < 0:
		return bad("version", "is negative")
	case !repoRE.MatchString(s.Repo):
		return bad("repo", "%q is not owner/name", s.Repo)
	case s.Issue < 1:
		return bad("issue", "must be >= 1")
	case s.Sig != "" && !hexRE.MatchString(s.Sig):
		return bad("sig", "is not 64 lower-case hex digits")
	}
	return nil
}

func validCurrent(s *State) error {
	switch {
	case !slugRE.MatchString(s.Flow):
		return bad("flow", "%q is not a slug", s.Flow)
	case s.Step < 0:
		return bad("step", "is negative")
	case !slugRE.MatchString(s.Slug):
		return bad("slug", "%q is not a slug", s.Slug)
	case !stepStatuses[s.Status]:
		return bad("status", "%q is not one of not_started, in_progress, completed, skipped, failed", s.Status)
	case !runStatuses[s.Run]:
		return bad("run", "%q is not a run status", s.Run)
	case s.RetryCount < 0 || s.RetryCount > 3:
		return bad("retry_count", "%d is outside 0–3", s.RetryCount)
	case s.Cycle < 1:
		return bad("cycle", "must be >= 1")
	}
	sub := s.SubStep
	switch {
	case sub.Phase < 0:
		return bad("sub_step.phase", "is negative")
	case sub.Name == "" && (sub.Phase != 0 || sub.Detail != ""):
		return bad("sub_step.name", "is empty")
	case sub.Name != "" && !kebabRE.MatchString(sub.Name):
		return bad("sub_step.name", "%q is not kebab-case", sub.Name)
	case sub.Name == AwaitingInvocation && sub.Phase != 0:
		return bad("sub_step.phase", "must be 0 with %s", AwaitingInvocation)
	}
	for i, p := range s.Steps {
		f := fmt.Sprintf("steps[%d]", i)
		switch {
		case !slugRE.MatchString(p.Slug):
			return bad(f+".slug", "%q is not a slug", p.Slug)
		case !stepStatuses[p.Status]:
			return bad(f+".status", "%q is not a step status", p.Status)
		case p.Retries < 0 || p.Retries > 3:
			return bad(f+".retries", "%d is outside 0–3", p.Retries)
		}
	}
	return nil
}

func validHistory(s *State) error {
	for i, c := range s.Completed {
		f := fmt.Sprintf("completed[%d]", i)
		switch {
		case c.Step < 0:
			return bad(f+".step", "is negative")
		case !slugRE.MatchString(c.Slug):
			return bad(f+".slug", "%q is not a slug", c.Slug)
		case c.Cycle < 0:
			return bad(f+".cycle", "is negative")
		}
	}
	for i, d := range s.Decisions {
		f := fmt.Sprintf("decisions[%d]", i)
		switch {
		case choose.ValidGateID(d.Gate) != nil:
			return bad(f+".gate", "%q is not a gate id", d.Gate)
		case len(d.Option) != 1 || !strings.Contains(choose.Letters, d.Option):
			return bad(f+".option", "%q is not a letter A–D", d.Option)
		case !loginRE.MatchString(d.By):
			return bad(f+".by", "%q is not a GitHub login", d.By)
		case d.CommentID < 0:
			return bad(f+".comment_id", "is negative")
		}
		if err := validLink(f+".link", d.Link); err != nil {
			return err
		}
	}
	for i, r := range s.RetryLog {
		f := fmt.Sprintf("retry_log[%d]", i)
		switch {
		case r.Attempt < 1:
			return bad(f+".attempt", "must be >= 1")
		case r.Step < 0:
			return bad(f+".step", "is negative")
		}
	}
	return nil
}

func validTasks(s *State) error {
	if s.TrackerInUse != "" && !s.TrackerInUse.Valid() {
		return bad("tracker_in_use", "%q is not jira, github, local, a registered tracker or empty", s.TrackerInUse)
	}
	if !trackerOffs[s.TrackerOff] {
		return bad("tracker_off", "%q is not empty or %s", s.TrackerOff, TrackerNotConfigured)
	}
	seen := make(map[string]bool, len(s.Tasks))
	for i, t := range s.Tasks {
		f := fmt.Sprintf("tasks[%d]", i)
		switch {
		case !taskRE.MatchString(t.ID):
			return bad(f+".id", "%q is not a task id", t.ID)
		case seen[t.ID]:
			return bad(f+".id", "%q is used twice", t.ID)
		case !taskKinds[t.Kind]:
			return bad(f+".kind", "%q is not epic or task", t.Kind)
		case !syncStates[t.Sync]:
			return bad(f+".sync", "%q is not a tracker sync state", t.Sync)
		case t.Key != "" && !keyRE.MatchString(t.Key):
			return bad(f+".key", "%q is not a Jira key like PROJ-12 or an issue like #12", t.Key)
		case t.Gone != "" && !goneStates[t.Gone]:
			return bad(f+".gone", "%q is not %s, %s or %s", t.Gone, IssueDeleted, IssueNotFound, IssueTransferred)
		case math.IsNaN(t.Points) || math.IsInf(t.Points, 0) || t.Points < 0:
			return bad(f+".points", "must be a finite number >= 0")
		}
		seen[t.ID] = true
		if err := validLink(f+".url", t.URL); err != nil {
			return err
		}
	}
	return nil
}

func validGate(s *State) error {
	g := s.Gate
	if g == nil {
		return nil
	}
	b := choose.Block{GateID: g.ID, Title: g.Title, Details: g.Details, Recommend: g.Recommend, Reason: g.Reason}
	for _, o := range g.Options {
		b.Options = append(b.Options, choose.Option{Letter: o.Letter, Text: o.Text})
	}
	if err := b.Validate(); err != nil {
		return bad("gate", "%v", err)
	}
	if g.CommentID < 0 {
		return bad("gate.comment_id", "is negative")
	}
	for i, o := range g.Options {
		if err := o.Action.Check(); err != nil {
			return bad(fmt.Sprintf("gate.options[%d].action", i), "%v", err)
		}
	}
	return nil
}

// validRest checks the run's bookkeeping: ledger, outbox, stop, limits,
// review loop and execution.
func validRest(s *State) error {
	if s.LedgerFloor < 0 {
		return bad("ledger_floor", "is negative")
	}
	if s.CompletedFolded < 0 {
		return bad("completed_folded", "is negative")
	}
	for i, l := range s.Ledger {
		if l.CommentID <= 0 || l.Outcome == "" {
			return bad(fmt.Sprintf("ledger[%d]", i), "needs a comment id and an outcome")
		}
	}
	for i, e := range s.Outbox {
		if e.Kind == "" {
			return bad(fmt.Sprintf("outbox[%d].kind", i), "is empty")
		}
	}
	if s.Stop != nil && (s.Stop.Reason == "" || (s.Stop.Resume != "" && !runStatuses[s.Stop.Resume])) {
		return bad("stop", "needs a reason and, if set, a run status to resume")
	}
	l := s.Limits
	switch {
	case l.Sessions < 0 || l.Iterations < 0 || l.FailedWaves < 0:
		return bad("limits", "counters must be >= 0")
	case math.IsNaN(l.LastConfidence) || l.LastConfidence < 0 || l.LastConfidence > 1:
		return bad("limits.last_confidence", "must be within 0–1")
	}
	if r := s.Review; r != nil && (r.Iteration < 0 || r.ReviewCycle < 0 || r.MaxIterations < 0) {
		return bad("review", "counters must be >= 0")
	}
	if e := s.Exec; e != nil && (e.Attempt < 0 || e.RunID < 0) {
		return bad("exec", "attempt and run_id must be >= 0")
	}
	return nil
}

// validMarks checks what the engine remembers across passes: counters, the
// refused requests, linked PRs and their vouches.
func validMarks(s *State) error {
	if s.Seq < 0 {
		return bad("seq", "is negative")
	}
	for slug, n := range s.FailedSessions {
		if !slugRE.MatchString(slug) || n < 0 {
			return bad("failed_sessions", "%q: %d needs a step slug and a count >= 0", slug, n)
		}
	}
	if len(s.WriteID) > 64 {
		return bad("write_id", "is longer than 64 characters")
	}
	if len(s.Refused) > MaxRefused {
		return bad("refused", "holds %d entries, at most %d", len(s.Refused), MaxRefused)
	}
	for i, r := range s.Refused {
		if r == "" || len(r) > 200 {
			return bad(fmt.Sprintf("refused[%d]", i), "must be 1–200 characters")
		}
	}
	for i, n := range s.LinkedPRs {
		if n < 1 {
			return bad(fmt.Sprintf("linked_prs[%d]", i), "must be >= 1")
		}
	}
	for i, v := range s.LinkVouches {
		if v.PR < 1 || v.By == "" || len(v.Body) != 16 {
			return bad(fmt.Sprintf("link_vouches[%d]", i), "needs pr >= 1, by and a 16-digit body hash")
		}
	}
	return nil
}

// validLink accepts "" or an absolute http(s) URL without characters that
// could end a Markdown link or tag.
func validLink(field, link string) error {
	if link == "" {
		return nil
	}
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
		strings.ContainsAny(link, " \t\n\r<>()[]\"'`\\") {
		return bad(field, "%q is not an http(s) link", link)
	}
	return nil
}

var timeType = reflect.TypeOf(time.Time{})

// walk checks every string for valid UTF-8 and every time for a year the
// JSON encoding can hold, naming the field by its JSON path.
func walk(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			return bad(path, "is not valid UTF-8")
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return walk(v.Elem(), path)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			if err := walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			key := fmt.Sprint(iter.Key())
			if err := walk(iter.Key(), path+".key"); err != nil {
				return err
			}
			if err := walk(iter.Value(), path+"["+key+"]"); err != nil {
				return err
			}
		}
	case reflect.Struct:
		if v.Type() == timeType {
			if y := v.Interface().(time.Time).Year(); y < 0 || y > 9999 {
				return bad(path, "year %d is outside 0–9999", y)
			}
			return nil
		}
		for i := 0; i < v.NumField(); i++ {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			if path != "" {
				name = path + "." + name
			}
			if err := walk(v.Field(i), name); err != nil {
				return err
			}
		}
	}
	return nil
}
