package grammar_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/grammar"
)

// parseCase is one comment body and what Parse must make of it. hint is a
// substring the Hint must contain; the Hint must be empty when hint is "".
type parseCase struct {
	name string
	body string
	want grammar.Result
	hint string
}

func choice(letter, reason string) grammar.Result {
	return grammar.Result{Kind: grammar.Choice, Letter: letter, Reason: reason}
}

func chooseCmd(letter, reason string) grammar.Result {
	return grammar.Result{Kind: grammar.Choice, Letter: letter, Reason: reason, Cmd: "choose"}
}

func command(cmd, text string) grammar.Result {
	return grammar.Result{Kind: grammar.Command, Cmd: cmd, Text: text}
}

func named(cmd, name, text string) grammar.Result {
	return grammar.Result{Kind: grammar.Command, Cmd: cmd, Name: name, Text: text}
}

func progress(phase int, name, text string) grammar.Result {
	return grammar.Result{Kind: grammar.Command, Cmd: "progress", Phase: phase, Name: name, Text: text}
}

func done(conf float64, text string) grammar.Result {
	return grammar.Result{Kind: grammar.Command, Cmd: "done", Confidence: &conf, Text: text}
}

var attempt = grammar.Result{Attempt: true}

const (
	didYouMeanA  = "did you mean `A`?"
	ambiguous    = "exactly one option"
	outOfRange   = "only the letters A to D"
	unknown      = "`/autopilot help`"
	invisibleMsg = "invisible"
	lookalikeMsg = "looks like a Latin letter"
)

// longComment is a 65,536-character comment whose line 1000 is "A".
func longComment() string {
	var b strings.Builder
	for i := 1; i < 1000; i++ {
		b.WriteString("Some discussion of the plan, not an answer.\n")
	}
	b.WriteString("A\n")
	for b.Len() < 65536 {
		b.WriteString("x")
	}
	return b.String()[:65536]
}

// chooseBlock is a Choose block as the bot posts it (PRODUCT.md §7).
const chooseBlock = `══════════════════════════════════════
 DECISION REQUIRED: Decompose complete — start implementation?
══════════════════════════════════════
 A) Start implementation with a fresh executor session (recommended)
 B) Continue in the current executor session
══════════════════════════════════════
 Recommendation: A — implementation is the longest phase, fresh context helps
══════════════════════════════════════
Reply with the letter (e.g. ` + "`A`" + `) as the first line of a comment, here or on the linked PR.`

