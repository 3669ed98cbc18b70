package demo

import (
	"fmt"
	"io"
	"strings"
)

// printTranscript shows the issue thread the way a person reads it: hidden
// markers are invisible, state edits are one line each, each bot pass's
// reactions and label changes share one line, the final state comment is
// shown whole at the end.
func printTranscript(out io.Writer, w *world, tr Transcript) {
	tasks := "no tracker: tasks kept in the issue"
	if w.jira {
		tasks = "tasks in the sandbox Jira"
	}
	if w.subIssues {
		tasks = "tasks as GitHub sub-issues"
	}
	fmt.Fprintf(out, "autopilot demo — %s, issue #%d (sandbox forge, %s, fixed clock)\n", repo, w.issue, tasks)
	fmt.Fprintln(out, strings.Repeat("─", 72))
	grouped := map[int]bool{} // runs whose reactions and labels are printed
	for i, e := range tr.Entries {
		t := e.At.Format("15:04")
		switch e.Kind {
		case "open":
			fmt.Fprintf(out, "%s  @%s opened #%d “%s”\n", t, e.Actor, e.Issue, e.Detail)
		case "comment":
			fmt.Fprintf(out, "%s  @%s commented:\n", t, e.Actor)
			for _, l := range strings.Split(visible(e.Body), "\n") {
				fmt.Fprintf(out, "       │ %s\n", l)
			}
		case "state":
			fmt.Fprintf(out, "%s  @%s updated the state comment: %s\n", t, e.Actor, e.Detail)
		case "label+", "label-", "react":
			if e.Run == 0 { // a person's label change
				verb := map[string]string{"label+": "added label", "label-": "removed label", "react": "reacted"}[e.Kind]
				fmt.Fprintf(out, "%s  @%s %s %s%s\n", t, e.Actor, verb, e.Label, emoji(e.Detail))
				continue
			}
			if !grouped[e.Run] {
				grouped[e.Run] = true
				fmt.Fprintf(out, "%s  @%s %s\n", t, e.Actor, passLine(tr.Entries[i:], e.Run))
			}
		case "dispatch":
			fmt.Fprintf(out, "%s  @%s dispatched a workflow: %s\n", t, e.Actor, e.Detail)
		case "pr":
			fmt.Fprintf(out, "%s  @%s opened pull request %s\n", t, e.Actor, e.Detail)
		case "review":
			fmt.Fprintf(out, "%s  @%s %s\n", t, e.Actor, e.Detail)
		case "checks":
			fmt.Fprintf(out, "%s  %s: %s\n", t, e.Actor, e.Detail)
		case "jira":
			fmt.Fprintf(out, "%s  @%s %s\n", t, e.Actor, e.Detail)
		case "issue":
			fmt.Fprintf(out, "%s  @%s created sub-issue %s\n", t, e.Actor, e.Detail)
		}
	}
	fmt.Fprintln(out, strings.Repeat("─", 72))
	fmt.Fprintln(out, "Final state comment (as rendered on the issue, machine block hidden):")
	for _, l := range strings.Split(visible(tr.State), "\n") {
		fmt.Fprintf(out, "  %s\n", l)
	}
	printSummary(out, tr.Summary)
}

// passLine joins the reactions and label changes of one bot pass (the
// entries of run, from the first one on): "reacted 👍 on @maria's comment ·
// labels −step:plan +step:decompose".
func passLine(es []Entry, run int) string {
	var reacts, labels []string
	for _, e := range es {
		if e.Run != run {
			continue
		}
		switch e.Kind {
		case "react":
			reacts = append(reacts, emoji(e.Detail))
		case "label+":
			labels = append(labels, "+"+strings.TrimPrefix(e.Label, "autopilot/"))
		case "label-":
			labels = append(labels, "−"+strings.TrimPrefix(e.Label, "autopilot/"))
		}
	}
	var parts []string
	if len(reacts) > 0 {
		parts = append(parts, "reacted "+strings.Join(reacts, ", "))
	}
	if len(labels) > 0 {
		parts = append(parts, "labels "+strings.Join(labels, " "))
	}
	return strings.Join(parts, " · ")
}

// visible drops HTML comment lines, which GitHub does not show.
func visible(body string) string {
	var keep []string
	for _, l := range strings.Split(body, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "<!--") && strings.HasSuffix(t, "-->") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

func emoji(d string) string {
	switch {
	case strings.HasPrefix(d, "+1"):
		return "👍" + strings.TrimPrefix(d, "+1")
	case strings.HasPrefix(d, "confused"):
		return "😕" + strings.TrimPrefix(d, "confused")
	}
	return d
}
