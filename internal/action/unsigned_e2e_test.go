package action_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unsignedNote is the job-summary paragraph of a run without state_key.
const unsignedNote = "**The state is unsigned.**"

// TestSummarySaysOnceThatStateIsUnsigned: a run without state_key says in
// its job summary, once, that its state is unsigned and what that lets
// others do; a run with the key says nothing about it.
func TestSummarySaysOnceThatStateIsUnsigned(t *testing.T) {
	h := newHarness(t)
	if err := h.gh.SetFile(repo, ".github/autopilot.yml", []byte(greenfieldConfig)); err != nil {
		t.Fatal(err)
	}
	summary := func() string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(h.dir, fmt.Sprintf("summary-%d", h.n)))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	h.startRun("Signed")
	if s := summary(); strings.Contains(s, "unsigned") {
		t.Errorf("summary of a run with state_key mentions unsigned state:\n%s", s)
	}

	n, err := h.gh.CreateIssue(repo, "maria", "Unsigned", "Users want it.", nil)
	if err != nil {
		t.Fatal(err)
	}
	h.addLabel(n, "autopilot")
	h.mustOK(h.run("issues", h.labeled(n, "maria"), "INPUT_STATE_KEY="), "start without a key")
	s := summary()
	if c := strings.Count(s, unsignedNote); c != 1 {
		t.Fatalf("summary of a run without state_key has the unsigned note %d times, want once:\n%s", c, s)
	}
	for _, want := range []string{
		"`state_key` is not set",
		"any workflow in this repository that posts with `GITHUB_TOKEN`",
		"docs/action.md#the-state_key-secret",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("unsigned note lacks %q:\n%s", want, s)
		}
	}
	if c := strings.Count(s, "unsigned"); c != 1 {
		t.Errorf("summary says unsigned %d times, want once:\n%s", c, s)
	}
	// A run over several issues (the sweep) still says it once.
	h.mustOK(h.run("schedule", []byte("{}"), "INPUT_STATE_KEY="), "sweep without a key")
	if s := summary(); strings.Count(s, unsignedNote) != 1 {
		t.Errorf("sweep summary without state_key: unsigned note %d times, want once:\n%s", strings.Count(s, unsignedNote), s)
	}
}