var parseCases = []parseCase{
	// Canonical letters.
	{name: "upper-case letter alone", body: "A", want: choice("A", "")},
	{name: "lower-case letter alone", body: "a", want: choice("A", "")},
	{name: "letter D alone", body: "D", want: choice("D", "")},
	{name: "letter with closing parenthesis", body: "A)", want: choice("A", "")},
	{name: "letter with full stop", body: "b.", want: choice("B", "")},
	{name: "letter with colon", body: "c:", want: choice("C", "")},
	{name: "letter full stop and reason", body: "A. because", want: choice("A", "because")},
	{name: "letter colon and reason", body: "A: reason", want: choice("A", "reason")},
	{name: "letter parenthesis and reason", body: "B) smaller change, easier review", want: choice("B", "smaller change, easier review")},
	{name: "letter space and reason", body: "d we need it now", want: choice("D", "we need it now")},
	{name: "reason keeps inner spacing trimmed at ends", body: "C   keep  this   ", want: choice("C", "keep  this")},
	{name: "reason in another script", body: "A: потому что быстрее", want: choice("A", "потому что быстрее")},
	{name: "reason with one letter and words", body: "A. B is too risky", want: choice("A", "B is too risky")},
	{name: "letter then connector only", body: "A or", want: choice("A", "or")},
	{name: "fullwidth letter is folded by NFKC", body: "\uff21", want: choice("A", "")},
	{name: "fullwidth letter and parenthesis", body: "\uff22\uff09 ok", want: choice("B", "ok")},
	{name: "mathematical bold letter is folded by NFKC", body: "\U0001D400", want: choice("A", "")},
	{name: "leading spaces", body: "   A", want: choice("A", "")},
	{name: "leading tab and tab before reason", body: "\tA\treason", want: choice("A", "reason")},
	{name: "ideographic space before letter", body: "\u3000B", want: choice("B", "")},
	{name: "no-break space before reason", body: "A\u00a0because", want: choice("A", "because")},
	{name: "trailing spaces", body: "C   \n", want: choice("C", "")},

	// Which line counts.
	{name: "letter then command on second line", body: "A\n/autopilot skip", want: choice("A", "")},
	{name: "command then letter on second line", body: "/autopilot stop\nA", want: command("stop", "")},
	{name: "blank lines before letter", body: "\n\n   \n\t\nB", want: choice("B", "")},
	{name: "CRLF line endings", body: "\r\n\r\nC: yes\r\n/autopilot stop\r\n", want: choice("C", "yes")},
	{name: "CR line endings", body: "\r\rB\rA", want: choice("B", "")},
	{name: "letter on line two after other text", body: "Looks good to me\nA", want: grammar.Result{}},
	{name: "quoted letter alone", body: "> A", want: grammar.Result{}},
	{name: "quoted letter then answer", body: "> A) Start implementation\n\nB", want: choice("B", "")},
	{name: "quote indented three spaces is skipped", body: "   > A\n\nC", want: choice("C", "")},
	{name: "quote indented four spaces is not a quote", body: "    > A", want: grammar.Result{}},
	{name: "nested quote", body: ">> A\n> B\n\nD", want: choice("D", "")},
	{name: "letter right after quoted text is part of the quote", body: "> which one?\nA", want: attempt, hint: "blank line after a quote"},
	{name: "command right after quoted text is part of the quote", body: "> why?\n/autopilot stop", want: attempt, hint: "did you mean `/autopilot stop`?"},
	{name: "quoted option pasted without markers", body: "> A) Start implementation\n B) Continue in the current session", want: attempt, hint: "did you mean `B`?"},
	{name: "text continuing a quote is the first line", body: "> which one?\nhmm\n\nA", want: grammar.Result{}},
	{name: "answer after empty quote line", body: ">\nA", want: choice("A", "")},
	{name: "answer after quoted heading", body: "> # Title\nB", want: choice("B", "")},
	{name: "answer after quoted thematic break", body: "> * * *\nC", want: choice("C", "")},
	{name: "answer after quoted indented code", body: ">     code\nD", want: choice("D", "")},
	{name: "answer after quoted blank line", body: "> \t\nA", want: choice("A", "")},
	{name: "letter inside code fence", body: "```\nA\n```", want: grammar.Result{}},
	{name: "answer after code fence", body: "```\nA\n```\nC", want: choice("C", "")},
	{name: "answer after tilde fence with info string", body: "~~~go\nA\n~~~\nD", want: choice("D", "")},
	{name: "shorter fence does not close longer one", body: "````\nA\n```\nB\n`````\nC", want: choice("C", "")},
	{name: "other fence character does not close", body: "```\nA\n~~~\nB\n```\nD", want: choice("D", "")},
	{name: "closing fence with trailing text does not close", body: "```\nA\n``` x\nB\n```\nC", want: choice("C", "")},
	{name: "unclosed fence hides the rest", body: "```\nA\nB", want: grammar.Result{}},
	{name: "fence indented three spaces", body: "   ```\nA\n   ```\nB", want: choice("B", "")},
	{name: "fence in CRLF comment", body: "```\r\nA\r\n```\r\nB\r\n", want: choice("B", "")},
	{name: "quoted fence does not open a fence", body: "> ```\nB", want: choice("B", "")},
	{name: "65536-character comment with A on line 1000", body: longComment(), want: grammar.Result{}},
	{name: "empty comment", body: "", want: grammar.Result{}},
	{name: "only white space", body: " \n\t\r\n\u3000", want: grammar.Result{}},

	// Ambiguous replies.
	{name: "two letters", body: "A B", want: attempt, hint: ambiguous},
	{name: "two letters with or", body: "A or B", want: attempt, hint: ambiguous},
	{name: "two letters with slash", body: "A/B", want: attempt, hint: ambiguous},
	{name: "two letters with comma", body: "A, B", want: attempt, hint: ambiguous},
	{name: "letter colon letter", body: "A: B", want: attempt, hint: ambiguous},
	{name: "four lower-case letters", body: "a b c d", want: attempt, hint: ambiguous},
	{name: "bold letters with or", body: "**A** or **B**?", want: attempt, hint: ambiguous},
	{name: "option prefix with two letters", body: "Option A or B", want: attempt, hint: ambiguous},
	{name: "choose command with two letters", body: "/autopilot choose A B", want: attempt, hint: ambiguous},

	// Lookalikes and invisible characters: never a choice.
	{name: "Cyrillic capital A", body: "\u0410", want: attempt, hint: didYouMeanA},
	{name: "Cyrillic small a", body: "\u0430", want: attempt, hint: didYouMeanA},
	{name: "Greek capital Alpha", body: "\u0391", want: attempt, hint: didYouMeanA},
	{name: "Greek small alpha", body: "\u03b1", want: attempt, hint: didYouMeanA},
	{name: "Cyrillic Ve looks like B", body: "\u0412", want: attempt, hint: "did you mean `B`?"},
	{name: "Greek Beta", body: "\u0392", want: attempt, hint: "did you mean `B`?"},
	{name: "Cyrillic Es looks like C", body: "\u0421", want: attempt, hint: "did you mean `C`?"},
	{name: "Cyrillic small es", body: "\u0441", want: attempt, hint: "did you mean `C`?"},
	{name: "Greek lunate sigma", body: "\u03f9", want: attempt, hint: "did you mean `C`?"},
	{name: "Cherokee A looks like D", body: "\u13a0", want: attempt, hint: "did you mean `D`?"},
	{name: "Cyrillic A with parenthesis", body: "\u0410)", want: attempt, hint: lookalikeMsg},
	{name: "Cyrillic A and reason after colon", body: "\u0410: быстрее", want: attempt, hint: didYouMeanA},
	{name: "Russian sentence starting with A is not an attempt", body: "\u0410 вот и нет", want: grammar.Result{}},
	{name: "Latin A with combining accent", body: "A\u0301", want: attempt, hint: didYouMeanA},
	{name: "zero-width space after letter", body: "A\u200b", want: attempt, hint: invisibleMsg},
	{name: "zero-width non-joiner before letter", body: "\u200cB", want: attempt, hint: "did you mean `B`?"},
	{name: "zero-width joiner in reason", body: "A because\u200d", want: attempt, hint: invisibleMsg},
	{name: "word joiner", body: "C\u2060", want: attempt, hint: "did you mean `C`?"},
	{name: "byte order mark", body: "\ufeffD", want: attempt, hint: "did you mean `D`?"},
	{name: "right-to-left override before letter", body: "\u202eA", want: attempt, hint: didYouMeanA},
	{name: "left-to-right embedding", body: "\u202aA\u202c", want: attempt, hint: didYouMeanA},
	{name: "bidi isolate", body: "\u2066A\u2069", want: attempt, hint: didYouMeanA},
	{name: "left-to-right mark", body: "A\u200e", want: attempt, hint: didYouMeanA},
	{name: "right-to-left mark", body: "\u200fB", want: attempt, hint: "did you mean `B`?"},
	{name: "variation selector", body: "A\ufe0f", want: attempt, hint: didYouMeanA},
	{name: "invalid UTF-8 in reason", body: "A \xff", want: attempt, hint: invisibleMsg},
	{name: "line of invisible characters only", body: "\u200b\nA", want: grammar.Result{}},
	{name: "invisible character in plain text", body: "thanks\u200b", want: grammar.Result{}},
	{name: "zero-width space inside command", body: "/autopilot\u200b stop", want: attempt, hint: "did you mean `/autopilot stop`?"},
	{name: "Cyrillic letters in autopilot", body: "/\u0430ut\u043epilot status", want: attempt, hint: "did you mean `/autopilot status`?"},
	{name: "Cyrillic letter in choose argument", body: "/autopilot choose \u0410", want: attempt, hint: "did you mean `/autopilot choose A`?"},
	{name: "invisible character in command without argument", body: "/autopilot fail\u200b", want: attempt, hint: "usage: `/autopilot fail <reason>`"},

	// Markdown and prose around a letter.
	{name: "bold letter", body: "**A**", want: attempt, hint: didYouMeanA},
	{name: "bold letter with underscores", body: "__A__", want: attempt, hint: didYouMeanA},
	{name: "italic letter", body: "*A*", want: attempt, hint: didYouMeanA},
	{name: "code span letter", body: "`A`", want: attempt, hint: didYouMeanA},
	{name: "triple backticks on one line", body: "```A```", want: attempt, hint: didYouMeanA},
	{name: "letter in parentheses", body: "(A)", want: attempt, hint: didYouMeanA},
	{name: "letter in brackets", body: "[b]", want: attempt, hint: "did you mean `B`?"},
	{name: "bold letter and reason", body: "**C** it is smaller", want: attempt, hint: "did you mean `C`?"},
	{name: "letter with comma and reason", body: "A, because it is faster", want: attempt, hint: didYouMeanA},
	{name: "letter with exclamation mark", body: "D!", want: attempt, hint: "did you mean `D`?"},
	{name: "option prefix", body: "Option A", want: attempt, hint: didYouMeanA},
	{name: "option prefix with colon", body: "option: b", want: attempt, hint: "did you mean `B`?"},
	{name: "go with prefix", body: "Let's go with C", want: attempt, hint: "did you mean `C`?"},
	{name: "list item letter", body: "- A", want: attempt, hint: didYouMeanA},
	{name: "letter E alone", body: "E", want: attempt, hint: outOfRange},
	{name: "letter z alone", body: "z", want: attempt, hint: outOfRange},
	{name: "letter F in parentheses", body: "(F)", want: attempt, hint: outOfRange},
	{name: "option prefix with letter outside A to D", body: "Option G", want: attempt, hint: outOfRange},
	{name: "sentence starting with I", body: "I think A is better", want: grammar.Result{}},
	{name: "sentence starting with a", body: "a.m. tomorrow works", want: grammar.Result{}},
	{name: "word starting with option letter", body: "Approve", want: grammar.Result{}},
	{name: "letter glued to digit", body: "A1", want: grammar.Result{}},
	{name: "struck-through letter", body: "~~A~~", want: grammar.Result{}},
	{name: "help text line from the bot", body: "reply A or B", want: grammar.Result{}},
	{name: "Choose block posted by the bot", body: chooseBlock, want: grammar.Result{}},
	{name: "thumbs up", body: "👍", want: grammar.Result{}},

	// Commands with good arguments.
	{name: "status", body: "/autopilot status", want: command("status", "")},
	{name: "command word in any ASCII case", body: "/AutoPilot STATUS", want: command("status", "")},
	{name: "fullwidth slash folds to command", body: "\uff0fautopilot status", want: command("status", "")},
	{name: "command with leading space and tab", body: " \t/autopilot\tretry", want: command("retry", "")},
	{name: "done without summary", body: "/autopilot done", want: command("done", "")},
	{name: "done with summary", body: "/autopilot done tests pass, PR #12 open", want: command("done", "tests pass, PR #12 open")},
	{name: "done with confidence", body: "/autopilot done --confidence 0.7 all green", want: done(0.7, "all green")},
	{name: "done with confidence and equals sign", body: "/autopilot done --confidence=1", want: done(1, "")},
	{name: "done with confidence zero", body: "/autopilot done --confidence 0", want: done(0, "")},
	{name: "done with leading-dot confidence", body: "/autopilot done --CONFIDENCE .5 ok", want: done(0.5, "ok")},
	{name: "done with end of flags", body: "/autopilot done -- --not a flag", want: command("done", "--not a flag")},
	{name: "fail with reason", body: "/autopilot fail tests time out", want: command("fail", "tests time out")},
	{name: "progress with detail", body: "/autopilot progress 2 run-tests 14 of 20 suites", want: progress(2, "run-tests", "14 of 20 suites")},
	{name: "progress phase zero", body: "/autopilot progress 0 plan", want: progress(0, "plan", "")},
	{name: "progress name is lower-cased", body: "/autopilot progress 1 Run-Tests", want: progress(1, "run-tests", "")},
	{name: "skip without reason", body: "/autopilot skip", want: command("skip", "")},
	{name: "skip with reason", body: "/autopilot skip docs-only change", want: command("skip", "docs-only change")},
	{name: "back to named step", body: "/autopilot back plan", want: named("back", "plan", "")},
	{name: "back to numbered step", body: "/autopilot back 3", want: named("back", "3", "")},
	{name: "retry", body: "/autopilot retry", want: command("retry", "")},
	{name: "stop with a note", body: "/autopilot stop taking too long", want: command("stop", "taking too long")},
	{name: "resume", body: "/autopilot resume", want: command("resume", "")},
	{name: "approve without note", body: "/autopilot approve architect", want: named("approve", "architect", "")},
	{name: "approve with note", body: "/autopilot approve Critic looks sound", want: named("approve", "critic", "looks sound")},
	{name: "reject with reason", body: "/autopilot reject critic no rollback plan", want: named("reject", "critic", "no rollback plan")},
	{name: "tasks retry", body: "/autopilot tasks retry", want: command("tasks retry", "")},
	{name: "tasks sync", body: "/autopilot Tasks SYNC", want: command("tasks sync", "")},
	{name: "jira retry is an alias of tasks retry", body: "/autopilot jira retry", want: command("tasks retry", "")},
	{name: "jira sync is an alias of tasks sync", body: "/autopilot JIRA Sync", want: command("tasks sync", "")},
	{name: "help", body: "/autopilot help", want: command("help", "")},
	{name: "choose lower-case letter", body: "/autopilot choose b", want: chooseCmd("B", "")},
	{name: "choose with reason", body: "/autopilot CHOOSE C) fastest", want: chooseCmd("C", "fastest")},
	{name: "command then letter", body: "/autopilot status\nA", want: command("status", "")},

	// Commands with bad arguments.
	{name: "autopilot alone", body: "/autopilot", want: attempt, hint: unknown},
	{name: "unknown command", body: "/autopilot frobnicate now", want: attempt, hint: unknown},
	{name: "command glued to autopilot", body: "/autopilotstatus", want: attempt, hint: unknown},
	{name: "fail without reason", body: "/autopilot fail", want: attempt, hint: "usage: `/autopilot fail <reason>`"},
	{name: "progress without arguments", body: "/autopilot progress", want: attempt, hint: "usage: `/autopilot progress <phase> <name> [detail]`"},
	{name: "progress without name", body: "/autopilot progress 1", want: attempt, hint: "usage: `/autopilot progress"},
	{name: "progress with word phase", body: "/autopilot progress two run-tests", want: attempt, hint: "usage: `/autopilot progress"},
	{name: "progress with negative phase", body: "/autopilot progress -1 plan", want: attempt, hint: "usage: `/autopilot progress"},
	{name: "progress with signed phase", body: "/autopilot progress +1 plan", want: attempt, hint: "usage: `/autopilot progress"},
	{name: "progress with huge phase", body: "/autopilot progress 99999999999999999999 plan", want: attempt, hint: "usage: `/autopilot progress"},
	{name: "progress with phase over the limit", body: "/autopilot progress 9999999 plan", want: attempt, hint: "usage: `/autopilot progress"},
	{name: "progress with snake-case name", body: "/autopilot progress 1 run_tests", want: attempt, hint: "kebab-case"},
	{name: "progress with double hyphen", body: "/autopilot progress 1 run--tests", want: attempt, hint: "kebab-case"},
	{name: "progress with trailing hyphen", body: "/autopilot progress 1 run-", want: attempt, hint: "kebab-case"},
	{name: "progress with over-long name", body: "/autopilot progress 1 " + strings.Repeat("a", 65), want: attempt, hint: "kebab-case"},
	{name: "back without step", body: "/autopilot back", want: attempt, hint: "usage: `/autopilot back <step>`"},
	{name: "approve without role", body: "/autopilot approve", want: attempt, hint: "usage: `/autopilot approve <role> [note]`"},
	{name: "reject without reason", body: "/autopilot reject critic", want: attempt, hint: "usage: `/autopilot reject <role> <reason>`"},
	{name: "reject without role", body: "/autopilot reject", want: attempt, hint: "usage: `/autopilot reject"},
	{name: "choose without letter", body: "/autopilot choose", want: attempt, hint: "usage: `/autopilot choose <letter>`"},
	{name: "choose letter outside A to D", body: "/autopilot choose E", want: attempt, hint: "usage: `/autopilot choose <letter>`"},
	{name: "done with confidence above one", body: "/autopilot done --confidence 1.5", want: attempt, hint: "usage: `/autopilot done"},
	{name: "done with confidence missing", body: "/autopilot done --confidence", want: attempt, hint: "from 0 to 1"},
	{name: "done with confidence not a number", body: "/autopilot done --confidence high", want: attempt, hint: "from 0 to 1"},
	{name: "done with confidence NaN", body: "/autopilot done --confidence NaN", want: attempt, hint: "from 0 to 1"},
	{name: "done with hexadecimal confidence", body: "/autopilot done --confidence 0x1p-1", want: attempt, hint: "from 0 to 1"},
	{name: "done with two dots in confidence", body: "/autopilot done --confidence 0.5.1", want: attempt, hint: "from 0 to 1"},
	{name: "done with confidence twice", body: "/autopilot done --confidence 0.5 --confidence 0.6", want: attempt, hint: "from 0 to 1"},
	{name: "done with unknown flag", body: "/autopilot done --force", want: attempt, hint: "usage: `/autopilot done"},
	{name: "jira without sub-command", body: "/autopilot jira", want: attempt, hint: "`/autopilot jira sync`"},
	{name: "jira with unknown sub-command", body: "/autopilot jira push", want: attempt, hint: "`/autopilot jira retry`"},
	{name: "tasks without sub-command", body: "/autopilot tasks", want: attempt, hint: "`/autopilot tasks retry` or `/autopilot tasks sync`"},
	{name: "tasks with unknown sub-command", body: "/autopilot tasks push", want: attempt, hint: "`/autopilot tasks sync`"},
}

