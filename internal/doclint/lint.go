package doclint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Linted are the workflow files actionlint checks by themselves (.ci/run),
// relative to the repository root; a doc snippet copied from one of them is
// covered by it.
var Linted = []string{".github/workflows/*.yml", "docs/examples/*.yml"}

// Docs are the Markdown files whose snippets are checked.
var Docs = []string{"README.md", "docs/*.md"}

// Collect reads the docs under root and returns every workflow snippet,
// wrapped, in doc order.
func Collect(root string) ([]Workflow, error) {
	inputs, err := actionInputs(filepath.Join(root, "action.yml"))
	if err != nil {
		return nil, err
	}
	linted := map[string]string{}
	for _, rel := range glob(root, Linted) {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return nil, err
		}
		linted[rel] = string(b)
	}
	var out []Workflow
	for _, rel := range glob(root, Docs) {
		md, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return nil, err
		}
		for _, s := range Extract(rel, md) {
			w, err := Wrap(s, inputs, linted)
			if err != nil {
				return nil, err
			}
			if w.Kind != NotWorkflow {
				out = append(out, w)
			}
		}
	}
	return out, nil
}

func glob(root string, patterns []string) []string {
	var out []string
	for _, p := range patterns {
		m, _ := filepath.Glob(filepath.Join(root, p))
		sort.Strings(m)
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}

// actionInputs reads the input names of action.yml.
func actionInputs(path string) (map[string]bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var a struct {
		Inputs map[string]any `yaml:"inputs"`
	}
	if err := yaml.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	in := map[string]bool{}
	for k := range a.Inputs {
		in[k] = true
	}
	return in, nil
}

// Finding is one actionlint (or shellcheck) report, placed in its doc.
type Finding struct {
	Doc       string
	Line, Col int
	Kind      string // actionlint's rule, e.g. shellcheck, expression
	Message   string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d:%d: %s [%s]", f.Doc, f.Line, f.Col, f.Message, f.Kind)
}

// actionlintError is one entry of actionlint's -format '{{json .}}'.
type actionlintError struct {
	Message  string `json:"message"`
	Filepath string `json:"filepath"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Kind     string `json:"kind"`
}

// Lint writes every wrapped snippet into dir and runs actionlint (with
// shellcheck, when its path is given) on them, returning the findings
// placed in their docs. A finding on a line the wrapper added is placed at
// the snippet's first line.
func Lint(ws []Workflow, dir, actionlint, shellcheck string) ([]Finding, error) {
	byFile := map[string]Workflow{}
	var files []string
	for i, w := range ws {
		if w.Kind == Excerpt {
			continue
		}
		name := fmt.Sprintf("snippet-%03d.yml", i+1)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(w.YAML), 0o644); err != nil {
			return nil, err
		}
		byFile[name] = w
		files = append(files, path)
	}
	if len(files) == 0 {
		return nil, nil
	}
	args := []string{"-format", "{{json .}}", "-shellcheck", shellcheck}
	cmd := exec.Command(actionlint, append(args, files...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return nil, fmt.Errorf("actionlint: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var errs []actionlintError
	if out := bytes.TrimSpace(stdout.Bytes()); len(out) > 0 {
		if err := json.Unmarshal(out, &errs); err != nil {
			return nil, fmt.Errorf("actionlint output: %w: %s", err, out)
		}
	}
	var found []Finding
	for _, e := range errs {
		w, ok := byFile[filepath.Base(e.Filepath)]
		if !ok {
			return nil, fmt.Errorf("actionlint reported on unknown file %s: %s", e.Filepath, e.Message)
		}
		line, col, ok := w.DocPos(e.Line, e.Column)
		if !ok {
			line, col = w.Line, 0
			e.Message += " (in the workflow around this snippet: " + strings.TrimSpace(lineOf(w.YAML, e.Line)) + ")"
		}
		found = append(found, Finding{Doc: w.Doc, Line: line, Col: col, Kind: e.Kind, Message: e.Message})
	}
	return found, nil
}

func lineOf(text string, n int) string {
	lines := strings.Split(text, "\n")
	if n >= 1 && n <= len(lines) {
		return lines[n-1]
	}
	return ""
}
