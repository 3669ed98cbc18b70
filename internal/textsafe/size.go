package textsafe

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxBody is GitHub's limit on an issue or comment body, in characters.
const MaxBody = 65536

// SafeBody is the size autopilot aims for, leaving headroom under MaxBody.
const SafeBody = 60000

// TruncatedNote ends a body cut by Truncate.
const TruncatedNote = "\n\n… (truncated)"

// ContinuedNote ends every part but the last one produced by Split.
const ContinuedNote = "\n\n… (continued)"

// Len returns the length of s in characters (runes), the unit of GitHub's
// body limit. Each invalid UTF-8 byte counts as one.
func Len(s string) int { return utf8.RuneCountInString(s) }

// Truncate returns s cut to at most max characters, ending with
// TruncatedNote when anything was cut. The cut is at a rune boundary and
// does not separate a character from the combining marks that follow it.
// Invalid UTF-8 becomes U+FFFD, so the result is always valid UTF-8. When
// max is too small for the note, the text is cut without it; max <= 0
// gives "".
func Truncate(s string, max int) string {
	return cut(s, max, TruncatedNote)
}

// Clip is Truncate for short display texts: the cut is marked with a single
// "…" instead of a paragraph note.
func Clip(s string, max int) string {
	return cut(s, max, "…")
}

func cut(s string, max int, note string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if max <= 0 {
		return ""
	}
	if Len(s) <= max {
		return s
	}
	keep := max - Len(note)
	if keep < 1 {
		return s[:runeOffset(s, max)]
	}
	return s[:clusterCut(s, runeOffset(s, keep))] + note
}

// runeOffset returns the byte offset of the n-th rune of s (len(s) if s
// has fewer runes).
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// clusterCut moves a cut at byte offset i back while the first dropped rune
// extends the previous character (combining mark, joiner, variation
// selector), so a base character is not shown without its marks. It gives
// up after a few runes, since a cut has to happen somewhere.
func clusterCut(s string, i int) int {
	for steps := 0; steps < 8 && i > 0 && i < len(s); steps++ {
		r, _ := utf8.DecodeRuneInString(s[i:])
		if !extends(r) {
			return i
		}
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return i
}

func extends(r rune) bool {
	return unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) ||
		r == '\u200d' || (r >= '\ufe00' && r <= '\ufe0f')
}

// Split cuts s into parts of at most max characters each, preferring line
// boundaries and falling back to rune boundaries for over-long lines. Every
// part but the last ends with ContinuedNote. A code fence open at a cut is
// closed at the end of the part and reopened at the start of the next, so
// each part renders on its own. Invalid UTF-8 becomes U+FFFD. Text that
// fits is returned as the only part; max <= 0 gives nil. When max is too
// small for the note, parts are plain rune chunks.
func Split(s string, max int) []string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if max <= 0 {
		return nil
	}
	if Len(s) <= max {
		return []string{s}
	}
	sp := splitter{max: max}
	if max < Len(ContinuedNote)+2*fenceCap+8 {
		return chunks(s, max)
	}
	for _, line := range strings.SplitAfter(s, "\n") {
		sp.addLine(line)
	}
	return sp.done()
}

// fenceCap bounds the fence lines Split repeats: longer fence lines are
// reopened with their fence run only, and fence runs longer than this are
// not tracked at all.
const fenceCap = 26

type splitter struct {
	max   int
	parts []string
	cur   strings.Builder
	n     int    // runes in cur
	fence string // opening fence line while inside a fence, "" otherwise
}

// fits reports whether extra more runes fit in the current part when the
// fence state afterwards is fenceAfter (a part inside a fence must still
// have room for the closing fence line and the note).
func (sp *splitter) fits(extra int, fenceAfter string) bool {
	cost := sp.n + extra + Len(ContinuedNote)
	if fenceAfter != "" {
		cost += 1 + len(fenceOf(fenceAfter))
	}
	return cost <= sp.max
}

func (sp *splitter) addLine(line string) {
	for line != "" {
		after := nextFence(sp.fence, line)
		if n := Len(line); sp.fits(n, after) {
			sp.cur.WriteString(line)
			sp.n += n
			sp.fence = after
			return
		}
		if sp.n > 0 && !sp.onlyReopen() {
			sp.flush()
			continue
		}
		// An over-long line at the start of a part: cut it at a rune
		// boundary (the cut piece does not change the fence state).
		free := sp.max - Len(ContinuedNote) - sp.n
		if sp.fence != "" {
			free -= 1 + len(fenceOf(sp.fence))
		}
		i := clusterCut(line, runeOffset(line, free))
		if i == 0 {
			i = runeOffset(line, free)
		}
		sp.cur.WriteString(line[:i])
		sp.n += Len(line[:i])
		line = line[i:]
		sp.flush()
	}
}

// onlyReopen reports whether the current part holds nothing but the
// reopened fence line, so flushing it would make no progress.
func (sp *splitter) onlyReopen() bool {
	return sp.fence != "" && sp.cur.String() == sp.fence+"\n"
}

// nextFence returns the fence state after a whole line.
func nextFence(open, line string) string {
	f := fenceOf(line)
	if f == "" || len(f) > fenceCap {
		return open
	}
	if open == "" {
		open = strings.TrimRight(line, "\n")
		if Len(open) > fenceCap {
			open = f
		}
		return open
	}
	o := fenceOf(open)
	rest := strings.TrimLeft(line, " ")[len(f):]
	if f[0] == o[0] && len(f) >= len(o) && strings.TrimSpace(rest) == "" {
		return ""
	}
	return open
}

// flush ends the current part (closing an open fence and adding the note)
// and starts the next (reopening the fence).
func (sp *splitter) flush() {
	body := sp.cur.String()
	if sp.fence != "" {
		if !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		body += fenceOf(sp.fence)
	}
	sp.parts = append(sp.parts, strings.TrimSuffix(body, "\n")+ContinuedNote)
	sp.cur.Reset()
	sp.n = 0
	if sp.fence != "" {
		sp.cur.WriteString(sp.fence + "\n")
		sp.n = Len(sp.fence) + 1
	}
}

func (sp *splitter) done() []string {
	return append(sp.parts, sp.cur.String())
}

// fenceOf returns the fence run ("```", "~~~~", ...) a line opens or closes
// with, or "" if it is not a fence line. Up to three spaces of indentation
// are allowed, as in CommonMark.
func fenceOf(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return t[:n]
}

// chunks cuts s into plain rune chunks of at most max runes.
func chunks(s string, max int) []string {
	var out []string
	for s != "" {
		i := runeOffset(s, max)
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}
