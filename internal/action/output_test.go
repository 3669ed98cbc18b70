package action

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/github/transport"
)

// TestSummaryLeavesAnUnknownRateLimitOut: when no answer carried the
// budget (GitHub Enterprise Server with rate limiting off, or a run that
// made no call), the summary counts the calls and says nothing of the
// rate limit, rather than "remaining -1".
func TestSummaryLeavesAnUnknownRateLimitOut(t *testing.T) {
	for _, tc := range []struct {
		remaining int
		want      string
	}{
		{-1, "API calls: 3 (1 conditional hits)\n"},
		{0, "API calls: 3 (1 conditional hits, rate limit remaining 0)\n"},
		{4321, "API calls: 3 (1 conditional hits, rate limit remaining 4321)\n"},
	} {
		path := filepath.Join(t.TempDir(), "summary")
		env := Env{Getenv: func(k string) string {
			if k == "GITHUB_STEP_SUMMARY" {
				return path
			}
			return ""
		}, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Now: time.Now}
		writeSummary(env, Result{Event: "schedule"}, transport.Stats{Total: 3, ConditionalHits: 1, RateRemaining: tc.remaining}, true)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), tc.want) || strings.Contains(string(b), "-1") {
			t.Errorf("remaining %d: summary\n%s\nwant %q", tc.remaining, b, tc.want)
		}
	}
}
