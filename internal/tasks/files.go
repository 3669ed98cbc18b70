package tasks

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// taskFileRE matches task file names: a numeric prefix, an underscore and a
// slug, e.g. "01_initial_structure.md".
var taskFileRE = regexp.MustCompile(`^([0-9]{1,4})_([A-Za-z0-9][A-Za-z0-9_.-]*)\.md$`)

// metaRE matches a metadata line such as "Epic: Auth", "- **Points:** 3" or
// "**Depends on**: 01, 02".
var metaRE = regexp.MustCompile(`(?i)^\s{0,3}(?:[-*]\s+)?\**\s*(epic|depends on|points|kind|type|jira)\s*\**\s*:\s*\**\s*(.*?)\s*$`)

// ParseFiles reads task files given as path → content and returns one task
// per file whose name is NN_slug.md, ordered by that number (then path),
// numbered from opts.Start. Other paths are ignored.
//
// A task file is Markdown: the first "# " heading is the title, and these
// optional lines (any case, optionally bold or as a list item) set fields:
//
//	Epic: Authentication        epic title, local id or Jira key
//	Depends on: 01, Sign-up     comma-separated titles or ids ("none" for none)
//	Points: 3
//	Kind: epic                  "epic" or "task" (default task)
//	Jira: pending               or the issue key once it exists, e.g. PROJ-12
//
// Everything else after the heading is the description.
func ParseFiles(files map[string]string, opts Options) ([]state.Task, error) {
	type entry struct {
		n    int
		path string
	}
	var entries []entry
	for p := range files {
		m := taskFileRE.FindStringSubmatch(path.Base(p))
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		entries = append(entries, entry{n, p})
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].n != entries[j].n {
			return entries[i].n < entries[j].n
		}
		return entries[i].path < entries[j].path
	})
	if len(entries) > MaxItems {
		return nil, &Error{Where: entries[MaxItems].path, Msg: fmt.Sprintf("more than %d task files", MaxItems)}
	}
	drafts := make([]draft, 0, len(entries))
	for _, e := range entries {
		t, err := parseFile(e.path, files[e.path])
		if err != nil {
			return nil, err
		}
		drafts = append(drafts, draft{task: t, where: e.path, line: 1})
	}
	return finish(drafts, opts)
}

// parseFile reads one task file (see ParseFiles); where names it in errors.
func parseFile(where, content string) (state.Task, error) {
	f := &taskFile{where: where, task: state.Task{Kind: state.KindTask}, seen: map[string]int{}}
	for i, line := range strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n") {
		if err := f.line(i+1, line); err != nil {
			return state.Task{}, err
		}
	}
	if err := f.finish(); err != nil {
		return state.Task{}, err
	}
	return f.task, nil
}

// taskFile is a task file being read, line by line.
type taskFile struct {
	where     string
	task      state.Task
	desc      []string       // description lines
	seen      map[string]int // metadata key → the line it was given on
	fence     *fence         // the code fence the reader is in, if any
	titleLine int            // 0 until the title is read
}

func (f *taskFile) fail(line int, field, msg string) error {
	return &Error{Where: f.where, Line: line, Field: field, Msg: msg}
}

// line reads line n: code fences and other text after the title are
// description, the first "# " heading is the title, and a metadata line
// outside a fence sets a field wherever it stands.
func (f *taskFile) line(n int, line string) error {
	if f.fenced(line) {
		f.desc = append(f.desc, line)
		return nil
	}
	if f.titleLine == 0 {
		if h, ok := strings.CutPrefix(strings.TrimLeft(line, " "), "# "); ok {
			return f.title(n, h)
		}
	}
	if m := metaRE.FindStringSubmatch(line); m != nil {
		return f.meta(n, m[1], m[2])
	}
	if f.titleLine != 0 {
		f.desc = append(f.desc, line)
	}
	return nil
}

// fenced reports whether line belongs to a code fence (opens, is inside or
// closes one), keeping track of the fence.
func (f *taskFile) fenced(line string) bool {
	if f.fence != nil {
		if f.fence.closes(line) {
			f.fence = nil
		}
		return true
	}
	if open, ok := openFence(line); ok {
		f.fence = &open
		return true
	}
	return false
}

// title reads the "# " heading h on line n.
func (f *taskFile) title(n int, h string) error {
	title := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(h), "#"))
	if msg := checkTitle(title); msg != "" {
		return f.fail(n, "title", msg)
	}
	f.task.Title, f.titleLine = title, n
	return nil
}

// meta reads the metadata line n, "label: value"; a field given twice is
// an error.
func (f *taskFile) meta(n int, label, value string) error {
	key := strings.ToLower(label)
	if key == "type" {
		key = "kind"
	}
	if first, dup := f.seen[key]; dup {
		return f.fail(n, label, fmt.Sprintf("given twice (first on line %d)", first))
	}
	f.seen[key] = n
	return setMeta(&f.task, key, strings.TrimSpace(strings.Trim(value, "*")), f.where, n, label)
}

// finish checks the file as a whole once every line is read and sets the
// description.
func (f *taskFile) finish() error {
	if f.titleLine == 0 {
		return f.fail(0, "", `missing the "# Title" heading`)
	}
	f.task.Description = strings.TrimSpace(strings.Join(f.desc, "\n"))
	if msg := checkDescription(f.task.Description); msg != "" {
		return f.fail(f.titleLine, "description", msg)
	}
	if f.task.Kind == state.KindEpic && f.task.Epic != "" {
		return f.fail(f.seen["epic"], "Epic", "an epic cannot belong to an epic")
	}
	return nil
}

// setMeta applies one metadata line.
func setMeta(t *state.Task, key, val, where string, line int, label string) error {
	fail := func(msg string) error { return &Error{Where: where, Line: line, Field: label, Msg: msg} }
	switch key {
	case "epic":
		if msg := checkRef(val); msg != "" {
			return fail(msg)
		}
		t.Epic = val
	case "depends on":
		if strings.EqualFold(val, "none") || val == "-" || val == "" {
			return nil
		}
		for _, ref := range strings.Split(val, ",") {
			ref = strings.TrimSpace(ref)
			if ref == "" {
				return fail("empty entry in the list")
			}
			if msg := checkRef(ref); msg != "" {
				return fail(msg)
			}
			t.DependsOn = append(t.DependsOn, ref)
		}
	case "points":
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return fail("want a number")
		}
		if msg := checkPoints(f); msg != "" {
			return fail(msg)
		}
		t.Points = f
	case "kind":
		switch state.TaskKind(strings.ToLower(val)) {
		case state.KindEpic:
			t.Kind = state.KindEpic
		case state.KindTask:
			t.Kind = state.KindTask
		default:
			return fail(`want "epic" or "task"`)
		}
	case "jira":
		switch {
		case strings.EqualFold(val, "pending") || val == "":
			t.Sync = state.SyncPending
		case tasksync.IsKey(val):
			t.Sync, t.Key = state.SyncCreated, val
		default:
			return fail(`want "pending" or an issue key such as PROJ-12`)
		}
	}
	return nil
}
