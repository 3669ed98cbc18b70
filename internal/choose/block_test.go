package choose

import (
	"errors"
	"math/rand"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

func decompose() Block {
	return Block{
		GateID: "decompose-boundary-1",
		Title:  "DECISION REQUIRED: Decompose complete — start implementation?",
		Options: []Option{
			{"A", "Start implementation with a fresh executor session (recommended)"},
			{"B", "Continue in the current executor session"},
		},
		Recommend: "A",
		Reason:    "implementation is the longest phase, fresh context helps",
	}
}

// The exact text of PRODUCT.md §7, behind the marker and fence of the brief.
const productExample = "<!-- autopilot:gate decompose-boundary-1 -->\n" +
	"```text\n" +
	"══════════════════════════════════════\n" +
	" DECISION REQUIRED: Decompose complete — start implementation?\n" +
	"══════════════════════════════════════\n" +
	" A) Start implementation with a fresh executor session (recommended)\n" +
	" B) Continue in the current executor session\n" +
	"══════════════════════════════════════\n" +
	" Recommendation: A — implementation is the longest phase, fresh context helps\n" +
	"══════════════════════════════════════\n" +
	"```\n" +
	"Reply with the letter (e.g. `A`) as the first line of a comment, here or on the linked PR."

func TestRenderMatchesProductExample(t *testing.T) {
	if got := decompose().Render(); got != productExample {
		t.Errorf("Render:\n%s\nwant:\n%s", got, productExample)
	}
}

func TestRenderGolden(t *testing.T) {
	tests := []struct {
		name  string
		block Block
	}{
		{"decision", decompose()},
		{"skill_failed", Block{
			GateID: "skill-failed-implement-3",
			Title:  "SKILL FAILED: implement — 3 consecutive failures",
			Details: []string{
				"Step: 5 — Implement",
				"SubStep: 2 — batch-loop",
				"Last failure reason: go test ./... exited 1",
			},
			Options: []Option{
				{"A", "Retry with a fresh executor session"},
				{"B", "Skip this step with warning"},
				{"C", "Abort — investigate and fix manually"},
			},
			Recommend: "A",
			Reason:    "fresh context often resolves\npersistent failures",
		}},
		{"jira_auth", Block{
			GateID: "jira-auth-plan",
			Title:  "Jira authentication failed",
			Options: []Option{
				{"A", "Retry authentication"},
				{"B", "Continue without Jira (tasks kept in this issue)"},
			},
			Recommend: "A",
			Reason:    "Jira IDs drive task referencing,\ndependency tracking, and implementation batching.",
		}},
		{"hostile", Block{
			GateID:  "Bad ID -->",
			Title:   "RECOVERY: ``` @org/team <!-- autopilot:state -->",
			Details: []string{"note\n```\n<!-- autopilot:gate x -->"},
			Options: []Option{
				{"A", "fixes #12\n```"},
				{"B", "~~~ --> @x"},
				{"C", "four"}, {"D", "five"}, {"E", "ignored? no: rendered"},
			},
			Recommend: "B",
			Reason:    "```\n<!-- -->",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, "block_"+tt.name, tt.block.Render())
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Block)
		want   string // substring of the error; "" = valid
	}{
		{"product example is valid", func(*Block) {}, ""},
		{"four options valid", func(b *Block) {
			b.Options = append(b.Options, Option{"C", "c"}, Option{"D", "d"})
		}, ""},
		{"one option", func(b *Block) { b.Options = b.Options[:1] }, "1 options"},
		{"five options", func(b *Block) {
			b.Options = append(b.Options, Option{"C", "c"}, Option{"D", "d"}, Option{"E", "e"})
		}, "5 options"},
		{"letters out of order", func(b *Block) { b.Options[0].Letter, b.Options[1].Letter = "B", "A" }, `letter "B"`},
		{"lower-case letter", func(b *Block) { b.Options[1].Letter = "b" }, `letter "b"`},
		{"option spans lines", func(b *Block) { b.Options[1].Text = "x\ny" }, "option B spans several lines"},
		{"empty option", func(b *Block) { b.Options[0].Text = "  " }, "option A is empty"},
		{"long option", func(b *Block) { b.Options[0].Text = strings.Repeat("x", MaxOption+1) }, "option A has 301"},
		{"recommendation not an option", func(b *Block) { b.Recommend = "C" }, `recommendation "C"`},
		{"no recommendation", func(b *Block) { b.Recommend = "" }, "recommendation"},
		{"empty reason", func(b *Block) { b.Reason = " " }, "reason is empty"},
		{"long reason", func(b *Block) { b.Reason = strings.Repeat("é", MaxReason+1) }, "reason has 1001"},
		{"multi-line reason valid", func(b *Block) { b.Reason = "a\nb" }, ""},
		{"empty title", func(b *Block) { b.Title = "" }, "title is empty"},
		{"title spans lines", func(b *Block) { b.Title = "a\r\nb" }, "title spans"},
		{"detail spans lines", func(b *Block) { b.Details = []string{"ok", "a\nb"} }, "detail 2 spans"},
		{"too many details", func(b *Block) { b.Details = make([]string, MaxDetails+1) }, "21 detail lines"},
		{"bad gate id", func(b *Block) { b.GateID = "Gate 1" }, "may only hold"},
		{"empty gate id", func(b *Block) { b.GateID = "" }, "1 to 64"},
		{"long gate id", func(b *Block) { b.GateID = strings.Repeat("a", 65) }, "1 to 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := decompose()
			tt.change(&b)
			err := b.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate() = %v, want error containing %q", err, tt.want)
			case err != nil && !errors.Is(err, ErrInvalid):
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
		})
	}
}

