// Package grammar turns the text of an issue or pull-request comment into a
// decision ("A" to "D") or an `/autopilot` command, following PRODUCT.md §7.
// It is pure: no I/O, no clock, no knowledge of which gate is open or who
// wrote the comment (the engine checks the letter against the gate's options
// and the author's permission). It knows the shape of a command line, not
// the commands: a Grammar is built from the Specs of the engine's command
// table, and engine.Parse is the parser the program uses.
//
// Only one line of a comment matters: the first non-empty line that is
// neither inside a fenced code block (``` or ~~~, closed by a fence of the
// same character at least as long) nor a block quote (`>` after at most three
// spaces). Every later line is ignored, so "A" followed by "/autopilot skip"
// is a choice of A. A line that directly follows quoted paragraph text
// without a blank line is rendered by Markdown as part of the quote (a lazy
// continuation line): it is never a decision or command, only an attempt.
//
// That line is normalised with Unicode NFKC and trimmed, and must then be
// exactly one of the canonical forms:
//
//   - a letter A–D in either case, alone or followed by `)`, `.`, `:` or
//     white space and a free-text reason ("A", "b)", "C. because", "d: ok");
//     a reason made only of option letters ("A B", "A or B") is ambiguous.
//     A letter a or A followed by words also matches ("a quick question"
//     reads as a choice of A): the engine only acts on a Choice while a gate
//     is open and the author may answer;
//   - `/autopilot choose <letter>` (a Spec with Letter set) with an
//     optional reason;
//   - `/autopilot <command> [args]` for the commands the Grammar lists (the word
//     "/autopilot" and the command word are matched case-insensitively, in
//     ASCII only); a command's aliases (`jira sync` for `tasks sync`) parse
//     as the command itself.
//
// NFKC folds compatibility forms, so fullwidth `Ａ` (U+FF21), mathematical
// `𝐀` and circled `Ⓐ` are accepted as A and `／autopilot` as `/autopilot`.
// Letters of other scripts that merely look Latin (Cyrillic `А`, Greek `Α`,
// Cherokee `Ꭺ`, …) are never a decision: NFKC keeps them apart and this
// package never maps them to a choice. A line holding any invisible or
// text-direction character (zero-width space and joiners, word joiner, BOM,
// bidi embeddings, overrides and isolates, other format or control
// characters, variation selectors) is never a decision or a command either.
//
// When a non-canonical line looks like an attempt (a lookalike letter, a
// letter wrapped in markdown such as `**A**`, "Option A", a letter E–Z, an
// unknown sub-command or a command with missing arguments) Parse reports
// Attempt with a short Hint, so the bot can answer once with "did you mean".
//
// The package must never turn anything but a canonical line into a Choice or
// Command, never read past the first effective line, and never copy the
// user's text into a Hint.
package grammar

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Kind says what a comment's first effective line is.
type Kind int

const (
	// None means the comment is neither a decision nor a command.
	None Kind = iota
	// Choice means the comment picks an option letter of the open decision.
	Choice
	// Command means the comment is an `/autopilot` command.
	Command
)

// Result is what Parse read from a comment. For Kind None, Letter and Cmd are
// always empty; Attempt and Hint say whether the bot should answer.
type Result struct {
	Kind Kind
	// Letter is the chosen option, "A" to "D" in upper case, for Choice
	// (also from `/autopilot choose b`).
	Letter string
	// Reason is the free text after the letter, trimmed.
	Reason string
	// Cmd names the command (a Spec's Name), and "choose" on the Choice
	// that `/autopilot choose <letter>` produces.
	Cmd string
	// Text is the command's free-text argument (summary, reason, note or
	// detail), trimmed; empty when none was given. Commands without
	// arguments (status, retry, stop, ...) keep any trailing words here.
	Text string
	// Phase is the <phase> of `/autopilot progress`.
	Phase int
	// Name is the kebab-case <name> of progress, the <step> of back and the
	// <role> of approve and reject, lower-cased.
	Name string
	// Confidence is the value of `/autopilot done --confidence X` (0..1),
	// nil when the flag was not given.
	Confidence *float64
	// Attempt is true when the comment looks like an attempt at a decision
	// or command but is not canonical. The bot answers it once.
	Attempt bool
	// Hint is the "did you mean" or usage text for an Attempt. It is built
	// from this package's own words only, never from the comment.
	Hint string
}

