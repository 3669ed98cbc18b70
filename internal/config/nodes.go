package config

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// match says which node on a line an error is about: a key with that text,
// a scalar value with that text (a trailing "..." matches a prefix), or a
// mapping ("!!map") or list ("!!seq") that starts on the line.
type match struct{ key, value, container string }

func (m match) text(want, got string) bool {
	if p, ok := strings.CutSuffix(want, "..."); ok {
		return strings.HasPrefix(got, p)
	}
	return want == got
}

// locate returns the dotted path (e.g. "flows.x.steps[0].slug") of the node
// on line that m describes. Without such a node it returns the first key or
// value on that line, or "document" when the line has none.
func locate(root *yaml.Node, line int, m match) string {
	l := &locator{line: line, m: m}
	l.walk(root, "")
	switch {
	case l.found != "":
		return l.found
	case l.lastContainer != "":
		return l.lastContainer
	case l.first != "":
		return l.first
	}
	return "document"
}

// locator walks a YAML tree for locate, noting the candidates on its line.
type locator struct {
	line int
	m    match
	// found is the node m describes; lastContainer the last mapping or list
	// of m's kind; first the first key or scalar on the line.
	found, lastContainer, first string
}

// walk visits n (at path) and its children in document order until the
// node m describes is found.
func (l *locator) walk(n *yaml.Node, path string) {
	if n == nil || l.found != "" {
		return
	}
	if n.Line == l.line && path != "" {
		l.onLine(n, path)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			l.walk(c, path)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			l.walk(c, fmt.Sprintf("%s[%d]", path, i))
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			p := joinPath(path, k.Value)
			if k.Line == l.line && l.candidate(p, l.m.key, k.Value) {
				return
			}
			l.walk(n.Content[i+1], p)
		}
	}
}

// onLine notes a node that starts on the line.
func (l *locator) onLine(n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.ScalarNode:
		l.candidate(path, l.m.value, n.Value)
	case yaml.MappingNode:
		if l.m.container == "!!map" {
			l.lastContainer = path
		}
	case yaml.SequenceNode:
		if l.m.container == "!!seq" {
			l.lastContainer = path
		}
	}
}

// candidate notes a key or scalar (its text got) at path on the line, and
// reports whether it is the one m describes (want, when m names one).
func (l *locator) candidate(path, want, got string) bool {
	if l.first == "" {
		l.first = path
	}
	if want != "" && l.m.text(want, got) {
		l.found = path
		return true
	}
	return false
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// findLine returns the line of the deepest key (or list item, segment
// "[i]") of path that exists in the document, or 0.
func findLine(root *yaml.Node, path ...string) int {
	if root == nil {
		return 0
	}
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := 0
	for _, seg := range path {
		next, at := child(n, seg)
		if next == nil {
			return line
		}
		n, line = next, at
	}
	return line
}

// present reports whether path exists in the document with a non-null value.
func present(root *yaml.Node, path ...string) bool {
	if root == nil {
		return false
	}
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, seg := range path {
		if n, _ = child(n, seg); n == nil {
			return false
		}
	}
	return n.Tag != "!!null"
}

// child returns the value under a mapping key or a "[i]" list index, and
// the line of that key or item.
func child(n *yaml.Node, seg string) (*yaml.Node, int) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == seg {
				return n.Content[i+1], n.Content[i].Line
			}
		}
	case yaml.SequenceNode:
		if strings.HasPrefix(seg, "[") && strings.HasSuffix(seg, "]") {
			i, err := strconv.Atoi(seg[1 : len(seg)-1])
			if err == nil && i >= 0 && i < len(n.Content) {
				return n.Content[i], n.Content[i].Line
			}
		}
	}
	return nil, 0
}

// splitPath splits a generated field path such as ".steps[2].slug" into
// segments {"steps", "[2]", "slug"}.
func splitPath(p string) []string {
	var out []string
	for _, part := range strings.Split(strings.TrimPrefix(p, "."), ".") {
		for part != "" {
			i := strings.IndexByte(part, '[')
			switch {
			case i < 0:
				out = append(out, part)
				part = ""
			case i > 0:
				out = append(out, part[:i])
				part = part[i:]
			default:
				j := strings.IndexByte(part, ']')
				if j < 0 {
					out = append(out, part)
					part = ""
					continue
				}
				out = append(out, part[:j+1])
				part = part[j+1:]
			}
		}
	}
	return out
}
