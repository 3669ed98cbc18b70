package reliability

import (
	"fmt"
	"slices"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/access"
)

// Ledger outcomes the oracle predicts. AnyRejection matches every
// "rejected:<reason>" (PRODUCT.md names only some reasons).
const (
	Applied      = "applied"
	NotACommand  = "not-a-command"
	Unauthorized = "rejected:unauthorized"
	Decided      = "rejected:already-decided"
	AnyRejection = "rejected:*"
)

// Expected is the oracle's prediction for one issue after quiescence.
type Expected struct {
	Flow       string
	Slug       string // current step, "done" when finished
	Run        string // run status (the autopilot/status label)
	StopReason string
	// GateKind is the open gate's kind ("" when none).
	GateKind  string
	Decisions []ExpDecision
	// Ledger is the outcome expected for every comment, by id.
	Ledger map[int64]string
	Tasks  []ExpTask
	// TrackerSynced: every task has its Jira issue (false: all still pending).
	TrackerSynced bool
	LinkedPRs     []int
	ReviewCycle   int
}

// ExpDecision is an accepted answer.
type ExpDecision struct {
	GateKind  string
	Option    string
	By        string
	CommentID int64
}

// ExpTask is a declared epic or task.
type ExpTask struct{ Kind, Title string }

// Match reports whether a ledger outcome is what the oracle expects.
func Match(want, got string) bool {
	if want == AnyRejection {
		return strings.HasPrefix(got, "rejected:")
	}
	return want == got
}

// stepDef is a step of a built-in flow as PRODUCT.md §8 describes it.
type stepDef struct {
	slug        string
	boundary    bool   // a session boundary follows: ask fresh/continue
	needsReason bool   // skipping needs a reason
	interview   bool   // leaving needs a rationale
	consensus   bool   // architect then critic approval
	evidence    string // "review" or "checks"
	declares    string // "epics" or "tasks"
}

// oracleFlows are the flows the scenarios run, from PRODUCT.md §8.
var oracleFlows = map[string][]stepDef{
	"greenfield": {
		{slug: "problem"}, {slug: "research"}, {slug: "plan", declares: "epics"},
		{slug: "decompose", boundary: true, declares: "tasks"}, {slug: "implement"}, {slug: "run-tests"},
		{slug: "security-audit", needsReason: true}, {slug: "deploy"},
	},
	"review-loop": {
		{slug: "interview", interview: true}, {slug: "plan", consensus: true}, {slug: "execute"},
		{slug: "code-review", evidence: "review"}, {slug: "qa", evidence: "checks", needsReason: true},
	},
}

// Run statuses (PRODUCT.md §5).
const (
	runInProgress = "in-progress"
	runAwaiting   = "awaiting-decision"
	runFailed     = "failed"
	runDone       = "done"
	runStopped    = "stopped"
)

// gateOpt is what answering a letter does.
type gateOpt func(m *model, a Act)

type mgate struct {
	kind string
	opts map[string]gateOpt
	// wasFailed: the step had failed when the gate opened.
	wasFailed bool
}

// model is the oracle's state machine: written from PRODUCT.md and the
// seeds, never from the engine's code.
type model struct {
	perm     func(login string) access.Level
	roles    map[string][]string
	prAuthor string

	flow      string
	steps     []stepDef
	step      int // 1-based; 0 when done
	running   bool
	failed    bool
	run       string
	gate      *mgate
	stopped   bool
	resumeRun string
	stopWhy   string
	retries   int
	exp       Expected
	// lastDecisionPhase is the phase of the newest decision (racing answers).
	lastDecisionPhase int
	// review loop
	planReported bool
	architect    string
	checksGreen  bool
	jira         bool
}

// Oracle computes the expected state of an issue from the scenario's acts
// in the order they happened (phases in order; comments of a phase by
// creation time, then id). perm is each person's permission; roles the
// review-loop roles; prAuthor the linked PR's author.
func Oracle(sc Scenario, acts []Act, perm func(string) access.Level, roles map[string][]string, prAuthor string) Expected {
	m := &model{perm: perm, roles: roles, prAuthor: prAuthor, flow: sc.Flow, steps: oracleFlows[sc.Flow], jira: sc.Jira}
	m.exp = Expected{Flow: sc.Flow, Ledger: map[int64]string{}}
	for _, a := range acts {
		m.act(a)
	}
	m.exp.Run = m.run
	m.exp.Slug = m.slug()
	if m.gate != nil {
		m.exp.GateKind = m.gate.kind
	}
	if m.stopped {
		m.exp.StopReason = m.stopWhy
	}
	m.exp.TrackerSynced = m.jira && len(m.exp.Tasks) > 0
	return m.exp
}

func (m *model) slug() string {
	if m.step == 0 {
		return "done"
	}
	return m.steps[m.step-1].slug
}

func (m *model) cur() stepDef {
	if m.step == 0 {
		return stepDef{}
	}
	return m.steps[m.step-1]
}

