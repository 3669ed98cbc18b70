// Package doclint finds the GitHub Actions workflow snippets in the
// repository's Markdown docs and turns each into a complete workflow that
// actionlint (with shellcheck) can check, remembering which doc line every
// line came from, so a finding names the doc and line a reader copies from.
//
// A snippet is a ```yaml (or ```yml) block. It may be a whole workflow or a
// fragment of one: the top of a workflow without jobs, a job body
// (steps: …), a list of steps, one step's keys (with: …), or the inputs
// under our action's with:. A fragment is wrapped into the smallest valid
// workflow around it; its own lines are kept, only re-indented. A snippet
// that is a verbatim excerpt of a workflow file actionlint already checks
// (docs/examples, .github/workflows) is covered by that file. Other YAML
// blocks (.github/autopilot.yml examples, state blocks) are not workflows
// and are left alone.
package doclint

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Snippet is one fenced YAML block of a Markdown file.
type Snippet struct {
	Doc  string // the Markdown file, e.g. docs/action.md
	Line int    // 1-based line in Doc of the block's first content line
	// Indent is the number of columns removed from every content line: the
	// fence's own indentation (a block inside a list item) plus the
	// indentation the lines share.
	Indent int
	Text   string // the content, Indent columns removed, ending in "\n"
}

// Kind is what a snippet is, as a piece of a workflow.
type Kind string

// The kinds of snippet.
const (
	NotWorkflow Kind = ""         // configuration or other YAML: not linted
	Excerpt     Kind = "excerpt"  // verbatim part of a linted workflow file
	Whole       Kind = "workflow" // a workflow, on: added when missing
	Top         Kind = "top"      // workflow keys without jobs
	Job         Kind = "job"      // a job body: steps (and runs-on, …)
	Steps       Kind = "steps"    // a list of steps
	Step        Kind = "step"     // one step's keys, without the "- "
	With        Kind = "with"     // inputs of our action, under its with:
)

// Workflow is a snippet made into a complete workflow.
type Workflow struct {
	Snippet
	Kind Kind
	// Of names the workflow file an Excerpt was found in.
	Of string
	// YAML is the complete workflow; empty for an Excerpt.
	YAML string
	// first is the 1-based line of YAML holding the snippet's first line;
	// shift is the columns the snippet's lines were moved right.
	first, shift int
}

// ourAction is what a wrapped step fragment without uses: runs: this
// project's Action (the pin does not matter to actionlint).
const ourAction = "autopilot-dev/autopilot@v1"

var fenceRE = regexp.MustCompile("^([ \t]*)```+[ \t]*(yaml|yml)[ \t]*$")

// Extract returns the YAML blocks of a Markdown file, in order.
func Extract(doc string, md []byte) []Snippet {
	lines := strings.Split(string(md), "\n")
	var out []Snippet
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		fence := len(m[1])
		start := i + 1
		j := start
		for j < len(lines) && strings.TrimSpace(lines[j]) != "```" && !strings.HasPrefix(strings.TrimSpace(lines[j]), "````") {
			j++
		}
		out = append(out, dedent(doc, start+1, lines[start:j], fence))
		i = j
	}
	return out
}

// dedent removes the fence's indentation and then the indentation every
// non-blank line shares.
func dedent(doc string, line int, lines []string, fence int) Snippet {
	body := make([]string, len(lines))
	common := -1
	for i, l := range lines {
		l = strings.TrimRight(l, "\r")
		n := min(fence, len(l)-len(strings.TrimLeft(l, " ")))
		l = l[n:]
		body[i] = l
		if strings.TrimSpace(l) == "" {
			continue
		}
		if ind := len(l) - len(strings.TrimLeft(l, " ")); common < 0 || ind < common {
			common = ind
		}
	}
	common = max(common, 0)
	var b strings.Builder
	for _, l := range body {
		if len(l) >= common {
			l = l[common:]
		} else {
			l = ""
		}
		b.WriteString(l + "\n")
	}
	return Snippet{Doc: doc, Line: line, Indent: fence + common, Text: b.String()}
}

// stepKeys are the keys of one step of a job.
var stepKeys = map[string]bool{
	"id": true, "if": true, "name": true, "uses": true, "run": true, "shell": true, "with": true, "env": true,
	"working-directory": true, "continue-on-error": true, "timeout-minutes": true,
}

// topKeys are the keys of a workflow besides on: and jobs:.
var topKeys = map[string]bool{
	"name": true, "run-name": true, "permissions": true, "env": true, "defaults": true, "concurrency": true,
}

