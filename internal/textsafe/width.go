package textsafe

import (
	"unicode"

	"golang.org/x/text/width"
)

// DisplayWidth is the number of terminal columns s takes: East Asian wide
// and fullwidth characters count two; combining marks and format
// characters (such as the zero-width space) count zero.
func DisplayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		case isWide(r):
			n += 2
		default:
			n++
		}
	}
	return n
}

func isWide(r rune) bool {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return true
	}
	return false
}