func (m *model) act(a Act) {
	switch a.Kind {
	case ActLabel:
		if a.Label != "autopilot" {
			return
		}
		switch {
		case m.run == "":
			m.enter(1)
		case m.stopped:
			m.resume()
		}
	case ActUnlabel:
		if a.Label == "autopilot" {
			m.stop("user-abort")
		}
	case ActOpenPR:
		if !slices.Contains(m.exp.LinkedPRs, a.PR) && m.run != "" {
			m.exp.LinkedPRs = append(m.exp.LinkedPRs, a.PR)
		}
	case ActReview:
		m.review(a)
	case ActChecks:
		if a.Success {
			m.checksGreen = true
			if m.cur().evidence == "checks" && m.running && !m.stopped && m.gate == nil {
				m.complete()
			}
		}
	case ActSay:
		m.comment(a)
	}
}

func (m *model) ledger(a Act, outcome string) {
	if _, dup := m.exp.Ledger[a.CommentID]; !dup {
		m.exp.Ledger[a.CommentID] = outcome
	}
}

// authorised: the collaborator-permission API grants write or more, and
// the author is a person (bots never act; none is a configured agent).
func (m *model) authorised(login string) bool {
	return !strings.HasSuffix(login, "[bot]") && m.perm(login).AtLeast(access.Write)
}

func (m *model) comment(a Act) {
	switch {
	case m.run == "":
		m.ledger(a, NotACommand) // no run yet: history, not input
		return
	case a.Mean == MeanChatter, strings.HasSuffix(a.Who, "[bot]"):
		m.ledger(a, NotACommand)
		return
	case !m.authorised(a.Who):
		m.ledger(a, Unauthorized)
		return
	}
	switch a.Mean {
	case MeanAttempt:
		m.ledger(a, AnyRejection)
	case MeanStatus, MeanHelp:
		m.ledger(a, Applied)
	case MeanAnswer:
		m.answer(a)
	case MeanDone, MeanFail, MeanProgress:
		m.report(a)
	case MeanSkip:
		m.skip(a)
	case MeanStop:
		if m.stopped || m.run == runDone {
			m.ledger(a, AnyRejection)
			return
		}
		m.ledger(a, Applied)
		m.stop("user-abort")
	case MeanResume:
		if !m.stopped {
			m.ledger(a, AnyRejection)
			return
		}
		m.ledger(a, Applied)
		m.resume()
	case MeanApprove, MeanReject:
		m.consensus(a)
	default:
		panic(fmt.Sprintf("oracle: meaning %d", a.Mean))
	}
}

// answer applies a letter: only to an open gate, only a listed option,
// and only the first answer to a gate (PRODUCT.md §7).
func (m *model) answer(a Act) {
	g := m.gate
	if g == nil || m.stopped {
		if n := len(m.exp.Decisions); n > 0 && m.lastDecisionPhase == a.Phase && !m.stopped {
			m.ledger(a, Decided) // lost the race to the earlier answer
			return
		}
		m.ledger(a, AnyRejection)
		return
	}
	do, ok := g.opts[a.Letter]
	if !ok {
		m.ledger(a, AnyRejection)
		return
	}
	m.ledger(a, Applied)
	m.exp.Decisions = append(m.exp.Decisions, ExpDecision{GateKind: g.kind, Option: a.Letter, By: a.Who, CommentID: a.CommentID})
	m.lastDecisionPhase = a.Phase
	m.gate = nil
	m.run = runInProgress
	do(m, a)
}

// report handles done/fail/progress from the step's executor.
func (m *model) report(a Act) {
	st := m.cur()
	if m.stopped || m.run == runDone || !m.running || m.gate != nil {
		m.ledger(a, AnyRejection)
		return
	}
	switch a.Mean {
	case MeanProgress:
		m.ledger(a, Applied)
	case MeanFail:
		m.ledger(a, Applied)
		m.retries++
		if m.retries >= 3 {
			m.running, m.failed = false, true
			m.openGate("skill-failed", m.skillFailedOpts())
			m.run = runFailed
		}
	case MeanDone:
		switch {
		case st.evidence != "":
			m.ledger(a, AnyRejection) // a self-reported done is not evidence
			return
		case st.interview && strings.TrimSpace(a.Text) == "":
			m.ledger(a, AnyRejection)
			return
		}
		m.ledger(a, Applied)
		kind := "task"
		if st.declares == "epics" {
			kind = "epic"
		}
		for i := range a.Tasks {
			m.exp.Tasks = append(m.exp.Tasks, ExpTask{Kind: kind, Title: TaskTitle(a.TaskPrefix, i)})
		}
		if st.consensus {
			m.planReported, m.architect = true, ""
			return
		}
		m.complete()
	}
}

