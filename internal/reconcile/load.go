package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// loaded is what one read of an issue found.
type loaded struct {
	issue    forge.Issue
	comments []forge.Comment
	// human are comments not written by the bot.
	human []forge.Comment
	state *state.State
	// stateComment is the trusted state comment (nil when none).
	stateComment *forge.Comment
	// markers holds the first line of every bot comment (idempotency).
	markers map[string]forge.Comment
	// tampered describes a state comment that failed verification.
	tampered string
	// restorable is the machine-block state of an edited comment.
	restorable *state.State
	// lost is true when labels say a run existed but no state was found.
	lost bool
}

// trusted reports whether a comment was written by the configured bot: the
// login must match, GitHub must mark the account as a Bot (a User account
// that merely carries the bot's name is not trusted), and, for an App, the
// comment must have been made through that App.
func (r *Reconciler) trusted(c forge.Comment) bool {
	if !strings.EqualFold(c.Author.Login, r.o.BotLogin) || !c.Author.IsBot() {
		return false
	}
	if r.o.AppID != 0 && c.AppID != r.o.AppID {
		return false
	}
	return true
}

// load reads the issue (unless the trigger carries a fresh snapshot) and
// all its comments, and finds the newest trusted state.
func (r *Reconciler) load(ctx context.Context, number int, snap *forge.Issue) (*loaded, error) {
	var is forge.Issue
	if snap != nil {
		is = *snap
	} else {
		var err error
		if is, err = r.o.Forge.GetIssue(ctx, number); err != nil {
			return nil, fmt.Errorf("read issue #%d: %w", number, err)
		}
	}
	cs, err := r.o.Forge.ListComments(ctx, number)
	if err != nil {
		return nil, fmt.Errorf("list comments of #%d: %w", number, err)
	}
	ld := &loaded{issue: is, comments: cs, markers: map[string]forge.Comment{}}
	want := state.Want{Repo: r.o.Forge.Repo(), Issue: number, Key: r.o.StateKey}
	for i := range cs {
		c := cs[i]
		if !r.trusted(c) {
			ld.human = append(ld.human, c)
			continue
		}
		first, _, _ := strings.Cut(c.Body, "\n")
		first = strings.TrimSpace(first)
		if strings.HasPrefix(first, "<!-- autopilot:") {
			if _, dup := ld.markers[first]; !dup {
				ld.markers[first] = c
			}
		}
		if first != state.Marker {
			continue
		}
		s, err := state.Parse(c.Body, want)
		switch {
		case err == nil:
			if ld.state == nil || s.Version > ld.state.Version {
				ld.state, ld.stateComment = s, &cs[i]
			}
		case errors.Is(err, state.ErrEdited) && s != nil:
			// The human part was edited; the signed machine block is intact.
			if ld.restorable == nil || s.Version > ld.restorable.Version {
				ld.restorable = s
				ld.tampered = fmt.Sprintf("comment %d: %v", c.ID, err)
				cc := cs[i]
				ld.stateComment = &cc
			}
		default:
			r.o.Logger.Warn("state comment refused", "issue", number, "comment", c.ID, "err", err)
			if ld.tampered == "" {
				ld.tampered = fmt.Sprintf("comment %d: %v", c.ID, err)
			}
		}
	}
	if ld.restorable != nil && (ld.state == nil || ld.restorable.Version >= ld.state.Version) {
		ld.state = ld.restorable
	} else {
		ld.restorable = nil
	}
	if ld.state == nil {
		for _, l := range is.Labels {
			if strings.HasPrefix(l, "autopilot/step:") || strings.HasPrefix(l, "autopilot/status:") {
				ld.lost = true
			}
		}
	}
	return ld, nil
}

// gatePosted returns when the open gate's comment appeared, if visible.
func (ld *loaded) gatePosted(s *state.State) time.Time {
	if s == nil || s.Gate == nil {
		return time.Time{}
	}
	if c, ok := ld.markers["<!-- autopilot:gate "+s.Gate.ID+" -->"]; ok {
		return c.CreatedAt
	}
	return time.Time{}
}

// recover handles tampered or lost state before any input is applied.
func (ru *run) recover() error {
	ld := ru.loaded
	if ld.restorable != nil {
		// Restore the last good state over the edited comment and say so once.
		ru.changed = true
		ru.note("tamper-"+fmt.Sprint(ld.stateComment.ID)+"-v"+fmt.Sprint(ld.restorable.Version),
			"⚠️ The autopilot state comment was edited by someone other than the bot. Edits are not acted on: the last good state (version "+fmt.Sprint(ld.restorable.Version)+") was restored.")
		ru.notes = append(ru.notes, "restored state after an edit: "+ld.tampered)
		return nil
	}
	if ld.state == nil && (ld.lost || ld.tampered != "") {
		why := "deleted"
		if ld.tampered != "" {
			why = "modified so that it no longer verifies"
		}
		ru.note("state-lost", "⚠️ The autopilot state comment of this issue was "+why+", so autopilot has paused here rather than guess. Nothing further happens on this issue (Jira tasks are never re-created). To start over, remove and re-add the `"+ru.r.o.TriggerLabel+"` label.")
		ru.notes = append(ru.notes, "paused: state lost ("+why+")")
	}
	return nil
}

// note queues a one-off notice, posted unless its marker already exists.
func (ru *run) note(key, text string) {
	marker := "<!-- autopilot:notice " + key + " -->"
	ru.effects = append(ru.effects, state.Effect{Kind: "comment", Marker: marker, Body: marker + "\n" + text})
}
