// Package textsafe makes user-supplied text safe to echo into a comment the
// bot posts, and keeps bodies within GitHub's size limit.
//
// Escaped text can neither mention (@user, @org/team), link (#123, GH-123,
// bare URLs, Markdown links), inject HTML, open or close a code fence, nor
// forge one of autopilot's hidden markers (<!-- ... -->). Truncation and
// splitting never cut a UTF-8 sequence.
//
// The package must never decide what text means: it only transforms strings.
// Escaping is one-way; the machine-readable copy of any text lives elsewhere
// (the state comment's data block), never in the escaped rendering.
package textsafe

import (
	"strings"
	"unicode/utf8"
)

// ZWSP is the zero-width space inserted to break mentions, references,
// fences and markers without changing what a reader sees.
const ZWSP = "\u200b"

const zwsp = '\u200b'

// Escape returns s made safe for Markdown prose: HTML metacharacters and
// Markdown link brackets become entities, and mentions, issue references,
// autolinks and code fences are broken with a zero-width space. Newlines are
// kept (CRLF and lone CR become LF). Invalid UTF-8 becomes U+FFFD; control
// and bidirectional-override characters are dropped.
//
// In detail:
//   - & < > [ ] \ become &amp; &lt; &gt; &lbrack; &rbrack; &bsol;, so no tag,
//     comment (<!--, -->), autolink or Markdown link/image survives;
//   - every @ is followed by U+200B, so "@org/team" does not ping;
//   - "#" or "GH-" (any case) directly followed by a digit gets U+200B
//     after it, so "#12", "owner/repo#12" and "GH-12" do not link;
//   - "://" and "www." get U+200B inside, so bare URLs are not autolinked;
//   - runs of three backticks or tildes get U+200B between them, so no
//     code fence can open or close.
//
// Text shown inside a fenced code block must use Code instead: entities are
// not decoded there and would show literally.
func Escape(s string) string {
	return escape(s, modeMarkdown)
}

// Inline is Escape for a single line: line breaks become spaces. Use it for
// list items and other one-line Markdown contexts.
func Inline(s string) string {
	return escape(s, modeMarkdown|modeOneLine)
}

// Cell is Inline for a Markdown table cell: additionally "|" becomes "\|" so
// the text stays in its column.
func Cell(s string) string {
	return escape(s, modeMarkdown|modeOneLine|modeCell)
}

// Code returns s made safe for one line inside a fenced code block (the
// status banner, Choose blocks, YAML blocks): line breaks become spaces and
// fences, markers (<!--, -->), mentions and references are broken with a
// zero-width space. HTML characters are left alone because code blocks show
// them literally. Code is idempotent, and Code(Escape(s)) == Inline(s).
func Code(s string) string {
	return escape(s, modeOneLine)
}

type mode uint8

const (
	modeMarkdown mode = 1 << iota // entity-escape HTML and link brackets
	modeOneLine                   // line breaks become spaces
	modeCell                      // escape table pipes
)

// escape walks s once, appending to the output and inserting a ZWSP
// wherever the output's tail plus the next rune would form a forbidden
// pattern. Because it looks at the output (ZWSPs included), a ZWSP already
// in place satisfies the rule, which makes the transform idempotent on its
// own output.
func escape(s string, m mode) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	w := tailWriter{b: &b}
	s = strings.ToValidUTF8(s, "\uFFFD")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '\r':
			if i < len(s) && s[i] == '\n' {
				i++
			}
			r = '\n'
		case r == '\u2028' || r == '\u2029':
			r = '\n'
		}
		if r == '\n' || (r == '\t' && m&modeOneLine != 0) {
			if m&modeOneLine != 0 {
				r = ' '
			}
			w.put(r)
			continue
		}
		if dropped(r) {
			continue
		}
		if m&modeMarkdown != 0 {
			if ent, ok := entities[r]; ok {
				w.raw(ent)
				continue
			}
		}
		if r == '|' && m&modeCell != 0 {
			w.raw(`\|`)
			continue
		}
		w.put(r)
	}
	w.finish()
	return b.String()
}

var entities = map[rune]string{
	'&':  "&amp;",
	'<':  "&lt;",
	'>':  "&gt;",
	'[':  "&lbrack;",
	']':  "&rbrack;",
	'\\': "&bsol;",
}

// dropped reports runes removed from echoed text: C0/C1 controls other than
// tab and newline, DEL, and bidirectional embedding/override/isolate marks
// (which can make text read differently from what it is).
func dropped(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// tailWriter appends runes and remembers the last few written runes so it
// can break patterns as they form.
type tailWriter struct {
	b    *strings.Builder
	tail [3]rune // tail[2] is the most recent rune
}

func (w *tailWriter) push(r rune) {
	w.tail[0], w.tail[1], w.tail[2] = w.tail[1], w.tail[2], r
	w.b.WriteRune(r)
}

// raw writes an escape sequence rune by rune, so it too completes or
// breaks patterns (a "@" before "&amp;" still gets its ZWSP).
func (w *tailWriter) raw(s string) {
	for _, r := range s {
		w.put(r)
	}
}

// put writes r, first inserting a ZWSP if the tail plus r would complete a
// mention, reference, autolink, fence or marker.
func (w *tailWriter) put(r rune) {
	if w.breaks(r) {
		w.push(zwsp)
	}
	w.push(r)
}

// finish ends the text; a trailing "@" still gets its ZWSP so that text
// placed right after the escaped value cannot complete a mention.
func (w *tailWriter) finish() {
	if w.tail[2] == '@' {
		w.push(zwsp)
	}
}

func (w *tailWriter) breaks(r rune) bool {
	t0, t1, t2 := w.tail[0], w.tail[1], w.tail[2]
	switch {
	case t2 == '@' && r != zwsp:
		return true // @user, @org/team
	case isDigit(r) && t2 == '#':
		return true // #12, owner/repo#12
	case isDigit(r) && t2 == '-' && lower(t1) == 'h' && lower(t0) == 'g':
		return true // GH-12
	case r == '/' && t2 == '/' && t1 == ':':
		return true // https://
	case r == '.' && lower(t2) == 'w' && lower(t1) == 'w' && lower(t0) == 'w':
		return true // www.
	case (r == '`' || r == '~') && t2 == r && t1 == r:
		return true // ``` and ~~~ fences
	case r == '-' && t2 == '-' && t1 == '!' && t0 == '<':
		return true // <!--
	case r == '>' && t2 == '-' && t1 == '-':
		return true // -->
	}
	return false
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func lower(r rune) rune {
	if r >= 'A' && r <= 'Z' {
		return r + ('a' - 'A')
	}
	return r
}
