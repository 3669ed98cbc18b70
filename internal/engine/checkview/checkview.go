// Package checkview decides the PR check the bot shows on each trusted
// linked PR's head (PRODUCT §14): a pure function of the configuration,
// the answer permission and the issue's state. The engine records what was
// shown and the clicks on its buttons; the edges create the check runs.
package checkview

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/prose"
	"github.com/autopilot-dev/autopilot/internal/flow"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Check run statuses and conclusions the PR check uses (PRODUCT §14).
const (
	CheckInProgress     = "in_progress"
	CheckCompleted      = "completed"
	CheckSuccess        = "success"
	CheckFailure        = "failure"
	CheckNeutral        = "neutral"
	CheckActionRequired = "action_required"
)

// MaxCheckActions is GitHub's limit of requested actions on a check run; a
// fourth option stays on the Choose comment only.
const MaxCheckActions = 3

// CheckRun is the check run the bot wants on one trusted linked PR's head:
// data the edges create on GitHub. It never holds URLs, so its Hash is known
// before the comments it links to exist (those are fixed per gate and
// state comment); Summary adds them.
type CheckRun struct {
	PR      int
	HeadSHA string
	Name    string
	Status  string
	// Conclusion is set when Status is completed.
	Conclusion string
	Title      string
	// Banner, Step and Waiting make up the summary.
	Banner  string
	Step    string
	Waiting string
	// Gate is the open gate's id: its Choose comment is the details page.
	Gate    string
	Actions []CheckAction
	// ExternalID names the issue ("autopilot#12"), so a click on a button
	// finds its issue.
	ExternalID string
}

// CheckAction is one requested action (a button) of a check run.
type CheckAction struct {
	Label       string // at most 20 characters
	Description string // at most 40 characters
	Identifier  string // at most 20 characters: GateToken(gate) + "." + letter
}

// CheckLinks are the pages a check run's summary links to.
type CheckLinks struct {
	State  string // the state comment
	Choose string // the open Choose comment ("" when none or unknown)
}

// Hash identifies what the check run shows; an unchanged hash means no API
// call.
func (c CheckRun) Hash() string {
	var b strings.Builder
	for _, f := range []string{strconv.Itoa(c.PR), c.HeadSHA, c.Name, c.Status, c.Conclusion, c.Title, c.Banner, c.Step, c.Waiting, c.Gate, c.ExternalID} {
		b.WriteString(f)
		b.WriteByte(0)
	}
	for _, a := range c.Actions {
		b.WriteString(a.Label + "\x01" + a.Description + "\x01" + a.Identifier + "\x00")
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:8])
}

// Summary renders the check run's Markdown summary.
func (c CheckRun) Summary(l CheckLinks) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**\n\n", c.Title)
	if c.Banner != "" {
		fmt.Fprintf(&b, "```\n%s\n```\n\n", strings.TrimRight(c.Banner, "\n"))
	}
	fmt.Fprintf(&b, "- Current step: %s\n", c.Step)
	fmt.Fprintf(&b, "- Waiting for: %s\n", c.Waiting)
	if l.Choose != "" {
		fmt.Fprintf(&b, "- Open question: %s\n", l.Choose)
	}
	if l.State != "" {
		fmt.Fprintf(&b, "- State: %s\n", l.State)
	}
	if c.Gate != "" && len(c.Actions) == 0 {
		b.WriteString("\nAnswer on the issue with the option's letter.\n")
	} else if len(c.Actions) > 0 {
		b.WriteString("\nAnswer with a button above or with the option's letter on the issue.\n")
	}
	return b.String()
}

// CheckOptions say how the check runs are shown.
type CheckOptions struct {
	// Buttons: requested actions are offered (App mode only: GitHub sends
	// the click to the App that created the check run).
	Buttons bool
}

// CheckName is the configured name of the PR check.
func CheckName(cfg *config.Config) string {
	if cfg != nil && cfg.CheckName != "" {
		return cfg.CheckName
	}
	return config.DefaultCheckName
}

