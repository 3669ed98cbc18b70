// Package prose holds the engine's pure text helpers: the status banner,
// the next-action line, the context snapshot and the small formatting
// rules (one line, short SHA, plurals) every engine message shares, and
// the texts of the one-off notices and refusals.
package prose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/banner"
	"github.com/autopilot-dev/autopilot/internal/choose"
	"github.com/autopilot-dev/autopilot/internal/flow"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/marker"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// Snapshot renders the review loop's context snapshot (seed 003).
func Snapshot(slug, body string) string {
	sec := Sections(body)
	get := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := sec[k]; ok && strings.TrimSpace(v) != "" {
				return textsafe.Escape(strings.TrimSpace(v))
			}
		}
		return "—"
	}
	prompt := textsafe.Escape(strings.TrimSpace(body))
	if prompt == "" {
		prompt = "—"
	}
	return fmt.Sprintf(`### Context snapshot: %s

Every later handoff links here. The seed is the issue text (the activation prompt), not prior conversation.

**Activation prompt** (status: activation-prompt)
%s

**Desired outcome:** %s
**Known facts:** %s
**Constraints:** %s
**Open questions:** %s`, slug, QuoteBlock(prompt), get("desired outcome", "outcome", "goal"), get("known facts", "facts", "context"), get("constraints"), get("open questions", "questions", "unknowns"))
}

// QuoteBlock quotes every line of s in Markdown.
func QuoteBlock(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = "> " + l
	}
	return strings.Join(lines, "\n")
}

// Sections splits Markdown by headings ("## Constraints") into lower-case keys.
func Sections(body string) map[string]string {
	out := map[string]string{}
	cur := ""
	for _, l := range strings.Split(body, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") {
			cur = strings.ToLower(strings.TrimSpace(strings.TrimLeft(t, "#")))
			cur = strings.TrimSuffix(cur, ":")
			continue
		}
		if cur != "" {
			out[cur] += l + "\n"
		}
	}
	return out
}

// Banner renders the seed-002 status summary of a state.
func Banner(flows flow.Set, s *state.State) string {
	f := flows[s.Flow]
	if f == nil {
		return "AUTOPILOT STATUS: no flow selected yet"
	}
	rows := make([]banner.Row, len(f.Steps))
	for i, st := range f.Steps {
		r := banner.Row{Label: f.LabelOf(i + 1), Name: st.Name, Status: string(state.NotStarted)}
		if i < len(s.Steps) {
			r.Status, r.Retries, r.Note = string(s.Steps[i].Status), s.Steps[i].Retries, s.Steps[i].Note
		}
		rows[i] = r
	}
	cur := banner.Current{Name: "Done", Action: NextAction(s)}
	if s.Step > 0 {
		cur.Label, cur.Name = f.LabelOf(s.Step), s.Name
		cur.Phase, cur.SubStep = s.SubStep.Phase, s.SubStep.Name
		cur.Retry = s.RetryCount
	}
	cur.Held = s.BackgroundHeld.Banner()
	return banner.Banner(f.Name, rows, cur)
}

// NextAction says in words what happens next.
func NextAction(s *state.State) string {
	switch s.Run {
	case state.RunDone:
		return "nothing — the run is complete"
	case state.RunStopped:
		if s.Stop != nil {
			return "stopped (" + string(s.Stop.Reason) + "); /autopilot resume continues"
		}
		return "stopped; /autopilot resume continues"
	case state.RunAwaitingDecision, state.RunFailed:
		if s.Gate != nil {
			if b := s.Gate.Ballot; b != nil && b.Status != "" {
				return "waiting for a decision: " + OneLine(s.Gate.Title, 80) + " — " + OneLine(b.Status, 200)
			}
			return "waiting for a decision: " + OneLine(s.Gate.Title, 80)
		}
	}
	if s.PendingAuthCheck {
		switch {
		case s.TrackerInUse == state.TrackerGitHub:
			return "checking access to GitHub sub-issues"
		case !s.TrackerInUse.Builtin():
			return "checking " + state.TrackerLabel(s.TrackerInUse) + " authentication"
		}
		return "checking Jira authentication"
	}
	if s.Exec != nil && s.Exec.Executor == "dispatch" {
		return "waiting for the dispatched workflow run"
	}
	return "waiting for the executor's report on " + s.Name
}

// Points writes story points: whole numbers without a decimal.
func Points(p float64) string {
	if p == float64(int64(p)) {
		return fmt.Sprint(int64(p))
	}
	return fmt.Sprintf("%.1f", p)
}

// Letter is the option letter of index i (0 → A).
func Letter(i int) string { return string(rune('A' + i)) }

// OneLine trims text to one line of at most n runes.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// TaskSlug derives a kebab-case slug from an issue title (seed 003).
func TaskSlug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" {
		s = "task"
	}
	return s
}

