package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run `go test ./internal/demo -update` if the change is intended.\n--- got (first 2000 bytes) ---\n%.2000s", name, got)
	}
}

func TestDemoTranscriptIsPinned(t *testing.T) {
	var buf bytes.Buffer
	if _, err := Run(context.Background(), Options{}, &buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "greenfield.golden", buf.Bytes())
}

func TestDemoIsDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	if _, err := Run(context.Background(), Options{JSON: true}, &a); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), Options{JSON: true}, &b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two demo runs printed different transcripts")
	}
}

// TestDemoCoversTheScenario checks the story of the README, one beat at a time.
func TestDemoCoversTheScenario(t *testing.T) {
	var buf bytes.Buffer
	tr, err := Run(context.Background(), Options{JSON: true}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	var decoded Transcript
	if err := json.Unmarshal(buf.Bytes(), &decoded); err != nil {
		t.Fatalf("--json output is not JSON: %v", err)
	}
	all := ""
	for _, e := range tr.Entries {
		all += e.Kind + " " + e.Actor + " " + e.Body + " " + e.Detail + " " + e.Label + "\n"
	}
	beats := []string{
		"label+ maria", "autopilot/status:in-progress",
		"Jira authentication failed", "B) Continue without Jira",
		"DECISION REQUIRED: Decompose complete",
		"only people with at least **write** permission",
		"confused on @drive-by",
		"SKILL FAILED: Implement — 3 consecutive failures",
		"Autopilot run complete", "autopilot/status:done",
	}
	for _, b := range beats {
		if !strings.Contains(all, b) {
			t.Errorf("transcript lacks %q", b)
		}
	}
	if n := strings.Count(all, "only people with at least"); n != 1 {
		t.Errorf("the non-collaborator got %d explanations, want exactly 1", n)
	}
	s := tr.Summary
	if s.Status != state.RunDone || s.StepsCompleted != 8 || len(s.Decisions) != 3 || s.Tasks != 6 || s.JiraPending != 6 {
		t.Errorf("summary = %+v", s)
	}
	st, err := state.Parse(tr.State, state.Want{Repo: repo, Issue: 1, Key: []byte("demo-state-key")})
	if err != nil {
		t.Fatalf("final state comment does not parse: %v", err)
	}
	if len(st.Ledger) == 0 || st.Version != s.StateVersion {
		t.Errorf("ledger %d entries, version %d vs %d", len(st.Ledger), st.Version, s.StateVersion)
	}
}

func TestDemoWithJiraCreatesIssues(t *testing.T) {
	var buf bytes.Buffer
	tr, err := Run(context.Background(), Options{Jira: true, Quiet: true}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Summary.JiraIssues != 6 || tr.Summary.JiraPending != 0 {
		t.Errorf("jira issues %d pending %d, want 6 and 0", tr.Summary.JiraIssues, tr.Summary.JiraPending)
	}
	if !strings.Contains(buf.String(), "Summary") {
		t.Error("--quiet should still print the summary")
	}
}

func TestDemoOtherFlowsFinish(t *testing.T) {
	for _, f := range []string{"existing-code", "meta-repo", "review-loop"} {
		t.Run(f, func(t *testing.T) {
			var buf bytes.Buffer
			tr, err := Run(context.Background(), Options{Flow: f, Quiet: true}, &buf)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Summary.Status != state.RunDone {
				t.Fatalf("flow %s ended %q, want done\n%s", f, tr.Summary.Status, buf.String())
			}
		})
	}
}

func TestDemoUnknownFlowIsAUsageError(t *testing.T) {
	_, err := Run(context.Background(), Options{Flow: "nope"}, &bytes.Buffer{})
	var ue *UsageError
	if err == nil || !strings.Contains(err.Error(), "nope") || !asUsage(err, &ue) {
		t.Fatalf("err = %v, want a UsageError naming the flow", err)
	}
}

func asUsage(err error, ue **UsageError) bool {
	u, ok := err.(*UsageError)
	*ue = u
	return ok
}

func BenchmarkDemo(b *testing.B) {
	for b.Loop() {
		if _, err := Run(context.Background(), Options{Quiet: true}, &bytes.Buffer{}); err != nil {
			b.Fatal(err)
		}
	}
}
