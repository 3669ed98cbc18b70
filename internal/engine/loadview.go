package engine

import (
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/marker"
)

// What a load of an issue found, decided from data: whose comments are
// the bot's, which of an untrusted bot's markers still count, whether an
// edited state comment's signed block is restored, whether the labels
// show a run whose state is gone, and what the pass does about it.

// Author is what a comment shows of its author.
type Author struct {
	Login string
	// Bot: GitHub marks the account as a Bot.
	Bot bool
	// AppID is performed_via_github_app.id (0 when none).
	AppID int64
}

// BotIdentity is the bot a pass trusts: its login and, for an App, its id
// (0: any, the Action's GITHUB_TOKEN).
type BotIdentity struct {
	Login string
	AppID int64
}

// TrustedAuthor reports whether a comment by a was written by the
// configured bot: the login must match, GitHub must mark the account as a
// Bot (a User account that merely carries the bot's name is not trusted),
// and, for an App, the comment must have been made through that App.
func TrustedAuthor(a Author, bot BotIdentity) bool {
	if !strings.EqualFold(a.Login, bot.Login) || !a.Bot {
		return false
	}
	return bot.AppID == 0 || a.AppID == bot.AppID
}

// noticePrefix starts the marker of a one-off notice (inputs.notice).
var noticePrefix = marker.Start(marker.Notice)

// UntrustedMarkerCounts reports whether the marker (first line) of a
// comment the pass does not trust still counts as posted: a notice this
// bot posted under an identity it does not trust (a wrong app id or bot
// login) does, so a misconfiguration does not become a notice loop. Other
// markers stay trusted-only (a person could otherwise suppress a gate).
func UntrustedMarkerCounts(first string, bot bool) bool {
	return bot && strings.HasPrefix(first, noticePrefix)
}

// LabelsShowRun reports whether an issue's labels show that a run existed
// (a step or status label): without a state, the state was lost.
func LabelsShowRun(labels []string) bool {
	for _, l := range labels {
		if strings.HasPrefix(l, "autopilot/step:") || strings.HasPrefix(l, "autopilot/status:") {
			return true
		}
	}
	return false
}

// Restores reports whether the signed machine block of an edited state
// comment (restorable) becomes the state in place of the newest verified
// one (st): unless a verified state is newer.
func Restores(st, restorable *state.State) bool {
	return restorable != nil && (st == nil || restorable.Version >= st.Version)
}

// LoadFound is what a load found about the state.
type LoadFound struct {
	// State is the state as read (the restorable one when Restores).
	State *state.State
	// Restorable is the edited comment's signed state being restored (nil:
	// none).
	Restorable *state.State
	// StateComment is the id of the state comment.
	StateComment int64
	// Tampered describes a state comment that failed verification.
	Tampered string
	// MaxVersion is the highest state version the bot's comments name.
	MaxVersion int64
	// Lost: the labels show a run, and no state was found.
	Lost bool
}

// Recovery is what a pass does about tampered or lost state before any
// input is applied.
type Recovery struct {
	// Event is what the engine is told (nil: nothing).
	Event events.Event
	// Rollback: the state read is older than the bot's own comments.
	Rollback bool
	Note     string
}

// Recover says what the state as read needs: restoring the last good state
// over an edited comment, re-applying the comments since a state older
// than the bot's comments, or pausing on a lost one.
func Recover(f LoadFound) Recovery {
	if f.Restorable != nil {
		// Restore the last good state over the edited comment (the engine
		// says so once).
		return Recovery{Note: "restored state after an edit: " + f.Tampered,
			Event: events.Recovered{Restored: true, Comment: f.StateComment, Version: f.Restorable.Version}}
	}
	if s := f.State; s != nil && s.Version < f.MaxVersion {
		// The bot already posted comments from a newer state than this one:
		// an older, validly signed body was put back into the comment. The
		// comments since are applied again (the ledger lacks them; effects
		// are idempotent by marker) and the next version goes above every
		// version the bot's comments name, so versions never go back.
		return Recovery{Rollback: true, Note: fmt.Sprintf("state v%d is older than the bot's comments (v%d): comments re-applied", s.Version, f.MaxVersion)}
	}
	if f.State == nil && (f.Lost || f.Tampered != "") {
		why := "deleted"
		if f.Tampered != "" {
			why = "modified so that it no longer verifies"
		}
		return Recovery{Note: "paused: state lost (" + why + ")", Event: events.Recovered{Lost: true, Deleted: f.Tampered == ""}}
	}
	return Recovery{}
}
