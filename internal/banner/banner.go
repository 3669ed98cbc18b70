// Package banner renders the status banner at the top of the state comment:
// the flow's steps with their status and where the run is. It is pure and
// never decides anything: the caller says what each row and the current
// position show.
package banner

import (
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// bannerRule separates the parts of the status banner (seed 002).
const bannerRule = "═══════════════════════════════════════════════════"

// MaxRetries is the retry limit shown in "FAILED (retry N/3)".
const MaxRetries = 3

// Step status values accepted in Row.Status (the state package's values).
const (
	StatusNotStarted = "not_started"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusSkipped    = "skipped"
	StatusFailed     = "failed"
)

// Minimum column widths of the banner, as in seed 002.
const (
	labelWidth = 8
	nameWidth  = 19
	maxLabel   = 16 // longer labels and names are clipped
	maxName    = 40
	maxNote    = 60
	maxAction  = 300
)

// Row is one step of the status banner.
type Row struct {
	Label   string // "Step 3", "Step 2b", "Pre"
	Name    string // "Plan"
	Status  string // one of the Status* values
	Retries int    // shown with a failed status
	Note    string // shown after DONE / IN PROGRESS, e.g. "5 tasks"
}

// Current is the lower part of the banner: where the run is and what
// happens next. Empty fields are omitted (Retry when 0).
type Current struct {
	Label   string // "Step 3"; empty when the run is done
	Name    string // "Plan" or "Done"
	Phase   int    // sub-step phase
	SubStep string // sub-step name; the SubStep line is omitted when empty
	Retry   int
	Action  string // what happens next
	// Held says the background sync waits (the GitHub budget
	// held it); the Held line is omitted when empty.
	Held string
}

// Banner renders the status summary of seed 002 for a flow (without a code
// fence). Columns are padded by display width (wide characters count two,
// combining marks zero). All texts pass through textsafe.Code.
func Banner(flow string, rows []Row, cur Current) string {
	type cells struct{ label, name, status string }
	table := make([]cells, len(rows))
	lw, nw := labelWidth, nameWidth
	for i, r := range rows {
		c := cells{clean(r.Label, maxLabel), clean(r.Name, maxName), statusWord(r)}
		lw, nw = max(lw, textsafe.DisplayWidth(c.label)), max(nw, textsafe.DisplayWidth(c.name))
		table[i] = c
	}

	var b strings.Builder
	b.WriteString(bannerRule + "\n")
	b.WriteString(" AUTOPILOT STATUS (" + clean(flow, maxName) + ")\n")
	b.WriteString(bannerRule + "\n")
	for _, c := range table {
		b.WriteString(" " + pad(c.label, lw) + " " + pad(c.name, nw) + " " + c.status + "\n")
	}
	b.WriteString(bannerRule + "\n")
	label, name := clean(cur.Label, maxLabel), clean(cur.Name, maxName)
	switch {
	case label != "" && name != "":
		b.WriteString(" Current: " + label + " — " + name + "\n")
	case label+name != "":
		b.WriteString(" Current: " + label + name + "\n")
	}
	if sub := clean(cur.SubStep, maxName); sub != "" {
		fmt.Fprintf(&b, " SubStep: %d — %s\n", cur.Phase, sub)
	}
	if cur.Retry > 0 {
		fmt.Fprintf(&b, " Retry:   %d/%d\n", cur.Retry, MaxRetries)
	}
	if action := clean(cur.Action, maxAction); action != "" {
		b.WriteString(" Action:  " + action + "\n")
	}
	if held := clean(cur.Held, maxAction); held != "" {
		b.WriteString(" Held:    " + held + "\n")
	}
	b.WriteString(bannerRule)
	return b.String()
}

// statusWord renders a row's status: DONE, IN PROGRESS, NOT STARTED,
// FAILED (retry N/3) or SKIPPED, with the note after DONE / IN PROGRESS.
func statusWord(r Row) string {
	var w string
	switch r.Status {
	case StatusCompleted:
		w = "DONE"
	case StatusInProgress:
		w = "IN PROGRESS"
	case StatusNotStarted:
		return "NOT STARTED"
	case StatusSkipped:
		return "SKIPPED"
	case StatusFailed:
		return fmt.Sprintf("FAILED (retry %d/%d)", r.Retries, MaxRetries)
	default:
		return strings.ToUpper(strings.ReplaceAll(clean(r.Status, maxLabel), "_", " "))
	}
	if note := clean(r.Note, maxNote); note != "" {
		w += " (" + note + ")"
	}
	return w
}

func pad(s string, w int) string {
	if n := textsafe.DisplayWidth(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// clean makes one line of caller text safe inside the fence.
func clean(s string, max int) string {
	return strings.TrimSpace(textsafe.Code(textsafe.Clip(s, max)))
}