func TestGateID(t *testing.T) {
	tests := []struct {
		name, body, want string
		ok               bool
	}{
		{"rendered block", decompose().Render(), "decompose-boundary-1", true},
		{"crlf line ending", "<!-- autopilot:gate g-1 -->\r\nbody", "g-1", true},
		{"marker only", "<!-- autopilot:gate g -->", "g", true},
		{"not first line", "hi\n<!-- autopilot:gate g -->", "", false},
		{"leading space", " <!-- autopilot:gate g -->", "", false},
		{"invalid id", "<!-- autopilot:gate G_1 -->", "", false},
		{"missing suffix", "<!-- autopilot:gate g", "", false},
		{"state marker", "<!-- autopilot:state -->", "", false},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := GateID(tt.body)
			if got != tt.want || ok != tt.ok {
				t.Errorf("GateID = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestMarkerSanitisesInvalidIDs(t *testing.T) {
	for _, id := range []string{"Bad ID -->", "", "__", strings.Repeat("x", 100)} {
		m := Marker(id)
		got, ok := GateID(m)
		if !ok {
			t.Errorf("Marker(%q) = %q is not a valid marker", id, m)
		}
		if ValidGateID(id) == nil && got != id {
			t.Errorf("valid id %q changed to %q", id, got)
		}
	}
}

var hostile = []string{
	"```", "~~~", "<!--", "-->", "@org/team", "#12", "\n", "\r\n", "`", "<", "&", "|",
	"autopilot:gate x", "é", "日本", "👍🏽", "\u200b", "\u202e", "\x00", "\xff",
}

func hostileText(r *rand.Rand) string {
	var b strings.Builder
	for i := r.Intn(12); i > 0; i-- {
		if r.Intn(3) == 0 {
			b.WriteString("word ")
			continue
		}
		b.WriteString(hostile[r.Intn(len(hostile))])
	}
	return b.String()
}

// TestRenderNeverBreaksTheFence renders random hostile blocks and checks the
// structure: one marker (the first line), exactly two fence lines, and the
// reply hint last.
func TestRenderNeverBreaksTheFence(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for i := 0; i < 3000; i++ {
		b := Block{GateID: hostileText(r), Title: hostileText(r), Recommend: hostileText(r), Reason: hostileText(r)}
		for j := r.Intn(4); j > 0; j-- {
			b.Details = append(b.Details, hostileText(r))
		}
		for j := r.Intn(6); j > 0; j-- {
			b.Options = append(b.Options, Option{hostileText(r), hostileText(r)})
		}
		out := b.Render()
		lines := strings.Split(out, "\n")
		fences := 0
		for _, l := range lines {
			if strings.HasPrefix(strings.TrimLeft(l, " "), "```") || strings.HasPrefix(strings.TrimLeft(l, " "), "~~~") {
				fences++
			}
		}
		if fences != 2 || lines[1] != "```text" || lines[len(lines)-2] != "```" {
			t.Fatalf("fence broken (%d fence lines) for %#v:\n%s", fences, b, out)
		}
		if strings.Count(out, "<!--") != 1 || strings.Count(out, "-->") != 1 {
			t.Fatalf("marker forged for %#v:\n%s", b, out)
		}
		if _, ok := GateID(out); !ok {
			t.Fatalf("GateID cannot read the marker of:\n%s", out)
		}
		if lines[len(lines)-1] != ReplyHint {
			t.Fatalf("reply hint is not last:\n%s", out)
		}
	}
}

// TestLongLinesWrapWithinWidth: a long detail, option and recommendation
// wrap at spaces so GitHub shows the block without a horizontal scroll bar,
// and no word is lost or split.
func TestLongLinesWrapWithinWidth(t *testing.T) {
	b := Block{
		GateID:  "jira-auth-7",
		Title:   "Jira authentication failed",
		Details: []string{"Detail: jira authentication failed (HTTP 401): Client must be authenticated to access this resource."},
		Options: []Option{
			{"A", "Retry authentication"},
			{"B", "Continue without Jira (tasks saved locally only, numbered 01, 02, … and synced later with /autopilot jira sync)"},
		},
		Recommend: "A",
		Reason:    "Jira IDs drive task referencing, dependency tracking and batching; without Jira, tasks keep numeric ids (01_…) and wait as Jira: pending",
	}
	out := b.Render()
	for _, l := range strings.Split(out, "\n") {
		if l == ReplyHint {
			continue
		}
		if w := textsafe.DisplayWidth(l); w > Width {
			t.Errorf("line of width %d > %d: %q", w, Width, l)
		}
	}
	if !strings.Contains(out, "\n B) Continue without Jira") || !strings.Contains(out, "\n    ") {
		t.Errorf("a wrapped option should hang under its text:\n%s", out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{b.Details[0], b.Options[1].Text, "Recommendation: A — " + b.Reason} {
		if !strings.Contains(flat, want) {
			t.Errorf("wrapped block lost words of %q:\n%s", want, out)
		}
	}
	if got := wrap(" "+strings.Repeat("x", 120), " "); got != " "+strings.Repeat("x", 120) {
		t.Errorf("a word wider than the line must stay whole, got %q", got)
	}
}