// skillFailedOpts are the SKILL FAILED choices of seed 002.
func (m *model) skillFailedOpts() map[string]gateOpt {
	return map[string]gateOpt{
		"A": func(m *model, _ Act) { m.failed, m.retries = false, 0; m.running = true },
		"B": func(m *model, _ Act) { m.failed = false; m.complete() },
		// Abort keeps the step failed: resuming asks again.
		"C": func(m *model, _ Act) { m.stop("user-abort") },
	}
}

// TaskTitle is the title of the i-th task a comment declares.
func TaskTitle(prefix string, i int) string { return fmt.Sprintf("%s item %d", prefix, i+1) }

func (m *model) skip(a Act) {
	st := m.cur()
	switch {
	case m.stopped || m.run == runDone || m.step == 0:
		m.ledger(a, AnyRejection)
		return
	case m.gate != nil:
		m.ledger(a, AnyRejection)
		return
	case st.needsReason && strings.TrimSpace(a.Text) == "":
		m.ledger(a, AnyRejection)
		return
	case st.consensus || st.evidence == "review":
		m.ledger(a, AnyRejection)
		return
	}
	m.ledger(a, Applied)
	m.openGate("skip-"+st.slug, map[string]gateOpt{
		"A": func(m *model, _ Act) { m.complete() },
		"B": func(m *model, _ Act) { m.keep() },
	})
}

// keep returns to the current step after a "no" to a skip question.
func (m *model) keep() {
	if !m.running && !m.failed {
		m.enter(m.step)
	}
}

func (m *model) consensus(a Act) {
	st := m.cur()
	if !st.consensus || m.stopped || !m.running || m.gate != nil {
		m.ledger(a, AnyRejection)
		return
	}
	if a.Role != "architect" && a.Role != "critic" || !slices.Contains(m.roles[a.Role], a.Who) {
		m.ledger(a, AnyRejection)
		return
	}
	if a.Mean == MeanReject {
		m.ledger(a, Applied)
		m.planReported, m.architect = false, ""
		return
	}
	switch {
	case !m.planReported,
		a.Role == "critic" && m.architect == "",
		a.Role == "architect" && m.architect != "",
		a.Role == "critic" && m.architect == a.Who:
		m.ledger(a, AnyRejection)
	case a.Role == "architect":
		m.ledger(a, Applied)
		m.architect = a.Who
	default:
		m.ledger(a, Applied)
		m.complete()
	}
}

// review applies a PR review as evidence for the code-review step.
func (m *model) review(a Act) {
	st := m.cur()
	if st.evidence != "review" || !m.running || m.stopped || m.gate != nil {
		return
	}
	if !m.perm(a.Who).AtLeast(access.Write) {
		return
	}
	switch a.Review {
	case "APPROVED":
		if strings.EqualFold(a.Who, m.prAuthor) {
			return
		}
		m.complete()
	case "CHANGES_REQUESTED":
		m.exp.ReviewCycle++
		m.planReported, m.architect = false, ""
		for i, s := range m.steps {
			if s.slug == "plan" {
				m.enter(i + 1)
			}
		}
	}
}

func (m *model) openGate(kind string, opts map[string]gateOpt) {
	m.gate = &mgate{kind: kind, opts: opts, wasFailed: m.failed}
	m.run = runAwaiting
}

// enter makes step n current and running (the Jira check passes: Jira is
// either off by configuration or reachable when a Jira step starts).
func (m *model) enter(n int) {
	if n > len(m.steps) {
		m.finish()
		return
	}
	m.step, m.running, m.failed, m.retries, m.run = n, true, false, 0, runInProgress
	if m.cur().evidence == "checks" && m.checksGreen {
		m.complete()
	}
}

// complete finishes the current step and moves on: a boundary asks
// (fresh session or continue), the last step finishes the run.
func (m *model) complete() {
	st := m.cur()
	m.running = false
	if m.step >= len(m.steps) {
		m.finish()
		return
	}
	if st.boundary {
		m.step++
		m.openGate("session-boundary", map[string]gateOpt{
			"A": func(m *model, _ Act) { m.enter(m.step) },
			"B": func(m *model, _ Act) { m.enter(m.step) },
		})
		return
	}
	m.enter(m.step + 1)
}

func (m *model) finish() {
	m.step, m.running, m.run, m.gate = 0, false, runDone, nil
}

func (m *model) stop(reason string) {
	if m.stopped || m.run == runDone || m.run == "" {
		return
	}
	m.stopped, m.stopWhy, m.resumeRun = true, reason, m.run
	m.run = runStopped
}

func (m *model) resume() {
	m.stopped, m.stopWhy = false, ""
	if m.gate == nil && m.failed {
		// A failed step never runs again without an answer (seed 002).
		m.openGate("skill-failed", m.skillFailedOpts())
		m.gate.wasFailed = true
	}
	switch {
	case m.gate != nil && m.gate.wasFailed:
		m.run = runFailed
	case m.gate != nil:
		m.run = runAwaiting
	default:
		m.run = runInProgress
	}
}
