package gql

import "testing"

func TestURLIsBesideTheRESTRoot(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.github.com/":            "https://api.github.com/graphql",
		"https://ghes.example.com/api/v3/":   "https://ghes.example.com/api/graphql",
		"http://127.0.0.1:8080/":             "http://127.0.0.1:8080/graphql",
		"https://proxy.example.com/github/":  "https://proxy.example.com/github/graphql",
		"https://ghes.example.com/x/api/v3/": "https://ghes.example.com/x/api/graphql",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}
