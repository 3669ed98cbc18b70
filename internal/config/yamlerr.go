package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/autopilot-dev/autopilot/internal/flow"
	"go.yaml.in/yaml/v3"
)

// utf8Text transcodes a UTF-16 file (it starts with a byte order mark) to
// UTF-8, so the YAML parser and the line numbers of errors see the same
// text. Other input is returned as is.
func utf8Text(data []byte) ([]byte, error) {
	var be bool
	switch {
	case bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		be = true
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}):
	default:
		return data, nil
	}
	body := data[2:]
	if len(body)%2 != 0 {
		return nil, &Error{Field: "file", Msg: "incomplete UTF-16 text (odd number of bytes); save the file as UTF-8"}
	}
	u := make([]uint16, len(body)/2)
	for i := range u {
		hi, lo := body[2*i], body[2*i+1]
		if !be {
			hi, lo = lo, hi
		}
		u[i] = uint16(hi)<<8 | uint16(lo)
	}
	return []byte(string(utf16.Decode(u))), nil
}

// decode parses data into c, refusing unknown keys. It returns the parsed
// document, used afterwards to put line numbers on semantic errors, or nil
// when the file holds no document (empty or comments only).
func decode(data []byte, c *Config) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(data, err)
	}
	if doc.Kind == 0 || (len(doc.Content) == 1 && doc.Content[0].Tag == "!!null") {
		return nil, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		return nil, decodeError(&doc, data, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(data, err)
	case len(extra.Content) > 0 && extra.Content[0].Tag != "!!null":
		return nil, &Error{Line: extra.Content[0].Line, Field: "document", Msg: "a config file holds one YAML document; remove the second '---' and what follows"}
	}
	return &doc, nil
}

var (
	lineMsgRE   = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	unmarshalRE = regexp.MustCompile("^cannot unmarshal (!!\\w+)(?: `(.*)`)? into (.+)$")
	unknownRE   = regexp.MustCompile(`^field (.+) not found in type (\S+)$`)
	dupKeyRE    = regexp.MustCompile(`^mapping key "(.*)" already defined at line (\d+)$`)
	durationRE  = regexp.MustCompile(`^("(?:[^"\\]|\\.)*") is not a duration`)
	keyOnLineRE = regexp.MustCompile(`^[ \t]*(?:-[ \t]+)?["']?([A-Za-z0-9_.-]+)["']?[ \t]*:`)
)

// syntaxError turns a YAML parse error into an Error naming the line and,
// when the line starts with a key, that key.
func syntaxError(data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := lineMsgRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if bad := badTokenLine(data, msg, line); bad > 0 {
		line = bad
	} else if line == 0 {
		if line = guessLine(data, msg); line == 0 {
			return &Error{Field: "yaml", Msg: msg}
		}
	}
	text := lineText(data, line)
	field := "yaml"
	if k := keyOnLineRE.FindStringSubmatch(text); k != nil {
		field = k[1]
	}
	if strings.Contains(leadingSpace(text), "\t") {
		msg += " (YAML is indented with spaces; this line starts with a tab)"
	}
	if b := botInFlowRE.FindStringSubmatch(text); b != nil && strings.HasPrefix(msg, "did not find expected ") {
		msg += fmt.Sprintf(` (a login that ends in [bot] inside [...] must be quoted: %s: ["%s"])`, field, b[1])
	}
	return &Error{Line: line, Field: field, Msg: msg}
}

// botInFlowRE: an unquoted App login ("claude[bot]") inside a [...] list,
// which YAML reads as a nested list and refuses.
var botInFlowRE = regexp.MustCompile(`[\[,][ \t]*([A-Za-z0-9][A-Za-z0-9-]*\[bot\])`)