func TestParse(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			got := engine.Parse(tc.body)
			if tc.hint == "" && got.Hint != "" {
				t.Errorf("Parse(%q).Hint = %q, want none", tc.body, got.Hint)
			}
			if !strings.Contains(got.Hint, tc.hint) {
				t.Errorf("Parse(%q).Hint = %q, want it to contain %q", tc.body, got.Hint, tc.hint)
			}
			got.Hint = ""
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%q) = %s, want %s", tc.body, show(got), show(tc.want))
			}
		})
	}
}

// show prints a Result with its Confidence value rather than its address.
func show(r grammar.Result) string {
	conf := "nil"
	if r.Confidence != nil {
		conf = fmt.Sprint(*r.Confidence)
	}
	r.Confidence = nil
	return fmt.Sprintf("%+v (confidence %s)", r, conf)
}

func TestParseHintsNeverEchoTheComment(t *testing.T) {
	bodies := []string{
		"/autopilot frobnicate @org/team",
		"/autopilot progress <img src=x> run-tests",
		"/autopilot done --confidence <!--x-->",
		"/autopilot reject critic",
		"**A** @someone #12",
		"(A) <b>bold</b> <script>x</script>",
		"/autopilot jira @evil",
	}
	for _, body := range bodies {
		got := engine.Parse(body)
		if !got.Attempt {
			t.Errorf("Parse(%q) is not an attempt: %s", body, show(got))
			continue
		}
		for _, bad := range []string{"frobnicate", "@", "img", "<!--", "#12", "<b>", "script", "evil"} {
			if strings.Contains(got.Hint, bad) {
				t.Errorf("Parse(%q).Hint = %q echoes %q", body, got.Hint, bad)
			}
		}
	}
}

