package reliability

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/grammar"
)

// TestVocabularyAgreesWithTheGrammar: every body the scenarios post means
// what the generator says it means under PRODUCT.md §7 (the oracle relies
// on the meaning, never on the parser).
func TestVocabularyAgreesWithTheGrammar(t *testing.T) {
	check := func(body string, want Meaning, letter string) {
		t.Helper()
		r := engine.Parse(body)
		ok := false
		switch want {
		case MeanChatter:
			ok = r.Kind == grammar.None && !r.Attempt
		case MeanAttempt:
			ok = r.Kind == grammar.None && r.Attempt
		case MeanAnswer:
			ok = r.Kind == grammar.Choice && r.Letter == letter
		}
		if !ok {
			t.Errorf("%q parses as %+v, the vocabulary says meaning %d %s", body, r, want, letter)
		}
	}
	for _, b := range chatter {
		check(b, MeanChatter, "")
	}
	for _, b := range attempts {
		check(b, MeanAttempt, "")
	}
	for _, f := range answerForms {
		for _, l := range []string{"A", "B", "C", "D"} {
			check(f(l), MeanAnswer, l)
		}
	}
}
