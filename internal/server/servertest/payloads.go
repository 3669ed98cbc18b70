// Package servertest loads the vendored GitHub webhook examples in
// testdata/webhooks/ (from @octokit/webhooks-examples) for the server's tests
// and load benchmark, and varies them (issue number, sender) the way real
// deliveries vary. It is test support: it must never be imported by
// production code, and it never invents payload shapes of its own.
package servertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Payload is one vendored webhook example.
type Payload struct {
	// Name is the file name without ".json", e.g. "issue_comment.created".
	Name string
	// Event is the X-GitHub-Event value: the file name up to its first dot.
	Event string
	// Body is the raw JSON as GitHub sent it.
	Body []byte
}

// Dir finds <module root>/testdata/webhooks by walking up from the working
// directory (go test runs in the package directory) to go.mod.
func Dir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("webhook examples: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "webhooks"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("webhook examples: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Load reads every *.json example in dir, sorted by name.
func Load(dir string) ([]Payload, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("webhook examples: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("webhook examples: none in %s", dir)
	}
	sort.Strings(files)
	out := make([]Payload, 0, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("webhook examples: %w", err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		event, _, _ := strings.Cut(name, ".")
		out = append(out, Payload{Name: name, Event: event, Body: b})
	}
	return out, nil
}

// Find returns the example called name (e.g. "issues.labeled").
func Find(ps []Payload, name string) (Payload, error) {
	for _, p := range ps {
		if p.Name == name {
			return p, nil
		}
	}
	return Payload{}, fmt.Errorf("webhook examples: no %s", name)
}

// WithIssue returns body with the issue or pull request number set to n
// (issue.number, pull_request.number and the top-level number, where
// present), re-encoded.
func WithIssue(body []byte, n int) ([]byte, error) {
	return Edit(body, func(m map[string]any) {
		for _, k := range []string{"issue", "pull_request"} {
			if obj, ok := m[k].(map[string]any); ok {
				obj["number"] = n
			}
		}
		if _, ok := m["number"]; ok {
			m["number"] = n
		}
	})
}

// WithSender returns body with sender.login set to login, re-encoded.
func WithSender(body []byte, login string) ([]byte, error) {
	return Edit(body, func(m map[string]any) {
		if obj, ok := m["sender"].(map[string]any); ok {
			obj["login"] = login
		}
	})
}

// WithInstallation returns body with installation.id set to id, re-encoded.
func WithInstallation(body []byte, id int64) ([]byte, error) {
	return Edit(body, func(m map[string]any) {
		inst, _ := m["installation"].(map[string]any)
		if inst == nil {
			inst = map[string]any{}
			m["installation"] = inst
		}
		inst["id"] = id
	})
}

// Edit decodes body into a map (numbers kept exact), lets f change it and
// re-encodes it.
func Edit(body []byte, f func(map[string]any)) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("webhook example: %w", err)
	}
	f(m)
	out, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("webhook example: %w", err)
	}
	return out, nil
}
