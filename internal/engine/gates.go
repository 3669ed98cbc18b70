package engine

import (
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/flow"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// openGate records a Choose block in the state and posts it. The gate's
// marker makes the post idempotent.
func (m *machine) openGate(kind, title string, details []string, opts []state.Option, rec, reason string) {
	m.s.Seq++
	id := fmt.Sprintf("g%d-%s", m.s.Seq, kind)
	if len(id) > 64 {
		id = id[:64]
	}
	g := &state.Gate{ID: id, Kind: kind, Title: title, Details: details, Options: opts, Recommend: rec, Reason: reason, OpenedAt: m.now}
	m.s.Gate = g
	m.s.Run = state.RunAwaitingDecision
	m.changed = true
	m.emit(state.Effect{Kind: state.EffComment, Marker: prose.GateMarker(id), Body: prose.Gate(g)})
}

// jiraGate runs before the first Jira step. It returns true when the step
// may start now; otherwise an auth check or a gate is pending.
//
// Nobody is asked when the config turns Jira off (jira.enabled: false:
// tasks wait as pending, as after answering B) or when nothing configures
// it (no credentials and no jira: section: Jira is off and the tasks stay in
// the issue, JiraLocal). Only a repository that asked for Jira (credentials,
// or a jira: section whose credentials are missing) gets the "Jira
// authentication failed" question.
func (m *machine) jiraGate() bool {
	jc := m.set.Config.Jira
	switch {
	case jc.Enabled != nil && !*jc.Enabled:
		// Declined in advance: as answering B, tasks wait as pending.
		f := false
		m.s.JiraEnabled = &f
		return true
	case m.set.Config.Tracker == config.TrackerLocal:
		m.jiraOff(state.JiraNotConfigured)
		return true
	case !m.set.JiraConfigured && jc == (config.Jira{}):
		m.jiraOff(state.JiraNotConfigured)
		return true
	case !m.set.JiraConfigured:
		m.openJiraFailed("Jira is not configured: the config has a jira: section, but the jira_url and jira_token inputs are empty")
		return false
	}
	m.s.PendingJiraCheck = true
	m.ask(Query{Kind: QJiraAuth})
	return false
}

// jiraOff records that this run keeps its tasks in the issue only.
func (m *machine) jiraOff(why string) {
	f := false
	m.s.JiraEnabled = &f
	m.s.JiraOff = why
}

func (m *machine) openJiraFailed(detail string) {
	opts := []state.Option{{Letter: "A", Text: "Retry authentication", Action: state.ActJiraRetry}, {Letter: "B", Text: "Continue without Jira (tasks saved locally only)", Action: state.ActJiraOff}}
	if m.set.SubIssues && m.s.Tracker == "" {
		opts = append(opts, state.Option{Letter: "C", Text: "Create the tasks as GitHub sub-issues instead", Action: state.ActTrackerGitHub})
	}
	m.openGate("jira-auth", "Jira authentication failed", []string{"Detail: " + textsafe.Code(prose.OneLine(detail, 160))},
		opts, "A", "Jira IDs drive task referencing, dependency tracking and batching; without Jira, tasks keep numeric ids (01_…) and wait as Jira: pending")
	m.s.Gate.Next = m.s.Slug
}

// nextLine announces, inside a gate, the step its answer starts.
func (m *machine) nextLine() string {
	st := m.step()
	line := fmt.Sprintf("Then: %s — %s", m.f.LabelOf(m.s.Step), st.Name)
	if st.Produces != "" {
		line += ": " + textsafe.Escape(prose.OneLine(st.Produces, 110))
	}
	return line
}

// jiraAuth handles the outcome of the Jira authentication check.
func (m *machine) jiraAuth(e JiraAuth) {
	if !m.s.PendingJiraCheck {
		return
	}
	m.s.PendingJiraCheck = false
	m.changed = true
	if !e.OK {
		m.openJiraFailed(e.Detail)
		return
	}
	t := true
	m.s.JiraEnabled = &t
	m.s.JiraNote = ""
	if m.hasPendingTasks() {
		m.ask(Query{Kind: QJiraSync})
	}
	m.continueStep()
}

// awaitingReview is the sub-step of a step waiting for its human approval.
const awaitingReview = "awaiting-human-review"

// openApprovalGate asks a human to review (meta-repo config review).
func (m *machine) openApprovalGate(st flow.Step) {
	m.s.Status = state.InProgress
	m.setProgress(state.InProgress)
	m.s.SubStep = state.SubStep{Phase: 0, Name: awaitingReview, Detail: prose.OneLine(st.Produces, 120)}
	m.openGate("approval-"+st.Slug, fmt.Sprintf("DECISION REQUIRED: %s — approve and continue?", st.Name), []string{"Review: " + textsafe.Code(st.Produces)},
		[]state.Option{{Letter: "A", Text: "Approve and continue", Action: state.ActApprove}, {Letter: "B", Text: "Request changes (the executor revises, then this asks again)", Action: state.ActChanges}, {Letter: "C", Text: "Abort the run", Action: state.ActAbort}},
		"A", "approve once the configuration matches the repositories you mean to change")
}

// answer applies a valid option of the open gate.
func (m *machine) answer(c Comment, letter, reason string) {
	g := m.s.Gate
	opt, _ := g.Option(letter)
	m.s.Gate = nil
	m.decision = letter
	m.s.Decisions = append(m.s.Decisions, state.Decision{
		Gate: g.ID, Question: g.Title, Option: letter, OptionText: opt.Text, By: c.Author, At: c.At,
		Link: c.URL, CommentID: c.ID, Reason: prose.OneLine(strings.TrimLeft(reason, "—–-:). \t"), 200), GateOpenedAt: g.OpenedAt,
	})
	m.changed = true
	m.react(c.ID, outbox.ReactUp)
	m.s.Run = state.RunInProgress
	m.announced = g.Next
	m.doAction(g, opt.Action, c)
}

// doAction carries out the chosen option's action (state.Action).
func (m *machine) doAction(g *state.Gate, a state.Action, c Comment) {
	kind, arg := a.Split()
	if do, ok := gateActions[kind]; ok {
		do(m, g, arg, c) // Valid refuses a state holding any other action
	}
}

// gateActions has one handler per gate action kind: what answering an
// option does. The kinds and their arguments are state's actions table.
var gateActions = map[state.Action]func(m *machine, g *state.Gate, arg string, c Comment){
	state.ActFlow: func(m *machine, _ *state.Gate, name string, c Comment) {
		if f, ok := m.set.Config.All[name]; ok {
			m.begin(f, Start{Flow: name, Actor: c.Author, Title: m.s.Title})
		}
	},
	state.ActFreshSession: func(m *machine, _ *state.Gate, _ string, _ Comment) {
		m.s.Limits.Sessions++
		if m.sessionLimit() {
			return
		}
		m.enter(m.s.Step)
	},
	state.ActContinueSession: func(m *machine, _ *state.Gate, _ string, _ Comment) { m.enter(m.s.Step) },
	state.ActJiraRetry: func(m *machine, _ *state.Gate, _ string, _ Comment) {
		m.s.PendingJiraCheck = true
		m.ask(Query{Kind: QJiraAuth})
	},
	state.ActJiraOff: func(m *machine, _ *state.Gate, _ string, _ Comment) {
		f := false
		m.s.JiraEnabled = &f
		m.continueStep()
	},
	state.ActTrackerGitHub: func(m *machine, _ *state.Gate, _ string, _ Comment) {
		// From now on the tasks go to GitHub sub-issues (the reconciler
		// reads State.Tracker); they are synced at once.
		t := true
		m.s.Tracker = config.TrackerGitHub
		m.s.JiraEnabled, m.s.JiraOff, m.s.JiraNote = &t, "", ""
		if m.hasPendingTasks() {
			m.ask(Query{Kind: QJiraSync})
		}
		m.continueStep()
	},
	state.ActRetryFresh: func(m *machine, _ *state.Gate, _ string, _ Comment) {
		m.s.RetryCount = 0
		m.s.Limits.Sessions++
		m.removeBlockersFor(m.s.Slug)
		m.clearRetryLog(m.s.Step)
		if m.sessionLimit() {
			return
		}
		m.run()
	},
	state.ActSkip: func(m *machine, g *state.Gate, _ string, c Comment) {
		m.skipStep(fmt.Sprintf("skipped after %s by @%s", g.Title, c.Author))
	},
	state.ActSkipReason: func(m *machine, g *state.Gate, requester string, c Comment) {
		m.confirmSkip(m.pendingSkipReason(g), requester, c)
	},
	state.ActAbort: func(m *machine, g *state.Gate, _ string, c Comment) {
		m.stop("user-abort", "aborted by @"+c.Author+" at "+g.Title)
	},
	state.ActConfirm: func(m *machine, _ *state.Gate, _ string, _ Comment) { m.confirmed() },
	state.ActExecute: func(m *machine, _ *state.Gate, _ string, _ Comment) { m.keepStep() },
	state.ActStay:    func(m *machine, _ *state.Gate, _ string, _ Comment) { m.keepStep() },
	state.ActBack:    func(m *machine, _ *state.Gate, slug string, _ Comment) { m.rollback(slug) },
	state.ActApprove: func(m *machine, _ *state.Gate, _ string, c Comment) { m.complete("approved by @" + c.Author) },
	state.ActChanges: func(m *machine, _ *state.Gate, _ string, c Comment) {
		m.s.SubStep = state.SubStep{Phase: 1, Name: "changes-requested", Detail: "requested by @" + c.Author}
		m.post("announce", fmt.Sprintf("Changes requested for **%s** by @\u200b%s. Revise, then report with `/autopilot done [summary]`; the approval will be asked again.", m.s.Name, textsafe.Escape(c.Author)))
	},
	state.ActNextCycle: func(m *machine, _ *state.Gate, _ string, _ Comment) {
		m.s.Cycle++
		to := m.f.Index(m.f.Loop.To)
		for i := to; i < len(m.s.Steps); i++ {
			m.s.Steps[i] = state.StepProgress{Slug: m.s.Steps[i].Slug, Status: state.NotStarted}
		}
		m.enter(to + 1)
	},
	state.ActFinish: func(m *machine, _ *state.Gate, _ string, _ Comment) { m.finish() },
	state.ActLowConfContinue: func(m *machine, _ *state.Gate, _ string, _ Comment) {
		m.s.Limits.HasConfidence = false
		m.proceedAfterBoundary()
	},
	state.ActLowConfStop: func(m *machine, _ *state.Gate, _ string, c Comment) {
		m.stop("low-confidence-fallback", "stopped by @"+c.Author+" after a low-confidence report")
	},
}

// confirmSkip skips the current step once its skip gate was answered A:
// only now are the interview's skip and QA's skipped verdict recorded.
func (m *machine) confirmSkip(reason, requester string, c Comment) {
	st := m.step()
	if requester == "" {
		requester = c.Author
	}
	if rl := m.s.Review; rl != nil {
		if st.Interview {
			rl.InterviewSkipped = prose.OneLine(reason, 200) + " (requested by @" + requester + ", confirmed by @" + c.Author + ")"
		}
		if st.Evidence == "checks" {
			rl.QAVerdict = &state.Verdict{Clean: true, Skipped: true, Reason: prose.OneLine(reason, 200), Evidence: c.URL}
			m.handoff(st.Slug, "skipped: "+reason, c.URL)
		}
	}
	m.skipStep(reason)
}

// pendingSkipReason recovers the reason recorded in a skip gate's details.
func (m *machine) pendingSkipReason(g *state.Gate) string {
	for _, d := range g.Details {
		if r, ok := strings.CutPrefix(d, "Reason: "); ok {
			return r
		}
	}
	return "skipped"
}

// rollback re-runs an earlier step; later steps return to not_started.
func (m *machine) rollback(slug string) {
	i := m.f.Index(slug)
	if i < 0 {
		return
	}
	for j := i; j < len(m.s.Steps); j++ {
		m.s.Steps[j].Status = state.NotStarted
		m.s.Steps[j].Retries = 0
		m.s.Steps[j].Note = ""
	}
	m.s.Blockers = nil
	m.s.LastSession = m.session("rollback", "re-running "+m.f.Steps[i].Name)
	m.enter(i + 1)
}