// Normalise reduces a finding to its words after any "kind:" prefix, in
// lower case, so repeated findings compare equal.
func Normalise(s string) string {
	s = strings.ToLower(s)
	if i := strings.Index(s, ":"); i >= 0 {
		s = s[i+1:]
	}
	return strings.Join(strings.Fields(s), " ")
}

// FirstLine is the first non-blank line of s.
func FirstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			return t
		}
	}
	return "(no details)"
}

// Short is a commit SHA's 7-character form.
func Short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// Plural is kind ("items" when empty) in the singular when n is 1.
func Plural(n int, kind string) string {
	if kind == "" {
		kind = "items"
	}
	if n == 1 {
		return strings.TrimSuffix(kind, "s")
	}
	return kind
}

// KindWord names a task kind in the plural ("epics" or "tasks").
func KindWord(k state.TaskKind) string {
	if k == state.KindEpic {
		return "epics"
	}
	return "tasks"
}

// Clip trims s to at most n runes, marking a cut with an ellipsis.
func Clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Announce renders the announcement of step st of flow f (executor: how).
func Announce(f *flow.Flow, s *state.State, st flow.Step, how string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "▶️ **%s — %s** (%s flow", f.LabelOf(s.Step), st.Name, f.Name)
	if s.Cycle > 1 {
		fmt.Fprintf(&b, ", cycle %d", s.Cycle)
	}
	if s.RetryCount > 0 {
		fmt.Fprintf(&b, ", attempt %d", s.RetryCount+1)
	}
	b.WriteString(")\n\n")
	if st.Produces != "" {
		fmt.Fprintf(&b, "Produce: %s.\n", textsafe.Escape(st.Produces))
	}
	if st.Jira != "" {
		fmt.Fprintf(&b, "Declare the %s in a fenced `autopilot-%s` YAML block in the report comment (title, description, epic, depends_on, points).\n", st.Jira, st.Jira)
	}
	if s.Review != nil && s.Review.ReturnToPlanReason != "" && st.Slug == "plan" {
		fmt.Fprintf(&b, "Return-to-plan reason (review cycle %d): %s\n", s.Review.ReviewCycle, textsafe.Escape(s.Review.ReturnToPlanReason))
	}
	b.WriteString("Executor: " + how)
	return b.String()
}

// Prompt renders the comment executor's prompt (mentions the agent).
func Prompt(f *flow.Flow, s *state.State, st flow.Step, agent, tmpl string, attempt int) string {
	if tmpl == "" {
		tmpl = "{{agent}} please run step **{{step}} — {{name}}** of autopilot on #{{number}} ({{title}}), attempt {{attempt}}, from sub-step {{sub_step}}.\n\nProduce: {{produces}}.\n\nReport with `/autopilot done [summary]`, `/autopilot fail <reason>` or `/autopilot progress <phase> <name> [detail]` as the first line of a comment.{{links}}"
	}
	links := ""
	for i := len(s.Completed) - 1; i >= 0 && i >= len(s.Completed)-3; i-- {
		links += "\n- earlier: " + textsafe.Escape(s.Completed[i].Name+" — "+s.Completed[i].Outcome)
	}
	r := strings.NewReplacer(
		"{{agent}}", agent, // configured by the maintainer: the one mention we want
		"{{step}}", f.LabelOf(s.Step),
		"{{name}}", st.Name,
		"{{number}}", fmt.Sprint(s.Issue),
		"{{title}}", textsafe.Escape(s.Title),
		"{{attempt}}", fmt.Sprint(attempt),
		"{{sub_step}}", fmt.Sprintf("%d %s", s.SubStep.Phase, s.SubStep.Name),
		"{{produces}}", textsafe.Escape(st.Produces),
		"{{links}}", links,
	)
	out := r.Replace(tmpl)
	if !strings.Contains(tmpl, "{{agent}}") {
		out = agent + " " + out
	}
	return out
}

// GateMarker is the hidden first line of a gate's Choose comment.
func GateMarker(id string) string { return marker.Build(marker.Gate, id) }

// Gate renders the Choose block of a gate.
func Gate(g *state.Gate) string { return GateWith(g, "") }

// GateWith renders the Choose block of a gate with one more detail line
// after the gate's own (none when extra is empty): an approver policy's
// quorum, "Approvals: 1 of 2 approvals: @ada (A) — waiting for …".
func GateWith(g *state.Gate, extra string) string {
	b := choose.Block{GateID: g.ID, Title: g.Title, Details: g.Details, Recommend: g.Recommend, Reason: g.Reason}
	if extra != "" {
		b.Details = append(slices.Clip(b.Details), OneLine(extra, choose.MaxDetail))
	}
	for _, o := range g.Options {
		b.Options = append(b.Options, choose.Option{Letter: o.Letter, Text: o.Text})
	}
	return b.Render()
}