func TestUsageListsEveryCommand(t *testing.T) {
	u := engine.Usage()
	for _, synopsis := range []string{
		"/autopilot status", "/autopilot done [--confidence X] [summary]", "/autopilot fail <reason>",
		"/autopilot progress <phase> <name> [detail]", "/autopilot skip [reason]", "/autopilot back <step>",
		"/autopilot retry", "/autopilot stop", "/autopilot resume", "/autopilot approve <role> [note]",
		"/autopilot reject <role> <reason>", "/autopilot tasks retry", "/autopilot tasks sync",
		"/autopilot jira retry", "/autopilot jira sync",
		"/autopilot help", "/autopilot choose <letter>",
	} {
		if !strings.Contains(u, "`"+synopsis+"`") {
			t.Errorf("Usage() lacks %q", synopsis)
		}
	}
}

// The bot's own help text mentions "/autopilot skip" and the letters; read
// back as a comment it must be neither a decision nor an attempt.
func TestUsageIsNotAReply(t *testing.T) {
	if got := engine.Parse(engine.Usage()); got.Kind != grammar.None || got.Attempt {
		t.Errorf("Parse(Usage()) = %s, want None and no attempt", show(got))
	}
}

// Every usage hint must name the command it was given for, so the bot's
// answer is about what the user typed.
func TestUsageHintNamesTheCommand(t *testing.T) {
	for _, cmd := range []string{"fail", "progress", "back", "approve", "reject", "choose"} {
		got := engine.Parse("/autopilot " + cmd)
		if !got.Attempt || !strings.Contains(got.Hint, "`/autopilot "+cmd) {
			t.Errorf("Parse(%q) = %s hint %q, want a usage hint for %s", "/autopilot "+cmd, show(got), got.Hint, cmd)
		}
	}
}

