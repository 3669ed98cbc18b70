// Package transcript reads and rewrites golden transcript files: scripts
// of input events, each followed by the output a test printed for it (in
// the spirit of etcd raft's testdata/*.txt interaction tests). A test
// drives the system under test with Run; with -update the outputs in the
// file are rewritten, otherwise a difference fails with a line diff.
//
// The file format, one case after another:
//
//	# comments (kept as written)
//	directive arg key=value ...
//	optional input lines (a comment body, a config file)
//	----
//	output lines, none of them empty
//	<blank line>
//
// The package is test support: it never touches anything but the files it
// is given.
package transcript

import (
	"fmt"
	"os"
	"strings"
)

// T is the part of *testing.T that Run and Golden use.
type T interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Sep separates a case's input from its output.
const Sep = "----"

// Case is one directive of a transcript file.
type Case struct {
	// Line is the 1-based line of the directive (for error messages).
	Line int
	Cmd  string
	Args []Arg
	// Input is the text between the directive and Sep ("" when none),
	// without its final newline.
	Input string
	// Want is the recorded output, without its final newline.
	Want string
	// head is the file text from the end of the previous case up to and
	// including the Sep line, written back as read.
	head string
}

// Arg is one word after the directive: key=value, or a bare key.
type Arg struct{ Key, Val string }

// Has reports whether a bare word or a key=value with that key was given.
func (c *Case) Has(key string) bool {
	_, ok := c.Get(key)
	return ok
}

// Get returns the value of key ("" for a bare word).
func (c *Case) Get(key string) (string, bool) {
	for _, a := range c.Args {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// Or returns the value of key, or def when it was not given.
func (c *Case) Or(key, def string) string {
	if v, ok := c.Get(key); ok {
		return v
	}
	return def
}

// Pos names the case in messages: "file:line: directive".
func (c *Case) Pos(file string) string { return fmt.Sprintf("%s:%d: %s", file, c.Line, c.Cmd) }

// File is a parsed transcript file.
type File struct {
	Cases []*Case
	// tail is the text after the last case (trailing comments).
	tail string
}

// Parse reads a transcript. Every directive must have a Sep line.
func Parse(text string) (*File, error) {
	lines := strings.Split(text, "\n")
	if strings.HasSuffix(text, "\n") {
		lines = lines[:len(lines)-1]
	}
	f := &File{}
	var head strings.Builder
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			head.WriteString(l + "\n")
			continue
		}
		c := &Case{Line: i + 1}
		words := strings.Fields(l)
		c.Cmd = words[0]
		for _, w := range words[1:] {
			k, v, _ := strings.Cut(w, "=")
			c.Args = append(c.Args, Arg{k, v})
		}
		head.WriteString(l + "\n")
		var in []string
		i++
		for ; i < len(lines) && lines[i] != Sep; i++ {
			in = append(in, lines[i])
			head.WriteString(lines[i] + "\n")
		}
		if i == len(lines) {
			return nil, fmt.Errorf("line %d: %s has no %q line", c.Line, c.Cmd, Sep)
		}
		head.WriteString(Sep + "\n")
		c.Input = strings.Join(in, "\n")
		j := i + 1
		for ; j < len(lines) && lines[j] != ""; j++ {
		}
		c.Want = strings.Join(lines[i+1:j], "\n")
		// The blank line that ends the output starts the next head.
		i = j - 1
		c.head = head.String()
		head.Reset()
		f.Cases = append(f.Cases, c)
	}
	f.tail = head.String()
	return f, nil
}

// String renders the file with each case's Want as its output.
func (f *File) String() string {
	var b strings.Builder
	for _, c := range f.Cases {
		b.WriteString(c.head)
		if c.Want != "" {
			b.WriteString(c.Want + "\n")
		}
	}
	b.WriteString(f.tail)
	return b.String()
}

// Run parses the transcript at path and calls do for each case in order.
// do returns the case's output; empty lines in it are written as "."
// (an empty line ends a case). With update the file is rewritten with the
// new outputs; otherwise each case whose output differs fails the test
// with a diff.
func Run(t T, path string, update bool, do func(c *Case) string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v", err)
	}
	f, err := Parse(string(raw))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, c := range f.Cases {
		got := Clean(do(c))
		if update {
			c.Want = got
			continue
		}
		if got != c.Want {
			t.Errorf("%s: output differs (-want +got, rerun with -update to accept):\n%s", c.Pos(path), Diff(c.Want, got))
		}
	}
	if update {
		if out := f.String(); out != string(raw) {
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatalf("%v", err)
			}
		}
	}
}

// Clean trims trailing white space from every line and the output, and
// writes empty lines as "." so they cannot end the case.
func Clean(s string) string {
	lines := strings.Split(strings.TrimRight(s, " \t\n"), "\n")
	for i, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" && len(lines) > 1 {
			l = "."
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// Golden compares got with the file at path, or writes it there when update
// is set. A difference fails the test with a line diff.
func Golden(t T, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatalf("%v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (-want +got, rerun with -update to accept):\n%s", path, Diff(string(want), got))
	}
}
