package engine

import (
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/flow"
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

// banner renders the status banner of the current state.
func (m *machine) banner() string { return prose.Banner(m.set.Config.All, m.s) }
