// Package testkit holds the small helpers that tests in several packages
// share: checks that report a mismatch by name, and generated text. Only
// tests import it; it must never be imported by code that ships.
package testkit

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// Want fails the test when got != want.
func Want[T comparable](t testing.TB, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// WantDeep fails the test when got and want differ.
func WantDeep(t testing.TB, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

// Words is n characters of random lower-case words (it compresses about as
// badly as prose, a pessimistic measure of what fits in a comment).
func Words(rnd *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		for range 3 + rnd.IntN(7) {
			b.WriteByte(byte('a' + rnd.IntN(26)))
		}
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String()[:n])
}
