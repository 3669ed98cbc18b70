package demo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker/subissues"
)

const epicsReport = "/autopilot done Architecture: a streaming CSV writer behind the existing report query layer.\n\n" +
	"```autopilot-epics\n" +
	"- title: CSV export\n" +
	"  description: Export any report as CSV from the reports page and the API.\n" +
	"```\n"

// tasksReport declares the greenfield tasks. The plan's epic is task 01, so
// the tasks are 02–06: depends_on names tasks (02, 03), never the epic.
const tasksReport = "/autopilot done Five tasks, 11 points, two batches.\n\n" +
	"```autopilot-tasks\n" +
	"- title: Streaming CSV writer\n  epic: CSV export\n  points: 3\n" +
	"- title: Export endpoint\n  epic: CSV export\n  depends_on: [\"02\"]\n  points: 2\n" +
	"- title: Export button on the reports page\n  epic: CSV export\n  depends_on: [\"03\"]\n  points: 2\n" +
	"- title: Column escaping and Unicode tests\n  epic: CSV export\n  points: 2\n" +
	"- title: Docs for CSV export\n  epic: CSV export\n  points: 2\n" +
	"```\n"

// greenfield is the scripted story of the README: label → status → Choose →
// answers → retry → Jira fallback → done.
func (w *world) greenfield(ctx context.Context) {
	is := w.sb.CreateIssue("maria", "Add CSV export to reports", "Users want to download any report as CSV.\n\n## Constraints\nNo new dependencies.")
	w.issue = is.Number
	w.entries = append(w.entries, Entry{At: w.clock, Actor: "maria", Kind: "open", Issue: is.Number, Detail: is.Title})
	w.label(ctx, "maria", "autopilot")
	w.say(ctx, "maria", "/autopilot done Problem: users need CSV downloads of every report; acceptance: a 100k-row report exports in under 5 s.")
	w.say(ctx, "maria", "/autopilot done Research: encoding/csv streams fine; no new dependency needed.")
	if w.jira {
		// Plan needs Jira: the sandbox Jira refuses the expired token →
		// Choose. The token is renewed, and A retries.
		w.tick(3 * time.Minute)
		w.tr.SetAuth(true)
		w.entries = append(w.entries, Entry{At: w.clock, Actor: "maria", Kind: "jira", Detail: "renewed the JIRA_TOKEN secret"})
		w.say(ctx, "maria", "A — the token is renewed")
	}
	w.say(ctx, "maria", epicsReport)
	w.say(ctx, "maria", tasksReport)
	// Session boundary: a reader without write access tries to answer.
	w.say(ctx, "drive-by", "A")
	w.say(ctx, "drive-by", "A please, I need this feature")
	w.say(ctx, "maria", "A")
	w.say(ctx, "devin", "/autopilot progress 1 batch-loop batch 1 of 2")
	w.say(ctx, "devin", "/autopilot fail tests do not compile: csv writer missing")
	w.say(ctx, "devin", "/autopilot fail integration test times out on 100k rows")
	w.say(ctx, "devin", "/autopilot fail flaky fixture in export_test")
	w.say(ctx, "maria", "A — retry with a fresh session")
	w.closeJiraTasks(ctx)
	w.say(ctx, "devin", "/autopilot done PR #2 implements all five tasks")
	w.say(ctx, "devin", "/autopilot done 214 passed, 0 failed")
	w.say(ctx, "devin", "/autopilot done No findings: output is escaped, no new endpoints without auth")
	w.say(ctx, "maria", "/autopilot done Deployed to production; smoke test passed")
}

