package grammar_test

import (
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/grammar"
)

// The oracle below restates PRODUCT.md §7 with regular expressions, written
// apart from reply.go and sharing none of its helpers: it finds the first
// effective line on its own and says whether that line is canonical.
var (
	oracleBreak  = regexp.MustCompile(`\r\n|\r|\n`)
	oracleQuote  = regexp.MustCompile(`^ {0,3}>`)
	oracleFence  = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})(.*)$")
	oracleLetter = regexp.MustCompile(`^([A-Da-d])[).:]?(?:[\t\p{Z}].*)?$`)
	oracleChoose = regexp.MustCompile(`^(?i:/autopilot)[\t\p{Z}]+(?i:choose)[\t\p{Z}]+([A-Da-d])[).:]?(?:[\t\p{Z}].*)?$`)
	oracleCmd    = regexp.MustCompile(`^(?i:/autopilot)[\t\p{Z}]+[A-Za-z]`)
	// A quote line holding paragraph text: an unquoted line right after it
	// is rendered inside the quote.
	oracleQuotedText = regexp.MustCompile(`^(?: {0,3}>)+ {0,4}[\p{L}\p{N}]`)
)

// Scripts whose letters look Latin; none of them may ever become a choice.
var lookalikeScripts = []*unicode.RangeTable{
	unicode.Cyrillic, unicode.Greek, unicode.Cherokee, unicode.Coptic, unicode.Lisu,
	unicode.Canadian_Aboriginal, unicode.Armenian,
}

// knownCommands are the names of the engine's command table: Parse never
// makes up a command name.
var knownCommands = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range engine.Grammar().Names() {
		m[n] = n != "choose" // choose gives a Choice, never a Command
	}
	return m
}()

// oracleLine returns the first line that is not blank, not quoted and not
// inside a fenced code block, and says whether it continues quoted text.
func oracleLine(body string) (line string, inQuote, ok bool) {
	closer := (*regexp.Regexp)(nil)
	lines := oracleBreak.Split(body, -1)
	for i, line := range lines {
		if closer != nil {
			if closer.MatchString(line) {
				closer = nil
			}
			continue
		}
		if strings.TrimSpace(line) == "" || oracleQuote.MatchString(line) {
			continue
		}
		if m := oracleFence.FindStringSubmatch(line); m != nil && !(m[1][0] == '`' && strings.Contains(m[2], "`")) {
			closer = regexp.MustCompile("^ {0,3}" + regexp.QuoteMeta(m[1][:1]) + "{" + strconv.Itoa(len(m[1])) + ",}[ \t]*$")
			continue
		}
		return line, i > 0 && oracleQuotedText.MatchString(lines[i-1]), true
	}
	return "", false, false
}

// oracleClean reports whether line is valid UTF-8 free of controls (other
// than tab), format characters, default-ignorables and variation selectors.
func oracleClean(line string) bool {
	if !utf8.ValidString(line) {
		return false
	}
	for _, r := range line {
		if (unicode.IsControl(r) && r != '\t') ||
			unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) {
			return false
		}
	}
	return true
}

// oracleLetterSource checks the character the user typed for the letter:
// not from a lookalike script, and folding under NFKC to the ASCII letter.
func oracleLetterSource(t *testing.T, typed string, letter string) {
	t.Helper()
	r, _ := utf8.DecodeRuneInString(typed)
	for _, script := range lookalikeScripts {
		if unicode.Is(script, r) {
			t.Fatalf("letter %q typed as %U from a lookalike script became a choice", letter, r)
		}
	}
	folded := norm.NFKC.String(string(r))
	if folded == "" || !strings.EqualFold(folded[:1], letter) {
		t.Fatalf("letter %q typed as %U (NFKC %q) does not fold to it", letter, r, folded)
	}
}

