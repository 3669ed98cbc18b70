package access

import "testing"

func TestAtLeastFollowsGitHubOrderAndUnknownGrantsNothing(t *testing.T) {
	tests := []struct {
		p, min Level
		want   bool
	}{
		{Admin, Write, true},
		{Maintain, Maintain, true},
		{Triage, Write, false},
		{Read, Triage, false},
		{None, None, true},
		{Level("owner"), None, false},
		{Level(""), Read, false},
	}
	for _, tc := range tests {
		if got := tc.p.AtLeast(tc.min); got != tc.want {
			t.Errorf("%q.AtLeast(%q) = %v, want %v", tc.p, tc.min, got, tc.want)
		}
	}
}

func TestParseRejectsUnknownNames(t *testing.T) {
	for _, s := range []string{"none", "read", "triage", "write", "maintain", "admin"} {
		if p, err := Parse(s); err != nil || string(p) != s {
			t.Errorf("Parse(%q) = %q, %v", s, p, err)
		}
	}
	for _, s := range []string{"", "Admin", "owner", "push"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}
