package reliability

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state/codec"
	"github.com/autopilot-dev/autopilot/internal/testkit"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// signOffConfig has one step that declares tasks and asks a human to
// approve them: "B" (request changes) and a report ask again, a loop with
// one decision per round.
const signOffConfig = `default_flow: sign-off
limits:
  max_hours: 240
  max_sessions: 500
jira:
  enabled: false
flows:
  sign-off:
    steps:
      - {slug: build, name: Build, jira: tasks, gate: approval, produces: "the tasks, approved"}
      - {slug: release, name: Release}
`

// case37: key decisions past what one state comment holds. A run at the
// task limit (the largest declaration that fits, as in case 29) answers 150
// approval gates, each with a reason of 200 characters: the oldest
// decisions move to archive comments, each posted once (also when the run
// that announced one dies right after its state write), the state comment
// says how many are archived and links them, and it stays within I7.
// Status, help, stop, resume, an answer and the sweep all work there.
func case37(t *testing.T) {
	w, n := started(t, Options{Config: signOffConfig})
	rnd := rand.New(rand.NewPCG(37, 1))
	w.post(n, Maria, "B — "+testkit.Words(rnd, 200))
	c := w.post(n, Devin, bigDecompose(180, 300))
	rs := w.replies(n, c.ID)
	var fit int
	if len(rs) != 1 || !strings.Contains(rs[0].Body, "the first ") {
		t.Fatalf("the 180-task declaration was not refused with what fits: %v", rs)
	}
	fmt.Sscanf(rs[0].Body[strings.Index(rs[0].Body, "the first ")+len("the first "):], "%d", &fit)
	w.post(n, Devin, bigDecompose(fit, 300))
	if s := w.mustState(n); len(s.Tasks) != fit || s.Gate == nil {
		t.Fatalf("%d tasks recorded (want %d), gate %v", len(s.Tasks), fit, s.Gate)
	}
	const rounds = 150
	largest, crashed := 0, false
	for i := 1; i <= rounds; i++ {
		w.Clock.Advance(time.Minute)
		a := w.Say(n, Maria, "B — "+testkit.Words(rnd, 200))
		before := w.mustState(n)
		if !crashed && len(before.Decisions) == 25 {
			// This answer's write announces the first archive: the run
			// dies right after it, and the next run posts the archive.
			crashed = true
			w.runKilledAfterStateWrite(t, w.CommentDelivery(a, "created"))
			s := w.mustState(n)
			if len(s.Outbox) == 0 || archives(w.markers(n)) != 0 {
				t.Fatalf("the killed run's write announced no archive (outbox %v) or one was posted", s.Outbox)
			}
		} else {
			w.MustRun(w.CommentDelivery(a, "created"))
		}
		w.post(n, Devin, "/autopilot done revised")
		s, sc := w.stateComment(n)
		if textsafe.Len(sc.Body) > textsafe.SafeBody {
			t.Fatalf("round %d: state comment of %d characters, over I7's %d", i, textsafe.Len(sc.Body), textsafe.SafeBody)
		}
		ms, _ := codec.MachineSize(s, false)
		largest = max(largest, ms)
	}
	s := w.mustState(n)
	for m, k := range w.markers(n) {
		if strings.HasPrefix(m, "<!-- autopilot:decisions ") && k != 1 {
			t.Errorf("archive %s posted %d times", m, k)
		}
	}
	if s.DecisionsArchived == 0 || s.DecisionsArchived+len(s.Decisions) != rounds+1 || archives(w.markers(n)) != len(s.Archives) {
		t.Fatalf("%d decisions archived in %d comments (%d listed), %d kept; want %d in all",
			s.DecisionsArchived, archives(w.markers(n)), len(s.Archives), len(s.Decisions), rounds+1)
	}
	_, sc := w.stateComment(n)
	if !strings.Contains(sc.Body, fmt.Sprintf("_%d earlier decisions in archive comments: [decisions 1–", s.DecisionsArchived)) {
		t.Errorf("the state comment does not link the archives")
	}
	t.Logf("%d tasks, %d decisions (%d archived in %d comments): largest machine block %d characters", fit, rounds+1, s.DecisionsArchived, len(s.Archives), largest)
	for _, cmd := range []string{"/autopilot status", "/autopilot help", "/autopilot stop", "/autopilot resume", "A"} {
		w.Clock.Advance(time.Minute)
		c := w.post(n, Maria, cmd)
		if o := outcome(w.mustState(n), c.ID); o != Applied {
			t.Errorf("%q with archived decisions: outcome %q, want applied", cmd, o)
		}
	}
	w.MustSweep()
	checkOnly(t, w.CheckBounds(n))
	checkOnly(t, w.CheckLedger(n, nil, nil))
}

// archives counts the archive comments among the bot's markers.
func archives(markers map[string]int) int {
	k := 0
	for m := range markers {
		if strings.HasPrefix(m, "<!-- autopilot:decisions ") {
			k++
		}
	}
	return k
}
