package doctable

import (
	"reflect"
	"testing"
)

const sample = "# Top\n\n## Inputs\n\nSome words.\n\n| input | default |\n|---|---|\n| `a` | `x \\| y` |\n| `b|c` | none |\n\nafter\n\n### Sub\n\n| k |\n|---|\n| sub |\n\n## Next\n\n| n |\n|---|\n| 1 |\n"

func TestSectionAndRows(t *testing.T) {
	sec := Section(sample, "Inputs")
	got := Rows(sec)
	want := [][]string{{"`a`", "`x | y`"}, {"`b|c`", "none"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Rows = %q, want %q", got, want)
	}
	if rows := Rows(Section(sample, "Sub")); len(rows) != 1 || rows[0][0] != "sub" {
		t.Errorf("Sub rows = %q", rows)
	}
	if Section(sample, "Missing") != "" {
		t.Error("a missing heading gave text")
	}
	if got := Code("`a` or `b c`"); !reflect.DeepEqual(got, []string{"a", "b c"}) {
		t.Errorf("Code = %q", got)
	}
}

func TestReadFindsTheDocs(t *testing.T) {
	md, err := Read("docs/action.md")
	if err != nil || Section(md, "Inputs") == "" {
		t.Fatalf("docs/action.md: %v", err)
	}
}
