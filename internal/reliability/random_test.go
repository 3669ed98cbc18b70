package reliability

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	seedFlag  = flag.Int64("seed", -1, "run TestRandomSchedules for this one seed (replay a failure)")
	seedsFlag = flag.Int("seeds", 100, "how many seeds TestRandomSchedules runs")
	seedBase  = flag.Int64("seedbase", 1, "first seed of TestRandomSchedules")
)

// tolerated counts violations explained by known product bugs.
var tolerated = &bugCounter{n: map[string]int{}}

type bugCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (b *bugCounter) add(bug string) {
	b.mu.Lock()
	b.n[bug]++
	b.mu.Unlock()
}

func (b *bugCounter) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var parts []string
	for k, v := range b.n {
		parts = append(parts, fmt.Sprintf("%s×%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// knownBug names the documented limit (docs/reliability.md) that explains
// a violation, or "". What remains of B3 once it was fixed:
//
//   - a pass that posts no comment is not read back, so an overlapping
//     run's write it overwrote is hidden until the next event or sweep
//     (I5 in between; the answer is still unhandled, not lost);
//   - one run cannot know a Jira Retry-After window another run has just
//     met (the state carries it only once written).
//
// Duplicate comments, replies and Jira issues (I1, I2) are no longer
// excused. RELIABILITY_STRICT=1 excuses nothing.
func knownBug(su setup, v Violation) string {
	msg := v.Msg
	switch {
	case su.overlap && (v.Inv == "I5" ||
		v.Inv == "I6" && strings.HasPrefix(msg, "jira ") && strings.Contains(msg, "inside the window")):
		return "B3"
	}
	return ""
}

// Scenario size statistics, for the log.
var statRuns, statPhases, statComments atomic.Int64

// seedsRun counts the seeds TestRandomSchedules ran, for the totals line.
var seedsRun atomic.Int64

// TestRandomSchedules generates scenarios (answers, commands, label
// changes, PR reviews, Jira outages) and delivery schedules from each seed,
// runs them through the real reconcile path, and checks I1–I7 against the
// oracle. A failing seed prints the command that replays it.
func TestRandomSchedules(t *testing.T) {
	first, count := *seedBase, int64(*seedsFlag)
	if *seedFlag >= 0 {
		first, count = *seedFlag, 1
	}
	start := time.Now()
	t.Cleanup(func() {
		t.Logf("%d seeds in %s; per seed %.1f runs, %.1f phases, %.1f comments", count, time.Since(start).Round(time.Millisecond),
			float64(statRuns.Load())/float64(count), float64(statPhases.Load())/float64(count), float64(statComments.Load())/float64(count))
	})
	for seed := first; seed < first+count; seed++ {
		t.Run(fmt.Sprintf("seed_%d", seed), func(t *testing.T) {
			t.Parallel()
			seedsRun.Add(1)
			if out := playSeed(t, uint64(seed)); out != "" {
				t.Errorf("%s\nreplay: go test ./internal/reliability -run TestRandomSchedules -seed=%d -v", out, seed)
			}
		})
	}
}

// setup is the world and schedule a seed picks.
type setup struct {
	flow    string
	mode    Mode
	group   Group
	overlap bool
	jira    bool
}

func (s setup) String() string {
	mode := "action/" + s.group.String()
	if s.mode == ModeApp {
		mode = "app"
	}
	if s.overlap {
		mode += "+overlap"
	}
	return fmt.Sprintf("%s, %s, jira=%v", s.flow, mode, s.jira)
}

func pickSetup(rnd *rand.Rand) setup {
	s := setup{flow: "greenfield", group: Group(rnd.IntN(3))}
	if rnd.IntN(3) == 0 {
		s.flow = "review-loop"
	}
	if rnd.IntN(5) == 0 {
		s.mode = ModeApp
	}
	s.overlap = s.mode == ModeAction && s.group == NoGroup && rnd.IntN(2) == 0
	s.jira = s.flow == "greenfield" && rnd.IntN(3) == 0
	return s
}

// playSeed plays one seed and returns a failure report ("" when every
// invariant held).
func playSeed(t *testing.T, seed uint64) string {
	rnd := rand.New(rand.NewPCG(seed, 0xa11ce))
	su := pickSetup(rnd)
	w := NewWorld(t, Options{Mode: su.mode, Jira: su.jira, SearchLag: 90 * time.Second, Seed: seed})
	if su.mode == ModeApp {
		w.StartApp(AppOptions{})
	}
	sch := NewScheduler(w, seed)
	sch.Group = su.group
	if su.overlap {
		sch.Overlap = 10 * time.Second
	}
	sch.Policy = Policy{Drop: 0.15, Duplicate: 0.12, ReEmit: 0.06, MaxDelay: 40 * time.Second}
	n := w.NewIssue("Add CSV export", "Users want to export reports as CSV.")
	if su.flow == "review-loop" {
		w.Label(n, "autopilot/flow:review-loop")
	}
	sc := Scenario{Flow: su.flow, Jira: su.jira}
	p := newPlayer(t, w, sch, rnd, sc, n)
	g := &gen{rnd: rnd, flow: su.flow, jira: su.jira, fails: map[int]int{}, progress: map[int]int{}, maxPhases: 8 + rnd.IntN(5)}
	for i := 0; ; i++ {
		acts := g.next(p.model)
		if acts == nil {
			break
		}
		p.phase(i, acts)
	}
	p.quiesce()
	statRuns.Add(int64(len(w.Runs())))
	statPhases.Add(int64(g.phases))
	statComments.Add(int64(len(w.GH.Comments(Repo, n))))
	exp := Oracle(sc, p.ordered(), p.perm, roles, Casey)
	var v []Violation
	for _, x := range w.Check(CheckOptions{Issue: n, Expect: &exp}) {
		if bug := knownBug(su, x); bug != "" && os.Getenv("RELIABILITY_STRICT") != "1" {
			tolerated.add(bug)
			continue
		}
		v = append(v, x)
	}
	if len(v) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d (%s): %d violation(s)\n", seed, su, len(v))
	for _, x := range v {
		fmt.Fprintf(&b, "  %s\n", x)
	}
	b.WriteString("scenario:\n" + p.describe())
	b.WriteString("schedule:\n  " + strings.Join(sch.Trace, "\n  ") + "\n")
	return b.String()
}
