// Package deploygate is the deploy gate's rule (docs/deploy-gate.md): it
// matches a deployment request (GitHub's deployment_protection_rule, or the
// Action's gate job) to an autopilot issue, and decides from that issue's
// state whether the deploy is asked about, approved, rejected, left waiting
// or ignored. App mode and the gate job both ask this package, so they give
// the same answers with the same words.
//
// It must never do I/O or read the clock: requests, states and the config
// come in as data, and the verdict goes out as data.
package deploygate

import (
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/approvals"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// Request is one deployment waiting for an answer: what GitHub's
// deployment_protection_rule webhook names, or what the gate job reads
// from its run.
type Request struct {
	Environment string
	SHA         string // the commit being deployed
	Ref         string
	RunID       int64 // the workflow run that deploys
	// Session is the session token of the run's name (run-name:
	// "autopilot <session>"), when the run is one autopilot dispatched.
	Session string
	PRs     []PR // the pull requests the request names
}

// PR is a pull request a request names, with the issues its description
// links ("Fixes #12").
type PR struct {
	Number       int
	LinkedIssues []int
}

// Verdict is what the gate does with a request.
type Verdict string

// The verdicts.
const (
	// Ask: open the deploy question on the issue.
	Ask Verdict = "ask"
	// Wait: the deploy question is open; nobody answered yet.
	Wait Verdict = "wait"
	// Approve: answer the request "approved".
	Approve Verdict = "approve"
	// Reject: answer the request "rejected", with Decision.Comment.
	Reject Verdict = "reject"
	// Ignore: autopilot does not gate the deploy: the gate job passes,
	// and in App mode the request is answered approved (Answer).
	Ignore Verdict = "ignore"
)

// Answer is the callback a decision makes in App mode, where autopilot is
// the environment's protection rule: GitHub keeps the job waiting until
// the rule's App answers (it fails after 30 days), so a deploy autopilot
// does not gate (Ignore) is answered approved, with the comment saying
// why. Ask and Wait answer nothing yet.
func (d Decision) Answer() (answer string, ok bool) {
	switch d.Verdict {
	case Approve, Ignore:
		return state.DeployApproved, true
	case Reject:
		return state.DeployRejected, true
	}
	return "", false
}

// Reason says why a verdict was reached; each has one message (Comment).
type Reason string

// The reasons.
const (
	EnvNotGated     Reason = "environment-not-gated"
	Unmatched       Reason = "unmatched"
	Ambiguous       Reason = "ambiguous"
	FlowStopped     Reason = "stopped"
	FlowFailed      Reason = "failed"
	NotAtDeploy     Reason = "not-at-deploy-step"
	NoGatePassed    Reason = "no-gate-passed"
	Unreviewed      Reason = "unreviewed"
	AnsweredApprove Reason = "answered-approve"
	AnsweredReject  Reason = "answered-reject"
	AutoApproved    Reason = "auto-approved"
	Asking          Reason = "asking"
	Waiting         Reason = "waiting"
)

// Decision is the gate's answer to one request.
type Decision struct {
	Verdict Verdict
	Reason  Reason
	// Issue is the matched issue (0 when none matched).
	Issue int
	// Comment is the sentence the callback carries and the gate job
	// prints: what was decided and why, naming the issue.
	Comment string
	// By and Link name the person who answered the deploy question and
	// their comment (AnsweredApprove, AnsweredReject).
	By, Link string
	// Question is the deploy question to open (Ask).
	Question *Question
}

// Question is the deploy Choose: "Deploy <sha> to <environment>?
// A) approve B) reject".
type Question struct {
	Kind    state.GateKind
	Title   string
	Details []string
	Options []string // in letter order: A approve, B reject
	// Recommend is why approving is recommended: every gate passed on
	// the commit (a question is asked only then).
	Recommend string
}

// The deploy question's letters.
const (
	LetterApprove = "A"
	LetterReject  = "B"
)

// MaxComment is GitHub's limit on a callback's or a status report's
// comment (characters).
const MaxComment = 1024

// kindPrefix starts the gate kind of every deploy question.
const kindPrefix = "deploy-"

// Kind is the gate kind of the deploy question for env and sha: the first
// 12 hex digits of the commit and 8 of a hash of the environment's name in
// lower case (GitHub's environment names ignore case), so an answer is
// found again by the request it answers and fits in a gate id.
func Kind(env, sha string) state.GateKind {
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(env)))
	return state.GateKind(fmt.Sprintf("%s%s-%08x", kindPrefix, short(strings.ToLower(sha), 12), h.Sum32()))
}

