// Package choose renders autopilot's Choose decision blocks (options A–D
// with a recommendation, posted as their own comment behind a hidden gate
// marker). The status banner of the state comment is internal/banner.
//
// It only renders and validates text. It must never parse replies (that is
// internal/grammar), decide what an option does, or perform I/O. Every text
// it is given is shown inside a code fence and is passed through
// textsafe.Code, so no input can close the fence or forge a marker.
package choose

import (
	"errors"
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/state/marker"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// Limits on the parts of a Choose block, in characters. They keep a block
// readable and far below GitHub's body limit.
const (
	MaxTitle   = 200
	MaxOption  = 300
	MaxDetail  = 500
	MaxReason  = 1000
	MaxDetails = 20
	MaxGateID  = 64
)

// Letters are the option letters, in the order options must use them.
const Letters = "ABCD"

// choiceRule separates the parts of a Choose block (seed 002).
const choiceRule = "══════════════════════════════════════"

// ReplyHint is the last line of every Choose block.
const ReplyHint = "Reply with the letter (e.g. `A`) as the first line of a comment, here or on the linked PR."

// Option is one choice of a Choose block.
type Option struct {
	Letter string // "A".."D"
	Text   string // one line; shown as " A) <Text>"
}

// Block is a Choose block. Title is given whole ("DECISION REQUIRED: …",
// "SKILL FAILED: implement — 3 consecutive failures", "Jira authentication
// failed", "RECOVERY: …", "ROLLBACK: Re-run plan?"). Details are lines shown
// between the title and the options ("Step: 5 — Implement"). Reason may
// span several lines; every other text is one line.
//
// Texts are shown inside a code fence, so callers escape user text with
// textsafe.Code (not textsafe.Escape, whose HTML entities would show
// literally). Render applies textsafe.Code again; it is idempotent.
type Block struct {
	GateID    string
	Title     string
	Details   []string
	Options   []Option
	Recommend string // letter of the recommended option
	Reason    string // why; follows "Recommendation: X — "
}

// ErrInvalid is wrapped by every error Validate returns.
var ErrInvalid = errors.New("invalid choose block")

// Validate checks the rules of seed 002: a valid gate id, a non-empty
// one-line title, 2–4 one-line options lettered A, B, C, D in order, a
// recommendation naming one of them and a non-empty reason, all within the
// length limits above.
func (b Block) Validate() error {
	if err := ValidGateID(b.GateID); err != nil {
		return err
	}
	if err := checkLine("title", b.Title, MaxTitle); err != nil {
		return err
	}
	if len(b.Details) > MaxDetails {
		return invalid("%d detail lines, at most %d allowed", len(b.Details), MaxDetails)
	}
	for i, d := range b.Details {
		if err := checkLine(fmt.Sprintf("detail %d", i+1), d, MaxDetail); err != nil {
			return err
		}
	}
	if n := len(b.Options); n < 2 || n > len(Letters) {
		return invalid("%d options, want 2 to %d", n, len(Letters))
	}
	recommended := false
	for i, o := range b.Options {
		if want := Letters[i : i+1]; o.Letter != want {
			return invalid("option %d has letter %q, want %q", i+1, o.Letter, want)
		}
		if err := checkLine("option "+o.Letter, o.Text, MaxOption); err != nil {
			return err
		}
		recommended = recommended || o.Letter == b.Recommend
	}
	if !recommended {
		return invalid("recommendation %q is not one of the options", b.Recommend)
	}
	if strings.TrimSpace(b.Reason) == "" {
		return invalid("recommendation reason is empty")
	}
	if n := textsafe.Len(b.Reason); n > MaxReason {
		return invalid("recommendation reason has %d characters, at most %d allowed", n, MaxReason)
	}
	return nil
}

func checkLine(what, s string, max int) error {
	switch {
	case strings.TrimSpace(s) == "":
		return invalid("%s is empty", what)
	case strings.ContainsAny(s, "\r\n\u2028\u2029"):
		return invalid("%s spans several lines", what)
	case textsafe.Len(s) > max:
		return invalid("%s has %d characters, at most %d allowed", what, textsafe.Len(s), max)
	}
	return nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// ValidGateID checks a gate id: 1–64 characters of [a-z0-9-].
func ValidGateID(id string) error {
	if id == "" || len(id) > MaxGateID {
		return invalid("gate id %q must have 1 to %d characters", textsafe.Clip(id, 80), MaxGateID)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return invalid("gate id %q may only hold a-z, 0-9 and '-'", textsafe.Clip(id, 80))
		}
	}
	return nil
}

// Marker returns the hidden marker line of a gate comment,
// "<!-- autopilot:gate <id> -->". An invalid id is mapped to a valid one
// (other characters become "-"), so the marker can never break out.
func Marker(id string) string {
	return marker.Build(marker.Gate, safeID(id))
}

func safeID(id string) string {
	if ValidGateID(id) == nil {
		return id
	}
	var b strings.Builder
	for _, r := range strings.ToLower(id) {
		if b.Len() == MaxGateID {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "invalid"
	}
	return b.String()
}

// GateID extracts the gate id from a posted Choose comment: the first line
// must be exactly the marker written by Render, with a valid id.
func GateID(body string) (string, bool) {
	line, _, _ := strings.Cut(body, "\n")
	line = strings.TrimSuffix(line, "\r")
	id, ok := marker.Args(line, marker.Gate)
	if !ok || ValidGateID(id) != nil {
		return "", false
	}
	return id, true
}

// Width is the widest line of a Choose block, in display columns: GitHub
// shows a code block of about this width on an issue page without a
// horizontal scroll bar. Longer lines wrap at spaces.
const Width = 80

// Render returns the comment body of the block: the marker line, the block
// in a ```text fence, then ReplyHint. Lines longer than Width wrap at
// spaces (an option's continuation lines hang under its text). Call
// Validate first; Render never fails, and on an invalid block it still
// produces a safe (if odd) body.
func (b Block) Render() string {
	var s strings.Builder
	line := func(text string) { s.WriteString(wrap(" "+text, " ") + "\n") }
	rule := func() { s.WriteString(choiceRule + "\n") }

	s.WriteString(Marker(b.GateID) + "\n```text\n")
	rule()
	line(clean(b.Title, MaxTitle))
	rule()
	if len(b.Details) > 0 {
		for i, d := range b.Details {
			if i == MaxDetails {
				break
			}
			line(clean(d, MaxDetail))
		}
		rule()
	}
	for _, o := range b.Options {
		s.WriteString(wrap(" "+clean(o.Letter, 1)+") "+clean(o.Text, MaxOption), "    ") + "\n")
	}
	rule()
	reason := strings.Split(textsafe.Clip(b.Reason, MaxReason), "\n")
	first := "Recommendation: " + clean(b.Recommend, 1)
	if r := clean(reason[0], MaxReason); r != "" {
		first += " — " + r
	}
	line(first)
	for _, r := range reason[1:] {
		if r = clean(r, MaxReason); r != "" {
			line(r)
		}
	}
	rule()
	s.WriteString("```\n" + ReplyHint)
	return s.String()
}

// clean makes one line of caller text safe inside the fence.
func clean(s string, max int) string {
	return strings.TrimSpace(textsafe.Code(textsafe.Clip(s, max)))
}

// wrap breaks a line at spaces so that no line is wider than Width; each
// continuation line starts with hang. A word wider than the room left stays
// whole on its own line.
func wrap(text, hang string) string {
	if textsafe.DisplayWidth(text) <= Width {
		return text
	}
	lead := len(text) - len(strings.TrimLeft(text, " "))
	words := strings.Fields(text)
	var out strings.Builder
	cur := text[:lead]
	empty := true
	for _, w := range words {
		if !empty && textsafe.DisplayWidth(cur)+1+textsafe.DisplayWidth(w) > Width {
			out.WriteString(cur + "\n")
			cur, empty = hang, true
		}
		if !empty {
			cur += " "
		}
		cur += w
		empty = false
	}
	out.WriteString(cur)
	return out.String()
}
