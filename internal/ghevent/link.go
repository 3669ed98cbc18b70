package ghevent

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLinkedIssues caps how many issues one PR body may link: each linked
// issue costs a reconcile, and GitHub itself links at most 10 issues to a PR
// by hand. References past the cap are ignored.
const MaxLinkedIssues = 10

// Closing keywords GitHub recognises (docs: "Linking a pull request to an
// issue"), each followed by an optional colon, spaces or tabs, and a
// same-repository reference "#N". Whether the keyword starts a word and the
// number ends one is checked by hand: RE2 has no look-around.
var (
	closingRef = regexp.MustCompile(`(?i)(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?[ \t]+#([0-9]+)`)
	trailerRef = regexp.MustCompile(`(?i)^[ \t]*autopilot-issue:[ \t]*#([0-9]+)[ \t]*$`)
)

// LinkedIssues returns the same-repository issue numbers a PR body links to,
// in order of first appearance and without duplicates, at most
// MaxLinkedIssues of them. A link is
//
//   - a closing keyword (close, closes, closed, fix, fixes, fixed, resolve,
//     resolves, resolved; any case) followed by spaces and "#N", as in
//     "Fixes #12". A colon after the keyword is accepted ("Fixes: #12"):
//     GitHub itself does not close the issue for that form, but the author's
//     intent is plain, and autopilot only uses the link to route events;
//   - a line of its own "Autopilot-Issue: #N" (key in any case).
//
// Not links: references to other repositories ("Fixes owner/repo#3") and
// issue URLs (the body alone cannot tell whether they name this
// repository); several numbers after one keyword ("Fixes #1 and #2" links
// only #1, as on GitHub); "#0", numbers with leading zeros or glued to a
// word ("#12abc"); and anything inside fenced code blocks, inline code spans
// or HTML comments, where PR templates keep their examples.
func LinkedIssues(body string) []int {
	var out []int
	add := func(digits string) {
		n, ok := issueNumber(digits)
		if !ok || len(out) >= MaxLinkedIssues {
			return
		}
		for _, seen := range out {
			if seen == n {
				return
			}
		}
		out = append(out, n)
	}
	var fence fenceState
	for _, line := range strings.Split(stripHTMLComments(body), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if fence.inside(line) {
			continue
		}
		line = stripCodeSpans(line)
		if m := trailerRef.FindStringSubmatch(line); m != nil {
			add(m[1])
			continue
		}
		for _, loc := range closingRef.FindAllStringSubmatchIndex(line, -1) {
			if startsWord(line, loc[0]) && endsWord(line, loc[1]) {
				add(line[loc[2]:loc[3]])
			}
		}
	}
	return out
}

// issueNumber parses a reference's digits: positive, no leading zero, and
// small enough to be an issue number.
func issueNumber(digits string) (int, bool) {
	if digits == "" || digits[0] == '0' || len(digits) > 10 {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 32)
	if err != nil || n <= 0 {
		return 0, false
	}
	return int(n), true
}

// startsWord reports whether the keyword starting at i is not the tail of a
// longer word ("prefixes #3").
func startsWord(s string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return !isWordRune(r)
}

// endsWord reports whether the reference ending at i is not glued to a
// following letter, digit or underscore.
func endsWord(s string, i int) bool {
	if i >= len(s) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return !isWordRune(r)
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_'
}

// fenceState tracks fenced code blocks (``` or ~~~, CommonMark style) across
// lines.
type fenceState struct {
	char byte // 0 outside a fence
	size int
}

// inside consumes one line and reports whether it belongs to a fenced code
// block, fence lines included.
func (f *fenceState) inside(line string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 { // four spaces: indented code or text, never a fence
		return f.char != 0
	}
	char, size := fenceRun(t)
	if f.char == 0 {
		if size >= 3 && !(char == '`' && strings.ContainsRune(t[size:], '`')) {
			f.char, f.size = char, size
			return true
		}
		return false
	}
	if char == f.char && size >= f.size && strings.TrimSpace(t[size:]) == "" {
		f.char, f.size = 0, 0
	}
	return true
}

// fenceRun returns the leading run of '`' or '~' in s.
func fenceRun(s string) (byte, int) {
	if s == "" || (s[0] != '`' && s[0] != '~') {
		return 0, 0
	}
	n := 1
	for n < len(s) && s[n] == s[0] {
		n++
	}
	return s[0], n
}

// stripHTMLComments removes <!-- ... --> spans; an unclosed comment hides
// the rest of the text, as it does when GitHub renders Markdown.
func stripHTMLComments(s string) string {
	if !strings.Contains(s, "<!--") {
		return s
	}
	var b strings.Builder
	for {
		start := strings.Index(s, "<!--")
		if start < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:start])
		end := strings.Index(s[start+4:], "-->")
		if end < 0 {
			return b.String()
		}
		// Keep the comment's line breaks so fences and trailers stay on
		// their own lines.
		b.WriteString(strings.Repeat("\n", strings.Count(s[start:start+4+end], "\n")))
		s = s[start+4+end+3:]
	}
}

// stripCodeSpans blanks inline code spans: a run of N backticks up to the
// next run of exactly N backticks. An unmatched run is literal text.
func stripCodeSpans(line string) string {
	if !strings.Contains(line, "`") {
		return line
	}
	var b strings.Builder
	i := 0
	for i < len(line) {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := runLen(line, i)
		if end := closingRun(line, i+n, n); end >= 0 {
			b.WriteByte(' ')
			i = end
			continue
		}
		b.WriteString(line[i : i+n])
		i += n
	}
	return b.String()
}

// closingRun finds the next run of exactly n backticks at or after from and
// returns the index just past it, or -1.
func closingRun(s string, from, n int) int {
	for j := from; j < len(s); {
		if s[j] != '`' {
			j++
			continue
		}
		m := runLen(s, j)
		if m == n {
			return j + m
		}
		j += m
	}
	return -1
}

func runLen(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == s[i] {
		n++
	}
	return n
}
