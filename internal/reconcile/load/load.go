// Package load reads what one reconcile pass starts from: the issue, its
// thread (package thread), the newest trusted state comment, the markers
// of the bot's comments (idempotency) and the numbers they carry, and what
// the state comments show (tampered, edited); the engine decides whom to
// trust, which markers count, and restore versus lost (engine/loadview.go).
package load

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/labels"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/reconcile/thread"
	"github.com/autopilot-dev/autopilot/internal/state"
	hidden "github.com/autopilot-dev/autopilot/internal/state/marker"
)

// Loaded is what one read of an issue found.
type Loaded struct {
	Issue    forge.Issue
	Comments []forge.Comment
	// Human are comments not written by the bot.
	Human []forge.Comment
	State *state.State
	// StateComment is the trusted state comment (nil when none).
	StateComment *forge.Comment
	// Markers holds the first line of every bot comment (idempotency).
	Markers map[string]forge.Comment
	// Tampered describes a state comment that failed verification.
	Tampered string
	// Restorable is the machine-block state of an edited comment.
	Restorable *state.State
	// Lost is true when labels say a run existed but no state was found.
	Lost bool
	// MaxSeq is the highest marker number of the bot's comments on this
	// issue ("<kind> <issue>-<seq>" and gate "g<seq>-…"); a run started
	// over numbers its markers above it.
	MaxSeq int64
	// MaxVersion is the highest state version the bot's comments carry in
	// their version tag: a state below it was rolled back.
	MaxVersion int64
	// Snapshot: issue came from the event payload, not a fresh read.
	Snapshot bool
	// ReadLabels are the labels the state as read derives (nil without one).
	ReadLabels []string
	// Seen holds the ids of the comments read.
	Seen map[int64]bool
	// Win is how the thread was read (reread repeats it).
	Win thread.Window
}

// Loader loads one repository's issues.
type Loader struct {
	Forge  forge.Forge
	Now    func() time.Time
	Logger *slog.Logger
	// BotLogin is the only author whose state comments are trusted; AppID,
	// when non-zero, must also match performed_via_github_app.id.
	BotLogin string
	AppID    int64
	StateKey []byte
}

// Reader is the thread reader that finds watermarks with l.
func (l Loader) Reader() thread.Reader {
	return thread.Reader{Forge: l.Forge, Now: l.Now, Logger: l.Logger, Watermark: l.Watermark}
}

// Trusted reports whether a comment was written by the configured bot
// (engine.TrustedAuthor decides from its author).
func (l Loader) Trusted(c forge.Comment) bool {
	return engine.TrustedAuthor(engine.Author{Login: c.Author.Login, Bot: c.Author.IsBot(), AppID: c.AppID}, engine.BotIdentity{Login: l.BotLogin, AppID: l.AppID})
}

// Watermark is the Since of the newest trusted state on the first page
// (zero when there is none; engine.StateWatermark decides).
func (l Loader) Watermark(head []forge.Comment, n int) time.Time {
	return engine.StateWatermark(l.botComments(head), l.want(n))
}

