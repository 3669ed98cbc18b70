// Package ghtest gives tests the real GitHub webhook payloads vendored under
// the module's testdata/webhooks/ and a way to vary them (another issue
// number, comment body, repository, sender, labels), so scenario deliveries
// are built from GitHub's own shapes instead of invented ones.
//
// It is for tests only and must never be imported by production code. It
// never writes to testdata: every helper returns a fresh copy.
package ghtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Dir returns the absolute path of the module's testdata/webhooks
// directory, found by walking up from the working directory to go.mod.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatalf("ghtest: working directory: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "webhooks")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatalf("ghtest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Payload returns the vendored payload testdata/webhooks/<file>, e.g.
// Payload(t, "issue_comment.created.json").
func Payload(tb testing.TB, file string) []byte {
	tb.Helper()
	if file != filepath.Base(file) {
		tb.Fatalf("ghtest: %q: want a file name inside testdata/webhooks", file)
	}
	data, err := os.ReadFile(filepath.Join(Dir(tb), file))
	if err != nil {
		tb.Fatalf("ghtest: %v", err)
	}
	return data
}

// Files returns the names of every vendored payload, sorted.
func Files(tb testing.TB) []string {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(Dir(tb), "*.json"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("ghtest: no payloads in %s (err %v)", Dir(tb), err)
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	return names
}

// EventName returns the event name a payload file is for: the part of its
// name before the first dot ("issue_comment.created.pr.json" ->
// "issue_comment").
func EventName(file string) string {
	name, _, _ := strings.Cut(filepath.Base(file), ".")
	return name
}

// deleteMarker is the type of Delete.
type deleteMarker string

// Delete, as a value in Mutate's map, removes the member (or array element)
// at that path.
const Delete deleteMarker = "ghtest.Delete"

// Mutate returns a copy of payload with each dotted path set to its value,
// e.g. {"issue.number": 7, "comment.body": "B", "sender.login": "octocat"}.
// Path segments name object members; a segment of digits indexes an array
// ("issue.labels.0.name"). Missing objects along a path are created; a path
// through a non-object, or an index out of range, fails the test. A value is
// stored as its JSON encoding; Delete removes the member. Paths are applied
// in sorted order, so a parent is replaced before its children are set.
func Mutate(tb testing.TB, payload []byte, set map[string]any) []byte {
	tb.Helper()
	out, err := mutate(payload, set)
	if err != nil {
		tb.Fatalf("ghtest: %v", err)
	}
	return out
}

// WithRepo returns a copy of payload moved to the repository "owner/name":
// repository.full_name, repository.name and repository.owner.login.
func WithRepo(tb testing.TB, payload []byte, repo string) []byte {
	tb.Helper()
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" {
		tb.Fatalf("ghtest: WithRepo(%q): want owner/name", repo)
	}
	return Mutate(tb, payload, map[string]any{
		"repository.full_name":   repo,
		"repository.name":        name,
		"repository.owner.login": owner,
	})
}

// Labels returns label objects with the given names, shaped like the
// members of an issue's "labels" array (name, color, default, description),
// for Mutate(tb, p, map[string]any{"issue.labels": Labels("autopilot")}).
func Labels(names ...string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = map[string]any{"name": n, "color": "ededed", "default": false, "description": nil}
	}
	return out
}

func mutate(payload []byte, set map[string]any) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber() // keep 64-bit ids exact
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("decode payload: %w", err)
	}
	paths := make([]string, 0, len(set))
	for p := range set {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		v, err := normalise(set[p])
		if err != nil {
			return nil, fmt.Errorf("value for %s: %w", p, err)
		}
		if root, err = setPath(root, strings.Split(p, "."), v, p); err != nil {
			return nil, err
		}
	}
	return json.Marshal(root)
}

// normalise turns a Go value into the generic JSON form (maps, slices,
// json.Number) by a round trip through encoding/json, so typed values
// (structs, []string) can be set and later walked into.
func normalise(v any) (any, error) {
	if _, ok := v.(deleteMarker); ok {
		return v, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	err = dec.Decode(&out)
	return out, err
}

func setPath(node any, segs []string, v any, full string) (any, error) {
	seg := segs[0]
	if seg == "" {
		return nil, fmt.Errorf("path %q: empty segment", full)
	}
	switch n := node.(type) {
	case map[string]any:
		if len(segs) == 1 {
			if _, del := v.(deleteMarker); del {
				delete(n, seg)
			} else {
				n[seg] = v
			}
			return n, nil
		}
		child, ok := n[seg]
		if !ok || child == nil {
			child = map[string]any{}
		}
		child, err := setPath(child, segs[1:], v, full)
		if err != nil {
			return nil, err
		}
		n[seg] = child
		return n, nil
	case []any:
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= len(n) {
			return nil, fmt.Errorf("path %q: index %q out of range (array of %d)", full, seg, len(n))
		}
		if len(segs) == 1 {
			if _, del := v.(deleteMarker); del {
				return append(n[:i:i], n[i+1:]...), nil
			}
			n[i] = v
			return n, nil
		}
		if n[i], err = setPath(n[i], segs[1:], v, full); err != nil {
			return nil, err
		}
		return n, nil
	default:
		return nil, fmt.Errorf("path %q: %q is inside a %s, not an object or array", full, seg, kind(node))
	}
}

func kind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
