package codec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// tasks renders the Tasks section: a Jira status line, then epics with
// their tasks indented under them, then tasks without a (known) epic.
func tasks(b *strings.Builder, s *state.State, lim budget) {
	if status := jiraStatus(s, lim); status != "" {
		b.WriteString(status + "\n\n")
	}
	if len(s.Tasks) == 0 {
		none(b)
		return
	}
	lines := taskLines(s.Tasks, lim)
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

func jiraStatus(s *state.State, lim budget) string {
	var parts []string
	switch {
	case s.JiraOff == state.JiraNotConfigured:
		parts = append(parts, "Jira: not configured — tasks are kept here, numbered 01, 02, …; to sync them, set the action's `jira_*` inputs and comment `/autopilot jira sync`")
	case s.JiraEnabled != nil && !*s.JiraEnabled:
		parts = append(parts, "Jira: disabled — tasks are kept here until `/autopilot jira sync`")
	}
	pending := 0
	for _, t := range s.Tasks {
		if t.Jira != state.JiraCreated && t.Jira != state.JiraLocal {
			pending++
		}
	}
	if pending > 0 {
		parts = append(parts, fmt.Sprintf("Jira sync pending (%d)", pending))
	}
	if s.JiraNote != "" {
		parts = append(parts, "Jira: "+inline(s.JiraNote, lim))
	}
	return strings.Join(parts, " · ")
}

// taskLines orders tasks as a tree: each epic followed by its tasks (a
// task's Epic names the epic's id or title), then the remaining tasks.
func taskLines(all []state.Task, lim budget) []string {
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
		lines = append(lines, taskLine(e, "", lim))
		for i, t := range all {
			if parent[i] == j {
				lines = append(lines, taskLine(t, "  ", lim))
			}
		}
	}
	for i, t := range all {
		if t.Kind != state.KindEpic && parent[i] < 0 {
			lines = append(lines, taskLine(t, "", lim))
		}
	}
	return lines
}

func taskLine(t state.Task, indent string, lim budget) string {
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
	case t.JiraKey != "" && t.JiraURL != "":
		fmt.Fprintf(&b, "[%s](%s)", t.JiraKey, t.JiraURL)
	case t.JiraKey != "":
		b.WriteString(t.JiraKey)
	case t.Jira == state.JiraFailed && t.Error != "":
		b.WriteString("Jira: failed — " + inline(t.Error, lim))
	case t.Jira == state.JiraLocal:
		b.WriteString("kept here (no Jira)")
	default:
		b.WriteString("Jira: " + t.Jira)
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
		return "issue deleted (410): not followed any more; `/autopilot jira retry` creates it again"
	case state.IssueNotFound:
		return "issue not found (404): not followed any more; `/autopilot jira retry` creates it again"
	case state.IssueTransferred:
		return "issue transferred to another repository: not followed any more"
	}
	return "issue " + textsafe.Inline(gone)
}
