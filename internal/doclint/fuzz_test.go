package doclint

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// FuzzExtractWrap: Extract never panics and places each block inside the
// doc; Wrap never panics, and every workflow it makes is YAML whose lines
// map back into the snippet.
func FuzzExtractWrap(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("```yaml\n- run: a\n  -\n```\n"))
	f.Add([]byte("  ```yml\n\twith: {a: 1}\n```"))
	f.Fuzz(func(t *testing.T, md []byte) {
		lines := strings.Count(string(md), "\n") + 1
		for _, s := range Extract("x.md", md) {
			if s.Line < 1 || s.Line+strings.Count(s.Text, "\n")-1 > lines {
				t.Fatalf("block at line %d with %d lines in a %d-line doc", s.Line, strings.Count(s.Text, "\n"), lines)
			}
			w, err := Wrap(s, map[string]bool{"state_key": true}, map[string]string{"e.yml": "on: push\n"})
			if err != nil || w.YAML == "" {
				continue
			}
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(w.YAML), &n); err != nil {
				t.Fatalf("wrapped %s snippet is not YAML: %v\n%s", w.Kind, err, w.YAML)
			}
			if l, _, ok := w.DocPos(w.first, 1); !ok || l != s.Line {
				t.Fatalf("first snippet line maps to %d, %v; want %d", l, ok, s.Line)
			}
		}
	})
}
