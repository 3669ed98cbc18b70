package action_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// workflowFiles lists the repository's workflows and the example workflows
// users copy, by path relative to the module root.
func workflowFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{".github/workflows/*.yml", "docs/examples/*.yml"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
	}
	if len(out) < 4 {
		t.Fatalf("found only %v", out)
	}
	return out
}

var (
	usesLine = regexp.MustCompile(`^\s*(?:-\s+)?uses:\s*(\S+)\s*(?:#\s*(.*))?$`)
	pinned   = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$`)
	tagNote  = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)
)

// TestActionsPinnedBySHA: a tag can be moved by whoever controls the
// action's repository; a full commit SHA cannot. The tag stays in a comment
// so a reader (and Dependabot) knows which release the SHA is.
func TestActionsPinnedBySHA(t *testing.T) {
	root := moduleRoot(t)
	for _, rel := range workflowFiles(t, root) {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for n := 1; sc.Scan(); n++ {
			m := usesLine.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			ref, note := m[1], strings.TrimSpace(m[2])
			switch {
			case strings.HasPrefix(ref, "./"), strings.HasPrefix(ref, "docker://"):
				continue
			case strings.HasPrefix(ref, "autopilot-dev/autopilot@"):
				continue // this project's own Action, as users reference it
			}
			if !pinned.MatchString(ref) {
				t.Errorf("%s:%d: uses %s: pin a full commit SHA (owner/repo@<40 hex> # vX.Y.Z)", rel, n, ref)
			}
			if !tagNote.MatchString(note) {
				t.Errorf("%s:%d: uses %s: the comment must name the tag the SHA is (# vX.Y.Z), got %q", rel, n, ref, note)
			}
		}
	}
}

// TestWorkflowScriptsTakeNoEventData: an expression inside run: is pasted
// into the script before the shell parses it, so an issue title or a branch
// name would become shell code. Event data goes through env: instead.
func TestWorkflowScriptsTakeNoEventData(t *testing.T) {
	root := moduleRoot(t)
	for _, rel := range workflowFiles(t, root) {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		docs, err := yamlDocs(data)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		for name, j := range asMap(docs[0]["jobs"]) {
			steps, _ := asMap(j)["steps"].([]any)
			for i, s := range steps {
				run, _ := asMap(s)["run"].(string)
				for _, bad := range []string{"github.event.", "inputs.", "github.head_ref"} {
					if strings.Contains(strings.ReplaceAll(run, " ", ""), "${{"+bad) {
						t.Errorf("%s: job %s step %d: run: expands ${{ %s… }}; pass it through env:", rel, name, i, bad)
					}
				}
			}
		}
	}
}

// TestWorkflowPermissionsPerJob: the repository's workflows grant nothing at
// the top and each job names the scopes it needs, so a new job starts with
// no token rights instead of inheriting another job's.
func TestWorkflowPermissionsPerJob(t *testing.T) {
	root := moduleRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, ".github/workflows/*.yml"))
	if len(files) == 0 {
		t.Fatal("no workflows")
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := yamlDocs(data)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		if top, ok := docs[0]["permissions"]; !ok || len(asMap(top)) != 0 {
			t.Errorf("%s: top-level permissions = %v, want {}", rel, top)
		}
		for name, j := range asMap(docs[0]["jobs"]) {
			if _, ok := asMap(j)["permissions"]; !ok {
				t.Errorf("%s: job %s has no permissions:", rel, name)
			}
		}
	}
}

// TestActionRunsReleasedImage: the Action runs the prebuilt image of a
// release tag, never the Dockerfile (a build on every event) and never a
// moving tag such as latest; the release workflow checks the same line.
func TestActionRunsReleasedImage(t *testing.T) {
	root := moduleRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := yamlDocs(data)
	if err != nil {
		t.Fatal(err)
	}
	image, _ := asMap(docs[0]["runs"])["image"].(string)
	if !regexp.MustCompile(`^docker://ghcr\.io/autopilot-dev/autopilot:v\d+\.\d+\.\d+$`).MatchString(image) {
		t.Errorf("action.yml runs.image = %q, want docker://ghcr.io/autopilot-dev/autopilot:vX.Y.Z", image)
	}
	// The release workflow's check reads the line with sed: exactly one
	// two-space-indented image: line.
	if n := len(regexp.MustCompile(`(?m)^  image: `).FindAll(data, -1)); n != 1 {
		t.Errorf("action.yml has %d lines starting '  image: ', want 1 (the release check reads it)", n)
	}
	rel, err := os.ReadFile(filepath.Join(root, ".github/workflows/release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`want="docker://${image}:${TAG}"`, `platforms: linux/amd64,linux/arm64`, `actions/attest-build-provenance@`} {
		if !bytes.Contains(rel, []byte(want)) {
			t.Errorf("release.yml lacks %s", want)
		}
	}
}
