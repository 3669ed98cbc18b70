package fakegithub

import (
	"slices"
	"strings"
	"testing"
)

func TestMentionsAndReferencesFollowGitHubLinking(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		mentions []string
		refs     []int
	}{
		{"user and team", "ping @alice and @octo/core-team, thanks", []string{"alice", "octo/core-team"}, nil},
		{"start of body", "@bob: see #12", []string{"bob"}, []int{12}},
		{"email is not a mention", "mail alice@example.com", nil, nil},
		{"zero-width space defeats both", "@\u200balice fixed #\u200b1", nil, nil},
		{"inline code", "run `@alice #3` now", nil, nil},
		{"fenced block", "text\n```\n@alice #4\n```\nafter @carol", []string{"carol"}, nil},
		{"tilde fence", "~~~go\n@x\n~~~", nil, nil},
		{"html entity is not a reference", "&#123; and (#7)", nil, []int{7}},
		{"path is not a reference", "see a/#5 and x#6", nil, nil},
		{"trailing hyphen stops the login", "@dash- and @-no", []string{"dash"}, nil},
		{"quoted reply still mentions", "> @alice said A", []string{"alice"}, nil},
		{"bot login with brackets", "@autopilot[bot] hi", []string{"autopilot"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Mentions(tt.body); !slices.Equal(got, tt.mentions) {
				t.Errorf("Mentions = %q, want %q", got, tt.mentions)
			}
			if got := References(tt.body); !slices.Equal(got, tt.refs) {
				t.Errorf("References = %v, want %v", got, tt.refs)
			}
		})
	}
}

// FuzzMentions checks the parsers never panic and that inserting a
// zero-width space after every "@" and "#" (the escaping autopilot uses)
// leaves nothing to link.
func FuzzMentions(f *testing.F) {
	for _, s := range []string{"@alice #1", "```\n@x\n```", "`@a` @b/c", "x@y #9z", "&#1;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, m := range Mentions(body) {
			if !strings.Contains(body, "@"+m) {
				t.Fatalf("mention %q not in %q", m, body)
			}
		}
		_ = References(body)
		escaped := strings.NewReplacer("@", "@\u200b", "#", "#\u200b").Replace(body)
		if m, r := Mentions(escaped), References(escaped); len(m) != 0 || len(r) != 0 {
			t.Fatalf("escaped %q still links %q %v", escaped, m, r)
		}
	})
}
