package approvals

import (
	"fmt"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// ExpiryActor is the author of the decision an expired question makes
// (on_expire: reject or default).
const ExpiryActor = "autopilot"

// Due is what the time rules ask for at one moment. Each deadline is due
// once: the ballot records what was sent (Mark), so a retry or a second
// replica finds nothing left to do.
type Due struct {
	Remind   bool // one comment mentioning the approvers
	Escalate bool // one comment mentioning escalate_to
	Expire   bool // the gate is decided by on_expire
}

// Any reports whether something is due.
func (d Due) Any() bool { return d.Remind || d.Escalate || d.Expire }

// Deadlines says what is due at now for a gate opened at opened. Both
// times are the state's recorded clock. Once the gate has expired, a
// reminder or an escalation not sent yet is not sent any more.
func Deadlines(p config.Approval, opened, now time.Time, b state.Ballot) Due {
	waited := now.Sub(opened)
	if p.ExpireAfter > 0 && waited >= time.Duration(p.ExpireAfter) {
		return Due{Expire: true}
	}
	return Due{
		Remind:   p.RemindAfter > 0 && waited >= time.Duration(p.RemindAfter) && b.Reminded.IsZero(),
		Escalate: len(p.EscalateTo) > 0 && p.Escalation() > 0 && waited >= p.Escalation() && b.Escalated.IsZero(),
	}
}

// Mark records on the ballot that what d asked for was sent at now.
func Mark(b state.Ballot, d Due, now time.Time) state.Ballot {
	if d.Remind {
		b.Reminded = now
	}
	if d.Escalate {
		b.Escalated = now
	}
	return b
}

// Expiry is the option an expired gate takes under on_expire, or stop
// when the run stops instead: on_expire: stop, a reject with no rejecting
// option, a default with no recommended option.
func Expiry(p config.Approval, g Gate) (letter string, stop bool) {
	switch p.OnExpire {
	case config.ExpireReject:
		for _, o := range g.Options {
			if o.Rejecting {
				return o.Letter, false
			}
		}
	case config.ExpireDefault:
		for _, o := range g.Options {
			if o.Letter == g.Recommend {
				return o.Letter, false
			}
		}
	}
	return "", true
}

// Status is the line the banner and the PR check show for a gate with a
// policy: "waiting 2 d 4 h; reminder sent; expires in 5 d".
func Status(p config.Approval, opened, now time.Time, b state.Ballot) string {
	waited := now.Sub(opened)
	parts := []string{"waiting " + Span(waited)}
	switch {
	case !b.Reminded.IsZero():
		parts = append(parts, "reminder sent")
	case p.RemindAfter > 0:
		parts = append(parts, "reminder in "+Span(time.Duration(p.RemindAfter)-waited))
	}
	if !b.Escalated.IsZero() {
		parts = append(parts, "escalated to "+strings.Join(mentions(p.EscalateTo), ", "))
	}
	if p.ExpireAfter > 0 {
		parts = append(parts, "expires in "+Span(time.Duration(p.ExpireAfter)-waited))
	}
	return strings.Join(parts, "; ")
}

// Span writes a length of time for people, to its two largest units:
// "2 d 4 h", "5 d", "3 h 10 min", "45 min".
func Span(d time.Duration) string {
	if d < time.Minute {
		return "under a minute"
	}
	days, hours, mins := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case days > 0 && hours > 0:
		return fmt.Sprintf("%d d %d h", days, hours)
	case days > 0:
		return fmt.Sprintf("%d d", days)
	case hours > 0 && mins > 0:
		return fmt.Sprintf("%d h %d min", hours, mins)
	case hours > 0:
		return fmt.Sprintf("%d h", hours)
	}
	return fmt.Sprintf("%d min", mins)
}

// Reminder is the reminder comment's text: it mentions the listed users
// who have not voted and the teams (code owners are named, not mentioned:
// who they are is read when a vote comes in).
func Reminder(p config.Approval, b state.Ballot, question string, waited time.Duration) string {
	who := people(p, &b, "code owners of the changed files")
	if len(who) == 0 {
		who = []string{"approvers"}
	}
	return fmt.Sprintf("⏰ Reminder: **%s** has waited %s. %s: %s. Answer with the option's letter in a comment.",
		question, Span(waited), strings.Join(who, ", "), Line(p, b))
}

// Escalation is the escalation comment's text, mentioning escalate_to.
func Escalation(p config.Approval, question string, waited time.Duration) string {
	return fmt.Sprintf("⏫ Escalation: **%s** has waited %s without a decision. %s: please decide, or find an approver.",
		question, Span(waited), strings.Join(mentions(p.EscalateTo), ", "))
}

func mentions(who []string) []string {
	out := make([]string, len(who))
	for i, w := range who {
		out[i] = "@" + bare(w)
	}
	return out
}

// Expired is the comment an expired gate posts: what on_expire did.
func Expired(p config.Approval, question string, waited time.Duration, letter, text string, stop bool) string {
	head := fmt.Sprintf("⌛ Expired: **%s** waited %s without a decision", question, Span(waited))
	if stop {
		return head + fmt.Sprintf(" (on_expire: %s), so the run stops. `/autopilot resume` asks again.", p.OnExpire)
	}
	return head + fmt.Sprintf("; on_expire: %s chooses **%s** — %s.", p.OnExpire, letter, text)
}