// generic drives any flow the way people would: answer each open question
// with its recommendation, satisfy evidence gates with a real PR review and
// green checks, give consensus approvals in order, report done otherwise.
func (w *world) generic(ctx context.Context, flowName string) {
	is := w.sb.CreateIssue("maria", "Tidy the export pipeline", "## Desired outcome\nOne export code path.\n## Constraints\nKeep the public API.")
	w.issue = is.Number
	w.entries = append(w.entries, Entry{At: w.clock, Actor: "maria", Kind: "open", Issue: is.Number, Detail: is.Title})
	w.label(ctx, "maria", "autopilot/flow:"+flowName)
	w.label(ctx, "maria", "autopilot")
	pr := 0
	for i := 0; i < 80 && w.err == nil; i++ {
		s := w.state()
		if s == nil || s.Run == state.RunDone || s.Run == state.RunStopped {
			return
		}
		switch {
		case s.Gate != nil && s.Gate.Kind == state.GateTrackerAuth:
			w.tick(3 * time.Minute)
			w.tr.SetAuth(true)
			w.entries = append(w.entries, Entry{At: w.clock, Actor: "maria", Kind: "jira", Detail: "renewed the JIRA_TOKEN secret"})
			w.say(ctx, "maria", "A — the token is renewed")
		case s.Gate != nil:
			ans := s.Gate.Recommend
			if s.Gate.Kind == state.GateNextCycle {
				ans = "B"
			}
			w.say(ctx, "maria", ans)
		case s.Slug == "plan" && s.Review != nil && s.SubStep.Phase == 0:
			w.say(ctx, "devin", "/autopilot done Plan and test spec posted; one export path behind the query layer.")
		case s.Slug == "plan" && s.Review != nil && s.Review.Architect == nil:
			w.say(ctx, "ada", "/autopilot approve architect fits the layering")
		case s.Slug == "plan" && s.Review != nil:
			w.say(ctx, "grace", "/autopilot approve critic risks are covered")
		case s.Slug == "code-review":
			if pr == 0 {
				w.tick(time.Minute)
				p := w.sb.CreatePull("devin", "One export path", fmt.Sprintf("Fixes #%d", w.issue), "4f2c9e1ab7d3")
				pr = p.Number
				w.entries = append(w.entries, Entry{At: w.clock, Actor: "devin", Kind: "pr", Issue: pr, Detail: fmt.Sprintf("#%d “%s” (Fixes #%d, head 4f2c9e1)", pr, p.Title, w.issue)})
				w.deliver(ctx, &ghevent.Event{Name: "pull_request", Action: "opened", Repo: repo, Sender: w.sb.User("devin"), Handled: true, Issue: pr, IsPR: true, Pull: &p, LinkedIssues: []int{w.issue}})
				continue
			}
			w.tick(3 * time.Minute)
			rv := w.sb.AddReview(pr, "grace", "APPROVED", "Looks good.")
			w.entries = append(w.entries, Entry{At: w.clock, Actor: "grace", Kind: "review", Issue: pr, Detail: fmt.Sprintf("approved #%d: “Looks good.”", pr)})
			p, _ := w.sb.GetPull(ctx, pr)
			w.deliver(ctx, &ghevent.Event{Name: "pull_request_review", Action: "submitted", Repo: repo, Sender: w.sb.User("grace"), Handled: true, Issue: pr, IsPR: true, Pull: &p, Review: &rv, LinkedIssues: []int{w.issue}})
		case s.Slug == "qa":
			w.tick(5 * time.Minute)
			w.sb.SetChecks("4f2c9e1ab7d3", forge.Check{Name: "test", Status: "completed", Conclusion: "success"}, forge.Check{Name: "lint", Status: "completed", Conclusion: "success"})
			w.entries = append(w.entries, Entry{At: w.clock, Actor: "ci", Kind: "checks", Issue: pr, Detail: fmt.Sprintf("test ✔ and lint ✔ on #%d's head 4f2c9e1; the hourly sweep reads them", pr)})
			w.deliver(ctx, &ghevent.Event{Name: "schedule", Handled: true, Sweep: true, Repo: repo})
		case s.Status == state.InProgress:
			if w.implements(flowName, s.Slug) {
				w.closeJiraTasks(ctx)
			}
			w.say(ctx, "devin", "/autopilot done "+s.Name+" finished."+declaration(flowName, s))
		default:
			w.deliver(ctx, &ghevent.Event{Name: "schedule", Handled: true, Sweep: true, Repo: repo})
		}
	}
}

