package prose

import (
	"strings"
	"testing"
)

// want fails the test when got != want.
func want[T comparable](t testing.TB, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestOneLineAndPoints(t *testing.T) {
	want(t, "collapses", OneLine("a\n  b\tc", 10), "a b c")
	want(t, "truncates", OneLine("abcdefghij", 5), "abcd…")
	want(t, "whole points", Points(3), "3")
	want(t, "half points", Points(2.5), "2.5")
	want(t, "plural", Plural(1, "tasks"), "task")
	want(t, "items", Plural(2, ""), "items")
	want(t, "short sha", Short("abc"), "abc")
	want(t, "first line of empty", FirstLine("\n \n"), "(no details)")
}

func TestTaskSlug(t *testing.T) {
	for in, out := range map[string]string{
		"Add CSV export":                 "add-csv-export",
		"  --Fix: #12!! ":                "fix-12",
		"日本語":                            "task",
		"":                               "task",
		strings.Repeat("abcdefghij ", 8): "abcdefghij-abcdefghij-abcdefghij-abcdefg",
	} {
		if got := TaskSlug(in); got != out {
			t.Errorf("taskSlug(%q) = %q, want %q", in, got, out)
		}
	}
}