// Load reads the issue (unless the trigger carries a fresh snapshot) and
// what is new in its thread (thread.Reader.Read), and finds the newest trusted
// state.
//
// starting: the trigger starts a run; on an issue that carries none of the
// bot's labels (so no run ever wrote a state) only the first page is read,
// and what lies beyond it is history from before the run.
func (l Loader) Load(ctx context.Context, number int, snap *forge.Issue, starting bool) (*Loaded, error) {
	is, cs, win, err := l.Reader().Read(ctx, number, snap, starting)
	if err != nil {
		return nil, err
	}
	ld := &Loaded{Issue: is, Comments: cs, Markers: map[string]forge.Comment{}, Snapshot: snap != nil, Seen: map[int64]bool{}, Win: win}
	want := l.want(number)
	for _, c := range cs {
		ld.Seen[c.ID] = true
		if !l.Trusted(c) {
			ld.Human = append(ld.Human, c)
			if first := FirstLine(c.Body); engine.UntrustedMarkerCounts(first, c.Author.IsBot()) {
				ld.mark(first, c)
			}
			continue
		}
		ld.markOwn(c, number)
	}
	rs := engine.ReadStates(l.botComments(cs), want)
	for _, r := range rs.Refused {
		l.Logger.Warn("state comment refused", "issue", number, "comment", r.ID, "err", r.Err)
	}
	ld.State, ld.Restorable, ld.Tampered = rs.State, rs.Restorable, rs.Tampered
	for _, c := range cs {
		if c.ID == rs.StateComment && rs.StateComment != 0 {
			cc := c
			ld.StateComment = &cc
		}
	}
	if engine.Restores(ld.State, ld.Restorable) {
		ld.State = ld.Restorable
	} else {
		ld.Restorable = nil
	}
	if ld.State != nil {
		ld.ReadLabels = labels.Labels(ld.State)
	}
	ld.Lost = ld.State == nil && engine.LabelsShowRun(is.Labels)
	return ld, nil
}

// mark records the first comment seen with a marker.
func (ld *Loaded) mark(first string, c forge.Comment) {
	if _, dup := ld.Markers[first]; !dup {
		ld.Markers[first] = c
	}
}

// markOwn takes in one of the bot's comments on issue n: its marker and
// the numbers it carries.
func (ld *Loaded) markOwn(c forge.Comment, n int) {
	first := FirstLine(c.Body)
	if hidden.Is(first) {
		ld.mark(first, c)
		ld.MaxSeq = max(ld.MaxSeq, markerSeq(first, n))
		ld.MaxVersion = max(ld.MaxVersion, taggedVersion(c.Body))
	}
}

// maxMarkerNumber bounds the numbers read from markers and version tags: a
// person with write access can edit the bot's comments, and a huge number
// must not overflow the next version (real ones stay far below).
const maxMarkerNumber = 1 << 40

// versionTagPrefix starts the hidden last line of every comment the bot
// posts, naming the state version written in the same pass.
var versionTagPrefix = hidden.Start(hidden.Version)

// TagReserve is the room kept for the version tag when a body is cut to
// GitHub's limit (the tag is at most 1+17+13+4 characters).
const TagReserve = 40

// VersionTag is the hidden last line naming state version v.
func VersionTag(v int64) string { return "\n" + versionTagPrefix + strconv.FormatInt(v, 10) + " -->" }

// TagOf returns the version tag ending a bot comment's body (with its
// leading newline), or "" when it has none: an edit keeps it.
func TagOf(body string) string {
	if i := strings.LastIndex(body, "\n"+versionTagPrefix); i >= 0 && taggedVersion(body) != 0 {
		return body[i:]
	}
	return ""
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

// FirstLine is a comment's first line, trimmed: the marker of a bot comment.
func FirstLine(body string) string {
	first, _, _ := strings.Cut(body, "\n")
	return strings.TrimSpace(first)
}

// markerSeq reads the sequence number of a bot comment's marker on issue
// n: "<!-- autopilot:<kind> <n>-<seq> -->" or "<!-- autopilot:gate g<seq>-<kind> -->";
// 0 for any other marker.
func markerSeq(marker string, n int) int64 {
	inner, ok := strings.CutPrefix(marker, hidden.Prefix)
	if !ok {
		return 0
	}
	inner, ok = strings.CutSuffix(inner, hidden.Suffix)
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

// Posted are when the bot's comments on the thread were posted, by
// marker (pass.Options.Posted: the engine reads when the open gate's
// comment appeared).
func (ld *Loaded) Posted() map[string]time.Time {
	out := make(map[string]time.Time, len(ld.Markers))
	for m, c := range ld.Markers {
		out[m] = c.CreatedAt
	}
	return out
}
