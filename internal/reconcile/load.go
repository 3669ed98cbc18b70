package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile/thread"
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
	// maxSeq is the highest marker number of the bot's comments on this
	// issue ("<kind> <issue>-<seq>" and gate "g<seq>-…"); a run started
	// over numbers its markers above it.
	maxSeq int64
	// maxVersion is the highest state version the bot's comments carry in
	// their version tag: a state below it was rolled back.
	maxVersion int64
	// snapshot: issue came from the event payload, not a fresh read.
	snapshot bool
	// readLabels are the labels the state as read derives (nil without one).
	readLabels []string
	// seen holds the ids of the comments read.
	seen map[int64]bool
	// win is how the thread was read (reread repeats it).
	win thread.Window
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
// what is new in its thread (thread.Reader.Read), and finds the newest trusted
// state.
//
// starting: the trigger starts a run; on an issue that carries none of the
// bot's labels (so no run ever wrote a state) only the first page is read,
// and what lies beyond it is history from before the run.
func (r *Reconciler) load(ctx context.Context, number int, snap *forge.Issue, starting bool) (*loaded, error) {
	is, cs, win, err := r.reader().Read(ctx, number, snap, starting)
	if err != nil {
		return nil, err
	}
	ld := &loaded{issue: is, comments: cs, markers: map[string]forge.Comment{}, snapshot: snap != nil, seen: map[int64]bool{}, win: win}
	want := state.Want{Repo: r.o.Forge.Repo(), Issue: number, Key: r.o.StateKey}
	for i := range cs {
		c := &cs[i]
		ld.seen[c.ID] = true
		if !r.trusted(*c) {
			ld.human = append(ld.human, *c)
			if first := firstLine(c.Body); c.Author.IsBot() && strings.HasPrefix(first, "<!-- autopilot:notice ") {
				// A notice this bot posted under an identity it does not
				// trust (a wrong app id or bot login) still counts as
				// posted: a misconfiguration must not become a notice loop.
				// Other markers stay trusted-only (a person could otherwise
				// suppress a gate).
				ld.mark(first, *c)
			}
			continue
		}
		r.loadOwn(ld, c, want)
	}
	if ld.restorable != nil && (ld.state == nil || ld.restorable.Version >= ld.state.Version) {
		ld.state = ld.restorable
	} else {
		ld.restorable = nil
	}
	if ld.state != nil {
		ld.readLabels = engine.Labels(ld.state)
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

// mark records the first comment seen with a marker.
func (ld *loaded) mark(first string, c forge.Comment) {
	if _, dup := ld.markers[first]; !dup {
		ld.markers[first] = c
	}
}

// loadOwn takes in one of the bot's comments: its marker, the numbers it
// carries, and, for a state comment, the newest state that verifies (or
// the signed machine block of one whose human part was edited).
func (r *Reconciler) loadOwn(ld *loaded, c *forge.Comment, want state.Want) {
	first := firstLine(c.Body)
	if strings.HasPrefix(first, "<!-- autopilot:") {
		ld.mark(first, *c)
		ld.maxSeq = max(ld.maxSeq, markerSeq(first, want.Issue))
		ld.maxVersion = max(ld.maxVersion, taggedVersion(c.Body))
	}
	if first != state.Marker {
		return
	}
	s, err := state.Parse(c.Body, want)
	switch {
	case err == nil:
		if ld.state == nil || s.Version > ld.state.Version {
			ld.state, ld.stateComment = s, c
		}
	case errors.Is(err, state.ErrEdited) && s != nil:
		// The human part was edited; the signed machine block is intact.
		if ld.restorable == nil || s.Version > ld.restorable.Version {
			ld.restorable = s
			ld.tampered = fmt.Sprintf("comment %d: %v", c.ID, err)
			cc := *c
			ld.stateComment = &cc
		}
	default:
		r.o.Logger.Warn("state comment refused", "issue", want.Issue, "comment", c.ID, "err", err)
		if ld.tampered == "" {
			ld.tampered = fmt.Sprintf("comment %d: %v", c.ID, err)
		}
	}
}

// maxMarkerNumber bounds the numbers read from markers and version tags: a
// person with write access can edit the bot's comments, and a huge number
// must not overflow the next version (real ones stay far below).
const maxMarkerNumber = 1 << 40

// versionTagPrefix starts the hidden last line of every comment the bot
// posts, naming the state version written in the same pass.
const versionTagPrefix = "<!-- autopilot:v "

// tagReserve is the room kept for the version tag when a body is cut to
// GitHub's limit (the tag is at most 1+17+13+4 characters).
const tagReserve = 40

func versionTag(v int64) string { return "\n" + versionTagPrefix + strconv.FormatInt(v, 10) + " -->" }

// versionTag is the tag for comments posted by this pass (none before the
// first state write).
func (ru *run) versionTag() string {
	if ru.loaded.state == nil || ru.loaded.state.Version == 0 {
		return ""
	}
	return versionTag(ru.loaded.state.Version)
}

// taggedVersion reads the version tag on the last line of a bot comment.
func taggedVersion(body string) int64 {
	i := strings.LastIndex(body, "\n"+versionTagPrefix)
	if i < 0 {
		return 0
	}
	num, ok := strings.CutSuffix(strings.TrimSpace(body[i+1+len(versionTagPrefix):]), " -->")
	if !ok {
		return 0
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v < 0 || v > maxMarkerNumber {
		return 0
	}
	return v
}

func firstLine(body string) string {
	first, _, _ := strings.Cut(body, "\n")
	return strings.TrimSpace(first)
}

// markerSeq reads the sequence number of a bot comment's marker on issue
// n: "<!-- autopilot:<kind> <n>-<seq> -->" or "<!-- autopilot:gate g<seq>-<kind> -->";
// 0 for any other marker.
func markerSeq(marker string, n int) int64 {
	inner, ok := strings.CutPrefix(marker, "<!-- autopilot:")
	if !ok {
		return 0
	}
	inner, ok = strings.CutSuffix(inner, " -->")
	if !ok {
		return 0
	}
	kind, arg, ok := strings.Cut(inner, " ")
	if !ok {
		return 0
	}
	var num string
	if kind == "gate" {
		rest, ok := strings.CutPrefix(arg, "g")
		if !ok {
			return 0
		}
		num, _, _ = strings.Cut(rest, "-")
	} else {
		issue, seq, ok := strings.Cut(arg, "-")
		if !ok || issue != strconv.Itoa(n) {
			return 0
		}
		num = seq
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v < 0 || v > maxMarkerNumber {
		return 0
	}
	return v
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
		// Restore the last good state over the edited comment (the engine
		// says so once).
		ru.notes = append(ru.notes, "restored state after an edit: "+ld.tampered)
		return ru.apply(engine.Recovered{Restored: true, Comment: ld.stateComment.ID, Version: ld.restorable.Version})
	}
	if s := ld.state; s != nil && s.Version < ld.maxVersion {
		// The bot already posted comments from a newer state than this one:
		// an older, validly signed body was put back into the comment. The
		// comments since are applied again (the ledger lacks them; effects
		// are idempotent by marker) and the next version goes above every
		// version the bot's comments name, so versions never go back.
		ru.rollback = true
		ru.changed = true
		ru.r.o.Logger.Warn("state is older than the bot's comments; re-applying the comments since", "issue", ru.number, "version", s.Version, "comments_version", ld.maxVersion)
		ru.notes = append(ru.notes, fmt.Sprintf("state v%d is older than the bot's comments (v%d): comments re-applied", s.Version, ld.maxVersion))
	}
	if ld.state == nil && (ld.lost || ld.tampered != "") {
		why := "deleted"
		if ld.tampered != "" {
			why = "modified so that it no longer verifies"
		}
		ru.notes = append(ru.notes, "paused: state lost ("+why+")")
		return ru.apply(engine.Recovered{Lost: true, Deleted: ld.tampered == ""})
	}
	return nil
}