// Acts reports whether the comment could act: a decision, a command, or
// an attempt at one that earns a reply. Anything else is chatter.
func (r Result) Acts() bool { return r.Kind != None || r.Attempt }

// Hints for attempts. They are the bot's words; nothing of the comment is
// ever copied into them.
const (
	hintAmbiguous  = "a reply must pick exactly one option: put a single letter such as `A` on the first line"
	hintOutOfRange = "only the letters A to D name options: reply with one of the letters shown in the decision block"
	hintUnknown    = "unknown /autopilot command: `/autopilot help` lists the commands"
	noteInvisible  = " (the line contains invisible or text-direction characters: type it again without them)"
	noteLookalike  = " (a character there only looks like a Latin letter: type the plain letter)"
	noteLazy       = " (leave a blank line after a quote: as written, this line is shown as part of the quote)"
	maxNameLen     = 64
	maxPhase       = 1 << 20
)

// Spec is the grammar of one `/autopilot` command: its arguments in order,
// and the words Usage and the usage hints show for it. The engine's command
// table holds one Spec per command; the parser knows no command of its own.
type Spec struct {
	Name string // command word(s), lower-case ASCII, e.g. "progress" or "tasks sync"
	// Aliases are other names of the same command (e.g. "jira sync" for
	// "tasks sync"): they parse as Name, and Usage mentions them.
	Aliases  []string
	Args     string // argument synopsis
	About    string // one-line description for Usage
	Rule     string // what the arguments must look like, for the usage hint
	Flags    bool   // accepts a leading --confidence X (done)
	Phase    bool   // first argument is a whole number, 0 or more
	Slug     bool   // next argument is a kebab-case name
	NeedText bool   // free text after the fixed arguments is required
	Letter   bool   // the argument is an option letter: the result is a Choice (choose)
}

// Grammar parses comments against a list of command Specs.
type Grammar struct {
	specs []Spec
}

// NewGrammar returns the grammar of the given commands, in the order Usage
// lists them. It panics on a name that is not lower-case ASCII words (one
// or two) or that is given twice: a command table is the program's own
// data, and a bad one must not start.
func NewGrammar(specs ...Spec) *Grammar {
	seen := map[string]bool{}
	for _, s := range specs {
		for _, name := range s.names() {
			words := strings.Split(name, " ")
			if len(words) > 2 || seen[name] {
				panic("reply: bad or repeated command name " + strconv.Quote(name))
			}
			for _, w := range words {
				if w == "" || strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") != "" {
					panic("reply: bad command name " + strconv.Quote(name))
				}
			}
			seen[name] = true
		}
	}
	return &Grammar{specs: specs}
}

// Names lists the command names in table order.
func (g *Grammar) Names() []string {
	out := make([]string, len(g.specs))
	for i, s := range g.specs {
		out[i] = s.Name
	}
	return out
}

// Synopses lists each command's synopsis, e.g. "/autopilot fail <reason>".
func (g *Grammar) Synopses() []string {
	out := make([]string, len(g.specs))
	for i, s := range g.specs {
		out[i] = s.synopsis()
	}
	return out
}

// Usage returns the help text listing every command with its arguments, for
// `/autopilot help`. Its first line is not itself a decision or a command.
func (g *Grammar) Usage() string {
	var b strings.Builder
	b.WriteString("Autopilot understands these replies, written as the first line of a comment:\n\n")
	b.WriteString("- `A`, `B`, `C` or `D`, optionally followed by `)`, `.` or `:` and a reason: answer the open decision\n")
	for _, s := range g.specs {
		b.WriteString("- `" + s.synopsis() + "`")
		for _, a := range s.Aliases {
			b.WriteString(" (or `" + s.synopsisAs(a) + "`)")
		}
		b.WriteString(": " + s.About)
		if s.Rule != "" {
			b.WriteString("; " + s.Rule)
		}
		b.WriteString("\n")
	}
	b.WriteString("\nQuoted lines and code blocks are ignored, and so is every line after the first.\n")
	return b.String()
}

