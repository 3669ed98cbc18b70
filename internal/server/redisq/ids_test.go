package redisq

import "testing"

// TestStreamIDsOrderAsRedisOrdersThem: ids compare by time, then by
// sequence, as numbers ("10-0" after "9-5", which a string comparison
// gets wrong); a range falls back to the whole stream when an id is not
// an entry id.
func TestStreamIDsOrderAsRedisOrdersThem(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
		ok   bool
	}{
		{"10-0", "9-5", 1, true},
		{"9-5", "9-10", -1, true},
		{"9-5", "9-5", 0, true},
		{"1700000000000-0", "1700000000000-1", -1, true},
		{"9", "9-5", 0, false},
		{"x-1", "9-5", 0, false},
		{"9-", "9-5", 0, false},
	} {
		got, ok := compareIDs(c.a, c.b)
		if got != c.want || ok != c.ok {
			t.Errorf("compareIDs(%q, %q) = %d, %v; want %d, %v", c.a, c.b, got, ok, c.want, c.ok)
		}
	}
	if f, l := idRange([]string{"9-5", "10-0", "9-10", "2-0"}); f != "2-0" || l != "10-0" {
		t.Errorf("idRange = %s..%s, want 2-0..10-0", f, l)
	}
	if f, l := idRange([]string{"9-5", "junk"}); f != "-" || l != "+" {
		t.Errorf("idRange with a bad id = %s..%s, want -..+", f, l)
	}
}