func checkChoice(t *testing.T, body string, got grammar.Result) {
	t.Helper()
	if !map[string]bool{"A": true, "B": true, "C": true, "D": true}[got.Letter] {
		t.Fatalf("choice letter %q is not one of A, B, C, D", got.Letter)
	}
	line, inQuote, ok := oracleLine(body)
	if !ok || inQuote {
		t.Fatalf("choice %s from a comment without an effective line outside quotes", got.Letter)
	}
	if !oracleClean(line) {
		t.Fatalf("choice %s from line %q with invisible characters", got.Letter, line)
	}
	n := strings.TrimFunc(norm.NFKC.String(line), unicode.IsSpace)
	raw := strings.TrimFunc(line, unicode.IsSpace)
	if m := oracleLetter.FindStringSubmatch(n); m != nil && got.Cmd == "" {
		if !strings.EqualFold(m[1], got.Letter) {
			t.Fatalf("line %q chooses %s, Parse said %s", n, m[1], got.Letter)
		}
		oracleLetterSource(t, raw, got.Letter)
		return
	}
	if m := oracleChoose.FindStringSubmatch(n); m != nil && got.Cmd == "choose" {
		if !strings.EqualFold(m[1], got.Letter) {
			t.Fatalf("line %q chooses %s, Parse said %s", n, m[1], got.Letter)
		}
		if f := strings.Fields(raw); len(f) >= 3 {
			oracleLetterSource(t, f[2], got.Letter)
		}
		return
	}
	t.Fatalf("choice %s (cmd %q) from non-canonical line %q (NFKC %q)", got.Letter, got.Cmd, line, n)
}

func checkCommand(t *testing.T, body string, got grammar.Result) {
	t.Helper()
	if !knownCommands[got.Cmd] || got.Letter != "" {
		t.Fatalf("command result %s", show(got))
	}
	line, inQuote, ok := oracleLine(body)
	if !ok || inQuote || !oracleClean(line) {
		t.Fatalf("command %q from line %q", got.Cmd, line)
	}
	if n := strings.TrimFunc(norm.NFKC.String(line), unicode.IsSpace); !oracleCmd.MatchString(n) {
		t.Fatalf("command %q from line %q that does not start with /autopilot", got.Cmd, n)
	}
	if got.Confidence != nil && (*got.Confidence < 0 || *got.Confidence > 1) {
		t.Fatalf("confidence %v out of range", *got.Confidence)
	}
	if got.Phase < 0 {
		t.Fatalf("negative phase %d", got.Phase)
	}
}

// checkHint: hints are the bot's own plain ASCII words, never the user's.
func checkHint(t *testing.T, got grammar.Result) {
	t.Helper()
	if got.Attempt != (got.Hint != "") {
		t.Fatalf("Attempt %v with hint %q", got.Attempt, got.Hint)
	}
	for _, r := range got.Hint {
		if r < ' ' || r > '~' || r == '@' || r == '#' {
			t.Fatalf("hint %q holds %q: not the bot's plain words", got.Hint, r)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.body)
	}
	f.Fuzz(checkParse)
}

// TestParseSmallInputsAgainstOracle runs the fuzz checks on every string of
// up to four pieces drawn from the characters that matter to the grammar.
func TestParseSmallInputsAgainstOracle(t *testing.T) {
	pieces := []string{
		"A", "b", "E", "\u0410", "\u03b1", "\uff21", "\u0301", "\u200b", "\u202e", " ", "\t", "\n", "\r",
		">", "```", "~~~", ")", ".", ":", "*", "/autopilot choose ", "/autopilot done --confidence ", "0.5",
	}
	maxDepth := 4
	if testing.Short() {
		maxDepth = 3
	}
	var walk func(prefix string, depth int)
	walk = func(prefix string, depth int) {
		checkParse(t, prefix)
		if depth == maxDepth {
			return
		}
		for _, p := range pieces {
			walk(prefix+p, depth+1)
		}
	}
	walk("", 0)
}

// checkParse asserts the properties every Parse result must have.
func checkParse(t *testing.T, body string) {
	t.Helper()
	got := engine.Parse(body)
	checkHint(t, got)
	switch got.Kind {
	case grammar.None:
		if got.Letter != "" || got.Cmd != "" {
			t.Fatalf("None with letter %q, cmd %q", got.Letter, got.Cmd)
		}
		return
	case grammar.Choice:
		checkChoice(t, body, got)
	case grammar.Command:
		checkCommand(t, body, got)
	default:
		t.Fatalf("unknown kind %d", got.Kind)
	}
	if got.Attempt {
		t.Fatalf("decision or command marked as an attempt: %s", show(got))
	}
	if again := engine.Parse(body + "\n/autopilot skip\nA"); !reflect.DeepEqual(again, got) {
		t.Fatalf("later lines changed the result: %s, then %s", show(got), show(again))
	}
}
