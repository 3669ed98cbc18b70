package tasks

import (
	"strconv"
	"strings"
)

// block is one fenced autopilot block found in a comment.
type block struct {
	info  string // EpicsBlock or TasksBlock
	start int    // 1-based comment line of the opening fence
	body  string // content between the fences
}

// fence describes an opening code fence line.
type fence struct {
	indent int
	char   byte
	n      int
	info   string
}

// openFence reports whether line opens a CommonMark code fence: up to three
// spaces, then three or more backticks or tildes, then an info string
// (without backticks for a backtick fence).
func openFence(line string) (fence, bool) {
	indent := len(line) - len(strings.TrimLeft(line, " "))
	if indent > 3 {
		return fence{}, false
	}
	rest := line[indent:]
	if len(rest) < 3 || (rest[0] != '`' && rest[0] != '~') {
		return fence{}, false
	}
	c := rest[0]
	n := len(rest) - len(strings.TrimLeft(rest, string(c)))
	if n < 3 {
		return fence{}, false
	}
	info := strings.TrimSpace(rest[n:])
	if c == '`' && strings.Contains(info, "`") {
		return fence{}, false
	}
	return fence{indent: indent, char: c, n: n, info: info}, true
}

// closes reports whether line closes the fence f.
func (f fence) closes(line string) bool {
	indent := len(line) - len(strings.TrimLeft(line, " "))
	if indent > 3 {
		return false
	}
	rest := strings.TrimRight(line[indent:], " \t")
	return len(rest) >= f.n && strings.Trim(rest, string(f.char)) == ""
}

// dedent removes up to n leading spaces, as CommonMark does for content of
// an indented fence.
func dedent(line string, n int) string {
	for i := 0; i < n && strings.HasPrefix(line, " "); i++ {
		line = line[1:]
	}
	return line
}

// findBlocks returns the autopilot blocks of a comment, skipping every other
// fenced block (so an example inside a ```` fence is not read). An
// autopilot block that is never closed is an error.
func findBlocks(body string) ([]block, error) {
	lines := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	var out []block
	for i := 0; i < len(lines); i++ {
		f, ok := openFence(lines[i])
		if !ok {
			continue
		}
		kind := strings.Fields(f.info + " ")
		ours := len(kind) > 0 && (kind[0] == EpicsBlock || kind[0] == TasksBlock)
		end := -1
		for j := i + 1; j < len(lines); j++ {
			if f.closes(lines[j]) {
				end = j
				break
			}
		}
		if end < 0 {
			if ours {
				return nil, &Error{Where: kind[0], Msg: "block is not closed (its opening fence is on comment line " + strconv.Itoa(i+1) + ")"}
			}
			break // an unclosed fence runs to the end of the comment
		}
		if ours {
			content := make([]string, 0, end-i-1)
			for _, l := range lines[i+1 : end] {
				content = append(content, dedent(l, f.indent))
			}
			out = append(out, block{info: kind[0], start: i + 1, body: strings.Join(content, "\n")})
		}
		i = end
	}
	return out, nil
}
