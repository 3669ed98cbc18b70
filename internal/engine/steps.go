package engine

import (
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/flow"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// start creates the state for a new run.
func (m *machine) start(e Start) error {
	name := e.Flow
	if name == "" {
		name = m.set.Config.DefaultFlow
	}
	if name == "" && len(e.Candidates) == 1 {
		name = e.Candidates[0]
	}
	if name == "" && len(e.Candidates) == 0 {
		name = "greenfield"
	}
	m.s = &state.State{
		Schema:    state.SchemaVersion,
		Repo:      m.set.Repo,
		Issue:     e.Issue,
		Title:     e.Title,
		Cycle:     1,
		Run:       state.RunInProgress,
		Status:    state.NotStarted,
		StartedAt: m.now,
		Seq:       max(e.SeqFloor, 0),
	}
	m.changed = true
	m.s.Limits.RunStartedAt = m.now
	if name == "" {
		// Detection was ambiguous: ask which flow to run.
		m.s.Slug, m.s.Name = "select-flow", "Select flow"
		m.s.SubStep = state.SubStep{Phase: 0, Name: state.AwaitingInvocation}
		opts := []state.Option{}
		for i, c := range e.Candidates {
			if i == 4 {
				break
			}
			opts = append(opts, state.Option{Letter: prose.Letter(i), Text: "Run the " + c + " flow", Action: state.ActFlow.With(c)})
		}
		m.openGate("flow-select", "DECISION REQUIRED: Which flow should autopilot run on this issue?", nil, opts,
			"A", "the repository's contents match more than one flow; the first match is the usual one")
		return nil
	}
	f, ok := m.set.Config.All[name]
	if !ok {
		return fmt.Errorf("unknown flow %q (have %s)", name, strings.Join(m.set.Config.All.Names(), ", "))
	}
	m.begin(f, e)
	return nil
}

// begin sets up the flow's step table and enters step 1.
func (m *machine) begin(f *flow.Flow, e Start) {
	m.f = f
	m.s.Flow = f.Name
	m.s.Steps = make([]state.StepProgress, len(f.Steps))
	for i, st := range f.Steps {
		m.s.Steps[i] = state.StepProgress{Slug: st.Slug, Status: state.NotStarted}
	}
	m.s.Limits.Sessions = 1
	if f.ReviewLoop {
		m.s.Review = &state.ReviewLoop{
			Slug:          prose.TaskSlug(e.Title),
			Iteration:     1,
			MaxIterations: m.set.Config.MaxIterations,
		}
		marker := m.nextMarker("snapshot")
		m.s.Review.Snapshot = marker
		m.emit(state.Effect{Kind: state.EffComment, Marker: marker, Body: marker + "\n" + prose.Snapshot(m.s.Review.Slug, e.Body)})
	}
	m.s.LastSession = state.Session{Date: m.now, EndedAt: "Step 1 " + f.Steps[0].Name, Reason: "started", Notes: "run started" + by(e.Actor)}
	m.enter(1)
}

// restart handles the trigger label being added to an issue that has state.
func (m *machine) restart(e Start) error {
	switch m.s.Run {
	case state.RunStopped:
		if e.Actor == "" {
			m.resume("the trigger label is back")
		} else {
			m.resume("@" + e.Actor + " re-added the trigger label")
		}
	case state.RunDone:
		// A finished run stays finished; say so once.
		m.note("already-done", "This autopilot run is already **done**. Open a new issue for new work, or use `/autopilot back <step>` to re-run a step.")
	}
	return nil
}

// enter makes step n (1-based) current and starts its executor, unless a
// gate (Jira authentication, confirmation, approval) must come first.
func (m *machine) enter(n int) {
	st, ok := m.f.StepAt(n)
	if !ok {
		m.finish()
		return
	}
	m.s.Step, m.s.Slug, m.s.Name = n, st.Slug, st.Name
	m.s.Status = state.NotStarted
	m.s.SubStep = state.SubStep{Phase: 0, Name: state.AwaitingInvocation}
	m.s.RetryCount = 0
	m.s.Exec = nil
	m.s.Run = state.RunInProgress
	m.changed = true
	if st.Jira != "" && m.s.JiraEnabled == nil {
		if !m.jiraGate() {
			return
		}
	}
	m.continueStep()
}

// continueStep starts the current step once the Jira gate is passed: an
// irreversible step asks for confirmation first, an approval step asks for
// its review, any other step runs its executor.
func (m *machine) continueStep() {
	st := m.step()
	if st.Confirm {
		m.openGate("confirm-"+st.Slug, fmt.Sprintf("DECISION REQUIRED: Start %s? This step is irreversible.", st.Name), nil,
			[]state.Option{{Letter: "A", Text: "Start " + st.Name + " now", Action: state.ActConfirm}, {Letter: "B", Text: "Stop the run here", Action: state.ActAbort}},
			"A", "the earlier steps are complete")
		return
	}
	m.confirmed()
}

// confirmed starts the current step after its confirmation (if any).
func (m *machine) confirmed() {
	if st := m.step(); st.Gate == "approval" {
		m.openApprovalGate(st)
		return
	}
	m.run()
}

// keepStep returns to the current step after a skip or rollback question
// was answered "no": a failed step asks its SKILL FAILED question again, a
// step waiting for its approval asks again, a step not yet started starts
// through its gates, a running step simply goes on.
func (m *machine) keepStep() {
	st := m.step()
	switch {
	case m.s.Status == state.Failed:
		m.reopenFailed()
	case m.s.Status == state.NotStarted:
		m.enter(m.s.Step)
	case st.Gate == "approval" && m.s.SubStep.Name == awaitingReview:
		m.openApprovalGate(st)
	}
}

// run starts the current step's executor.
func (m *machine) run() {
	st := m.step()
	m.s.Status = state.InProgress
	m.s.Run = state.RunInProgress
	m.setProgress(state.InProgress)
	ex := m.set.Config.ExecutorFor(st.Slug)
	attempt := m.s.RetryCount + 1
	m.s.Exec = &state.Execution{Executor: ex.Kind, Attempt: attempt, StartedAt: m.execStart()}
	switch ex.Kind {
	case flow.ExecDispatch:
		session := fmt.Sprintf("ap-%d-%s-c%d-a%d-s%d", m.s.Issue, st.Slug, m.s.Cycle, attempt, m.s.Seq+1)
		m.s.Seq++
		m.s.Exec.Session = session
		m.s.Exec.DispatchedAt = m.now
		ref := ex.Ref
		m.emit(state.Effect{Kind: state.EffDispatch, Workflow: ex.Workflow, Ref: ref, Marker: session, Inputs: map[string]string{
			"issue":    fmt.Sprint(m.s.Issue),
			"step":     st.Slug,
			"sub_step": fmt.Sprintf("%d %s", m.s.SubStep.Phase, m.s.SubStep.Name),
			"attempt":  fmt.Sprint(attempt),
			"session":  session,
		}})
		m.post("announce", prose.Announce(m.f, m.s, st, "dispatched workflow `"+textsafe.Escape(ex.Workflow)+"` (session `"+session+"`); its result is reported automatically."))
	case flow.ExecComment:
		m.post("prompt", prose.Prompt(m.f, m.s, st, ex.Agent, ex.Prompt, attempt))
	default:
		if m.announced == st.Slug {
			break // the answered gate already said what this step produces
		}
		how := "report with `/autopilot done [summary]`, `/autopilot fail <reason>` or `/autopilot progress <phase> <name> [detail]`."
		if st.Evidence != "" {
			how = m.evidenceWanted(st)
		}
		m.post("announce", prose.Announce(m.f, m.s, st, how))
	}
	m.s.Exec.Announced = true
	if st.Evidence == "checks" {
		// Checks already green (or red) on a linked PR's head are evidence
		// now; reviews count only when submitted after this point.
		m.checkLinked()
	}
}

// step returns the current step definition; the zero Step while no flow
// is selected yet (the flow-select gate) or after the run finished.
func (m *machine) step() flow.Step {
	if m.f == nil {
		return flow.Step{}
	}
	st, _ := m.f.StepAt(m.s.Step)
	return st
}

func (m *machine) setProgress(status string) {
	if i := m.s.Step - 1; i >= 0 && i < len(m.s.Steps) {
		m.s.Steps[i].Status = status
		if status == state.Completed || status == state.Skipped {
			m.s.Steps[i].Retries = 0
		} else {
			m.s.Steps[i].Retries = m.s.RetryCount
		}
	}
}

// complete marks the current step completed with an outcome and moves on.
func (m *machine) complete(outcome string) {
	st := m.step()
	m.s.Status = state.Completed
	m.setProgress(state.Completed)
	if i := m.s.Step - 1; i >= 0 && m.s.Steps[i].Note != "" && !m.s.Steps[i].Declared {
		m.s.Steps[i].Note = "" // progress notes describe work in flight only
	}
	m.s.Completed = append(m.s.Completed, state.CompletedStep{Step: m.s.Step, Slug: st.Slug, Name: st.Name, At: m.now, Outcome: prose.OneLine(outcome, 200), Cycle: m.s.Cycle})
	m.gatePassed(st.Slug)
	m.lastFailure = m.lastFailureOf(m.s.Step)
	m.clearRetryLog(m.s.Step)
	m.s.RetryCount = 0
	m.s.Exec = nil
	m.removeBlockersFor(st.Slug)
	// A success ends the step's run of consecutive failed sessions.
	delete(m.s.FailedSessions, st.Slug)
	if len(m.s.FailedSessions) == 0 {
		m.s.FailedSessions = nil
	}
	m.changed = true
	m.advance(st)
}

// skip marks the current step skipped and moves on.
func (m *machine) skipStep(reason string) {
	st := m.step()
	m.s.Status = state.Skipped
	m.setProgress(state.Skipped)
	m.s.Steps[m.s.Step-1].Note = "skipped: " + prose.OneLine(reason, 80)
	m.s.Completed = append(m.s.Completed, state.CompletedStep{Step: m.s.Step, Slug: st.Slug, Name: st.Name, At: m.now, Outcome: "SKIPPED — " + prose.OneLine(reason, 180), Cycle: m.s.Cycle})
	m.gatePassed(st.Slug)
	m.lastFailure = m.lastFailureOf(m.s.Step)
	m.clearRetryLog(m.s.Step)
	m.s.RetryCount = 0
	m.s.Exec = nil
	m.removeBlockersFor(st.Slug)
	m.changed = true
	m.advance(st)
}

// advance goes from a finished step to the next: a session boundary asks,
// the end of a looping flow asks, anything else chains automatically.
// Kill-switches are evaluated here: this is the iteration boundary.
func (m *machine) advance(done flow.Step) {
	m.s.Limits.Iterations++
	if m.killSwitches(done) {
		return
	}
	m.proceed(done)
}

// proceed continues after the kill-switch checks of an iteration boundary.
func (m *machine) proceed(done flow.Step) {
	next := m.s.Step + 1
	if next > len(m.f.Steps) {
		if m.f.Loop != nil {
			m.s.LastSession = m.session("cycle complete", fmt.Sprintf("cycle %d finished", m.s.Cycle))
			m.s.Run = state.RunAwaitingDecision
			m.openGate("next-cycle", fmt.Sprintf("DECISION REQUIRED: Cycle %d complete — start the next feature?", m.s.Cycle), nil,
				[]state.Option{{Letter: "A", Text: "Start the next feature (cycle " + fmt.Sprint(m.s.Cycle+1) + ", back to " + m.f.Steps[m.f.Index(m.f.Loop.To)].Name + ")", Action: state.ActNextCycle},
					{Letter: "B", Text: "Finish the run here", Action: state.ActFinish}},
				"B", "start the next feature only when one is ready to describe")
			return
		}
		m.finish()
		return
	}
	if done.Boundary {
		nst := m.f.Steps[next-1]
		m.s.Step, m.s.Slug, m.s.Name = next, nst.Slug, nst.Name
		m.s.Status = state.NotStarted
		m.s.SubStep = state.SubStep{Phase: 0, Name: state.AwaitingInvocation}
		m.s.Run = state.RunAwaitingDecision
		m.s.LastSession = m.session("session boundary", done.Name+" complete, "+nst.Name+" ready")
		summary := []string{}
		if n := m.countTasks(state.KindTask); n > 0 {
			summary = append(summary, fmt.Sprintf("Tasks: %d (%s points)", n, prose.Points(m.totalPoints())))
		}
		summary = append(summary, m.nextLine())
		work := nst.Work()
		m.openGate("session-boundary", fmt.Sprintf("DECISION REQUIRED: %s complete — start %s?", done.Name, work), summary,
			[]state.Option{{Letter: "A", Text: "Start " + work + " with a fresh executor session (recommended)", Action: state.ActFreshSession},
				{Letter: "B", Text: "Continue in the current executor session", Action: state.ActContinueSession}},
			"A", work+" is a long phase; fresh context helps")
		m.s.Gate.Next = nst.Slug
		return
	}
	m.enter(next)
}

// finish ends the run successfully.
func (m *machine) finish() {
	m.s.Step, m.s.Slug, m.s.Name = 0, "done", "Done"
	m.s.Status = state.Completed
	m.s.SubStep = state.SubStep{Phase: 0, Name: state.AwaitingInvocation}
	m.s.Run = state.RunDone
	m.s.Exec = nil
	m.s.LastSession = m.session("completed", "all steps finished")
	m.changed = true
	m.post("done", "✅ **Autopilot run complete.** Every step of the "+m.f.Name+" flow is done; the state comment above keeps the record.")
}

// stop sets the run to stopped with a reason (kill-switch name) and hint.
func (m *machine) stop(reason, detail string) {
	if m.s.Run == state.RunStopped || m.s.Run == state.RunDone {
		return
	}
	hint := stops.RecoveryHint(reason)
	m.s.Stop = &state.Stop{Reason: reason, Hint: hint, At: m.now, Resume: m.s.Run}
	m.s.Run = state.RunStopped
	m.s.LastSession = m.session("stopped: "+reason, detail)
	m.changed = true
	m.post("stopped", fmt.Sprintf("⏹️ **Autopilot stopped** — `%s`: %s\n\nRecovery: %s\nResume with `/autopilot resume`.", reason, textsafe.Escape(detail), hint))
}

// resume continues a stopped run where it was.
func (m *machine) resume(why string) {
	if m.s.Run != state.RunStopped || m.s.Stop == nil {
		return
	}
	prev, reason := m.s.Stop.Resume, m.s.Stop.Reason
	m.s.Stop = nil
	// A resumed run gets fresh budgets: wall clock, sessions (this is a
	// new one), failed batches, confidence.
	m.s.Limits.RunStartedAt = m.now
	m.s.Limits.Sessions = 1
	m.s.Limits.FailedWaves = 0
	m.s.Limits.Deferred = ""
	m.s.Limits.HasConfidence = false
	if rl := m.s.Review; rl != nil {
		switch reason {
		case stops.StopMaxIterations:
			// A new iteration budget, as configured now.
			rl.Iteration = 1
			rl.MaxIterations = m.set.Config.MaxIterations
		case stops.KillSpiral:
			// Someone triaged the repeating finding; count afresh.
			rl.FailureHistory = nil
		}
	}
	m.changed = true
	m.s.LastSession = m.session("resumed", why)
	if m.s.Gate != nil {
		m.s.Run = state.RunAwaitingDecision
		if prev == state.RunFailed {
			m.s.Run = state.RunFailed
		}
		return
	}
	if prev == "" || prev == state.RunStopped || prev == state.RunAwaitingDecision {
		prev = state.RunInProgress
	}
	m.s.Run = prev
	if m.f == nil || m.s.Step == 0 {
		return
	}
	switch m.s.Status {
	case state.NotStarted:
		// Stopped before the step started (session limit, a boundary
		// tick): start it now, through its gates.
		m.enter(m.s.Step)
	case state.Completed, state.Skipped:
		// Stopped by a kill-switch at the iteration boundary after this
		// step: go on to the next step (the limits were just reset).
		m.proceed(m.step())
	case state.Failed:
		m.resumeFailed()
	}
}

// resumeFailed continues a failed step without a pending question: a
// review-loop verdict that was not clean returns to its return_to step
// (spiral, max-iterations); any other failed step asks SKILL FAILED again.
func (m *machine) resumeFailed() {
	st := m.step()
	if st.ReturnTo != "" && m.s.Review != nil {
		m.rollbackTo(st.ReturnTo, m.s.Review.ReturnToPlanReason)
		return
	}
	m.reopenFailed()
}

func (m *machine) session(reason, notes string) state.Session {
	ended := "Step " + fmt.Sprint(m.s.Step) + " " + m.s.Name
	if m.s.Step == 0 {
		ended = m.s.Name
	}
	if m.s.SubStep.Name != "" && m.s.SubStep.Name != state.AwaitingInvocation {
		ended += fmt.Sprintf(" — SubStep %d %s", m.s.SubStep.Phase, m.s.SubStep.Name)
	}
	return state.Session{Date: m.now, EndedAt: ended, Reason: reason, Notes: notes}
}

// lastFailureOf returns the newest retry-log reason of a step, "" if none.
func (m *machine) lastFailureOf(step int) string {
	for i := len(m.s.RetryLog) - 1; i >= 0; i-- {
		if m.s.RetryLog[i].Step == step {
			return m.s.RetryLog[i].Reason
		}
	}
	return ""
}

func (m *machine) clearRetryLog(step int) {
	out := m.s.RetryLog[:0]
	for _, r := range m.s.RetryLog {
		if r.Step != step {
			out = append(out, r)
		}
	}
	m.s.RetryLog = out
	if len(m.s.RetryLog) == 0 {
		m.s.RetryLog = nil
	}
}

func (m *machine) removeBlockersFor(slug string) {
	out := m.s.Blockers[:0]
	for _, b := range m.s.Blockers {
		if !strings.HasPrefix(b, "["+slug+"]") {
			out = append(out, b)
		}
	}
	m.s.Blockers = out
	if len(m.s.Blockers) == 0 {
		m.s.Blockers = nil
	}
}

func (m *machine) countTasks(kind string) int {
	n := 0
	for _, t := range m.s.Tasks {
		if t.Kind == kind {
			n++
		}
	}
	return n
}

func (m *machine) totalPoints() float64 {
	p := 0.0
	for _, t := range m.s.Tasks {
		if t.Kind == state.KindTask {
			p += t.Points
		}
	}
	return p
}