func (s Spec) synopsis() string { return s.synopsisAs(s.Name) }

// synopsisAs is the synopsis with the command called name (an alias).
func (s Spec) synopsisAs(name string) string {
	if s.Args == "" {
		return "/autopilot " + name
	}
	return "/autopilot " + name + " " + s.Args
}

// names lists the command's name and its aliases.
func (s Spec) names() []string { return append([]string{s.Name}, s.Aliases...) }

func (s Spec) usage() string {
	h := "usage: `" + s.synopsis() + "`"
	if s.Rule != "" {
		h += " (" + s.Rule + ")"
	}
	return h
}

// Parse reads the first effective line of a comment body and says whether it
// is a decision, a command, an attempt at one, or nothing. It never fails:
// any input, however long or malformed, gives a Result.
func (g *Grammar) Parse(body string) Result {
	line, lazy, ok := firstLine(body)
	if !ok {
		return Result{}
	}
	n := strings.TrimSpace(norm.NFKC.String(line))
	invisible := hasInvisible(line) || hasInvisible(n)
	var failed Result
	if !invisible {
		r, matched := g.parseCanonical(n)
		switch {
		case matched && !r.Attempt && lazy:
			return Result{Attempt: true, Hint: "did you mean `" + g.canonical(r) + "`?" + noteLazy}
		case matched && !r.Attempt:
			return r
		}
		failed = r
	}
	if r := g.suggest(line, n, invisible); r.Attempt {
		return r
	}
	return failed
}

// firstLine returns the first non-blank line outside fenced code blocks and
// block quotes. Lines end at "\r\n", "\n" or "\r". lazy reports that the line
// directly follows a quoted paragraph: Markdown renders it inside the quote
// (a "lazy continuation line"), so it must not count as an answer.
func firstLine(body string) (line string, lazy, ok bool) {
	var open fence // open.n == 0: not inside a fenced code block
	inQuote := false
	for body != "" {
		line, body = body, ""
		if i := strings.IndexAny(line, "\r\n"); i >= 0 {
			end := i + 1
			if line[i] == '\r' && end < len(line) && line[end] == '\n' {
				end++
			}
			line, body = line[:i], line[end:]
		}
		if open.n > 0 {
			if open.closes(line) {
				open = fence{}
			}
			continue
		}
		if text, quoted := quoteText(line); quoted {
			inQuote = isParagraph(text)
			continue
		}
		if strings.TrimSpace(line) == "" {
			inQuote = false
			continue
		}
		f, isFence := openFence(line)
		if !isFence {
			return line, inQuote, true
		}
		open, inQuote = f, false
	}
	return "", false, false
}

// fence is an open fenced code block: its character and length.
type fence struct {
	char byte
	n    int
}

// indent strips at most three leading spaces; ok is false when the line is
// indented further (an indented code block, not a fence or a quote).
func indent(line string) (string, bool) {
	for i := 0; i < 4; i++ {
		if i == len(line) || line[i] != ' ' {
			return line[i:], true
		}
	}
	return line, false
}

// openFence reports whether line opens a fenced code block.
func openFence(line string) (fence, bool) {
	s, ok := indent(line)
	if !ok || len(s) < 3 || (s[0] != '`' && s[0] != '~') {
		return fence{}, false
	}
	n := run(s, s[0])
	if n < 3 || (s[0] == '`' && strings.IndexByte(s[n:], '`') >= 0) {
		return fence{}, false
	}
	return fence{char: s[0], n: n}, true
}

// closes reports whether line closes the fenced code block f.
func (f fence) closes(line string) bool {
	s, ok := indent(line)
	if !ok {
		return false
	}
	n := run(s, f.char)
	return n >= f.n && strings.Trim(s[n:], " \t") == ""
}

