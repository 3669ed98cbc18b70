package machine

import (
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/flow"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// openGate records a Choose block in the state and posts it. The gate's
// marker makes the post idempotent.
func (m *M) openGate(kind state.GateKind, title string, details []string, opts []state.Option, rec, reason string) {
	m.S.Seq++
	id := fmt.Sprintf("g%d-%s", m.S.Seq, kind)
	if len(id) > 64 {
		id = id[:64]
	}
	g := &state.Gate{ID: id, Kind: kind, Title: title, Details: details, Options: opts, Recommend: rec, Reason: reason, OpenedAt: m.Now}
	m.S.Gate = g
	m.S.Run = state.RunAwaitingDecision
	m.Changed = true
	m.Emit(state.Effect{Kind: state.EffComment, Marker: prose.GateMarker(id), Body: prose.Gate(g)})
}

// jiraGate runs before the first Jira step. It returns true when the step
// may start now; otherwise an auth check or a gate is pending.
//
// Nobody is asked when the config turns Jira off (jira.enabled: false:
// tasks wait as pending, as after answering B) or when nothing configures
// it (no credentials and no jira: section: Jira is off and the tasks stay in
// the issue, SyncLocal). Only a repository that asked for Jira (credentials,
// or a jira: section whose credentials are missing) gets the "Jira
// authentication failed" question.
func (m *M) jiraGate() bool {
	jc := m.Set.Config.Jira
	switch {
	case jc.Enabled != nil && !*jc.Enabled:
		// Declined in advance: as answering B, tasks wait as pending.
		f := false
		m.S.TrackerEnabled = &f
		return true
	case m.Set.Config.Tracker == config.TrackerLocal:
		m.jiraOff(state.TrackerNotConfigured)
		return true
	case !m.Set.TrackerConfigured && jc == (config.Jira{}):
		m.jiraOff(state.TrackerNotConfigured)
		return true
	case !m.Set.TrackerConfigured:
		m.openJiraFailed("Jira is not configured: the config has a jira: section, but the jira_url and jira_token inputs are empty")
		return false
	}
	m.S.PendingAuthCheck = true
	m.Ask(events.Query{Kind: events.QTrackerAuth})
	return false
}

// jiraOff records that this run keeps its tasks in the issue only.
func (m *M) jiraOff(why string) {
	f := false
	m.S.TrackerEnabled = &f
	m.S.TrackerOff = why
}

func (m *M) openJiraFailed(detail string) {
	details := []string{"Detail: " + textsafe.Code(prose.OneLine(detail, 160))}
	if m.S.Tracker == state.TrackerGitHub || m.Set.Config.Tracker == config.TrackerGitHub {
		// The tracker is GitHub itself: the same question, in its words.
		m.openGate(state.GateTrackerAuth, "GitHub sub-issues authentication failed", details,
			[]state.Option{{Letter: "A", Text: "Retry authentication", Action: state.ActJiraRetry}, {Letter: "B", Text: "Continue without sub-issues (tasks saved locally only)", Action: state.ActJiraOff}},
			"A", "sub-issues carry task referencing, dependency tracking and batching; without them, tasks keep numeric ids (01_…) and wait as GitHub: pending")
		m.S.Gate.Next = m.S.Slug
		return
	}
	opts := []state.Option{{Letter: "A", Text: "Retry authentication", Action: state.ActJiraRetry}, {Letter: "B", Text: "Continue without Jira (tasks saved locally only)", Action: state.ActJiraOff}}
	if m.Set.SubIssues {
		opts = append(opts, state.Option{Letter: "C", Text: "Create the tasks as GitHub sub-issues instead", Action: state.ActTrackerGitHub})
	}
	m.openGate(state.GateTrackerAuth, "Jira authentication failed", details,
		opts, "A", "Jira IDs drive task referencing, dependency tracking and batching; without Jira, tasks keep numeric ids (01_…) and wait as Jira: pending")
	m.S.Gate.Next = m.S.Slug
}

// nextLine announces, inside a gate, the step its answer starts.
func (m *M) nextLine() string {
	st := m.Step()
	line := fmt.Sprintf("Then: %s — %s", m.F.LabelOf(m.S.Step), st.Name)
	if st.Produces != "" {
		line += ": " + textsafe.Escape(prose.OneLine(st.Produces, 110))
	}
	return line
}

// TrackerAuth handles the outcome of the Jira authentication check.
func (m *M) TrackerAuth(e events.TrackerAuth) {
	if !m.S.PendingAuthCheck {
		return
	}
	m.S.PendingAuthCheck = false
	m.Changed = true
	if !e.OK {
		m.openJiraFailed(e.Detail)
		return
	}
	t := true
	m.S.TrackerEnabled = &t
	m.S.TrackerNote = ""
	if m.HasPendingTasks() {
		m.Ask(events.Query{Kind: events.QTrackerSync})
	}
	m.continueStep()
}

// awaitingReview is the sub-step of a step waiting for its human approval.
const awaitingReview = "awaiting-human-review"

// openApprovalGate asks a human to review (meta-repo config review).
func (m *M) openApprovalGate(st flow.Step) {
	m.S.Status = state.InProgress
	m.setProgress(state.InProgress)
	m.S.SubStep = state.SubStep{Phase: 0, Name: awaitingReview, Detail: prose.OneLine(st.Produces, 120)}
	m.openGate(state.GateApproval(st.Slug), fmt.Sprintf("DECISION REQUIRED: %s — approve and continue?", st.Name), []string{"Review: " + textsafe.Code(st.Produces)},
		[]state.Option{{Letter: "A", Text: "Approve and continue", Action: state.ActApprove}, {Letter: "B", Text: "Request changes (the executor revises, then this asks again)", Action: state.ActChanges}, {Letter: "C", Text: "Abort the run", Action: state.ActAbort}},
		"A", "approve once the configuration matches the repositories you mean to change")
}

// Answer applies a valid option of the open gate.
func (m *M) Answer(c events.Comment, letter, reason string) {
	g := m.S.Gate
	opt, _ := g.Option(letter)
	m.S.Gate = nil
	m.Decision = letter
	m.S.Decisions = append(m.S.Decisions, state.Decision{
		Gate: g.ID, Question: g.Title, Option: letter, OptionText: opt.Text, By: c.Author, At: c.At,
		Link: c.URL, CommentID: c.ID, Reason: prose.OneLine(strings.TrimLeft(reason, "—–-:). \t"), 200), GateOpenedAt: g.OpenedAt,
	})
	m.Changed = true
	m.React(c.ID, outbox.ReactUp)
	m.S.Run = state.RunInProgress
	m.announced = g.Next
	m.doAction(g, opt.Action, c)
}

// doAction carries out the chosen option's action (state.Action).
func (m *M) doAction(g *state.Gate, a state.Action, c events.Comment) {
	kind, arg := a.Split()
	if do, ok := gateActions[kind]; ok {
		do(m, g, arg, c) // Valid refuses a state holding any other action
	}
}

// gateActions has one handler per gate action kind: what answering an
// option does. The kinds and their arguments are state's actions table.
var gateActions = map[state.Action]func(m *M, g *state.Gate, arg string, c events.Comment){
	state.ActFlow: func(m *M, _ *state.Gate, name string, c events.Comment) {
		if f, ok := m.Set.Config.All[name]; ok {
			m.begin(f, events.Start{Flow: name, Actor: c.Author, Title: m.S.Title})
		}
	},
	state.ActFreshSession: func(m *M, _ *state.Gate, _ string, _ events.Comment) {
		m.S.Limits.Sessions++
		if m.sessionLimit() {
			return
		}
		m.enter(m.S.Step)
	},
	state.ActContinueSession: func(m *M, _ *state.Gate, _ string, _ events.Comment) { m.enter(m.S.Step) },
	state.ActJiraRetry: func(m *M, _ *state.Gate, _ string, _ events.Comment) {
		m.S.PendingAuthCheck = true
		m.Ask(events.Query{Kind: events.QTrackerAuth})
	},
	state.ActJiraOff: func(m *M, _ *state.Gate, _ string, _ events.Comment) {
		f := false
		m.S.TrackerEnabled = &f
		m.continueStep()
	},
	state.ActTrackerGitHub: func(m *M, _ *state.Gate, _ string, _ events.Comment) {
		// From now on the tasks go to GitHub sub-issues (the reconciler
		// reads State.Tracker); they are synced at once.
		t := true
		m.S.Tracker = state.TrackerGitHub
		m.S.TrackerEnabled, m.S.TrackerOff, m.S.TrackerNote = &t, "", ""
		if m.HasPendingTasks() {
			m.Ask(events.Query{Kind: events.QTrackerSync})
		}
		m.continueStep()
	},
	state.ActRetryFresh: func(m *M, _ *state.Gate, _ string, _ events.Comment) {
		m.S.RetryCount = 0
		m.S.Limits.Sessions++
		m.removeBlockersFor(m.S.Slug)
		m.clearRetryLog(m.S.Step)
		if m.sessionLimit() {
			return
		}
		m.run()
	},
	state.ActSkip: func(m *M, g *state.Gate, _ string, c events.Comment) {
		m.skipStep(fmt.Sprintf("skipped after %s by @%s", g.Title, c.Author))
	},
	state.ActSkipReason: func(m *M, g *state.Gate, requester string, c events.Comment) {
		m.confirmSkip(m.pendingSkipReason(g), requester, c)
	},
	state.ActAbort: func(m *M, g *state.Gate, _ string, c events.Comment) {
		m.Stop(stops.KillUserAbort, "aborted by @"+c.Author+" at "+g.Title)
	},
	state.ActConfirm: func(m *M, _ *state.Gate, _ string, _ events.Comment) { m.confirmed() },
	state.ActExecute: func(m *M, _ *state.Gate, _ string, _ events.Comment) { m.keepStep() },
	state.ActStay:    func(m *M, _ *state.Gate, _ string, _ events.Comment) { m.keepStep() },
	state.ActBack:    func(m *M, _ *state.Gate, slug string, _ events.Comment) { m.rollback(slug) },
	state.ActApprove: func(m *M, _ *state.Gate, _ string, c events.Comment) { m.Complete("approved by @" + c.Author) },
	state.ActChanges: func(m *M, _ *state.Gate, _ string, c events.Comment) {
		m.S.SubStep = state.SubStep{Phase: 1, Name: "changes-requested", Detail: "requested by @" + c.Author}
		m.Post("announce", fmt.Sprintf("Changes requested for **%s** by @\u200b%s. Revise, then report with `/autopilot done [summary]`; the approval will be asked again.", m.S.Name, textsafe.Escape(c.Author)))
	},
	state.ActNextCycle: func(m *M, _ *state.Gate, _ string, _ events.Comment) {
		m.S.Cycle++
		to := m.F.Index(m.F.Loop.To)
		for i := to; i < len(m.S.Steps); i++ {
			m.S.Steps[i] = state.StepProgress{Slug: m.S.Steps[i].Slug, Status: state.NotStarted}
		}
		m.enter(to + 1)
	},
	state.ActFinish: func(m *M, _ *state.Gate, _ string, _ events.Comment) { m.finish() },
	state.ActLowConfContinue: func(m *M, _ *state.Gate, _ string, _ events.Comment) {
		m.S.Limits.HasConfidence = false
		m.proceedAfterBoundary()
	},
	state.ActDeployApprove: func(m *M, g *state.Gate, _ string, c events.Comment) { m.deployAnswered(g, c) },
	state.ActDeployReject:  func(m *M, g *state.Gate, _ string, c events.Comment) { m.deployAnswered(g, c) },
	state.ActLowConfStop: func(m *M, _ *state.Gate, _ string, c events.Comment) {
		m.Stop(stops.KillLowConfidence, "stopped by @"+c.Author+" after a low-confidence report")
	},
}

// confirmSkip skips the current step once its skip gate was answered A:
// only now are the interview's skip and QA's skipped verdict recorded.
func (m *M) confirmSkip(reason, requester string, c events.Comment) {
	st := m.Step()
	if requester == "" {
		requester = c.Author
	}
	if rl := m.S.Review; rl != nil {
		if st.Interview {
			rl.InterviewSkipped = prose.OneLine(reason, 200) + " (requested by @" + requester + ", confirmed by @" + c.Author + ")"
		}
		if st.Evidence == "checks" {
			rl.QAVerdict = &state.Verdict{Clean: true, Skipped: true, Reason: prose.OneLine(reason, 200), Evidence: c.URL}
			m.Handoff(st.Slug, "skipped: "+reason, c.URL)
		}
	}
	m.skipStep(reason)
}

// pendingSkipReason recovers the reason recorded in a skip gate's details.
func (m *M) pendingSkipReason(g *state.Gate) string {
	for _, d := range g.Details {
		if r, ok := strings.CutPrefix(d, "Reason: "); ok {
			return r
		}
	}
	return "skipped"
}

// rollback re-runs an earlier step; later steps return to not_started.
func (m *M) rollback(slug string) {
	i := m.F.Index(slug)
	if i < 0 {
		return
	}
	for j := i; j < len(m.S.Steps); j++ {
		m.S.Steps[j].Status = state.NotStarted
		m.S.Steps[j].Retries = 0
		m.S.Steps[j].Note = ""
	}
	m.S.Blockers = nil
	m.S.LastSession = m.session("rollback", "re-running "+m.F.Steps[i].Name)
	m.enter(i + 1)
}

// OpenSkipGate asks to confirm a requested skip (seed 002), with the
// reason and a warning naming the steps that may depend on this one.
func (m *M) OpenSkipGate(reason, requester string) {
	st := m.Step()
	if reason == "" {
		reason = "no reason given"
	}
	details := []string{"Reason: " + textsafe.Code(prose.OneLine(reason, 200))}
	if deps := m.dependents(); deps != "" {
		details = append(details, "Warning: later steps ("+deps+") may depend on its output.")
	}
	m.openGate(state.GateSkip(st.Slug), fmt.Sprintf("DECISION REQUIRED: Skip %s?", st.Name), details,
		[]state.Option{{Letter: "A", Text: "Skip " + st.Name + " (with the warning above)", Action: state.ActSkipReason.With(requester)}, {Letter: "B", Text: "Execute the step", Action: state.ActExecute}},
		"B", "skipped steps leave gaps later steps may rely on")
}

// dependents names up to three steps after the current one.
func (m *M) dependents() string {
	var out []string
	for i := m.S.Step; i < len(m.F.Steps) && len(out) < 3; i++ {
		out = append(out, m.F.Steps[i].Name)
	}
	return strings.Join(out, ", ")
}

// OpenRollbackGate asks to confirm going back to st: later steps run again.
func (m *M) OpenRollbackGate(st flow.Step) {
	m.openGate(state.GateRollback(st.Slug), fmt.Sprintf("ROLLBACK: Re-run %s?", st.Name), []string{"Warning: this returns the run to " + st.Name + "; later steps run again and their outputs may be overwritten."},
		[]state.Option{{Letter: "A", Text: "Re-run " + st.Name + " (later steps run again)", Action: state.ActBack.With(st.Slug)}, {Letter: "B", Text: "Stay on the current step", Action: state.ActStay}},
		"B", "re-running discards later progress; choose A only if the earlier output was wrong")
}

// HasPendingTasks reports whether tasks wait to be sent to the tracker.
func (m *M) HasPendingTasks() bool {
	for _, t := range m.S.Tasks {
		if t.Sync == state.SyncPending || t.Sync == state.SyncSending {
			return true
		}
	}
	return false
}
