// Package doctable reads the Markdown tables of the project's documents, so
// tests can hold the docs to the code (an input, a label colour, a command
// the docs list must be the one the code has). It is used by tests only and
// never linked into the binary.
package doctable

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// Read returns a file of the repository by its path from the root, e.g.
// "docs/action.md".
func Read(rel string) (string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("doctable: cannot locate the repository")
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(self))) // internal/doctable → root
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	return string(b), err
}

var headingRE = regexp.MustCompile(`^(#+)\s+(.*?)\s*$`)

// Section returns the text under the heading whose title is title (any
// level), up to the next heading of the same or a higher level; "" when
// there is no such heading.
func Section(md, title string) string {
	lines := strings.Split(md, "\n")
	level, start := 0, -1
	fence := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		m := headingRE.FindStringSubmatch(l)
		if fence || m == nil {
			continue
		}
		switch {
		case start < 0 && m[2] == title:
			level, start = len(m[1]), i+1
		case start >= 0 && len(m[1]) <= level:
			return strings.Join(lines[start:i], "\n")
		}
	}
	if start < 0 {
		return ""
	}
	return strings.Join(lines[start:], "\n")
}

// Rows returns the body rows of the first table in text (the header and
// its separator left out), each as its trimmed cells.
func Rows(text string) [][]string {
	var rows [][]string
	in := false
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "|") {
			if in {
				break
			}
			continue
		}
		if !in {
			in = true // the header
			continue
		}
		cells := splitRow(l)
		if isSeparator(cells) {
			continue
		}
		rows = append(rows, cells)
	}
	return rows
}

// splitRow splits "| a | b |" into cells; a pipe inside backticks or
// escaped as \| belongs to its cell.
func splitRow(l string) []string {
	l = strings.TrimSuffix(strings.TrimPrefix(l, "|"), "|")
	var cells []string
	var cur strings.Builder
	code := false
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c == '\\' && i+1 < len(l) && l[i+1] == '|':
			cur.WriteByte('|')
			i++
		case c == '`':
			code = !code
			cur.WriteByte(c)
		case c == '|' && !code:
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

func isSeparator(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, "-: ") != "" {
			return false
		}
	}
	return true
}

var codeRE = regexp.MustCompile("`([^`]*)`")

// Code returns the `code spans` of a cell, in order.
func Code(cell string) []string {
	var out []string
	for _, m := range codeRE.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}