// declaration is the task block a generic flow's executor adds to its
// report on a step that declares epics or tasks (flow step jira:), so every
// flow shows where its tasks go. Task ids continue the state's numbering:
// the first task depends on nothing, the others on it (a task, never its
// epic).
func declaration(flowName string, s *state.State) string {
	f, ok := config.Default().All[flowName]
	if !ok {
		return ""
	}
	i := f.Index(s.Slug)
	if i < 0 {
		return ""
	}
	switch f.Steps[i].Jira {
	case "epics":
		return "\n\n```autopilot-epics\n- title: One export path\n  description: Every export goes through the query layer's streaming writer.\n```\n"
	case "tasks":
		epic := ""
		for _, t := range s.Tasks {
			if t.Kind == state.KindEpic {
				epic = "  epic: " + t.Title + "\n"
				break
			}
		}
		first := fmt.Sprintf("%02d", len(s.Tasks)+1)
		return fmt.Sprintf("\n\n```autopilot-tasks\n"+
			"- title: %s — shared export path\n%s  points: 3\n"+
			"- title: %s — move the callers\n%s  depends_on: [\"%s\"]\n  points: 2\n"+
			"- title: %s — tests\n%s  depends_on: [\"%s\"]\n  points: 1\n```\n",
			s.Name, epic, s.Name, epic, first, s.Name, epic, first)
	}
	return ""
}

// implements reports whether the step closes a batch of tasks (its done
// measures carryover).
func (w *world) implements(flowName, slug string) bool {
	f, ok := config.Default().All[flowName]
	if !ok {
		return false
	}
	i := f.Index(slug)
	return i >= 0 && f.Steps[i].Implements
}

// closeJiraTasks is the implementer finishing the work: every open task in
// the sandbox Jira moves to Done, and a sync reads that back into the
// issue's task list, as the sweep would. Without Jira there is nothing to do.
func (w *world) closeJiraTasks(ctx context.Context) {
	if w.subIssues && w.err == nil {
		w.closeSubIssues(ctx)
		return
	}
	if !w.jira || w.err != nil {
		return
	}
	var keys []string
	for _, is := range w.tr.Issues() {
		if is.Kind == state.KindTask && !is.Done {
			if err := w.tr.Transition(is.Key, "Done"); err != nil {
				w.err = err
				return
			}
			keys = append(keys, is.Key)
		}
	}
	if len(keys) == 0 {
		return
	}
	w.tick(time.Minute)
	w.entries = append(w.entries, Entry{At: w.clock, Actor: "devin", Kind: "jira", Detail: "moved " + strings.Join(keys, ", ") + " to Done in Jira"})
	w.say(ctx, "devin", "/autopilot tasks sync")
}

// closeSubIssues is closeJiraTasks for tracker: github: devin closes the
// tasks' sub-issues on GitHub, and the next pass ticks them.
func (w *world) closeSubIssues(ctx context.Context) {
	s := w.state()
	if s == nil {
		return
	}
	var keys []string
	for _, t := range s.Tasks {
		var n int
		if t.Kind != state.KindTask || t.Done || !subissues.IsKey(t.Key) {
			continue
		}
		fmt.Sscanf(t.Key, "#%d", &n)
		w.sb.CloseIssue(n)
		keys = append(keys, t.Key)
	}
	if len(keys) == 0 {
		return
	}
	w.tick(time.Minute)
	w.entries = append(w.entries, Entry{At: w.clock, Actor: "devin", Kind: "jira", Detail: "closed " + strings.Join(keys, ", ") + " on GitHub"})
	w.say(ctx, "devin", "/autopilot tasks sync")
}
