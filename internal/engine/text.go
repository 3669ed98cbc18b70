package engine

import (
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/choose"
	"github.com/autopilot-dev/autopilot/internal/flow"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

func (m *machine) announceText(st flow.Step, how string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "▶️ **%s — %s** (%s flow", m.f.LabelOf(m.s.Step), st.Name, m.f.Name)
	if m.s.Cycle > 1 {
		fmt.Fprintf(&b, ", cycle %d", m.s.Cycle)
	}
	if m.s.RetryCount > 0 {
		fmt.Fprintf(&b, ", attempt %d", m.s.RetryCount+1)
	}
	b.WriteString(")\n\n")
	if st.Produces != "" {
		fmt.Fprintf(&b, "Produce: %s.\n", textsafe.Escape(st.Produces))
	}
	if st.Jira != "" {
		fmt.Fprintf(&b, "Declare the %s in a fenced `autopilot-%s` YAML block in the report comment (title, description, epic, depends_on, points).\n", st.Jira, st.Jira)
	}
	if m.s.Review != nil && m.s.Review.ReturnToPlanReason != "" && st.Slug == "plan" {
		fmt.Fprintf(&b, "Return-to-plan reason (review cycle %d): %s\n", m.s.Review.ReviewCycle, textsafe.Escape(m.s.Review.ReturnToPlanReason))
	}
	b.WriteString("Executor: " + how)
	return b.String()
}

// promptText renders the comment executor's prompt (mentions the agent).
func (m *machine) promptText(st flow.Step, agent, tmpl string, attempt int) string {
	if tmpl == "" {
		tmpl = "{{agent}} please run step **{{step}} — {{name}}** of autopilot on #{{number}} ({{title}}), attempt {{attempt}}, from sub-step {{sub_step}}.\n\nProduce: {{produces}}.\n\nReport with `/autopilot done [summary]`, `/autopilot fail <reason>` or `/autopilot progress <phase> <name> [detail]` as the first line of a comment.{{links}}"
	}
	links := ""
	for i := len(m.s.Completed) - 1; i >= 0 && i >= len(m.s.Completed)-3; i-- {
		links += "\n- earlier: " + textsafe.Escape(m.s.Completed[i].Name+" — "+m.s.Completed[i].Outcome)
	}
	r := strings.NewReplacer(
		"{{agent}}", agent, // configured by the maintainer: the one mention we want
		"{{step}}", m.f.LabelOf(m.s.Step),
		"{{name}}", st.Name,
		"{{number}}", fmt.Sprint(m.s.Issue),
		"{{title}}", textsafe.Escape(m.s.Title),
		"{{attempt}}", fmt.Sprint(attempt),
		"{{sub_step}}", fmt.Sprintf("%d %s", m.s.SubStep.Phase, m.s.SubStep.Name),
		"{{produces}}", textsafe.Escape(st.Produces),
		"{{links}}", links,
	)
	out := r.Replace(tmpl)
	if !strings.Contains(tmpl, "{{agent}}") {
		out = agent + " " + out
	}
	return out
}

// snapshotText renders the review loop's context snapshot (seed 003).
func snapshotText(slug string, e Start) string {
	sec := sections(e.Body)
	get := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := sec[k]; ok && strings.TrimSpace(v) != "" {
				return textsafe.Escape(strings.TrimSpace(v))
			}
		}
		return "—"
	}
	prompt := textsafe.Escape(strings.TrimSpace(e.Body))
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
**Open questions:** %s`, slug, quoteBlock(prompt), get("desired outcome", "outcome", "goal"), get("known facts", "facts", "context"), get("constraints"), get("open questions", "questions", "unknowns"))
}

func quoteBlock(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = "> " + l
	}
	return strings.Join(lines, "\n")
}

// sections splits Markdown by headings ("## Constraints") into lower-case keys.
func sections(body string) map[string]string {
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

// banner renders the status banner of the current state.
func (m *machine) banner() string { return Banner(m.set.Config.All, m.s) }

// Banner renders the seed-002 status summary of a state.
func Banner(flows flow.Set, s *state.State) string {
	f := flows[s.Flow]
	if f == nil {
		return "AUTOPILOT STATUS: no flow selected yet"
	}
	rows := make([]choose.Row, len(f.Steps))
	for i, st := range f.Steps {
		r := choose.Row{Label: f.LabelOf(i + 1), Name: st.Name, Status: state.NotStarted}
		if i < len(s.Steps) {
			r.Status, r.Retries, r.Note = s.Steps[i].Status, s.Steps[i].Retries, s.Steps[i].Note
		}
		rows[i] = r
	}
	cur := choose.Current{Name: "Done", Action: NextAction(s)}
	if s.Step > 0 {
		cur.Label, cur.Name = f.LabelOf(s.Step), s.Name
		cur.Phase, cur.SubStep = s.SubStep.Phase, s.SubStep.Name
		cur.Retry = s.RetryCount
	}
	return choose.Banner(f.Name, rows, cur)
}

// NextAction says in words what happens next.
func NextAction(s *state.State) string {
	switch s.Run {
	case state.RunDone:
		return "nothing — the run is complete"
	case state.RunStopped:
		if s.Stop != nil {
			return "stopped (" + s.Stop.Reason + "); /autopilot resume continues"
		}
		return "stopped; /autopilot resume continues"
	case state.RunAwaitingDecision, state.RunFailed:
		if s.Gate != nil {
			return "waiting for a decision: " + oneLine(s.Gate.Title, 80)
		}
	}
	if s.PendingJiraCheck {
		return "checking Jira authentication"
	}
	if s.Exec != nil && s.Exec.Executor == "dispatch" {
		return "waiting for the dispatched workflow run"
	}
	return "waiting for the executor's report on " + s.Name
}
