package reliability

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"
)

// caseResult is one case's line in the summary.
type caseResult struct {
	num    int
	name   string
	result string // pass, fail, skip
	note   string
}

var (
	resultsMu  sync.Mutex
	results    []caseResult
	suiteStart = time.Now()
)

func record(r caseResult) {
	resultsMu.Lock()
	results = append(results, r)
	resultsMu.Unlock()
}

// TestMain runs the tests, then prints one line per case of RELIABILITY.md
// §6 and a totals line (visible with -v, in local directory mode, or when
// the package fails).
func TestMain(m *testing.M) {
	code := m.Run()
	resultsMu.Lock()
	defer resultsMu.Unlock()
	if len(results) > 0 || seedsRun.Load() > 0 {
		pass, partial, fail, skip := 0, 0, 0, 0
		sort.Slice(results, func(i, j int) bool { return results[i].num < results[j].num })
		for _, r := range results {
			line := fmt.Sprintf("case %02d %s: %s", r.num, r.name, r.result)
			if r.note != "" {
				line += " (" + r.note + ")"
			}
			fmt.Println(line)
			switch r.result {
			case "pass":
				pass++
			case "partial":
				partial++
			case "fail":
				fail++
			default:
				skip++
			}
		}
		known := tolerated.String()
		if known == "" {
			known = "none"
		}
		fmt.Printf("reliability: %d cases (%d pass, %d partial: a variant skipped for a known product bug, %d fail, %d skip), %d random seeds, known product bugs tolerated in the seeds: %s, %s\n",
			len(results), pass, partial, fail, skip, seedsRun.Load(), known, time.Since(suiteStart).Round(time.Millisecond))
	}
	os.Exit(code)
}