// badTokenLine returns the line of the token the YAML parser refused: the
// first line whose prefix of the file (that line and those above) fails
// with the same problem. The parser itself reports the line where the
// enclosing list or mapping began, counted from 0 for grammar errors, which
// points a reader at the wrong line. from is that reported line, a lower
// bound. It returns 0 when no prefix fails the same way.
//
// The prefixes are searched by bisection (a file of up to 256 KiB may have
// many lines): below the bad token a prefix parses or fails differently,
// from it on it fails with the same problem. A prefix cut inside a [...]
// list spanning several lines can fail the same way early; the line found
// is then the list's last complete line, still at or after its start.
func badTokenLine(data []byte, problem string, from int) int {
	ends := lineEnds(data)
	same := func(k int) bool { return yamlProblem(data[:ends[k-1]]) == problem }
	lo, hi := max(from, 1), len(ends)
	if lo > hi || !same(hi) {
		return 0
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if same(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// yamlProblem parses every document of data and returns the first error's
// problem without its line, or "".
func yamlProblem(data []byte) string {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return ""
		}
		if err != nil {
			msg := strings.TrimPrefix(err.Error(), "yaml: ")
			if m := lineMsgRE.FindStringSubmatch(msg); m != nil {
				msg = m[2]
			}
			return msg
		}
	}
}

// lineEnds returns, for each line splitLines counts, the offset just past
// its line break (or the end of data for the last line).
func lineEnds(data []byte) []int {
	var ends []int
	off := 0
	for _, l := range splitLines(data) {
		off += len(l)
		if off < len(data) {
			off += breakLen(data[off:])
		}
		ends = append(ends, off)
	}
	return ends
}

// breakLen is the length of the line break at the start of b.
func breakLen(b []byte) int {
	switch {
	case bytes.HasPrefix(b, []byte("\r\n")):
		return 2
	case b[0] == '\r' || b[0] == '\n':
		return 1
	case bytes.HasPrefix(b, []byte("\u0085")):
		return 2
	case bytes.HasPrefix(b, []byte("\u2028")) || bytes.HasPrefix(b, []byte("\u2029")):
		return 3
	}
	return 0
}

var anchorRE = regexp.MustCompile(`^unknown anchor '(.*)' referenced$`)

// guessLine finds the line of the errors the YAML parser reports without
// one: a control character, an alias of an unknown anchor.
func guessLine(data []byte, msg string) int {
	for i, l := range splitLines(data) {
		if a := anchorRE.FindStringSubmatch(msg); a != nil && bytes.Contains(l, []byte("*"+a[1])) {
			return i + 1
		}
		if strings.HasPrefix(msg, "control characters") && bytes.ContainsFunc(l, func(r rune) bool {
			return r < 0x20 && r != '\t' && r != '\r' || r == 0x7f
		}) {
			return i + 1
		}
	}
	return 0
}

// decodeError turns the decoder's first error into an Error naming the
// line and the dotted path of the offending field.
func decodeError(root *yaml.Node, data []byte, err error) error {
	text := strings.TrimPrefix(err.Error(), "yaml: ")
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		text = te.Errors[0]
	}
	m := lineMsgRE.FindStringSubmatch(text)
	if m == nil {
		return syntaxError(data, err)
	}
	line, _ := strconv.Atoi(m[1])
	msg := m[2]
	if d := dupKeyRE.FindStringSubmatch(msg); d != nil {
		return &Error{Line: line, Field: locate(root, line, match{key: d[1]}), Msg: fmt.Sprintf("duplicate key (first defined at line %s)", d[2])}
	}
	if u := unknownRE.FindStringSubmatch(msg); u != nil {
		out := fmt.Sprintf("unknown key %q", u[1])
		if known := knownKeys(u[2]); known != "" {
			out += " (known: " + known + ")"
		}
		return &Error{Line: line, Field: locate(root, line, match{key: u[1]}), Msg: out}
	}
	if u := unmarshalRE.FindStringSubmatch(msg); u != nil {
		msg = fmt.Sprintf("want %s, got %s", describeType(u[3]), describeValue(u[1], u[2]))
		switch {
		case u[3] == "config.Config":
			return &Error{Line: line, Field: "document", Msg: msg}
		case u[1] == "!!map" || u[1] == "!!seq":
			return &Error{Line: line, Field: locate(root, line, match{container: u[1]}), Msg: msg}
		}
		return &Error{Line: line, Field: locate(root, line, match{value: u[2]}), Msg: msg}
	}
	if d := durationRE.FindStringSubmatch(msg); d != nil {
		v, _ := strconv.Unquote(d[1])
		return &Error{Line: line, Field: locate(root, line, match{value: v}), Msg: msg}
	}
	return &Error{Line: line, Field: locate(root, line, match{}), Msg: msg}
}

// knownKeys lists the YAML keys of the Go type the decoder named.
func knownKeys(typeName string) string {
	types := map[string]reflect.Type{
		"config.Config":     reflect.TypeOf(Config{}),
		"config.Limits":     reflect.TypeOf(Limits{}),
		"config.Executor":   reflect.TypeOf(Executor{}),
		"config.Jira":       reflect.TypeOf(Jira{}),
		"config.DeployGate": reflect.TypeOf(DeployGate{}),
		"flow.Flow":         reflect.TypeOf(flow.Flow{}),
		"flow.Step":         reflect.TypeOf(flow.Step{}),
		"flow.Loop":         reflect.TypeOf(flow.Loop{}),
	}
	t, ok := types[typeName]
	if !ok {
		return ""
	}
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return strings.Join(keys, ", ")
}

// describeType names a Go type the way a config author thinks of it.
func describeType(goType string) string {
	switch goType {
	case "int":
		return "a whole number"
	case "float64":
		return "a number"
	case "bool", "*bool":
		return "true or false"
	case "string":
		return "a string"
	case "[]string":
		return "a list of strings"
	case "[]flow.Step":
		return "a list of steps"
	case "config.Duration":
		return "a duration (e.g. 90s, 2h)"
	}
	if strings.HasPrefix(goType, "[]") {
		return "a list"
	}
	return "a mapping"
}

// describeValue names the YAML value the decoder could not use.
func describeValue(tag, value string) string {
	switch tag {
	case "!!map":
		return "a mapping"
	case "!!seq":
		return "a list"
	case "!!null":
		return "nothing"
	}
	return strconv.Quote(value)
}

// lineText returns the 1-based line of data, or "".
func lineText(data []byte, line int) string {
	if ls := splitLines(data); line >= 1 && line <= len(ls) {
		return string(ls[line-1])
	}
	return ""
}

// splitLines splits data at the line breaks the YAML parser counts:
// CR LF, CR, LF, NEL (U+0085), LS (U+2028) and PS (U+2029).
func splitLines(data []byte) [][]byte {
	var out [][]byte
	start := 0
	for i := 0; i < len(data); {
		n := breakLen(data[i:])
		if n == 0 {
			i++
			continue
		}
		out = append(out, data[start:i])
		i += n
		start = i
	}
	return append(out, data[start:])
}

func leadingSpace(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}
