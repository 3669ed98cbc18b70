package tasks

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
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

func parseFile(where, content string) (state.Task, error) {
	t := state.Task{Kind: state.KindTask}
	fail := func(line int, field, msg string) (state.Task, error) {
		return state.Task{}, &Error{Where: where, Line: line, Field: field, Msg: msg}
	}
	lines := strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n")
	var desc []string
	seen := map[string]int{}
	var inFence *fence
	titleLine := 0
	for i, line := range lines {
		n := i + 1
		if inFence != nil {
			if inFence.closes(line) {
				inFence = nil
			}
			desc = append(desc, line)
			continue
		}
		if f, ok := openFence(line); ok {
			inFence = &f
			desc = append(desc, line)
			continue
		}
		if titleLine == 0 {
			if h, ok := strings.CutPrefix(strings.TrimLeft(line, " "), "# "); ok {
				title := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(h), "#"))
				if msg := checkTitle(title); msg != "" {
					return fail(n, "title", msg)
				}
				t.Title, titleLine = title, n
				continue
			}
		}
		m := metaRE.FindStringSubmatch(line)
		if m == nil {
			if titleLine != 0 {
				desc = append(desc, line)
			}
			continue
		}
		key := strings.ToLower(m[1])
		if key == "type" {
			key = "kind"
		}
		if first, dup := seen[key]; dup {
			return fail(n, m[1], fmt.Sprintf("given twice (first on line %d)", first))
		}
		seen[key] = n
		if err := setMeta(&t, key, strings.TrimSpace(strings.Trim(m[2], "*")), where, n, m[1]); err != nil {
			return state.Task{}, err
		}
	}
	if titleLine == 0 {
		return fail(0, "", `missing the "# Title" heading`)
	}
	t.Description = strings.TrimSpace(strings.Join(desc, "\n"))
	if msg := checkDescription(t.Description); msg != "" {
		return fail(titleLine, "description", msg)
	}
	if t.Kind == state.KindEpic && t.Epic != "" {
		return fail(seen["epic"], "Epic", "an epic cannot belong to an epic")
	}
	return t, nil
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
		switch strings.ToLower(val) {
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
			t.Jira = state.JiraPending
		case tracker.IsJiraKey(val):
			t.Jira, t.JiraKey = state.JiraCreated, val
		default:
			return fail(`want "pending" or an issue key such as PROJ-12`)
		}
	}
	return nil
}