// Only the first effective line matters: appending anything after a decided
// line never changes the result.
func TestParseIgnoresLaterLines(t *testing.T) {
	tails := []string{"\n/autopilot skip", "\nB", "\r\n```", "\n> A", "\n\u0410"}
	for _, tc := range parseCases {
		if tc.want.Kind == grammar.None || strings.HasSuffix(tc.body, "```") {
			continue
		}
		base := engine.Parse(tc.body)
		for _, tail := range tails {
			if got := engine.Parse(tc.body + tail); !reflect.DeepEqual(got, base) {
				t.Errorf("%s: Parse(body+%q) = %s, want %s", tc.name, tail, show(got), show(base))
			}
		}
	}
}

func BenchmarkParse(b *testing.B) {
	for _, bc := range []struct{ name, body string }{
		{"letter", "B) smaller change, easier review"},
		{"command", "/autopilot progress 2 run-tests 14 of 20 suites"},
		{"lookalike", "\u0410"},
		{"64KiB", longComment()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.body)))
			for b.Loop() {
				engine.Parse(bc.body)
			}
		})
	}
}

func TestActs(t *testing.T) {
	for body, want := range map[string]bool{"A": true, "/autopilot status": true, "Α": true, "Looks good to me.": false, "": false} {
		if got := engine.Parse(body).Acts(); got != want {
			t.Errorf("Parse(%q).Acts() = %v, want %v", body, got, want)
		}
	}
}
