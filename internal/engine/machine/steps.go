package machine

import (
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/flow"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// Start creates the state for a new run.
func (m *M) Start(e events.Start) error {
	name := e.Flow
	if name == "" {
		name = m.Set.Config.DefaultFlow
	}
	if name == "" && len(e.Candidates) == 1 {
		name = e.Candidates[0]
	}
	if name == "" && len(e.Candidates) == 0 {
		name = "greenfield"
	}
	m.S = &state.State{
		Schema:    state.SchemaVersion,
		Repo:      m.Set.Repo,
		Issue:     e.Issue,
		Title:     e.Title,
		Cycle:     1,
		Run:       state.RunInProgress,
		Status:    state.NotStarted,
		StartedAt: m.Now,
		Seq:       max(e.SeqFloor, 0),
	}
	m.Changed = true
	m.S.Limits.RunStartedAt = m.Now
	if name == "" {
		// Detection was ambiguous: ask which flow to run.
		m.S.Slug, m.S.Name = "select-flow", "Select flow"
		m.S.SubStep = state.SubStep{Phase: 0, Name: state.AwaitingInvocation}
		opts := []state.Option{}
		for i, c := range e.Candidates {
			if i == 4 {
				break
			}
			opts = append(opts, state.Option{Letter: prose.Letter(i), Text: "Run the " + c + " flow", Action: state.ActFlow.With(c)})
		}
		m.openGate(state.GateFlowSelect, "DECISION REQUIRED: Which flow should autopilot run on this issue?", nil, opts,
			"A", "the repository's contents match more than one flow; the first match is the usual one")
		return nil
	}
	f, ok := m.Set.Config.All[name]
	if !ok {
		return fmt.Errorf("unknown flow %q (have %s)", name, strings.Join(m.Set.Config.All.Names(), ", "))
	}
	m.begin(f, e)
	return nil
}

// begin sets up the flow's step table and enters step 1.
func (m *M) begin(f *flow.Flow, e events.Start) {
	m.F = f
	m.S.Flow = f.Name
	m.S.Steps = make([]state.StepProgress, len(f.Steps))
	for i, st := range f.Steps {
		m.S.Steps[i] = state.StepProgress{Slug: st.Slug, Status: state.NotStarted}
	}
	m.S.Limits.Sessions = 1
	if f.ReviewLoop {
		m.S.Review = &state.ReviewLoop{
			Slug:          prose.TaskSlug(e.Title),
			Iteration:     1,
			MaxIterations: m.Set.Config.MaxIterations,
		}
		marker := m.nextMarker("snapshot")
		m.S.Review.Snapshot = marker
		m.Emit(state.Effect{Kind: state.EffComment, Marker: marker, Body: marker + "\n" + prose.Snapshot(m.S.Review.Slug, e.Body)})
	}
	m.S.LastSession = state.Session{Date: m.Now, EndedAt: "Step 1 " + f.Steps[0].Name, Reason: "started", Notes: "run started" + By(e.Actor)}
	m.enter(1)
}

// Restart handles the trigger label being added to an issue that has state.
func (m *M) Restart(e events.Start) error {
	switch m.S.Run {
	case state.RunStopped:
		if e.Actor == "" {
			m.Resume("the trigger label is back")
		} else {
			m.Resume("@" + e.Actor + " re-added the trigger label")
		}
	case state.RunDone:
		// A finished run stays finished; say so once.
		m.Note("already-done", "This autopilot run is already **done**. Open a new issue for new work, or use `/autopilot back <step>` to re-run a step.")
	}
	return nil
}

// enter makes step n (1-based) current and starts its executor, unless a
// gate (Jira authentication, confirmation, approval) must come first.
func (m *M) enter(n int) {
	st, ok := m.F.StepAt(n)
	if !ok {
		m.finish()
		return
	}
	m.S.Step, m.S.Slug, m.S.Name = n, st.Slug, st.Name
	m.S.Status = state.NotStarted
	m.S.SubStep = state.SubStep{Phase: 0, Name: state.AwaitingInvocation}
	m.S.RetryCount = 0
	m.S.Exec = nil
	m.S.Run = state.RunInProgress
	m.Changed = true
	if st.Jira != "" && m.S.TrackerEnabled == nil {
		if !m.jiraGate() {
			return
		}
	}
	m.continueStep()
}

// continueStep starts the current step once the Jira gate is passed: an
// irreversible step asks for confirmation first, an approval step asks for
// its review, any other step runs its executor.
func (m *M) continueStep() {
	st := m.Step()
	if st.Confirm {
		m.openGate(state.GateConfirm(st.Slug), fmt.Sprintf("DECISION REQUIRED: Start %s? This step is irreversible.", st.Name), nil,
			[]state.Option{{Letter: "A", Text: "Start " + st.Name + " now", Action: state.ActConfirm}, {Letter: "B", Text: "Stop the run here", Action: state.ActAbort}},
			"A", "the earlier steps are complete")
		return
	}
	m.confirmed()
}

// confirmed starts the current step after its confirmation (if any).
func (m *M) confirmed() {
	if st := m.Step(); st.Gate == "approval" {
		m.openApprovalGate(st)
		return
	}
	m.run()
}

// keepStep returns to the current step after a skip or rollback question
// was answered "no": a failed step asks its SKILL FAILED question again, a
// step waiting for its approval asks again, a step not yet started starts
// through its gates, a running step simply goes on.
func (m *M) keepStep() {
	st := m.Step()
	switch {
	case m.S.Status == state.Failed:
		m.reopenFailed()
	case m.S.Status == state.NotStarted:
		m.enter(m.S.Step)
	case st.Gate == "approval" && m.S.SubStep.Name == awaitingReview:
		m.openApprovalGate(st)
	}
}

// run starts the current step's executor.
func (m *M) run() {
	st := m.Step()
	m.S.Status = state.InProgress
	m.S.Run = state.RunInProgress
	m.setProgress(state.InProgress)
	ex := m.Set.Config.ExecutorFor(st.Slug)
	attempt := m.S.RetryCount + 1
	m.S.Exec = &state.Execution{Executor: ex.Kind, Attempt: attempt, StartedAt: m.execStart()}
	switch ex.Kind {
	case flow.ExecDispatch:
		session := fmt.Sprintf("ap-%d-%s-c%d-a%d-s%d", m.S.Issue, st.Slug, m.S.Cycle, attempt, m.S.Seq+1)
		m.S.Seq++
		m.S.Exec.Session = session
		m.S.Exec.DispatchedAt = m.Now
		ref := ex.Ref
		m.Emit(state.Effect{Kind: state.EffDispatch, Workflow: ex.Workflow, Ref: ref, Marker: session, Inputs: map[string]string{
			"issue":    fmt.Sprint(m.S.Issue),
			"step":     st.Slug,
			"sub_step": fmt.Sprintf("%d %s", m.S.SubStep.Phase, m.S.SubStep.Name),
			"attempt":  fmt.Sprint(attempt),
			"session":  session,
		}})
		m.Post("announce", prose.Announce(m.F, m.S, st, "dispatched workflow `"+textsafe.Escape(ex.Workflow)+"` (session `"+session+"`); its result is reported automatically."))
	case flow.ExecComment:
		m.Post("prompt", prose.Prompt(m.F, m.S, st, ex.Agent, ex.Prompt, attempt))
	default:
		if m.announced == st.Slug {
			break // the answered gate already said what this step produces
		}
		how := "report with `/autopilot done [summary]`, `/autopilot fail <reason>` or `/autopilot progress <phase> <name> [detail]`."
		if st.Evidence != "" {
			how = m.evidenceWanted(st)
		}
		m.Post("announce", prose.Announce(m.F, m.S, st, how))
	}
	m.S.Exec.Announced = true
	if st.Evidence == "checks" {
		// Checks already green (or red) on a linked PR's head are evidence
		// now; reviews count only when submitted after this point.
		m.checkLinked()
	}
}

// Step returns the current step definition; the zero Step while no flow
// is selected yet (the flow-select gate) or after the run finished.
func (m *M) Step() flow.Step {
	if m.F == nil {
		return flow.Step{}
	}
	st, _ := m.F.StepAt(m.S.Step)
	return st
}

func (m *M) setProgress(status state.StepStatus) {
	if i := m.S.Step - 1; i >= 0 && i < len(m.S.Steps) {
		m.S.Steps[i].Status = status
		if status == state.Completed || status == state.Skipped {
			m.S.Steps[i].Retries = 0
		} else {
			m.S.Steps[i].Retries = m.S.RetryCount
		}
	}
}

// Complete marks the current step completed with an outcome and moves on.
func (m *M) Complete(outcome string) {
	st := m.Step()
	m.S.Status = state.Completed
	m.setProgress(state.Completed)
	if i := m.S.Step - 1; i >= 0 && m.S.Steps[i].Note != "" && !m.S.Steps[i].Declared {
		m.S.Steps[i].Note = "" // progress notes describe work in flight only
	}
	m.S.Completed = append(m.S.Completed, state.CompletedStep{Step: m.S.Step, Slug: st.Slug, Name: st.Name, At: m.Now, Outcome: prose.OneLine(outcome, 200), Cycle: m.S.Cycle})
	m.leaveStep(st.Slug)
	// A success ends the step's run of consecutive failed sessions.
	delete(m.S.FailedSessions, st.Slug)
	if len(m.S.FailedSessions) == 0 {
		m.S.FailedSessions = nil
	}
	m.Changed = true
	m.advance(st)
}

// Done applies an accepted "done" report: the step's handoff, then its
// consensus, its approval gate or its completion.
func (m *M) Done(summary, link string, declared int) {
	st := m.Step()
	if m.S.Review != nil {
		m.Handoff(st.Slug, summary, link)
	}
	if st.Interview && m.S.Review != nil {
		m.S.Review.InterviewRationale = prose.OneLine(summary, 300)
	}
	if st.Consensus {
		m.planReported()
		return
	}
	if st.Gate == "approval" {
		m.openApprovalGate(st)
		return
	}
	if declared > 0 {
		summary = fmt.Sprintf("%s (%d %s declared)", summary, declared, prose.Plural(declared, st.Jira))
	}
	m.Complete(summary)
}

// leaveStep clears what the step that just ended (completed or skipped)
// held: its merge gate passes, its retry log goes (its last failure kept
// for the failed-wave notice), and so do its executor and its blockers.
func (m *M) leaveStep(slug string) {
	m.gatePassed(slug)
	m.lastFailure = m.lastFailureOf(m.S.Step)
	m.clearRetryLog(m.S.Step)
	m.S.RetryCount = 0
	m.S.Exec = nil
	m.removeBlockersFor(slug)
}

// skip marks the current step skipped and moves on.
func (m *M) skipStep(reason string) {
	st := m.Step()
	m.S.Status = state.Skipped
	m.setProgress(state.Skipped)
	m.S.Steps[m.S.Step-1].Note = "skipped: " + prose.OneLine(reason, 80)
	m.S.Completed = append(m.S.Completed, state.CompletedStep{Step: m.S.Step, Slug: st.Slug, Name: st.Name, At: m.Now, Outcome: "SKIPPED — " + prose.OneLine(reason, 180), Cycle: m.S.Cycle})
	m.leaveStep(st.Slug)
	m.Changed = true
	m.advance(st)
}

// advance goes from a finished step to the next: a session boundary asks,
// the end of a looping flow asks, anything else chains automatically.
// Kill-switches are evaluated here: this is the iteration boundary.
func (m *M) advance(done flow.Step) {
	m.S.Limits.Iterations++
	if m.killSwitches(done) {
		return
	}
	m.proceed(done)
}

// proceed continues after the kill-switch checks of an iteration boundary.
func (m *M) proceed(done flow.Step) {
	next := m.S.Step + 1
	if next > len(m.F.Steps) {
		if m.F.Loop != nil {
			m.S.LastSession = m.session("cycle complete", fmt.Sprintf("cycle %d finished", m.S.Cycle))
			m.S.Run = state.RunAwaitingDecision
			m.openGate(state.GateNextCycle, fmt.Sprintf("DECISION REQUIRED: Cycle %d complete — start the next feature?", m.S.Cycle), nil,
				[]state.Option{{Letter: "A", Text: "Start the next feature (cycle " + fmt.Sprint(m.S.Cycle+1) + ", back to " + m.F.Steps[m.F.Index(m.F.Loop.To)].Name + ")", Action: state.ActNextCycle},
					{Letter: "B", Text: "Finish the run here", Action: state.ActFinish}},
				"B", "start the next feature only when one is ready to describe")
			return
		}
		m.finish()
		return
	}
	if done.Boundary {
		nst := m.F.Steps[next-1]
		m.S.Step, m.S.Slug, m.S.Name = next, nst.Slug, nst.Name
		m.S.Status = state.NotStarted
		m.S.SubStep = state.SubStep{Phase: 0, Name: state.AwaitingInvocation}
		m.S.Run = state.RunAwaitingDecision
		m.S.LastSession = m.session("session boundary", done.Name+" complete, "+nst.Name+" ready")
		summary := []string{}
		if n := m.countTasks(state.KindTask); n > 0 {
			summary = append(summary, fmt.Sprintf("Tasks: %d (%s points)", n, prose.Points(m.totalPoints())))
		}
		summary = append(summary, m.nextLine())
		work := nst.Work()
		m.openGate(state.GateSessionBoundary, fmt.Sprintf("DECISION REQUIRED: %s complete — start %s?", done.Name, work), summary,
			[]state.Option{{Letter: "A", Text: "Start " + work + " with a fresh executor session (recommended)", Action: state.ActFreshSession},
				{Letter: "B", Text: "Continue in the current executor session", Action: state.ActContinueSession}},
			"A", work+" is a long phase; fresh context helps")
		m.S.Gate.Next = nst.Slug
		return
	}
	m.enter(next)
}

// finish ends the run successfully.
func (m *M) finish() {
	m.S.Step, m.S.Slug, m.S.Name = 0, "done", "Done"
	m.S.Status = state.Completed
	m.S.SubStep = state.SubStep{Phase: 0, Name: state.AwaitingInvocation}
	m.S.Run = state.RunDone
	m.S.Exec = nil
	m.S.LastSession = m.session("completed", "all steps finished")
	m.Changed = true
	m.Post("done", "✅ **Autopilot run complete.** Every step of the "+m.F.Name+" flow is done; the state comment above keeps the record.")
}

// Stop sets the run to stopped with a reason (kill-switch name) and hint.
func (m *M) Stop(reason state.StopReason, detail string) {
	if m.S.Run == state.RunStopped || m.S.Run == state.RunDone {
		return
	}
	hint := stops.RecoveryHint(reason)
	m.S.Stop = &state.Stop{Reason: reason, Hint: hint, At: m.Now, Resume: m.S.Run}
	m.S.Run = state.RunStopped
	m.S.LastSession = m.session("stopped: "+string(reason), detail)
	m.Changed = true
	m.Post("stopped", fmt.Sprintf("⏹️ **Autopilot stopped** — `%s`: %s\n\nRecovery: %s\nResume with `/autopilot resume`.", reason, textsafe.Escape(detail), hint))
}

// Resume continues a stopped run where it was.
func (m *M) Resume(why string) {
	if m.S.Run != state.RunStopped || m.S.Stop == nil {
		return
	}
	prev, reason := m.S.Stop.Resume, m.S.Stop.Reason
	m.S.Stop = nil
	// A resumed run gets fresh budgets: wall clock, sessions (this is a
	// new one), failed batches, confidence.
	m.S.Limits.RunStartedAt = m.Now
	m.S.Limits.Sessions = 1
	m.S.Limits.FailedWaves = 0
	m.S.Limits.Deferred = ""
	m.S.Limits.HasConfidence = false
	if rl := m.S.Review; rl != nil {
		switch reason {
		case stops.StopMaxIterations:
			// A new iteration budget, as configured now.
			rl.Iteration = 1
			rl.MaxIterations = m.Set.Config.MaxIterations
		case stops.KillSpiral:
			// Someone triaged the repeating finding; count afresh.
			rl.FailureHistory = nil
		}
	}
	m.Changed = true
	m.S.LastSession = m.session("resumed", why)
	if m.S.Gate != nil {
		m.S.Run = state.RunAwaitingDecision
		if prev == state.RunFailed {
			m.S.Run = state.RunFailed
		}
		return
	}
	if prev == "" || prev == state.RunStopped || prev == state.RunAwaitingDecision {
		prev = state.RunInProgress
	}
	m.S.Run = prev
	if m.F == nil || m.S.Step == 0 {
		return
	}
	switch m.S.Status {
	case state.NotStarted:
		// Stopped before the step started (session limit, a boundary
		// tick): start it now, through its gates.
		m.enter(m.S.Step)
	case state.Completed, state.Skipped:
		// Stopped by a kill-switch at the iteration boundary after this
		// step: go on to the next step (the limits were just reset).
		m.proceed(m.Step())
	case state.Failed:
		m.resumeFailed()
	}
}

// resumeFailed continues a failed step without a pending question: a
// review-loop verdict that was not clean returns to its return_to step
// (spiral, max-iterations); any other failed step asks SKILL FAILED again.
func (m *M) resumeFailed() {
	st := m.Step()
	if st.ReturnTo != "" && m.S.Review != nil {
		m.rollbackTo(st.ReturnTo, m.S.Review.ReturnToPlanReason)
		return
	}
	m.reopenFailed()
}

func (m *M) session(reason, notes string) state.Session {
	ended := "Step " + fmt.Sprint(m.S.Step) + " " + m.S.Name
	if m.S.Step == 0 {
		ended = m.S.Name
	}
	if m.S.SubStep.Name != "" && m.S.SubStep.Name != state.AwaitingInvocation {
		ended += fmt.Sprintf(" — SubStep %d %s", m.S.SubStep.Phase, m.S.SubStep.Name)
	}
	return state.Session{Date: m.Now, EndedAt: ended, Reason: reason, Notes: notes}
}

// lastFailureOf returns the newest retry-log reason of a step, "" if none.
func (m *M) lastFailureOf(step int) string {
	for i := len(m.S.RetryLog) - 1; i >= 0; i-- {
		if m.S.RetryLog[i].Step == step {
			return m.S.RetryLog[i].Reason
		}
	}
	return ""
}

func (m *M) clearRetryLog(step int) {
	out := m.S.RetryLog[:0]
	for _, r := range m.S.RetryLog {
		if r.Step != step {
			out = append(out, r)
		}
	}
	m.S.RetryLog = out
	if len(m.S.RetryLog) == 0 {
		m.S.RetryLog = nil
	}
}

func (m *M) removeBlockersFor(slug string) {
	out := m.S.Blockers[:0]
	for _, b := range m.S.Blockers {
		if !strings.HasPrefix(b, "["+slug+"]") {
			out = append(out, b)
		}
	}
	m.S.Blockers = out
	if len(m.S.Blockers) == 0 {
		m.S.Blockers = nil
	}
}

func (m *M) countTasks(kind state.TaskKind) int {
	n := 0
	for _, t := range m.S.Tasks {
		if t.Kind == kind {
			n++
		}
	}
	return n
}

func (m *M) totalPoints() float64 {
	p := 0.0
	for _, t := range m.S.Tasks {
		if t.Kind == state.KindTask {
			p += t.Points
		}
	}
	return p
}