// ExternalID is the check run's external_id for an issue.
func ExternalID(issue int) string { return "autopilot#" + strconv.Itoa(issue) }

// QueueExternalID is the external_id of the check run the bot writes on a
// merge queue's commit for PR pr (it carries no buttons, so it names no
// issue).
func QueueExternalID(pr int) string { return "autopilot-queue#" + strconv.Itoa(pr) }

// OwnExternalID reports whether s is an external_id the bot gives its
// check runs (ExternalID or QueueExternalID).
func OwnExternalID(s string) bool {
	if _, ok := IssueOfExternalID(s); ok {
		return true
	}
	n, err := strconv.Atoi(strings.TrimPrefix(s, "autopilot-queue#"))
	return strings.HasPrefix(s, "autopilot-queue#") && err == nil && n > 0
}

// IssueOfExternalID parses ExternalID's output.
func IssueOfExternalID(s string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "autopilot#"))
	if !strings.HasPrefix(s, "autopilot#") || err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// GateToken is the short, unique form of a gate id used in button
// identifiers: gate ids start with "g<seq>", unique per issue.
func GateToken(gateID string) string {
	tok, _, _ := strings.Cut(gateID, "-")
	if len(tok) > 16 {
		tok = tok[:16]
	}
	return tok
}

// DesiredChecks returns, for answer permission answer, the check run the bot wants on each trusted linked
// PR's recorded head, in record order. A PR that is not trusted on its
// head gets none: its check would vouch for code nobody with permission
// stands behind.
func DesiredChecks(cfg *config.Config, answer access.Level, s *state.State, o CheckOptions) []CheckRun {
	if s == nil {
		return nil
	}
	var out []CheckRun
	for _, r := range s.PRChecks {
		if r.Trusted && r.Head != "" {
			out = append(out, desiredCheck(cfg, answer, s, r, o))
		}
	}
	return out
}

func desiredCheck(cfg *config.Config, answer access.Level, s *state.State, r state.PRCheck, o CheckOptions) CheckRun {
	c := CheckRun{PR: r.PR, HeadSHA: r.Head, Name: CheckName(cfg), ExternalID: ExternalID(s.Issue), Status: CheckCompleted}
	if cfg != nil {
		c.Banner = prose.Banner(cfg.All, s)
	}
	c.Step = s.Name
	if s.Run == state.RunDone {
		c.Step = "none (the run is complete)"
	}
	passed, onHead := mergeGate(cfg, s, r)
	switch {
	case s.Gate != nil && (s.Run == state.RunAwaitingDecision || s.Run == state.RunFailed):
		c.Conclusion = CheckActionRequired
		c.Title = prose.OneLine(s.Gate.Title, 120)
		c.Waiting = fmt.Sprintf("an answer (%s) from someone with at least %s permission", strings.Join(strings.Split(s.Gate.Letters(), ""), ", "), answer)
		c.Gate = s.Gate.ID
		if o.Buttons {
			for _, op := range s.Gate.Options {
				if len(c.Actions) == MaxCheckActions {
					break
				}
				c.Actions = append(c.Actions, CheckAction{
					Label:       prose.Clip(op.Letter+": "+op.Text, 20),
					Description: prose.Clip(op.Text, 40),
					Identifier:  GateToken(s.Gate.ID) + "." + op.Letter,
				})
			}
		}
	case passed && onHead:
		c.Conclusion = CheckSuccess
		c.Title = "Merge gate passed"
		c.Waiting = "nothing: this head passed the flow's merge gate"
	case passed:
		c.Conclusion = CheckFailure
		c.Title = "Not reviewed: the head changed after the merge gate passed"
		c.Waiting = "a review of this head (" + prose.Short(r.Head) + ")"
		if slug := MergeGateStep(cfg, s.Flow); s.Review == nil && s.Flow != "review-loop" && slug != "" {
			c.Waiting = "the merge gate step " + slug + " passing again on this head (" + prose.Short(r.Head) + "): `/autopilot back " + slug + "`"
		}
	case s.Run == state.RunFailed || s.Run == state.RunStopped:
		c.Conclusion = CheckFailure
		c.Title = "The run " + string(s.Run)
		if s.Stop != nil {
			c.Title += ": " + string(s.Stop.Reason)
		}
		c.Waiting = prose.OneLine(prose.NextAction(s), 160)
	case s.Run == state.RunDone:
		c.Conclusion = CheckNeutral
		c.Title = "The run finished without reaching the merge gate"
		c.Waiting = "nothing"
	default:
		c.Status, c.Conclusion = CheckInProgress, ""
		c.Title = "In progress: " + s.Name
		c.Waiting = waitingFor(cfg, answer, s)
	}
	return c
}

