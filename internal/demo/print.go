package demo

import (
	"fmt"
	"io"
	"strings"
)

// printTranscript shows the issue thread the way a person reads it: hidden
// markers are invisible, state edits are one line each, the final state
// comment is shown whole at the end.
func printTranscript(out io.Writer, w *world, tr Transcript) {
	fmt.Fprintf(out, "autopilot demo — %s, issue #%d (sandbox forge, sandbox Jira, fixed clock)\n", repo, w.issue)
	fmt.Fprintln(out, strings.Repeat("─", 72))
	for _, e := range tr.Entries {
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
		case "label+":
			fmt.Fprintf(out, "%s  @%s added label %s\n", t, e.Actor, e.Label)
		case "label-":
			fmt.Fprintf(out, "%s  @%s removed label %s\n", t, e.Actor, e.Label)
		case "react":
			fmt.Fprintf(out, "%s  @%s reacted %s\n", t, e.Actor, emoji(e.Detail))
		case "dispatch":
			fmt.Fprintf(out, "%s  @%s dispatched a workflow: %s\n", t, e.Actor, e.Detail)
		}
	}
	fmt.Fprintln(out, strings.Repeat("─", 72))
	fmt.Fprintln(out, "Final state comment (as rendered on the issue, machine block hidden):")
	for _, l := range strings.Split(visible(tr.State), "\n") {
		fmt.Fprintf(out, "  %s\n", l)
	}
	printSummary(out, tr.Summary)
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
