package doclint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// root is the repository root, seen from this package.
const root = "../.."

func readRepo(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeOpensWithTheTwoCommands: the README starts with the demo and
// the test command, and says what the test command needs besides Go (a C
// compiler for -race; redis-server optional) before a new user meets
// "-race requires cgo".
func TestReadmeOpensWithTheTwoCommands(t *testing.T) {
	readme := readRepo(t, "README.md")
	const opening = "# autopilot\n\n```sh\ngo run ./cmd/bot demo\ngo test -race ./...\n```\n"
	if !strings.HasPrefix(readme, opening) {
		t.Errorf("README.md does not open with exactly the two set-up commands:\n%s", opening)
	}
	first := readme[:strings.Index(readme, "\n## ")]
	for _, want := range []string{"C compiler", "-race requires cgo", "`redis-server`, optional", "skip"} {
		if !strings.Contains(first, want) {
			t.Errorf("README.md's opening does not say %q (what the test command needs besides Go)", want)
		}
	}
}
