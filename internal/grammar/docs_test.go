package grammar_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/doctable"
	"github.com/autopilot-dev/autopilot/internal/engine"
)

// TestDocsCommandTableIsTheGrammar: the commands table of the user guide
// lists every command of the engine's command table, each with the grammar's synopsis,
// and no other.
func TestDocsCommandTableIsTheGrammar(t *testing.T) {
	md, err := doctable.Read("docs/user-guide.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, r := range doctable.Rows(doctable.Section(md, "Commands")) {
		c := doctable.Code(r[0])
		if len(c) != 1 {
			t.Fatalf("commands row %q: want the synopsis in one code span", r)
		}
		documented = append(documented, c[0])
	}
	grammar := engine.Grammar().Synopses()
	sort.Strings(documented)
	sort.Strings(grammar)
	if strings.Join(documented, "\n") != strings.Join(grammar, "\n") {
		t.Errorf("docs/user-guide.md lists\n  %s\nthe grammar has\n  %s", strings.Join(documented, "\n  "), strings.Join(grammar, "\n  "))
	}
}
