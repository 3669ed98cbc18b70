package prose

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/testkit"
)

func TestOneLineAndPoints(t *testing.T) {
	testkit.Want(t, "collapses", OneLine("a\n  b\tc", 10), "a b c")
	testkit.Want(t, "truncates", OneLine("abcdefghij", 5), "abcd…")
	testkit.Want(t, "whole points", Points(3), "3")
	testkit.Want(t, "half points", Points(2.5), "2.5")
	testkit.Want(t, "plural", Plural(1, "tasks"), "task")
	testkit.Want(t, "items", Plural(2, ""), "items")
	testkit.Want(t, "short sha", Short("abc"), "abc")
	testkit.Want(t, "first line of empty", FirstLine("\n \n"), "(no details)")
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