// run counts the leading bytes of s equal to c.
func run(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// quoteText strips the block-quote markers (">", nested or not) from line;
// quoted is false when line is not a quote line. Text indented as code
// inside the quote comes back empty.
func quoteText(line string) (text string, quoted bool) {
	s, ok := indent(line)
	for ok && strings.HasPrefix(s, ">") {
		quoted = true
		s, ok = indent(strings.TrimPrefix(s[1:], " "))
	}
	if !ok {
		return "", quoted
	}
	return s, quoted
}

// isParagraph reports whether the text of a quote line is paragraph text,
// which a following unquoted line continues: not blank, and not a fence,
// an ATX heading or a thematic break.
func isParagraph(text string) bool {
	if strings.TrimSpace(text) == "" {
		return false
	}
	if _, ok := openFence(text); ok {
		return false
	}
	if h := run(text, '#'); h >= 1 && h <= 6 && (h == len(text) || text[h] == ' ' || text[h] == '\t') {
		return false
	}
	return !isBreak(text)
}

// isBreak reports whether text is a thematic break: three or more "-", "*"
// or "_", all the same, with only spaces and tabs between them.
func isBreak(text string) bool {
	rest := strings.TrimLeft(text, " \t")
	if rest == "" || strings.IndexByte("-*_", rest[0]) < 0 {
		return false
	}
	c, n := rest[0], 0
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case c:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

// isInvisible reports whether r is a character a reader cannot see or that
// reorders the text around it: controls (other than tab), format characters
// (zero-width, bidi, BOM, ...), other default-ignorable code points,
// variation selectors, and the replacement for invalid UTF-8.
func isInvisible(r rune) bool {
	if r == '\t' {
		return false
	}
	return r == utf8.RuneError || unicode.IsControl(r) ||
		unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

func hasInvisible(s string) bool {
	return strings.IndexFunc(s, isInvisible) >= 0
}

// parseCanonical parses a normalised, trimmed line. matched reports that the
// line has the shape of a letter reply or an `/autopilot` command; the result
// is then either a Choice or Command, or an Attempt with a usage hint.
func (g *Grammar) parseCanonical(n string) (Result, bool) {
	word, rest := cut(n)
	if asciiLower(word) == "/autopilot" {
		return g.parseCommand(rest), true
	}
	letter, reason, ok := parseLetter(n)
	if !ok {
		return Result{}, false
	}
	if isAmbiguous(n) {
		return Result{Attempt: true, Hint: hintAmbiguous}, true
	}
	return Result{Kind: Choice, Letter: letter, Reason: reason}, true
}

// parseLetter parses "X", "X)", "X.", "X:" or any of those followed by white
// space and a reason, where X is A–D in either case.
func parseLetter(s string) (letter, reason string, ok bool) {
	if s == "" || !isOption(s[0]) {
		return "", "", false
	}
	letter, rest := string(s[0]&^0x20), s[1:]
	if rest != "" && strings.IndexByte(").:", rest[0]) >= 0 {
		rest = rest[1:]
	}
	if rest == "" {
		return letter, "", true
	}
	if r, _ := utf8.DecodeRuneInString(rest); !unicode.IsSpace(r) {
		return "", "", false
	}
	return letter, strings.TrimSpace(rest), true
}

// isOption reports whether c is an ASCII option letter, A–D or a–d.
func isOption(c byte) bool {
	return (c >= 'A' && c <= 'D') || (c >= 'a' && c <= 'd')
}

// parseCommand parses what follows "/autopilot".
func (g *Grammar) parseCommand(rest string) Result {
	word, rest := cut(rest)
	name := asciiLower(word)
	group := g.group(name)
	if len(group) > 0 {
		var sub string
		sub, rest = cut(rest)
		name += " " + asciiLower(sub)
	}
	s, ok := g.lookup(name)
	switch {
	case !ok && len(group) > 0:
		return Result{Attempt: true, Hint: groupHint(group)}
	case !ok:
		return Result{Attempt: true, Hint: hintUnknown}
	case s.Letter:
		return parseChoose(s, rest)
	}
	res := Result{Kind: Command, Cmd: s.Name}
	if s.Flags {
		if res.Confidence, rest, ok = parseFlags(rest); !ok {
			return Result{Attempt: true, Hint: s.usage()}
		}
	}
	if s.Phase {
		var w string
		w, rest = cut(rest)
		if res.Phase, ok = parsePhase(w); !ok {
			return Result{Attempt: true, Hint: s.usage()}
		}
	}
	if s.Slug {
		var w string
		w, rest = cut(rest)
		if res.Name = asciiLower(w); !isKebab(res.Name) {
			return Result{Attempt: true, Hint: s.usage()}
		}
	}
	if s.NeedText && rest == "" {
		return Result{Attempt: true, Hint: s.usage()}
	}
	res.Text = rest
	return res
}

// lookup finds the command called name (its Name or an alias).
func (g *Grammar) lookup(name string) (Spec, bool) {
	for _, s := range g.specs {
		if slices.Contains(s.names(), name) {
			return s, true
		}
	}
	return Spec{}, false
}

// group lists the two-word command names whose first word is word ("tasks"
// gives tasks retry and tasks sync; the alias "jira" gives jira retry and
// jira sync).
func (g *Grammar) group(word string) []string {
	var out []string
	for _, s := range g.specs {
		for _, name := range s.names() {
			if first, _, two := strings.Cut(name, " "); two && first == word {
				out = append(out, s.synopsisAs(name))
			}
		}
	}
	return out
}

// groupHint is the usage hint of a two-word command given with an unknown
// second word: "usage: `/autopilot tasks retry` or `/autopilot tasks sync`".
func groupHint(group []string) string {
	h := "usage: "
	for i, synopsis := range group {
		switch {
		case i == 0:
		case i == len(group)-1:
			h += " or "
		default:
			h += ", "
		}
		h += "`" + synopsis + "`"
	}
	return h
}

// parseChoose parses the argument of `/autopilot choose`.
func parseChoose(s Spec, rest string) Result {
	letter, reason, ok := parseLetter(rest)
	if !ok {
		return Result{Attempt: true, Hint: s.usage()}
	}
	if isAmbiguous(rest) {
		return Result{Attempt: true, Hint: hintAmbiguous}
	}
	return Result{Kind: Choice, Letter: letter, Reason: reason, Cmd: s.Name}
}

// parseFlags reads done's leading flags: "--confidence X" or
// "--confidence=X", once, and "--" to end the flags.
func parseFlags(rest string) (*float64, string, bool) {
	var conf *float64
	for strings.HasPrefix(rest, "--") {
		word, after := cut(rest)
		if word == "--" {
			return conf, after, true
		}
		name, value, hasValue := strings.Cut(word, "=")
		if asciiLower(name) != "--confidence" || conf != nil {
			return nil, "", false
		}
		if !hasValue {
			value, after = cut(after)
		}
		f, ok := parseConfidence(value)
		if !ok {
			return nil, "", false
		}
		conf, rest = &f, after
	}
	return conf, rest, true
}

// parseConfidence accepts a plain decimal from 0 to 1 ("0.7", ".5", "1").
func parseConfidence(s string) (float64, bool) {
	digits, dots := 0, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] >= '0' && s[i] <= '9':
			digits++
		case s[i] == '.':
			dots++
		default:
			return 0, false
		}
	}
	if digits == 0 || dots > 1 {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1 {
		return 0, false
	}
	return f, true
}

// parsePhase accepts a whole number written in ASCII digits, 0 or more.
func parsePhase(s string) (int, bool) {
	if s == "" || len(s) > 7 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	p, err := strconv.Atoi(s)
	if err != nil || p > maxPhase {
		return 0, false
	}
	return p, true
}

// isKebab reports whether s is lower-case kebab-case: ASCII letters and
// digits in words joined by single hyphens.
func isKebab(s string) bool {
	if s == "" || len(s) > maxNameLen || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '-' {
			return false
		}
	}
	return true
}

