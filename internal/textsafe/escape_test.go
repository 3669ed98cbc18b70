package textsafe

import (
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscapeNeutralisesInjection(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"team mention", "ping @org/team now", "ping @\u200borg/team now"},
		{"user mention at end", "thanks @", "thanks @\u200b"},
		{"issue reference", "fixes #12", "fixes #\u200b12"},
		{"cross-repo reference", "a/b#3", "a/b#\u200b3"},
		{"GH reference any case", "GH-7 gh-8", "GH-\u200b7 gh-\u200b8"},
		{"hash without digit kept", "#tag", "#tag"},
		{"html tag", `<img src=x onerror=alert(1)>`, "&lt;img src=x onerror=alert(1)&gt;"},
		{"html comment marker", "--> <!-- autopilot:state", "--&gt; &lt;!-- autopilot:state"},
		{"ampersand entity", "&lt;", "&amp;lt;"},
		{"markdown link", "[x](http://e.vil)", "&lbrack;x&rbrack;(http:/\u200b/e.vil)"},
		{"backslash", `a\b`, "a&bsol;b"},
		{"bare url", "see https://example.com", "see https:/\u200b/example.com"},
		{"www autolink", "WWW.example.com", "WWW\u200b.example.com"},
		{"backtick fence", "```go", "``\u200b`go"},
		{"long backtick fence", "`````", "``\u200b``\u200b`"},
		{"tilde fence", "~~~", "~~\u200b~"},
		{"inline code kept", "`x`", "`x`"},
		{"newlines kept and normalised", "a\r\nb\rc\u2028d", "a\nb\nc\nd"},
		{"controls dropped", "a\x00b\x1bc\x7fd\u0085e", "abcde"},
		{"bidi override dropped", "A\u202eB\u2066C", "ABC"},
		{"invalid utf8 replaced", "a\xffb", "a\uFFFDb"},
		{"plain text untouched", "Plan the API — 5 tasks (ok)", "Plan the API — 5 tasks (ok)"},
		{"emoji and combining marks kept", "e\u0301 👍🏽", "e\u0301 👍🏽"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Escape(tt.in); got != tt.want {
				t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestInlineAndCellAreOneLine(t *testing.T) {
	tests := []struct {
		name string
		f    func(string) string
		in   string
		want string
	}{
		{"inline joins lines", Inline, "a\nb\r\nc\td", "a b c d"},
		{"inline keeps pipes", Inline, "a|b", "a|b"},
		{"cell escapes pipes", Cell, "a|b\nc", `a\|b c`},
		{"cell escapes html", Cell, "<b>|</b>", `&lt;b&gt;\|&lt;/b&gt;`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCodeBreaksFencesAndMarkersButKeepsHTML(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"marker", "<!-- autopilot:gate x -->", "<!-\u200b- autopilot:gate x --\u200b>"},
		{"fence", "```\nrm -rf", "``\u200b` rm -rf"},
		{"html kept", "a < b && c > d", "a < b && c > d"},
		{"mention", "@x", "@\u200bx"},
		{"long dashes", "<!--->", "<!-\u200b--\u200b>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Code(tt.in); got != tt.want {
				t.Errorf("Code(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// hostile fragments mixed into random strings by the property tests.
var fragments = []string{
	"@", "@org/team", "#", "#1", "GH-", "gh-9", "<", ">", "<!--", "-->", "--", "-", "!",
	"&", "&lt;", "[", "](", "\\", "|", "`", "``", "```", "~", "~~~", "\n", "\r", "\r\n",
	"\t", "\u2028", "\u200b", "\u202e", "\x00", "\xff", "\xe2\x82", "e\u0301", "👍🏽",
	"👨‍👩‍👧", "日本", "https://", "www.", "a", "1", " ", "autopilot:state", "\ufe0f",
}

func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if r.Intn(4) == 0 {
			b.WriteRune(rune(r.Intn(0x3000)))
			continue
		}
		b.WriteString(fragments[r.Intn(len(fragments))])
	}
	return b.String()
}

// checkSafe reports the first safety property out violates, or "".
func checkSafe(out string, markdown bool) string {
	if !utf8.ValidString(out) {
		return "invalid UTF-8"
	}
	low := strings.ToLower(out)
	for _, bad := range []string{"<!--", "-->", "```", "~~~", "://", "www."} {
		if strings.Contains(low, bad) {
			return "contains " + bad
		}
	}
	if markdown && strings.ContainsAny(out, "<>[]") {
		return "raw HTML or link bracket"
	}
	rs := []rune(out)
	for i, r := range rs {
		next := rune(-1)
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		switch {
		case r == '@' && next != zwsp:
			return "unescaped @"
		case r == '#' && isDigit(next):
			return "unescaped #n"
		case r == '-' && i >= 2 && lower(rs[i-1]) == 'h' && lower(rs[i-2]) == 'g' && isDigit(next):
			return "unescaped GH-n"
		case dropped(r):
			return "control character"
		}
	}
	return ""
}

func TestEscapePropertiesOnRandomText(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 5000; i++ {
		in := randomText(r, r.Intn(40))
		e, c, l, cell := Escape(in), Code(in), Inline(in), Cell(in)
		if p := checkSafe(e, true); p != "" {
			t.Fatalf("Escape(%q) = %q: %s", in, e, p)
		}
		if p := checkSafe(c, false); p != "" {
			t.Fatalf("Code(%q) = %q: %s", in, c, p)
		}
		if strings.ContainsAny(c+l+cell, "\n\r\u2028\u2029") {
			t.Fatalf("one-line escape kept a line break for %q", in)
		}
		if Code(c) != c {
			t.Fatalf("Code not idempotent on %q: %q then %q", in, c, Code(c))
		}
		if Code(e) != l {
			t.Fatalf("Code(Escape(%q)) = %q, want Inline = %q", in, Code(e), l)
		}
		if strings.Count(cell, "|") != strings.Count(cell, `\|`) {
			t.Fatalf("Cell(%q) = %q has an unescaped pipe", in, cell)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"@team #1 <!-- x --> ```", "GH-1 www.x https://y", "a\xffb\r\n~~~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if p := checkSafe(Escape(in), true); p != "" {
			t.Fatalf("Escape(%q) = %q: %s", in, Escape(in), p)
		}
		c := Code(in)
		if p := checkSafe(c, false); p != "" {
			t.Fatalf("Code(%q) = %q: %s", in, c, p)
		}
		if Code(c) != c {
			t.Fatalf("Code not idempotent on %q", in)
		}
		if Code(Escape(in)) != Inline(in) {
			t.Fatalf("Code(Escape(%q)) != Inline", in)
		}
	})
}

func BenchmarkEscape(b *testing.B) {
	in := strings.Repeat("Fix @org/team #12 <b>x</b> ``` https://e.com ", 200)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		Escape(in)
	}
}
