package fakegithub

import (
	"regexp"
	"strconv"
	"strings"
)

// Mentions and issue references as GitHub links them in Markdown bodies,
// for asserting that echoed user text pings no one (RELIABILITY case 26).
// The rules are an approximation of GitHub's: code spans and fenced code
// blocks are skipped; an "@" or "#" must not follow a letter, digit, "_",
// "&", "/" or "`".

var (
	mentionRe   = regexp.MustCompile(`(?:^|[^A-Za-z0-9_&/` + "`" + `@])@([A-Za-z0-9](?:-?[A-Za-z0-9]){0,38})(/[A-Za-z0-9][A-Za-z0-9_.-]*)?`)
	referenceRe = regexp.MustCompile(`(?:^|[^A-Za-z0-9_&/` + "`" + `#])#([0-9]{1,9})\b`)
	codeSpanRe  = regexp.MustCompile("`+[^`]*`+")
)

// stripCode removes fenced code blocks and inline code spans.
func stripCode(body string) string {
	var out []string
	fence := ""
	for _, line := range strings.Split(body, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		case strings.HasPrefix(trimmed, "```"), strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
			continue
		}
		out = append(out, codeSpanRe.ReplaceAllString(line, " "))
	}
	return strings.Join(out, "\n")
}

// Mentions returns the users ("login") and teams ("org/team") that body
// would notify, in order of appearance.
func Mentions(body string) []string {
	var out []string
	for _, m := range mentionRe.FindAllStringSubmatch(stripCode(body), -1) {
		out = append(out, m[1]+m[2])
	}
	return out
}

// References returns the issue numbers "#N" in body would link.
func References(body string) []int {
	var out []int
	for _, m := range referenceRe.FindAllStringSubmatch(stripCode(body), -1) {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}
