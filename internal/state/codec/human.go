package codec

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/banner"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// budget limits the human part: at most rows rows per table or list (the
// last ones; < 0 means all) and cell characters of user text per value.
type budget struct{ rows, cell int }

// budgets are tried in order until the body fits textsafe.SafeBody.
var budgets = []budget{{-1, 300}, {100, 200}, {30, 120}, {10, 80}, {3, 60}, {0, 40}}

// renderHuman renders everything before the machine block (ending in a
// blank line).
func renderHuman(s *state.State, view View, lim budget) string {
	var b strings.Builder
	b.WriteString(state.Marker + "\n## Autopilot State\n```text\n")
	b.WriteString(statusBanner(s, view))
	b.WriteString("\n```\n")
	for _, sec := range sections {
		b.WriteString("\n### " + sec.title + "\n")
		sec.render(&b, s, lim)
	}
	b.WriteString("\n") // the machine block follows after a blank line
	return b.String()
}

// sections are the headed sections after the banner, in order.
var sections = []struct {
	title  string
	render func(*strings.Builder, *state.State, budget)
}{
	{"Current Step", currentStep},
	{"Completed Steps", completed},
	{"Key Decisions", decisions},
	{"Last Session", lastSession},
	{"Retry Log", retryLog},
	{"Blockers", blockers},
	{"Tasks", tasks},
}

// stepInfo finds a step of the view by slug; unknown steps are labelled
// "Step n" (n = index+1 when known, else 0) and named by their slug.
func stepInfo(view View, slug string, index int) StepInfo {
	for _, st := range view.Steps {
		if st.Slug == slug {
			return st
		}
	}
	return StepInfo{Slug: slug, Name: slug, Label: "Step " + strconv.Itoa(index)}
}

func statusBanner(s *state.State, view View) string {
	rows := make([]banner.Row, len(s.Steps))
	for i, p := range s.Steps {
		info := stepInfo(view, p.Slug, i+1)
		rows[i] = banner.Row{Label: info.Label, Name: info.Name, Status: string(p.Status), Retries: p.Retries, Note: p.Note}
	}
	cur := banner.Current{Name: "Done", Action: view.Action}
	if s.Slug != "done" {
		cur = banner.Current{
			Label:   stepInfo(view, s.Slug, s.Step).Label,
			Name:    s.Name,
			Phase:   s.SubStep.Phase,
			SubStep: s.SubStep.Name,
			Retry:   s.RetryCount,
			Action:  view.Action,
		}
	}
	cur.Held = s.BackgroundHeld.Banner()
	return banner.Banner(s.Flow, rows, cur)
}

func currentStep(b *strings.Builder, s *state.State, _ budget) {
	step := strconv.Itoa(s.Step)
	if s.Slug == "done" {
		step = "done"
	}
	fmt.Fprintf(b, "```yaml\nflow: %s\nstep: %s\nname: %s\nstatus: %s\n", s.Flow, step, yamlPlain(s.Name), s.Status)
	fmt.Fprintf(b, "sub_step:\n  phase: %d\n  name: %s\n  detail: %s\n", s.SubStep.Phase, yamlPlain(s.SubStep.Name), yamlQuoted(s.SubStep.Detail))
	fmt.Fprintf(b, "retry_count: %d\ncycle: %d\n```\n", s.RetryCount, s.Cycle)
}

// yamlPlain renders a value plainly when YAML would read it back as the
// same string, quoted otherwise. Values pass through textsafe.Code first.
func yamlPlain(v string) string {
	v = textsafe.Code(textsafe.Clip(v, 200))
	if v == "" || !plainSafe(v) {
		return yamlQuoted(v)
	}
	return v
}

func plainSafe(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "null", "~":
		return false
	}
	if v[0] < 'A' || (v[0] > 'Z' && v[0] < 'a') || v[0] > 'z' || strings.HasSuffix(v, " ") {
		return false
	}
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(" -_.()", r)) {
			return false
		}
	}
	return true
}

