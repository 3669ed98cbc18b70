package testkit

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps the errors instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, format)
}

func TestWantFailsOnlyOnAMismatch(t *testing.T) {
	r := &recorder{TB: t}
	Want(r, "same", 3, 3)
	WantDeep(r, "same", []string{"a"}, []string{"a"})
	if len(r.errs) != 0 {
		t.Fatalf("equal values reported: %q", r.errs)
	}
	Want(r, "differ", "a", "b")
	WantDeep(r, "differ", map[string]int{"a": 1}, map[string]int{"a": 2})
	if len(r.errs) != 2 {
		t.Fatalf("%d mismatches reported, want 2", len(r.errs))
	}
}

func TestWordsFillsNCharactersWithWords(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 10, 150, 300} {
		s := Words(rnd, n)
		if len(s) > n || len(s) < n-1 {
			t.Errorf("Words(%d) is %d characters", n, len(s))
		}
		if strings.Trim(s, "abcdefghijklmnopqrstuvwxyz ") != "" || strings.Contains(s, "  ") {
			t.Errorf("Words(%d) = %q: want lower-case words", n, s)
		}
	}
	a, b := Words(rand.New(rand.NewPCG(7, 7)), 50), Words(rand.New(rand.NewPCG(7, 7)), 50)
	if a != b {
		t.Errorf("Words differs for the same seed: %q and %q", a, b)
	}
}