// ReviewGateID is the gate id under which a reviewer's decision on the
// environment page for run and env is recorded in the decisions: a deploy
// kind ("deploy-review-<8 hex of the environment>") behind the run, so
// it is never an answer to the deploy question nor one that reached the
// deploy step.
func ReviewGateID(run int64, env string) string {
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(env)))
	return fmt.Sprintf("env%d-%sreview-%08x", run, kindPrefix, h.Sum32())
}

// IsKind reports whether k is the kind of some deploy question.
func IsKind(k state.GateKind) bool { return strings.HasPrefix(string(k), kindPrefix) }

// Decide applies the rule to a request matched to the issue whose state is
// st (see Match), under the repository's deploy_gate settings.
func Decide(st *state.State, cfg config.DeployGate, req Request) Decision {
	if !cfg.Gates(req.Environment) {
		return decision(Ignore, EnvNotGated, st.Issue, fmt.Sprintf("environment %q is not listed under deploy_gate.environments; autopilot does not gate its deploys", req.Environment))
	}
	what := fmt.Sprintf("deploy of %s to %s", short(req.SHA, 7), req.Environment)
	ref := issueRef(st)
	switch {
	case st.Run == state.RunStopped:
		why := "stopped"
		if st.Stop != nil && st.Stop.Reason != "" {
			why += " (" + string(st.Stop.Reason) + ")"
		}
		return decision(Reject, FlowStopped, st.Issue, fmt.Sprintf("Rejected the %s: the flow on %s is %s. Resume it there first.", what, ref, why))
	case st.Run == state.RunFailed || st.Status == state.Failed:
		return decision(Reject, FlowFailed, st.Issue, fmt.Sprintf("Rejected the %s: step %s of the flow on %s failed. Fix it there first.", what, st.Slug, ref))
	case st.Slug != cfg.Step:
		at := "is at step " + st.Slug
		if st.Run == state.RunDone || st.Slug == "done" {
			at = "is done"
		}
		return decision(Reject, NotAtDeploy, st.Issue, fmt.Sprintf("Rejected the %s: the flow on %s %s, not at its %s step.", what, ref, at, cfg.Step))
	}
	if ok, older := passedOn(st, req.SHA); !ok {
		if len(older) > 0 {
			return decision(Reject, Unreviewed, st.Issue, fmt.Sprintf("Rejected the %s: the gates of %s passed on %s, not on %s; a later push is not reviewed.", what, ref, strings.Join(older, ", "), short(req.SHA, 7)))
		}
		return decision(Reject, NoGatePassed, st.Issue, fmt.Sprintf("Rejected the %s: no gate of %s passed on any commit of a linked pull request.", what, ref))
	}
	kind := Kind(req.Environment, req.SHA)
	if st.Gate != nil && st.Gate.Kind == kind {
		// Open: what Key Decisions holds of it are votes short of an
		// approver policy's quorum, not an answer.
		return decision(Wait, Waiting, st.Issue, fmt.Sprintf("The %s waits for an answer to the deploy question on %s.", what, ref))
	}
	if d, ok := answered(st, kind); ok {
		if d.Option == LetterApprove {
			dec := decision(Approve, AnsweredApprove, st.Issue, fmt.Sprintf("Approved the %s: %s.", what, answeredBy(d, "approve", ref)))
			dec.By, dec.Link = d.By, d.Link
			return dec
		}
		dec := decision(Reject, AnsweredReject, st.Issue, fmt.Sprintf("Rejected the %s: %s.", what, answeredBy(d, "reject", ref)))
		dec.By, dec.Link = d.By, d.Link
		return dec
	}
	if cfg.AutoApprove && reachedByAnswer(st) {
		return decision(Approve, AutoApproved, st.Issue, fmt.Sprintf("Approved the %s: every gate of %s passed on this commit and the deploy step was reached by an answer (deploy_gate.auto_approve).", what, ref))
	}
	dec := decision(Ask, Asking, st.Issue, fmt.Sprintf("The %s waits for an answer to the deploy question on %s.", what, ref))
	dec.Question = question(kind, req)
	return dec
}

