package idem

import "testing"

func TestKeyIsStableLabelSafeAndDistinct(t *testing.T) {
	base := Key("Octo/Repo", 7, "01")
	tests := []struct {
		name      string
		repo      string
		issue     int
		id        string
		wantEqual bool
	}{
		{"same inputs", "Octo/Repo", 7, "01", true},
		{"repo case ignored", "octo/repo", 7, "01", true},
		{"other task", "Octo/Repo", 7, "02", false},
		{"other issue", "Octo/Repo", 8, "01", false},
		{"other repo", "Octo/Other", 7, "01", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Key(tc.repo, tc.issue, tc.id)
			if !Valid(got) {
				t.Fatalf("Key = %q, not label-safe", got)
			}
			if (got == base) != tc.wantEqual {
				t.Fatalf("Key = %q vs %q, want equal %v", got, base, tc.wantEqual)
			}
		})
	}
}
