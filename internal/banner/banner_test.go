package banner

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/textsafe"
	"github.com/autopilot-dev/autopilot/internal/transcript"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/<name>.golden, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	transcript.Golden(t, filepath.Join("testdata", name+".golden"), got, *update)
}

func TestBannerGolden(t *testing.T) {
	tests := []struct {
		name string
		flow string
		rows []Row
		cur  Current
	}{
		{"greenfield", "greenfield", []Row{
			{Label: "Step 1", Name: "Problem", Status: StatusCompleted},
			{Label: "Step 2", Name: "Research", Status: StatusCompleted, Note: "2 drafts"},
			{Label: "Step 3", Name: "Plan", Status: StatusInProgress},
			{Label: "Step 4", Name: "Decompose", Status: StatusNotStarted},
			{Label: "Step 5", Name: "Implement", Status: StatusFailed, Retries: 2},
			{Label: "Step 6", Name: "Run Tests", Status: StatusNotStarted},
			{Label: "Step 7", Name: "Security Audit", Status: StatusSkipped, Note: "ignored"},
			{Label: "Step 8", Name: "Deploy", Status: StatusNotStarted},
		}, Current{Label: "Step 3", Name: "Plan", Phase: 4, SubStep: "architecture-review", Retry: 1,
			Action: "waiting for /autopilot done from the executor"}},
		{"existing_code_wide", "existing-code", []Row{
			{Label: "Pre", Name: "Document", Status: StatusCompleted},
			{Label: "Step 2hb", Name: "Security Audit", Status: StatusInProgress, Note: "batch 2 of ~4"},
			{Label: "Step 2i", Name: "デプロイ 配置", Status: StatusNotStarted},
			{Label: "Step 2j", Name: "Blackbox Test Spec Extra Long", Status: "weird_value"},
		}, Current{Label: "Step 2hb", Name: "Security Audit"}},
		{"done", "greenfield", []Row{
			{Label: "Step 1", Name: "Problem", Status: StatusCompleted, Note: "```\n<!-- x -->"},
		}, Current{Name: "Done", Action: "nothing: the run is finished"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, "banner_"+tt.name, Banner(tt.flow, tt.rows, tt.cur))
		})
	}
}

func TestBannerStatusWords(t *testing.T) {
	tests := []struct {
		row  Row
		want string
	}{
		{Row{Status: StatusCompleted}, "DONE"},
		{Row{Status: StatusCompleted, Note: "5 tasks"}, "DONE (5 tasks)"},
		{Row{Status: StatusInProgress, Note: "batch 2 of ~4"}, "IN PROGRESS (batch 2 of ~4)"},
		{Row{Status: StatusNotStarted, Note: "hidden"}, "NOT STARTED"},
		{Row{Status: StatusFailed, Retries: 2}, "FAILED (retry 2/3)"},
		{Row{Status: StatusSkipped}, "SKIPPED"},
		{Row{Status: "paused_now"}, "PAUSED NOW"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := statusWord(tt.row); got != tt.want {
				t.Errorf("statusWord(%+v) = %q, want %q", tt.row, got, tt.want)
			}
		})
	}
}

func TestBannerAlignsColumnsByDisplayWidth(t *testing.T) {
	out := Banner("f", []Row{
		{Label: "Step 1", Name: "日本語", Status: StatusCompleted},
		{Label: "Step 2", Name: "Cafe\u0301", Status: StatusCompleted},
		{Label: "Step 3", Name: "Plan", Status: StatusCompleted},
	}, Current{})
	var cols []int
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, "DONE"); i >= 0 {
			cols = append(cols, textsafe.DisplayWidth(l[:i]))
		}
	}
	if len(cols) != 3 || cols[0] != cols[1] || cols[1] != cols[2] {
		t.Errorf("status columns at display widths %v, want equal:\n%s", cols, out)
	}
}

func TestBannerOmitsEmptyCurrentLines(t *testing.T) {
	out := Banner("f", nil, Current{})
	for _, word := range []string{"Current:", "SubStep:", "Retry:", "Action:"} {
		if strings.Contains(out, word) {
			t.Errorf("empty Current renders %q:\n%s", word, out)
		}
	}
	out = Banner("f", nil, Current{Label: "Step 1", Name: "Plan", SubStep: "awaiting-invocation", Retry: 3})
	for _, want := range []string{" Current: Step 1 — Plan\n", " SubStep: 0 — awaiting-invocation\n", " Retry:   3/3\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