// Wrap makes s a complete workflow. inputs are the input names of this
// project's action.yml (a with: fragment of them is our action's); linted
// maps the path of every workflow file actionlint checks anyway to its
// text, for excerpts. It returns NotWorkflow for YAML that is no part of a
// workflow, and an error for a block that is not YAML at all.
func Wrap(s Snippet, inputs map[string]bool, linted map[string]string) (Workflow, error) {
	w := Workflow{Snippet: s}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s.Text), &doc); err != nil {
		return w, fmt.Errorf("%s:%d: not valid YAML: %w", s.Doc, s.Line, err)
	}
	if len(doc.Content) == 0 {
		return w, nil
	}
	root := doc.Content[0]
	w.Kind = classify(root, inputs)
	if w.Kind == NotWorkflow {
		return w, nil
	}
	if root.Column != 1 {
		// The wrapper adds its lines at the snippet's left edge.
		return w, fmt.Errorf("%s:%d: a workflow snippet's first line is indented more than the lines below it", s.Doc, s.Line)
	}
	if of := excerptOf(s.Text, linted); of != "" {
		w.Kind, w.Of = Excerpt, of
		return w, nil
	}
	const job = "on: workflow_dispatch\njobs:\n  doclint:\n    runs-on: ubuntu-latest\n"
	var head, tail string
	switch w.Kind {
	case Whole:
		if !hasKey(root, "on") {
			head = "on: workflow_dispatch\n"
		}
	case Top:
		if !hasKey(root, "on") {
			head = "on: workflow_dispatch\n"
		}
		tail = "jobs:\n  doclint:\n    runs-on: ubuntu-latest\n    steps:\n      - run: \"true\"\n"
	case Job:
		head, w.shift = "on: workflow_dispatch\njobs:\n  doclint:\n", 4
		if !hasKey(root, "runs-on") {
			head += "    runs-on: ubuntu-latest\n"
		}
	case Steps:
		head, w.shift = job+"    steps:\n", 6
	case Step:
		head, w.shift = job+"    steps:\n      -\n", 8
		if !hasKey(root, "uses") && !hasKey(root, "run") {
			head += "        uses: " + ourAction + "\n"
		}
	case With:
		head, w.shift = job+"    steps:\n      - uses: "+ourAction+"\n        with:\n", 10
	}
	w.first = strings.Count(head, "\n") + 1
	w.YAML = head + indent(s.Text, w.shift) + tail
	// A tag or anchor alone on the snippet's first line belongs to the
	// whole block; with wrapper lines above it the result is no YAML.
	if err := yaml.Unmarshal([]byte(w.YAML), &yaml.Node{}); err != nil {
		w.YAML = ""
		return w, fmt.Errorf("%s:%d: the snippet does not fit into a workflow (a tag or anchor on its first line?): %w", s.Doc, s.Line, err)
	}
	return w, nil
}

// classify says what part of a workflow the YAML root is.
func classify(root *yaml.Node, inputs map[string]bool) Kind {
	switch root.Kind {
	case yaml.SequenceNode:
		if len(root.Content) > 0 && allOf(root.Content, func(n *yaml.Node) bool {
			return n.Kind == yaml.MappingNode && (hasKey(n, "uses") || hasKey(n, "run"))
		}) {
			return Steps
		}
		return NotWorkflow
	case yaml.MappingNode:
	default:
		return NotWorkflow
	}
	keys := mapKeys(root)
	switch {
	case hasKey(root, "jobs"):
		return Whole
	case hasKey(root, "on"):
		return Top
	case value(root, "steps") != nil && value(root, "steps").Kind == yaml.SequenceNode:
		return Job
	case len(keys) > 0 && subset(keys, stepKeys):
		return Step
	case len(keys) > 0 && subset(keys, inputs):
		return With
	case len(keys) > 0 && subset(keys, topKeys):
		return Top
	}
	return NotWorkflow
}

// excerptOf returns the linted file whose text holds the snippet verbatim
// (after removing the indentation both share), or "".
func excerptOf(text string, linted map[string]string) string {
	want := strings.TrimRight(text, "\n")
	for _, path := range slices.Sorted(maps.Keys(linted)) {
		lines := strings.Split(linted[path], "\n")
		for i, l := range lines {
			ind := len(l) - len(strings.TrimLeft(l, " "))
			if got := strings.Join(undent(lines[i:], ind), "\n"); got == want || strings.HasPrefix(got, want+"\n") {
				return path
			}
		}
	}
	return ""
}

// undent removes n leading spaces from lines that have them, up to the
// first line that has fewer (the end of the enclosing block).
func undent(lines []string, n int) []string {
	pad := strings.Repeat(" ", n)
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, pad) {
			break
		}
		out = append(out, strings.TrimPrefix(l, pad))
	}
	return out
}

// DocPos maps a line and column of YAML back to the snippet's doc. ok is
// false for a line the wrapper added.
func (w Workflow) DocPos(line, col int) (docLine, docCol int, ok bool) {
	i := line - w.first
	if i < 0 || i >= strings.Count(w.Text, "\n") {
		return 0, 0, false
	}
	if col > 0 {
		col = max(col-w.shift, 1) + w.Indent
	}
	return w.Line + i, col, true
}

func indent(text string, n int) string {
	pad := strings.Repeat(" ", n)
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		if strings.TrimSpace(l) != "" {
			b.WriteString(pad)
		}
		b.WriteString(l)
	}
	return b.String()
}

func mapKeys(n *yaml.Node) []string {
	var keys []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		keys = append(keys, n.Content[i].Value)
	}
	return keys
}

func value(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func hasKey(n *yaml.Node, key string) bool { return value(n, key) != nil }

func subset(keys []string, of map[string]bool) bool {
	for _, k := range keys {
		if !of[k] {
			return false
		}
	}
	return true
}

func allOf(ns []*yaml.Node, f func(*yaml.Node) bool) bool {
	for _, n := range ns {
		if !f(n) {
			return false
		}
	}
	return true
}
