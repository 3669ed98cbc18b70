package textsafe

import (
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"fits untouched", "héllo", 5, "héllo"},
		{"cut with note", strings.Repeat("a", 30), 20, "aaaaa" + TruncatedNote},
		{"cut at rune boundary", strings.Repeat("é", 30), 20, "ééééé" + TruncatedNote},
		{"keeps combining mark with base", "abcde\u0301fghijklmnopqrstu", 20, "abcd" + TruncatedNote},
		{"too small for note", "abcdef", 3, "abc"},
		{"zero max", "abc", 0, ""},
		{"negative max", "abc", -1, ""},
		{"invalid utf8 repaired", "a\xffb", 10, "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Truncate(tt.in, tt.max); got != tt.want {
				t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
		})
	}
}

func TestClipMarksCutWithEllipsis(t *testing.T) {
	if got, want := Clip("abcdef", 4), "abc…"; got != want {
		t.Errorf("Clip = %q, want %q", got, want)
	}
	if got := Clip("abc", 4); got != "abc" {
		t.Errorf("Clip of short text = %q", got)
	}
}

func TestTruncatePropertiesOnRandomText(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 5000; i++ {
		in := randomText(r, r.Intn(60))
		max := r.Intn(80) - 2
		out := Truncate(in, max)
		valid := strings.ToValidUTF8(in, "\uFFFD")
		switch {
		case !utf8.ValidString(out):
			t.Fatalf("Truncate(%q,%d) invalid UTF-8: %q", in, max, out)
		case Len(out) > max && !(max <= 0 && out == ""):
			t.Fatalf("Truncate(%q,%d) has %d runes", in, max, Len(out))
		case Len(valid) <= max && out != valid:
			t.Fatalf("Truncate(%q,%d) changed text that fits: %q", in, max, out)
		case Len(valid) > max && !strings.HasPrefix(valid, strings.TrimSuffix(out, TruncatedNote)):
			t.Fatalf("Truncate(%q,%d) = %q is not a prefix", in, max, out)
		}
	}
}

func TestSplitKeepsLinesAndBounds(t *testing.T) {
	in := "line one\nline two\nline three\n" + strings.Repeat("x", 200) + "\nlast"
	parts := Split(in, 80)
	if len(parts) < 3 {
		t.Fatalf("got %d parts, want at least 3: %q", len(parts), parts)
	}
	if parts[0] != "line one\nline two\nline three"+ContinuedNote {
		t.Errorf("first part = %q, want whole lines then the note", parts[0])
	}
	for i, p := range parts {
		if Len(p) > 80 {
			t.Errorf("part %d has %d runes", i, Len(p))
		}
		if last := i == len(parts)-1; last == strings.HasSuffix(p, ContinuedNote) {
			t.Errorf("part %d (last=%v) note placement wrong: %q", i, last, p)
		}
	}
	if parts[len(parts)-1] != "last" && !strings.HasSuffix(parts[len(parts)-1], "last") {
		t.Errorf("last part = %q", parts[len(parts)-1])
	}
}

func TestSplitClosesAndReopensFences(t *testing.T) {
	var b strings.Builder
	b.WriteString("intro\n```text\n")
	for i := 0; i < 40; i++ {
		b.WriteString("row of the banner\n")
	}
	b.WriteString("```\nafter")
	parts := Split(b.String(), 200)
	if len(parts) < 3 {
		t.Fatalf("got %d parts, want several", len(parts))
	}
	for i, p := range parts {
		if Len(p) > 200 {
			t.Errorf("part %d has %d runes", i, Len(p))
		}
		fences := 0
		for _, l := range strings.Split(p, "\n") {
			if strings.HasPrefix(l, "```") {
				fences++
			}
		}
		if fences%2 != 0 {
			t.Errorf("part %d has unbalanced fences:\n%s", i, p)
		}
		if i > 0 && i < len(parts)-1 && !strings.HasPrefix(p, "```text\n") {
			t.Errorf("part %d does not reopen the fence: %q", i, p[:20])
		}
	}
}

func TestSplitEdgeCases(t *testing.T) {
	if got := Split("abc", 0); got != nil {
		t.Errorf("Split with max 0 = %q, want nil", got)
	}
	if got := Split("", 10); len(got) != 1 || got[0] != "" {
		t.Errorf("Split of empty = %q", got)
	}
	got := Split("abcdefgh", 3)
	if strings.Join(got, "") != "abcdefgh" || len(got) != 3 {
		t.Errorf("tiny max should give plain chunks, got %q", got)
	}
}

func TestSplitPropertiesOnRandomText(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 3000; i++ {
		in := randomText(r, r.Intn(400))
		max := 1 + r.Intn(300)
		parts := Split(in, max)
		var joined strings.Builder
		for j, p := range parts {
			if !utf8.ValidString(p) || Len(p) > max {
				t.Fatalf("Split(%q,%d) part %d bad (%d runes): %q", in, max, j, Len(p), p)
			}
			joined.WriteString(strings.TrimSuffix(p, ContinuedNote))
		}
		if strings.Contains(in, "```") || strings.Contains(in, "~~~") {
			continue // fence lines are repeated, content check below does not apply
		}
		strip := func(s string) string { return strings.ReplaceAll(s, "\n", "") }
		want := strip(strings.ToValidUTF8(in, "\uFFFD"))
		if got := strip(joined.String()); got != want {
			t.Fatalf("Split(%q,%d) lost text:\n got %q\nwant %q", in, max, got, want)
		}
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("a\n```\nb\nc\n```\nd", 80)
	f.Add(strings.Repeat("é\u0301", 100), 90)
	f.Fuzz(func(t *testing.T, in string, max int) {
		if max > 1<<16 || max < -1 {
			return
		}
		for _, p := range Split(in, max) {
			if !utf8.ValidString(p) || Len(p) > max {
				t.Fatalf("bad part %q for max %d", p, max)
			}
		}
		if out := Truncate(in, max); !utf8.ValidString(out) || (max > 0 && Len(out) > max) {
			t.Fatalf("bad Truncate %q for max %d", out, max)
		}
	})
}
