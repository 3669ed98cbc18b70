package ghevent

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestLinkedIssues(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []int
	}{
		{"fixes keyword", "Fixes #12", []int{12}},
		{"every keyword form", "close #1 closes #2 closed #3 fix #4 fixes #5 fixed #6 resolve #7 resolves #8 resolved #9", []int{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"any case", "FIXES #12 and ReSoLvEs #13", []int{12, 13}},
		{"colon after keyword accepted", "fixes: #12", []int{12}},
		{"colon glued to the number is not a link", "Fixes:#12", nil},
		{"tab separator", "Closes\t#3", []int{3}},
		{"keyword on its own line before the number is not a link", "Fixes\n#12", nil},
		{"other repository ignored", "Closes owner/other#3", nil},
		{"other repository ignored, same-repo kept", "Closes owner/other#3\nCloses #4", []int{4}},
		{"issue URL ignored", "Fixes https://github.com/o/r/issues/5", nil},
		{"autopilot trailer", "Some change.\n\nAutopilot-Issue: #7", []int{7}},
		{"trailer key in any case, spaces around", "  autopilot-issue:   #7  ", []int{7}},
		{"trailer must be the whole line", "See Autopilot-Issue: #7 for context", nil},
		{"trailer with CRLF line ending", "Title\r\nAutopilot-Issue: #7\r\n", []int{7}},
		{"code fence ignored", "```\nFixes #1\n```\nFixes #2", []int{2}},
		{"tilde fence ignored", "~~~go\nFixes #1\n~~~\n", nil},
		{"fence closes only with as many backticks", "````\n```\nFixes #1\n````\nfixes #3", []int{3}},
		{"unclosed fence hides the rest", "```\nFixes #1", nil},
		{"indented fence of up to three spaces", "   ```\nFixes #1\n   ```\nFixes #2", []int{2}},
		{"trailer inside a fence ignored", "```\nAutopilot-Issue: #7\n```", nil},
		{"inline code ignored", "Use `Fixes #1` to link; this Fixes #2", []int{2}},
		{"double-backtick inline code ignored", "``Fixes #1 ` still code`` fixes #2", []int{2}},
		{"unmatched backtick is text", "a ` Fixes #1", []int{1}},
		{"HTML comment ignored", "<!-- e.g. Fixes #123 -->\nFixes #4", []int{4}},
		{"multi-line HTML comment ignored", "<!--\nFixes #1\n-->\nAutopilot-Issue: #2", []int{2}},
		{"unclosed HTML comment hides the rest", "Fixes #1 <!-- Fixes #2", []int{1}},
		{"duplicates removed, first order kept", "Fixes #5\nCloses #3\nResolves #5\nAutopilot-Issue: #3", []int{5, 3}},
		{"one keyword links one number", "Fixes #1 and #2", []int{1}},
		{"comma separated keywords", "Fixes #1, fixes #2", []int{1, 2}},
		{"keyword inside a longer word", "prefixes #3 unfixed #4 closesx #5", nil},
		{"keyword after underscore", "auto_fixes #3", nil},
		{"keyword after punctuation", "(fixes #3) [closes #4]", []int{3, 4}},
		{"number glued to letters", "Fixes #12abc", nil},
		{"number followed by punctuation", "Fixes #12.", []int{12}},
		{"zero is not an issue", "Fixes #0", nil},
		{"leading zero is not an issue", "Fixes #012", nil},
		{"number too large", "Fixes #99999999999", nil},
		{"non-keyword reference", "See #12, related to #13", nil},
		{"GH- prefix not linked", "Fixes GH-12", nil},
		{"markdown emphasis around the keyword", "**Fixes** #12", nil},
		{"bullet item", "- Fixes #12", []int{12}},
		{"blockquote", "> Closes #8", []int{8}},
		{"unicode letter before keyword", "éfixes #3", nil},
		{"empty body", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LinkedIssues(tt.body); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("LinkedIssues(%q) = %v, want %v", tt.body, got, tt.want)
			}
		})
	}
}

func TestLinkedIssuesCapsTheCount(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 3*MaxLinkedIssues; i++ {
		fmt.Fprintf(&b, "Fixes #%d\n", i)
	}
	got := LinkedIssues(b.String())
	if len(got) != MaxLinkedIssues || got[0] != 1 || got[MaxLinkedIssues-1] != MaxLinkedIssues {
		t.Errorf("LinkedIssues of %d references = %v, want the first %d", 3*MaxLinkedIssues, got, MaxLinkedIssues)
	}
}

func TestLinkedIssuesOnAHugeBodyStaysLinear(t *testing.T) {
	// 1 MiB of near-misses: must finish (RE2 is linear) and link nothing.
	body := strings.Repeat("fixes fixes: #x `` <!- ", 1<<20/23)
	if got := LinkedIssues(body); got != nil {
		t.Errorf("LinkedIssues(near misses) = %v, want nil", got)
	}
}

func FuzzLinkedIssues(f *testing.F) {
	for _, s := range []string{"Fixes #12", "fixes: #1\nAutopilot-Issue: #2", "```\nFixes #1\n```", "<!-- Fixes #3 -->", "`Fixes #4`", "Closes o/r#5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got := LinkedIssues(body)
		if len(got) > MaxLinkedIssues {
			t.Fatalf("%d linked issues, cap is %d", len(got), MaxLinkedIssues)
		}
		seen := map[int]bool{}
		for _, n := range got {
			if n <= 0 || seen[n] {
				t.Fatalf("LinkedIssues(%q) = %v: want distinct positive numbers", body, got)
			}
			seen[n] = true
			if !strings.Contains(body, fmt.Sprintf("#%d", n)) {
				t.Fatalf("LinkedIssues(%q) = %v: #%d is not in the body", body, got, n)
			}
		}
	})
}