// DecideUnmatched is the answer to a request that matched no issue (m is
// Match's result), by deploy_gate.unmatched. An ambiguous match is always
// rejected: autopilot knows the deploy and cannot tell which flow guards it.
func DecideUnmatched(cfg config.DeployGate, req Request, m Matched) Decision {
	what := fmt.Sprintf("deploy of %s to %s", short(req.SHA, 7), req.Environment)
	if !cfg.Gates(req.Environment) {
		return decision(Ignore, EnvNotGated, 0, fmt.Sprintf("environment %q is not listed under deploy_gate.environments; autopilot does not gate its deploys", req.Environment))
	}
	if len(m.Ambiguous) > 1 {
		return decision(Reject, Ambiguous, 0, fmt.Sprintf("Rejected the %s: its pull requests link the autopilot issues %s; deploy one issue's work at a time.", what, issueList(m.Ambiguous)))
	}
	if cfg.Unmatched == config.UnmatchedReject {
		return decision(Reject, Unmatched, 0, fmt.Sprintf("Rejected the %s: it matches no autopilot issue (no dispatched run, no pull request linking one), and deploy_gate.unmatched is reject.", what))
	}
	return decision(Ignore, Unmatched, 0, fmt.Sprintf("The %s matches no autopilot issue; autopilot does not gate it (deploy_gate.unmatched: ignore).", what))
}

func decision(v Verdict, r Reason, issue int, comment string) Decision {
	return Decision{Verdict: v, Reason: r, Issue: issue, Comment: comment}
}

// question builds the deploy Choose for a request.
func question(kind state.GateKind, req Request) *Question {
	sha, env := short(req.SHA, 7), req.Environment
	details := []string{"Commit: " + req.SHA}
	if req.Ref != "" {
		details = append(details, "Ref: "+req.Ref)
	}
	if req.RunID != 0 {
		details = append(details, fmt.Sprintf("Workflow run: %d", req.RunID))
	}
	return &Question{
		Kind:      kind,
		Title:     fmt.Sprintf("Deploy %s to %s?", sha, env),
		Details:   details,
		Options:   []string{fmt.Sprintf("approve: deploy %s to %s", sha, env), "reject: GitHub fails the deployment job"},
		Recommend: fmt.Sprintf("every gate of the flow passed on %s, the commit being deployed", sha),
	}
}

// passedOn reports whether the flow's gates passed on sha: some linked
// PR's merge gate passed at that head. Otherwise it lists the (short)
// heads they passed on instead.
func passedOn(st *state.State, sha string) (bool, []string) {
	var older []string
	for _, pc := range st.PRChecks {
		if pc.GateHead == "" {
			continue
		}
		if sha != "" && strings.EqualFold(pc.GateHead, sha) {
			return true, nil
		}
		older = append(older, short(pc.GateHead, 7))
	}
	return false, older
}

// answered returns the newest answer to the deploy question of kind.
func answered(st *state.State, kind state.GateKind) (state.Decision, bool) {
	for i := len(st.Decisions) - 1; i >= 0; i-- {
		if d := st.Decisions[i]; strings.HasSuffix(d.Gate, "-"+string(kind)) {
			return d, true
		}
	}
	return state.Decision{}, false
}

// answeredBy says who decided the deploy question d answered: the person
// who answered, with the decision's reason (under an approver policy, who
// voted and why they count: "decided by 2 of 2: @ada via comment (...)"),
// or that it expired (on_expire). The reason is escaped: it mentions
// nobody.
func answeredBy(d state.Decision, word, ref string) string {
	if d.By == approvals.ExpiryActor {
		return fmt.Sprintf("the deploy question on %s %s", ref, textsafe.Escape(d.Reason))
	}
	s := fmt.Sprintf("@%s answered %s on %s", d.By, word, ref)
	if d.Reason != "" {
		s += " (" + textsafe.Escape(d.Reason) + ")"
	}
	return s
}

// reachedByAnswer reports whether the current step was entered by a
// person's answer: an answer (other than to a deploy question) at or after
// the newest completed step. An answer's time is its comment's (GitHub's
// whole seconds), a completion's the engine's clock, so they compare at
// whole seconds.
func reachedByAnswer(st *state.State) bool {
	if len(st.Completed) == 0 {
		return false
	}
	last := st.Completed[len(st.Completed)-1].At.Truncate(time.Second)
	for i := len(st.Decisions) - 1; i >= 0; i-- {
		d := st.Decisions[i]
		if isDeployGateID(d.Gate) {
			continue
		}
		return !d.At.Before(last)
	}
	return false
}

// isDeployGateID reports whether a gate id ("g<seq>-<kind>") is a deploy
// question's.
func isDeployGateID(id string) bool {
	_, kind, ok := strings.Cut(id, "-")
	return ok && IsKind(state.GateKind(kind))
}

func issueRef(st *state.State) string {
	if st.Repo == "" {
		return fmt.Sprintf("#%d", st.Issue)
	}
	return fmt.Sprintf("%s#%d", st.Repo, st.Issue)
}

func issueList(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprintf("#%d", n)
	}
	return strings.Join(parts, ", ")
}

func short(sha string, n int) string {
	if len(sha) > n {
		return sha[:n]
	}
	return sha
}
