package codec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// tasks renders the Tasks section: a status line naming the tracker in
// use, then epics with their tasks indented under them, then tasks without
// a (known) epic.
func tasks(b *strings.Builder, s *state.State, lim budget) {
	label := state.TrackerLabel(s.TrackerInUse)
	if status := trackerStatus(s, label, lim); status != "" {
		b.WriteString(status + "\n\n")
	}
	if len(s.Tasks) == 0 {
		none(b)
		return
	}
	lines := taskLines(s.Tasks, label, lim)
	shown := len(lines)
	if lim.rows >= 0 && shown > lim.rows {
		shown = lim.rows
	}
	for _, l := range lines[:shown] {
		b.WriteString(l + "\n")
	}
	if n := len(lines) - shown; n > 0 {
		if shown > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(b, "_… %d more tasks in the machine block_\n", n)
	}
}

// notConfigured is the status line of a run without a tracker.
const notConfigured = "Tasks: no tracker — tasks are kept here, numbered 01, 02, …; to sync them, set `tracker: github` " +
	"in the config (GitHub sub-issues) or the action's `jira_*` inputs (Jira), then comment `/autopilot tasks sync`"

// trackerStatus is the Tasks section's status line: whether the tracker
// (named by label: "Jira", "GitHub") is off, how many tasks wait for it,
// and its note.
func trackerStatus(s *state.State, label string, lim budget) string {
	var parts []string
	switch {
	case s.TrackerOff == state.TrackerNotConfigured:
		parts = append(parts, notConfigured)
	case s.TrackerEnabled != nil && !*s.TrackerEnabled:
		parts = append(parts, label+": disabled — tasks are kept here until `/autopilot tasks sync`")
	}
	pending := 0
	for _, t := range s.Tasks {
		if t.Sync != state.SyncCreated && t.Sync != state.SyncLocal {
			pending++
		}
	}
	if pending > 0 {
		parts = append(parts, fmt.Sprintf("%s: pending (%d)", label, pending))
	}
	if s.TrackerNote != "" {
		parts = append(parts, label+": "+inline(s.TrackerNote, lim))
	}
	return strings.Join(parts, " · ")
}

// taskLines orders tasks as a tree: each epic followed by its tasks (a
// task's Epic names the epic's id or title), then the remaining tasks.
func taskLines(all []state.Task, label string, lim budget) []string {
	parent := make([]int, len(all)) // index of the task's epic, or -1
	for i, t := range all {
		parent[i] = -1
		if t.Kind == state.KindEpic || t.Epic == "" {
			continue
		}
		for j, e := range all {
			if e.Kind == state.KindEpic && (e.ID == t.Epic || e.Title == t.Epic) {
				parent[i] = j
				break
			}
		}
	}
	lines := make([]string, 0, len(all))
	for j, e := range all {
		if e.Kind != state.KindEpic {
			continue
		}
		lines = append(lines, taskLine(e, "", label, lim))
		for i, t := range all {
			if parent[i] == j {
				lines = append(lines, taskLine(t, "  ", label, lim))
			}
		}
	}
	for i, t := range all {
		if t.Kind != state.KindEpic && parent[i] < 0 {
			lines = append(lines, taskLine(t, "", label, lim))
		}
	}
	return lines
}

func taskLine(t state.Task, indent, label string, lim budget) string {
	var b strings.Builder
	box := "[ ]"
	if t.Done {
		box = "[x]"
	}
	b.WriteString(indent + "- " + box + " " + textsafe.Inline(t.ID) + " ")
	if t.Kind == state.KindEpic {
		b.WriteString("**Epic:** ")
	}
	b.WriteString(inline(t.Title, lim))
	if t.Points > 0 {
		b.WriteString(" (" + strconv.FormatFloat(t.Points, 'f', -1, 64) + " pts)")
	}
	if t.Carryover {
		b.WriteString(" (carryover)")
	}
	b.WriteString(" — ")
	switch {
	case t.Key != "" && t.URL != "":
		fmt.Fprintf(&b, "[%s](%s)", t.Key, t.URL)
	case t.Key != "":
		b.WriteString(t.Key)
	case t.Sync == state.SyncFailed && t.Error != "":
		b.WriteString(label + ": failed — " + inline(t.Error, lim))
	case t.Sync == state.SyncLocal:
		b.WriteString("kept here (no tracker)")
	default:
		b.WriteString(label + ": " + string(t.Sync))
	}
	if g := goneLine(t.Gone); g != "" {
		b.WriteString(" — " + g)
	}
	if t.Remark != "" {
		b.WriteString(" — " + inline(t.Remark, lim))
	}
	return b.String()
}

// goneLine says what became of a task's issue that is followed no more.
func goneLine(gone string) string {
	switch gone {
	case "":
		return ""
	case state.IssueDeleted:
		return "issue deleted (410): not followed any more; `/autopilot tasks retry` creates it again"
	case state.IssueNotFound:
		return "issue not found (404): not followed any more; `/autopilot tasks retry` creates it again"
	case state.IssueTransferred:
		return "issue transferred to another repository: not followed any more"
	}
	return "issue " + textsafe.Inline(gone)
}
