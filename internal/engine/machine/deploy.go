package machine

import (
	"fmt"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/deploygate"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// The deploy gate's moves (docs/deploy-gate.md): the rule is package
// deploygate's; these record a request, open its question and announce
// its answer. The answer is an outbox effect (state.EffDeployAnswer),
// carried again until the request is recorded sent, so it is sent once
// across redeliveries, replicas and crashes (a 422 after a lost outcome
// counts as sent).

// DeployRequestOf is the rule's request for a recorded one.
func DeployRequestOf(d *state.DeployRequest) deploygate.Request {
	return deploygate.Request{Environment: d.Environment, SHA: d.SHA, RunID: d.RunID}
}

// RecordDeploy records a request (once: a redelivery finds it) and
// returns it.
func (m *M) RecordDeploy(run int64, env, sha string) *state.DeployRequest {
	if d := m.S.Deploy(run, env); d != nil {
		return d
	}
	m.S.Deploys = append(m.S.Deploys, state.DeployRequest{RunID: run, Environment: env, SHA: sha, At: m.Now})
	if extra := len(m.S.Deploys) - state.MaxDeploys; extra > 0 {
		m.S.Deploys = dropAnswered(m.S.Deploys, extra)
	}
	m.Changed = true
	return &m.S.Deploys[len(m.S.Deploys)-1]
}

// dropAnswered drops up to n of the oldest requests already sent.
func dropAnswered(ds []state.DeployRequest, n int) []state.DeployRequest {
	out := ds[:0:0]
	for _, d := range ds {
		if n > 0 && d.Sent {
			n--
			continue
		}
		out = append(out, d)
	}
	return out
}

// AnswerDeploy records dec's answer for the request and announces the
// callback. A request answered before is never answered again.
func (m *M) AnswerDeploy(d *state.DeployRequest, dec deploygate.Decision) {
	answer, ok := dec.Answer()
	if !ok || d.Answer != "" {
		return
	}
	d.Answer, d.Comment = answer, textsafe.Truncate(dec.Comment, deploygate.MaxComment)
	m.Changed = true
	m.Emit(DeployAnswerEffect(d))
	if answer == state.DeployRejected {
		m.Note("deploy-rejected:"+state.DeployMarker(d.RunID, d.Environment), "🚫 "+dec.Comment)
	}
}

// DeployAnswerEffect is the callback effect of a decided request.
func DeployAnswerEffect(d *state.DeployRequest) state.Effect {
	return state.Effect{Kind: state.EffDeployAnswer, Marker: state.DeployMarker(d.RunID, d.Environment),
		RunID: d.RunID, Environment: d.Environment, Answer: d.Answer, Body: d.Comment}
}

// AskDeploy opens the deploy question for the request and posts a status
// report on it that names the issue (GitHub shows it on the waiting run).
func (m *M) AskDeploy(d *state.DeployRequest, dec deploygate.Decision) {
	q := dec.Question
	d.Gate = q.Kind
	opts := []state.Option{
		{Letter: deploygate.LetterApprove, Text: q.Options[0], Action: state.ActDeployApprove},
		{Letter: deploygate.LetterReject, Text: q.Options[1], Action: state.ActDeployReject},
	}
	m.openGate(deploygate.Kind(d.Environment, d.SHA), q.Title, q.Details, opts, deploygate.LetterApprove, q.Recommend)
	m.Emit(state.Effect{Kind: state.EffDeployReport, RunID: d.RunID, Environment: d.Environment,
		Body: textsafe.Truncate(dec.Comment, deploygate.MaxComment)})
}

// deployAnswered applies an answer to the deploy question g: the rule
// decides again with the answer recorded (approve, reject, or a reject
// because the flow moved on meanwhile) and the request is answered.
func (m *M) deployAnswered(g *state.Gate, _ events.Comment) {
	for i := range m.S.Deploys {
		d := &m.S.Deploys[i]
		if d.Gate != g.Kind || d.Answer != "" {
			continue
		}
		m.AnswerDeploy(d, deploygate.Decide(m.S, m.Set.Config.DeployGate, DeployRequestOf(d)))
	}
}

// DeployAnswered records what became of a callback: sent (204, or 422:
// decided already, by this answer before a crash or by a person), or
// failed and still owed (the outbox carries it again).
func (m *M) DeployAnswered(e events.DeployAnswered) {
	d := m.S.DeployByMarker(e.Marker)
	if d == nil || d.Sent || !e.Done {
		return
	}
	d.Sent = true
	m.Changed = true
	out := m.S.Outbox[:0:0]
	for _, o := range m.S.Outbox {
		if o.Marker != e.Marker {
			out = append(out, o)
		}
	}
	m.S.Outbox = out
}

// SettleDeploys answers the requests whose deploy question is no longer
// open and that the rule now decides: the flow stopped, failed or moved
// on while the question waited (rejected, saying why), or the question
// was answered. A request still asking waits for its question.
func (m *M) SettleDeploys() {
	for i := range m.S.Deploys {
		d := &m.S.Deploys[i]
		asking := m.S.Gate != nil && m.S.Gate.Kind == d.Gate && m.S.Run == state.RunAwaitingDecision
		if d.Gate == "" || d.Answer != "" || asking {
			continue
		}
		dec := deploygate.Decide(m.S, m.Set.Config.DeployGate, DeployRequestOf(d))
		if dec.Verdict == deploygate.Reject || dec.Verdict == deploygate.Approve {
			m.AnswerDeploy(d, dec)
		}
	}
}

// deployReviewWait is how long GitHub keeps a job waiting for its
// reviewers and protection rules: the environment page's decisions are
// read again (on the sweep) for requests younger than this.
const deployReviewWait = 30 * 24 * time.Hour

// AskDeployApprovals asks for the review history of the runs of the
// recorded requests still within GitHub's wait, while the flow is at its
// deploy step (the sweep).
func (m *M) AskDeployApprovals() {
	if m.S.Run == state.RunDone || m.S.Slug != m.Set.Config.DeployGate.Step {
		return
	}
	asked := map[int64]bool{}
	for _, d := range m.S.Deploys {
		if asked[d.RunID] || m.Now.Sub(d.At) > deployReviewWait {
			continue
		}
		asked[d.RunID] = true
		m.Ask(events.Query{Kind: events.QDeployApprovals, RunID: d.RunID})
	}
}

// DeployReview is a reviewer's decision on the environment page, for a
// recorded request: approve (A) or reject (B).
type DeployReview struct {
	RunID       int64
	Environment string
	// Gate is the kind of the request's deploy question ("" if none was
	// asked).
	Gate    state.GateKind
	User    string
	Letter  string
	Comment string
}

// RecordDeployApprovals records a run's review history as decisions of
// the deploy step: each entry after the ones recorded already, for an
// environment autopilot was asked about, with who, what and where. It
// returns the reviews it recorded.
func (m *M) RecordDeployApprovals(e events.DeployApprovalsRead) []DeployReview {
	first, reviews := m.NewDeployReviews(e)
	if first == nil {
		return nil
	}
	for _, r := range reviews {
		d := m.S.Deploy(r.RunID, r.Environment)
		verdict := state.DeployApproved
		if r.Letter == deploygate.LetterReject {
			verdict = state.DeployRejected
		}
		m.S.Decisions = append(m.S.Decisions, state.Decision{
			Gate:       deploygate.ReviewGateID(e.RunID, d.Environment),
			Question:   fmt.Sprintf("Deploy %s to %s? (a reviewer on the environment page)", shortSHA(d.SHA), d.Environment),
			Option:     r.Letter,
			OptionText: verdict + " on the environment page",
			By:         r.User, At: m.Now,
			Link:   DeployRunLink(m.Set.Repo, e.RunID),
			Reason: prose.OneLine(r.Comment, 200), GateOpenedAt: d.At,
		})
	}
	first.Reviewed = len(e.Approvals)
	m.Changed = true
	return reviews
}

// NewDeployReviews lists the entries of a run's review history not
// recorded yet (the state counts those recorded on the run's first
// request), and that request; nil when there is nothing new.
func (m *M) NewDeployReviews(e events.DeployApprovalsRead) (*state.DeployRequest, []DeployReview) {
	if e.Fail != events.ReadOK {
		return nil, nil
	}
	var first *state.DeployRequest
	for i := range m.S.Deploys {
		if m.S.Deploys[i].RunID == e.RunID {
			first = &m.S.Deploys[i]
			break
		}
	}
	if first == nil || len(e.Approvals) <= first.Reviewed {
		return nil, nil
	}
	var out []DeployReview
	for _, a := range e.Approvals[first.Reviewed:] {
		letter := ""
		switch a.State {
		case state.DeployApproved:
			letter = deploygate.LetterApprove
		case state.DeployRejected:
			letter = deploygate.LetterReject
		}
		for _, env := range a.Environments {
			d := m.S.Deploy(e.RunID, env)
			if d == nil || letter == "" || a.User == "" {
				continue
			}
			out = append(out, DeployReview{RunID: e.RunID, Environment: d.Environment, Gate: d.Gate, User: a.User, Letter: letter, Comment: a.Comment})
		}
	}
	return first, out
}

// DeployRunLink is the workflow run's page.
func DeployRunLink(repo string, run int64) string {
	return fmt.Sprintf("https://github.com/%s/actions/runs/%d", repo, run)
}

func shortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