// cut splits s at its first run of white space: the first word and the
// trimmed rest.
func cut(s string) (word, rest string) {
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}

// asciiLower lower-cases ASCII letters only, so that no non-ASCII character
// can fold into a command word.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Attempt detection. Everything below only decides whether and how the bot
// answers a line that is not canonical; none of it can produce a Choice or
// Command.

// lookalikes maps letters of other scripts (and a few slashes) that are easily
// mistaken for the Latin letters of "A"–"D" and "/autopilot" to those
// letters, after the Unicode confusables data. NFKC keeps them distinct.
var lookalikes = map[rune]rune{
	// A, a
	0x0391: 'A', 0x0410: 'A', 0x13AA: 'A', 0x15C5: 'A', 0xA4EE: 'A', 0x2C80: 'A', 0x1D00: 'A',
	0x03B1: 'a', 0x0430: 'a', 0x0251: 'a', 0x237A: 'a',
	// B, b
	0x0392: 'B', 0x0412: 'B', 0x13F4: 'B', 0x15F7: 'B', 0xA4D0: 'B', 0x2C82: 'B', 0x0299: 'B',
	0x0432: 'B', 0x03B2: 'B',
	0x0184: 'b', 0x042C: 'b', 0x044C: 'b', 0x13CF: 'b', 0x1472: 'b', 0x15AF: 'b',
	// C, c
	0x03F9: 'C', 0x0421: 'C', 0x13DF: 'C', 0x2CA4: 'C', 0xA4DA: 'C', 0x1D04: 'C',
	0x03F2: 'c', 0x0441: 'c', 0x2CA5: 'c',
	// D, d
	0x13A0: 'D', 0x15DE: 'D', 0x15EA: 'D', 0xA4D3: 'D', 0x1D05: 'D',
	0x0501: 'd', 0x13E7: 'd', 0x146F: 'd', 0xA4D2: 'd',
	// the other letters of "autopilot", and slashes
	0x043E: 'o', 0x03BF: 'o', 0x0585: 'o', 0x1D0F: 'o', 0x041E: 'O', 0x039F: 'O',
	0x0440: 'p', 0x03C1: 'p', 0x1D18: 'p', 0x0420: 'P', 0x03A1: 'P',
	0x0456: 'i', 0x03B9: 'i', 0x026A: 'i', 0x0406: 'I', 0x0399: 'I', 0x04CF: 'l',
	0x057D: 'u', 0x03C5: 'u', 0x1D1C: 'u', 0x0422: 'T', 0x03A4: 'T', 0x1D1B: 't',
	0x2215: '/', 0x2044: '/', 0x29F8: '/',
}

