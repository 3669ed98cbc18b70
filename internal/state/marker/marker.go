// Package marker builds and parses the hidden markers autopilot puts on the
// first line of its comments and issues, "<!-- autopilot:<kind> <args> -->":
// the state comment, Choose blocks, replies, notices, decision archives,
// the machine block, sub-issue task keys. A marker makes a comment findable
// again after a lost response and tells autopilot's comments apart from
// people's. This is the one place that knows the format; it does no I/O.
package marker

import "strings"

// Prefix starts every marker; Suffix ends it.
const (
	Prefix = "<!-- autopilot:"
	Suffix = " -->"
)

// Kinds of marker (the word after "autopilot:").
const (
	State     = "state"     // the state comment's first line (no arguments)
	Data      = "data"      // the state comment's machine block: data <payload>
	Gate      = "gate"      // a Choose block: gate <gate id>
	Reply     = "reply"     // the one reply to a comment: reply <comment id>
	Notice    = "notice"    // a one-off notice: notice <key>
	Decisions = "decisions" // an archive of decisions: decisions <from>-<to>
	Task      = "task"      // a sub-issue's task: task <key> parent=<n> kind=<k>
	Version   = "v"         // a version tag: v <version>
)

// Build returns the marker of kind with its arguments, separated by
// spaces: Build("reply", "42") is "<!-- autopilot:reply 42 -->". Callers
// pass arguments that hold no "-->" and no line break (ids, keys, numbers).
func Build(kind string, args ...string) string {
	var b strings.Builder
	b.WriteString(Prefix)
	b.WriteString(kind)
	for _, a := range args {
		b.WriteByte(' ')
		b.WriteString(a)
	}
	b.WriteString(Suffix)
	return b.String()
}

// Start returns what every marker of kind begins with, arguments to come:
// "<!-- autopilot:reply ". A body that starts with it carries such a marker.
func Start(kind string) string { return Prefix + kind + " " }

// Parse reads one marker line: its kind and the text of its arguments
// (empty when it has none). ok is false unless line is exactly one marker:
// the prefix, a kind of lower-case letters, optionally a space and
// arguments, and the suffix, with no line break and no "-->" inside.
func Parse(line string) (kind, args string, ok bool) {
	inner, ok := strings.CutPrefix(line, Prefix)
	if !ok {
		return "", "", false
	}
	inner, ok = strings.CutSuffix(inner, Suffix)
	if !ok || strings.Contains(inner, "-->") || strings.ContainsAny(inner, "\r\n") {
		return "", "", false
	}
	kind, args, _ = strings.Cut(inner, " ")
	if kind == "" {
		return "", "", false
	}
	for _, r := range kind {
		if r < 'a' || r > 'z' {
			return "", "", false
		}
	}
	return kind, args, true
}

// Args returns the arguments of a marker of kind, and false when line is
// no marker of that kind.
func Args(line, kind string) (string, bool) {
	k, args, ok := Parse(line)
	if !ok || k != kind {
		return "", false
	}
	return args, true
}

// Is reports whether line starts like a marker (any kind): it tells
// autopilot's own comments from people's.
func Is(line string) bool { return strings.HasPrefix(line, Prefix) }