// yamlQuoted renders a YAML double-quoted scalar on one line.
func yamlQuoted(v string) string {
	v = textsafe.Code(textsafe.Clip(v, 300))
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range v {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// rows writes the last n rows (as many as the budget allows) under an
// optional table header, after a note saying how many were left out;
// "- none" when there are no rows at all.
func rows(b *strings.Builder, header, what string, n int, lim budget, row func(i int) string) {
	if n == 0 {
		none(b)
		return
	}
	from := 0
	if lim.rows >= 0 && n > lim.rows {
		from = n - lim.rows
		fmt.Fprintf(b, "_… %d earlier %s in the machine block_\n\n", from, what)
	}
	if from == n {
		return
	}
	b.WriteString(header)
	for i := from; i < n; i++ {
		b.WriteString(row(i) + "\n")
	}
}

func none(b *strings.Builder) { b.WriteString("- none\n") }

func cell(s string, lim budget) string { return textsafe.Cell(textsafe.Clip(s, lim.cell)) }

func inline(s string, lim budget) string { return textsafe.Inline(textsafe.Clip(s, lim.cell)) }

func day(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02")
}

func minute(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func completed(b *strings.Builder, s *state.State, lim budget) {
	rows(b, "| Step | Name | Completed | Key Outcome |\n|------|------|-----------|-------------|\n", "rows",
		len(s.Completed), lim, func(i int) string {
			c := s.Completed[i]
			step := strconv.Itoa(c.Step)
			if c.Cycle > 1 {
				step += fmt.Sprintf(" (cycle %d)", c.Cycle)
			}
			return fmt.Sprintf("| %s | %s | %s | %s |", step, cell(c.Name, lim), day(c.At), cell(c.Outcome, lim))
		})
}

func decisions(b *strings.Builder, s *state.State, lim budget) {
	archived(b, s)
	if len(s.Decisions) == 0 && s.DecisionsArchived > 0 {
		return
	}
	rows(b, "", "decisions", len(s.Decisions), lim, func(i int) string {
		return decisionLine(s.Decisions[i], lim)
	})
}

// decisionLine renders one decision as a list item.
func decisionLine(d state.Decision, lim budget) string {
	q := d.Question
	if q == "" {
		q = d.Gate
	}
	// The login is validated ([A-Za-z0-9-] and "[bot]"); the ZWSP after
	// "@" keeps it from pinging.
	line := fmt.Sprintf("- **%s** → %s) %s — by @%s%s on %s", inline(q, lim), d.Option, inline(d.OptionText, lim),
		textsafe.ZWSP, inline(d.By, lim), minute(d.At))
	if d.Link != "" {
		line += " ([comment](" + d.Link + "))"
	}
	if d.Reason != "" {
		line += " — reason: " + inline(d.Reason, lim)
	}
	return line
}

func lastSession(b *strings.Builder, s *state.State, lim budget) {
	ls := s.LastSession
	if ls == (state.Session{}) {
		none(b)
		return
	}
	fmt.Fprintf(b, "- date: %s\n- ended_at: %s\n- reason: %s\n- notes: %s\n",
		minute(ls.Date), inline(ls.EndedAt, lim), inline(ls.Reason, lim), inline(ls.Notes, budget{cell: 3 * lim.cell}))
}

func retryLog(b *strings.Builder, s *state.State, lim budget) {
	header := "| Attempt | Step | Name | SubStep | Failure Reason | Timestamp |\n" +
		"|---------|------|------|---------|----------------|-----------|\n"
	rows(b, header, "rows", len(s.RetryLog), lim, func(i int) string {
		r := s.RetryLog[i]
		return fmt.Sprintf("| %d | %d | %s | %s | %s | %s |", r.Attempt, r.Step, cell(r.Name, lim),
			cell(r.SubStep, lim), cell(r.Reason, lim), minute(r.At))
	})
}

func blockers(b *strings.Builder, s *state.State, lim budget) {
	rows(b, "", "blockers", len(s.Blockers), lim, func(i int) string {
		return "- " + inline(s.Blockers[i], lim)
	})
}