// waitingFor says what an active run waits for and from whom.
func waitingFor(cfg *config.Config, answer access.Level, s *state.State) string {
	st := flow.Step{}
	if f := cfg.All[s.Flow]; f != nil {
		st, _ = f.StepAt(s.Step)
	}
	switch st.Evidence {
	case "review":
		return fmt.Sprintf("an approving review of the PR's head by someone other than its author with at least %s permission", answer)
	case "checks":
		return "green checks on the PR's head"
	}
	return prose.OneLine(prose.NextAction(s), 160)
}

// mergeGate reports whether the run passed its merge gate and whether it
// did so on r's head (the review loop's verdicts name the head they judged;
// other flows record each PR's head when the gate step passed: GateHead).
func mergeGate(cfg *config.Config, s *state.State, r state.PRCheck) (passed, onHead bool) {
	head := r.Head
	if s.Review != nil || s.Flow == "review-loop" {
		rl := s.Review
		if rl == nil || rl.ReviewVerdict == nil || !rl.ReviewVerdict.Clean || rl.QAVerdict == nil || !(rl.QAVerdict.Clean || rl.QAVerdict.Skipped) {
			return false, false
		}
		if cfg != nil && cfg.KeepStaleApprovals {
			return true, true
		}
		_, h, ok := VerdictHandoff(rl)
		return true, ok && h.HeadSHA == head
	}
	slug := MergeGateStep(cfg, s.Flow)
	if slug == "" {
		return false, false
	}
	for _, c := range s.Completed {
		if c.Slug == slug && c.Cycle == s.Cycle {
			keep := cfg != nil && cfg.KeepStaleApprovals
			return true, keep || r.GateHead == head
		}
	}
	return false, false
}

// VerdictHandoff is the handoff the review loop's review verdict rests on,
// with the step that recorded it: the one that records the approving
// review the verdict cites (its evidence link). An older approval's
// handoff, or another review step's, never stands in for it.
func VerdictHandoff(rl *state.ReviewLoop) (string, state.Handoff, bool) {
	if rl == nil || rl.ReviewVerdict == nil || rl.ReviewVerdict.Evidence == "" {
		return "", state.Handoff{}, false
	}
	for slug, h := range rl.Handoffs {
		if h.Review != 0 && slices.Contains(h.Links, rl.ReviewVerdict.Evidence) {
			return slug, h, true
		}
	}
	return "", state.Handoff{}, false
}

// MergeGateStep is the step whose completion passes a flow's merge gate:
// merge_gate when the flow has that step, else the step after its last
// implementation step ("" when there is none).
func MergeGateStep(cfg *config.Config, flowName string) string {
	if cfg == nil {
		return ""
	}
	f := cfg.All[flowName]
	if f == nil {
		return ""
	}
	if g := cfg.MergeGate; g != "" && f.Index(g) >= 0 {
		return g
	}
	impl := -1
	for i, st := range f.Steps {
		if st.Implements {
			impl = i
		}
	}
	if impl >= 0 && impl+1 < len(f.Steps) {
		return f.Steps[impl+1].Slug
	}
	return ""
}