func mapLookalikes(s string) string {
	return strings.Map(func(r rune) rune {
		if l, ok := lookalikes[r]; ok {
			return l
		}
		return r
	}, s)
}

// skeleton is the line as a reader would read it: lookalikes mapped to Latin,
// invisible characters and combining marks dropped, NFKC, trimmed.
func skeleton(line string) string {
	s := mapLookalikes(norm.NFKD.String(mapLookalikes(line)))
	s = strings.Map(func(r rune) rune {
		if isInvisible(r) || unicode.In(r, unicode.Mn, unicode.Me) {
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(norm.NFKC.String(s))
}

// suggest decides whether a line that is not canonical (n is its NFKC form)
// looks like an attempt, and returns an Attempt result with a hint if so.
func (g *Grammar) suggest(line, n string, invisible bool) Result {
	sk := skeleton(line)
	note := ""
	switch {
	case invisible:
		note = noteInvisible
	case sk != n:
		note = noteLookalike
	}
	foreign := foreignLead(n)
	if r, matched := g.parseCanonical(sk); matched {
		if r.Attempt {
			r.Hint += note
			return r
		}
		if note == "" {
			return Result{}
		}
		// "А вот …" is Russian, not a reply: a lookalike followed by plain
		// text is left alone; a lookalike alone or with ")", "." or ":" is not.
		if r.Kind == Choice && r.Cmd == "" && foreign && len(sk) > 1 && sk[1] != ')' && sk[1] != '.' && sk[1] != ':' {
			return Result{}
		}
		return Result{Attempt: true, Hint: "did you mean `" + g.canonical(r) + "`?" + note}
	}
	if h := looseHint(sk, foreign); h != "" {
		return Result{Attempt: true, Hint: h + note}
	}
	return Result{}
}

// canonical is the canonical spelling of a decision or the synopsis of a
// command, for "did you mean".
func (g *Grammar) canonical(r Result) string {
	if r.Kind == Choice {
		if r.Cmd != "" {
			return "/autopilot " + r.Cmd + " " + r.Letter
		}
		return r.Letter
	}
	s, _ := g.lookup(r.Cmd)
	return s.synopsis()
}

// foreignLead reports whether the first visible character of n is not ASCII.
func foreignLead(n string) bool {
	for _, r := range n {
		if !isInvisible(r) && !unicode.IsSpace(r) {
			return r >= utf8.RuneSelf
		}
	}
	return false
}

// connectors may stand between letters in an ambiguous reply ("A or B").
var connectors = map[string]bool{
	"or": true, "and": true, "vs": true, "versus": true, "then": true, "either": true, "nor": true,
}

// prefixes are words people put before a letter ("Option A", "- A").
var prefixes = [][]string{
	{"option"}, {"choice"}, {"answer"}, {"choose"}, {"pick"}, {"select"}, {"letter"}, {"vote"},
	{"i", "choose"}, {"i", "pick"}, {"i", "vote"}, {"i", "vote", "for"}, {"go", "with"},
	{"let's", "go", "with"}, {"lets", "go", "with"}, {"going", "with"},
	{"-"}, {"*"}, {"+"}, {"•"},
}

// isAmbiguous reports whether s is nothing but two or more option letters
// with connectors and punctuation between them ("A B", "A or B", "A/B").
func isAmbiguous(s string) bool {
	letters := 0
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(",/|;&+-", r)
	}) {
		core := asciiLower(unwrap(tok))
		switch {
		case len(core) == 1 && isOption(core[0]):
			letters++
		case connectors[core] || strings.IndexFunc(core, isWordRune) < 0:
		default:
			return false
		}
	}
	return letters >= 2
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// unwrap strips markdown emphasis, brackets, quotes and trailing
// punctuation around a word: "**A**", "(A)", "`A`", "A," all give "A".
func unwrap(tok string) string {
	return strings.TrimRight(strings.TrimLeft(tok, "*_`([{<\"'“‘«"), "*_`)]}>\"'”’».,;:!?")
}

// looseHint recognises a letter the reader meant as a reply but did not
// write canonically, in the skeleton sk of a line.
func looseHint(sk string, foreign bool) string {
	if isAmbiguous(sk) {
		return hintAmbiguous
	}
	if strings.HasPrefix(asciiLower(sk), "/autopilot") {
		return hintUnknown
	}
	toks := strings.Fields(sk)
	prefixed := false
	for _, p := range prefixes {
		if hasPrefixWords(toks, p) {
			toks, prefixed = toks[len(p):], true
			break
		}
	}
	if len(toks) == 0 {
		return ""
	}
	if prefixed && len(toks) > 1 && isAmbiguous(strings.Join(toks, " ")) {
		return hintAmbiguous
	}
	core := unwrap(toks[0])
	if len(core) != 1 || !unicode.IsLetter(rune(core[0])) || core[0] >= utf8.RuneSelf {
		return ""
	}
	if !isOption(core[0]) {
		if len(toks) == 1 {
			return hintOutOfRange
		}
		return ""
	}
	if (core == toks[0] && !prefixed) || (foreign && len(toks) > 1) {
		return ""
	}
	return "did you mean `" + string(core[0]&^0x20) + "`?"
}

// hasPrefixWords reports whether toks starts with the words of p, ignoring
// ASCII case and a colon after the last word ("Option: A").
func hasPrefixWords(toks, p []string) bool {
	if len(toks) <= len(p) {
		return false
	}
	for i, w := range p {
		t := asciiLower(toks[i])
		if i == len(p)-1 {
			t = strings.TrimSuffix(t, ":")
		}
		if t != w {
			return false
		}
	}
	return true
}
