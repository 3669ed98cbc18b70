package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
	"github.com/autopilot-dev/autopilot/internal/transcript"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	transcript.Golden(t, filepath.Join("testdata", name), string(got), *update)
}

func TestDemoTranscriptIsPinned(t *testing.T) {
	var buf bytes.Buffer
	if _, err := Run(context.Background(), Options{}, &buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "greenfield.golden", buf.Bytes())
}

func TestDemoWithJiraTranscriptIsPinned(t *testing.T) {
	var buf bytes.Buffer
	if _, err := Run(context.Background(), Options{Jira: true}, &buf); err != nil {
		t.Fatal(err)
	}
	golden(t, "greenfield_jira.golden", buf.Bytes())
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
	// No Jira is configured in this scenario: nobody is asked about it, and
	// the tasks stay in the issue, not "pending" (PRODUCT §4, §10).
	for _, never := range []string{"Jira authentication failed", "autopilot/jira:pending"} {
		if strings.Contains(all, never) {
			t.Errorf("transcript shows %q although Jira is not configured", never)
		}
	}
	if !strings.Contains(tr.State, "Tasks: no tracker") || strings.Contains(tr.State, "Jira:") {
		t.Error("the final state does not say that no tracker is configured, or speaks of Jira")
	}
	s := tr.Summary
	if s.Status != string(state.RunDone) || s.StepsCompleted != 8 || len(s.Decisions) != 2 || s.Tasks != 6 || s.TasksPending != 0 {
		t.Errorf("summary = %+v", s)
	}
	st, err := codec.Parse(tr.State, codec.Want{Repo: repo, Issue: 1, Key: []byte("demo-state-key")})
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
	if tr.Summary.JiraIssues != 6 || tr.Summary.TasksPending != 0 {
		t.Errorf("jira issues %d pending %d, want 6 and 0", tr.Summary.JiraIssues, tr.Summary.TasksPending)
	}
	if !strings.Contains(buf.String(), "Summary") {
		t.Error("--quiet should still print the summary")
	}
}

// TestDemoWithJiraAsksWhenAuthenticationFails: with Jira configured, the
// seed's Choose appears when its authentication fails; the renewed token
// and A retry, and the tasks reach Jira.
func TestDemoWithJiraAsksWhenAuthenticationFails(t *testing.T) {
	var buf bytes.Buffer
	tr, err := Run(context.Background(), Options{Jira: true}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, b := range []string{"Jira authentication failed", " A) Retry authentication", " B) Continue without Jira", "renewed the JIRA_TOKEN secret", "REP-6"} {
		if !strings.Contains(out, b) {
			t.Errorf("the --jira transcript lacks %q", b)
		}
	}
	if d := tr.Summary.Decisions; len(d) == 0 || !strings.HasPrefix(d[0], "Jira authentication failed → A") {
		t.Errorf("decisions %v, want the auth question answered A first", d)
	}
}

// TestEveryDemoEndsDone: every flow, with and without Jira, runs to done
// (a scenario that ends stopped or waiting is a broken demo).
func TestEveryDemoEndsDone(t *testing.T) {
	for _, f := range []string{"greenfield", "existing-code", "meta-repo", "review-loop"} {
		for _, jira := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/jira=%v", f, jira), func(t *testing.T) {
				var buf bytes.Buffer
				tr, err := Run(context.Background(), Options{Flow: f, Jira: jira}, &buf)
				if err != nil {
					t.Fatal(err)
				}
				if tr.Summary.Status != string(state.RunDone) {
					t.Fatalf("flow %s (jira %v) ended %q, want done\n%s", f, jira, tr.Summary.Status, buf.String())
				}
				if jira && tr.Summary.TasksPending != 0 {
					t.Errorf("%d tasks still wait for Jira", tr.Summary.TasksPending)
				}
			})
		}
	}
}

// TestTranscriptGroupsEachPass: a bot pass's reaction and label changes
// are one line, so no pass prints two reaction or label lines.
func TestTranscriptGroupsEachPass(t *testing.T) {
	var buf bytes.Buffer
	tr, err := Run(context.Background(), Options{}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "reacted 👍 on @maria's comment · labels −step:problem +step:research") {
		t.Errorf("the second pass's reaction and labels are not on one line:\n%.3000s", buf.String())
	}
	runs := map[int]bool{}
	for _, e := range tr.Entries {
		if e.Actor == bot && (e.Kind == "react" || e.Kind == "label+" || e.Kind == "label-") {
			runs[e.Run] = true
		}
	}
	lines := 0
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, "@"+bot+" reacted") || strings.Contains(l, "@"+bot+" labels") {
			lines++
		}
	}
	if lines != len(runs) {
		t.Errorf("%d reaction/label lines for %d bot passes, want one each", lines, len(runs))
	}
}

// TestReviewLoopDemoShowsWhatMovesIt: the PR, its review and its checks
// are in the transcript, before the steps they complete.
func TestReviewLoopDemoShowsWhatMovesIt(t *testing.T) {
	var buf bytes.Buffer
	if _, err := Run(context.Background(), Options{Flow: "review-loop"}, &buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	order := []string{"@devin opened pull request #2", "@grace approved #2", "step 5 QA (in_progress)", "ci: test ✔ and lint ✔", "· done"}
	at := -1
	for _, o := range order {
		i := strings.Index(out, o)
		if i < 0 || i < at {
			t.Fatalf("transcript lacks %q after the previous beat:\n%s", o, out)
		}
		at = i
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
