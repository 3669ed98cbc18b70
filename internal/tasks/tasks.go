// Package tasks reads the epics and tasks an executor declares: fenced
// ```autopilot-epics / ```autopilot-tasks YAML blocks in a report comment,
// or one Markdown file per task in the repository (`_docs/…/NN_slug.md`).
// It turns them into state.Task values numbered after the tasks that exist.
//
// Parsing is all or nothing: any error returns no tasks, and every error
// names where it is (block and line, or file and line) and which field. The
// package never does I/O; callers hand it comment bodies and file contents.
package tasks

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/autopilot-dev/autopilot/internal/idem"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Block info strings.
const (
	EpicsBlock = "autopilot-epics"
	TasksBlock = "autopilot-tasks"
)

// Limits on what one declaration may hold.
const (
	MaxItems       = 500   // tasks per comment or file set
	MaxTitle       = 255   // runes; Jira's summary limit
	MaxDescription = 32767 // runes; Jira's text field limit
	MaxPoints      = 1000
)

// Options says how to number and label the parsed tasks.
type Options struct {
	// Start is the number of the first new task (existing tasks + 1);
	// values below 1 mean 1.
	Start int
	// Step is the slug of the step that declared the tasks.
	Step string
	// Repo and Issue, when Repo is set, fill in each task's IdemKey.
	Repo  string
	Issue int
}

// Error is a parse error with its place.
type Error struct {
	Where string // e.g. "autopilot-tasks" or "_docs/02_tasks/03_api.md"
	Line  int    // 1-based line within the block or file; 0 when unknown
	Field string // the field at fault, if any
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Where)
	if e.Line > 0 {
		fmt.Fprintf(&b, " line %d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		fmt.Fprintf(&b, "field %q: ", e.Field)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ID formats a local task number: "01", "02", …, "100".
func ID(n int) string { return fmt.Sprintf("%02d", n) }

// draft is a declared task before numbering, with where it came from.
type draft struct {
	task  state.Task
	where string
	line  int
}

// finish validates drafts as a whole and numbers them.
func finish(drafts []draft, opts Options) ([]state.Task, error) {
	if len(drafts) > MaxItems {
		return nil, &Error{Where: drafts[MaxItems].where, Line: drafts[MaxItems].line, Msg: fmt.Sprintf("more than %d tasks declared", MaxItems)}
	}
	epics := map[string]draft{}
	for _, d := range drafts {
		if d.task.Kind != state.KindEpic {
			continue
		}
		k := strings.ToLower(d.task.Title)
		if first, dup := epics[k]; dup {
			return nil, &Error{Where: d.where, Line: d.line, Field: "title", Msg: fmt.Sprintf("epic %q is already declared (%s line %d)", d.task.Title, first.where, first.line)}
		}
		epics[k] = d
	}
	start := max(opts.Start, 1)
	out := make([]state.Task, len(drafts))
	for i, d := range drafts {
		t := d.task
		t.ID = ID(start + i)
		t.Step = opts.Step
		if t.Sync == "" {
			t.Sync = state.SyncPending
		}
		if opts.Repo != "" {
			t.IdemKey = idem.Key(opts.Repo, opts.Issue, t.ID)
		}
		out[i] = t
	}
	for i, d := range drafts {
		if err := ownEpicDependency(out, i, d); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ownEpicDependency refuses a task that depends on its own epic (by the
// epic's title or id): the epic is done when its tasks are, so the task
// could never start.
func ownEpicDependency(all []state.Task, i int, d draft) error {
	t := all[i]
	ref := strings.TrimSpace(t.Epic)
	if t.Kind == state.KindEpic || ref == "" {
		return nil
	}
	epic := resolveEpic(all, ref)
	for _, dep := range t.DependsOn {
		dep = strings.TrimSpace(dep)
		if strings.EqualFold(dep, ref) || (epic >= 0 && resolveEpic(all, dep) == epic) {
			return &Error{Where: d.where, Line: d.line, Field: "depends_on", Msg: fmt.Sprintf(
				"task %q depends on its own epic %q; an epic is done when its tasks are, so the task could never start: depend on tasks, not on their epic",
				t.Title, t.Epic)}
		}
	}
	return nil
}

// resolveEpic finds the declared epic a reference (title or id) names, -1
// when none does.
func resolveEpic(all []state.Task, ref string) int {
	for j, e := range all {
		if e.Kind == state.KindEpic && (e.ID == ref || strings.EqualFold(strings.TrimSpace(e.Title), ref)) {
			return j
		}
	}
	return -1
}

// checkText returns why s is unusable as a field value, or "".
func checkText(s string, oneLine bool, limit int) string {
	switch {
	case !utf8.ValidString(s):
		return "not valid UTF-8"
	case oneLine && strings.ContainsAny(s, "\r\n"):
		return "must be one line"
	case utf8.RuneCountInString(s) > limit:
		return fmt.Sprintf("longer than %d characters", limit)
	}
	return ""
}

// checkTitle returns why a title is unusable, or "".
func checkTitle(s string) string {
	if strings.TrimSpace(s) == "" {
		return "required"
	}
	return checkText(s, true, MaxTitle)
}

func checkDescription(s string) string { return checkText(s, false, MaxDescription) }

// checkRef returns why an epic or dependency reference is unusable, or "".
func checkRef(s string) string { return checkText(s, true, MaxTitle) }

func checkPoints(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > MaxPoints {
		return fmt.Sprintf("want a number from 0 to %d", MaxPoints)
	}
	return ""
}
