package grammar_test

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/grammar"
)

// A grammar knows only the commands it is given: the same line is a command
// under one table and an unknown command under another.
func TestGrammarKnowsOnlyItsTable(t *testing.T) {
	g := grammar.NewGrammar(
		grammar.Spec{Name: "wave", Args: "<name>", Slug: true, About: "wave at someone"},
		grammar.Spec{Name: "tea make", About: "make tea"},
		grammar.Spec{Name: "tea pour", About: "pour tea"},
		grammar.Spec{Name: "pick", Args: "<letter>", Letter: true, About: "pick"},
	)
	if got := g.Parse("/autopilot wave Bob hi"); got.Kind != grammar.Command || got.Cmd != "wave" || got.Name != "bob" || got.Text != "hi" {
		t.Errorf("wave: %+v", got)
	}
	if got := g.Parse("/autopilot wave"); !got.Attempt || got.Hint != "usage: `/autopilot wave <name>`" {
		t.Errorf("wave without a name: %+v", got)
	}
	if got := g.Parse("/autopilot status"); got.Kind != grammar.None || !got.Attempt {
		t.Errorf("status is not in this table: %+v", got)
	}
	if got := g.Parse("/autopilot TEA pour"); got.Kind != grammar.Command || got.Cmd != "tea pour" {
		t.Errorf("tea pour: %+v", got)
	}
	if got := g.Parse("/autopilot tea spill"); !got.Attempt || got.Hint != "usage: `/autopilot tea make` or `/autopilot tea pour`" {
		t.Errorf("tea spill: %+v", got)
	}
	if got := g.Parse("/autopilot pick c"); got.Kind != grammar.Choice || got.Letter != "C" || got.Cmd != "pick" {
		t.Errorf("pick: %+v", got)
	}
	if got := g.Parse("/autopilot pick"); !got.Attempt || got.Hint != "usage: `/autopilot pick <letter>`" {
		t.Errorf("pick without a letter: %+v", got)
	}
}

func TestNewGrammarRefusesBadTables(t *testing.T) {
	for name, specs := range map[string][]grammar.Spec{
		"repeated":                 {{Name: "go"}, {Name: "go"}},
		"upper case":               {{Name: "Go"}},
		"three words":              {{Name: "a b c"}},
		"empty":                    {{Name: ""}},
		"not ASCII":                {{Name: "gö"}},
		"alias is another command": {{Name: "go"}, {Name: "run", Aliases: []string{"go"}}},
		"alias repeats its name":   {{Name: "go", Aliases: []string{"go"}}},
		"bad alias":                {{Name: "go", Aliases: []string{"Go on"}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: NewGrammar accepted %+v", name, specs)
				}
			}()
			grammar.NewGrammar(specs...)
		}()
	}
}
