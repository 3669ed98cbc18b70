package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
	"github.com/autopilot-dev/autopilot/internal/testkit"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// atTaskLimit is a run at its session-boundary gate holding the largest
// task list a declaration may leave: 141 tasks of 300-character
// descriptions (reliability case 29).
func atTaskLimit(t *testing.T, rnd *rand.Rand) *harness {
	h := atBoundary(t, "")
	s := outbox.Clone(h.st)
	s.Tasks = nil
	for i := 1; i <= 141; i++ {
		s.Tasks = append(s.Tasks, state.Task{ID: fmt.Sprintf("%02d", i), Kind: state.KindTask,
			Title: fmt.Sprintf("Task number %d of the CSV export", i), Description: testkit.Words(rnd, 300),
			Step: "decompose", IdemKey: fmt.Sprintf("ap-%d-%02d", testIssue, i), Sync: state.SyncLocal})
	}
	h.st = s
	return h
}

// openGate opens a gate of realistic size (a 250-character question,
// options of 200) on the run, as a review loop does for every round.
func openGate(h *harness, rnd *rand.Rand, i int) {
	s := outbox.Clone(h.st)
	s.Gate = &state.Gate{ID: fmt.Sprintf("review-round-%d", i), Kind: "review",
		Title: "DECISION REQUIRED: " + testkit.Words(rnd, 250),
		Options: []state.Option{{Letter: "A", Text: testkit.Words(rnd, 200), Action: state.ActStay},
			{Letter: "B", Text: testkit.Words(rnd, 200), Action: state.ActAbort}},
		Recommend: "A", Reason: "keep going", OpenedAt: h.now()}
	s.Run = state.RunAwaitingDecision
	h.st = s
}

// TestDecisionsArchiveKeepsTheStateInOneComment answers 120 gates of
// realistic size on a run at the task limit, settling and rendering each
// pass as reconcile does: the state stays within textsafe.SafeBody, the
// oldest decisions move to archive comments (each posted once, even when a
// run dies right after the write that announced one), and a late answer to
// an archived gate is told where its decision is.
func TestDecisionsArchiveKeepsTheStateInOneComment(t *testing.T) {
	rnd := rand.New(rand.NewPCG(15, 6))
	h := atTaskLimit(t, rnd)
	seen := outbox.Seen{Markers: map[string]bool{}, Links: map[string]string{}}
	posted := map[string]int{}
	var gateTimes []int64
	largest, crashed, before := 0, false, len(h.st.Decisions)
	const answers = 120
	for i := 1; i <= answers; i++ {
		h.advance(time.Hour)
		openGate(h, rnd, i)
		gateTimes = append(gateTimes, h.now().Unix())
		res := h.apply(h.comment("maria", access.Write, "A — "+testkit.Words(rnd, 150)))
		r := outbox.Settle(res.State, res.Effects, seen, res.Changed, true)
		if !r.Write {
			t.Fatalf("answer %d: no state write", i)
		}
		body, err := codec.Render(r.State, codec.View{}, nil)
		if err != nil {
			t.Fatalf("answer %d (%d decisions in the state, %d archived): %v", i, len(r.State.Decisions), r.State.DecisionsArchived, err)
		}
		ms, _ := codec.MachineSize(r.State, false)
		largest = max(largest, ms)
		if n := textsafe.Len(body); n > textsafe.SafeBody {
			t.Fatalf("answer %d: state comment of %d characters, over %d", i, n, textsafe.SafeBody)
		}
		h.st = r.State
		for _, e := range r.Effects {
			if e.Kind != state.EffArchive {
				continue
			}
			if !crashed {
				crashed = true // the run dies after the write: nothing posted
				break
			}
			if n := textsafe.Len(e.Body); n > textsafe.SafeBody || !strings.HasPrefix(e.Body, e.Marker+"\n") {
				t.Fatalf("archive %s: %d characters, or its marker is not its first line", e.Marker, n)
			}
			posted[e.Marker]++
			seen.Markers[e.Marker] = true
			seen.Links[e.Marker] = fmt.Sprintf("https://github.com/acme/widgets/issues/%d#issuecomment-%d", testIssue, 9000+len(posted))
		}
	}
	s := h.st
	if got := s.DecisionsArchived + len(s.Decisions); got != answers+before {
		t.Fatalf("%d decisions kept or archived, want %d", got, answers+before)
	}
	if s.DecisionsArchived < answers-outbox.ArchiveAbove {
		t.Errorf("%d decisions archived, want at least %d", s.DecisionsArchived, answers-outbox.ArchiveAbove)
	}
	next := 1
	for m, n := range posted {
		if n != 1 {
			t.Errorf("archive %s posted %d times", m, n)
		}
	}
	for _, a := range s.Archives {
		if a.URL == "" {
			t.Errorf("archive %d–%d has no link", a.From, a.To)
		}
	}
	for next <= s.DecisionsArchived {
		found := false
		for m := range posted {
			if from, to, _ := state.ParseArchiveMarker(m); from == next {
				next, found = to+1, true
			}
		}
		if !found {
			t.Fatalf("no archive starts at decision %d", next)
		}
	}
	body, _ := codec.Render(s, codec.View{}, nil)
	wantLines(t, "state comment", body, fmt.Sprintf("_%d earlier decisions in archive comments: ", s.DecisionsArchived), s.Archives[len(s.Archives)-1].URL)
	t.Logf("%d answers: largest machine block %d characters; %d decisions archived in %d comments, %d kept", answers, largest, s.DecisionsArchived, len(posted), len(s.Decisions))

	// A second answer to a gate whose decision was archived, written while
	// that gate was open, is told where the decision is.
	a := s.Archives[len(s.Archives)-1]
	late := h.comment("bob", access.Write, "B")
	late.At = time.Unix(gateTimes[a.From], 0).Add(time.Minute)
	res := h.apply(late)
	want(t, "late answer", ledgerOf(res.State, late.ID), "rejected:already-decided")
	if !hasBody(res.Effects, fmt.Sprintf("archived with decisions %d–%d: %s", a.From, a.To, a.URL)) {
		t.Errorf("late answer's reply: %q", bodies(res.Effects))
	}
}

// A late answer to a gate older than every archive the state still lists
// (the oldest listings folded away) is told its decision is in an older
// archive; one to a gate before any decision is stale, as before.
func TestLateAnswerBeforeTheListedArchives(t *testing.T) {
	h := atBoundary(t, "")
	s := outbox.Clone(h.st)
	s.Decisions = nil
	s.DecisionsArchived = 60
	s.Archives = []state.DecisionArchive{{From: 41, To: 60, URL: "https://github.com/acme/widgets/issues/12#issuecomment-77", Opened: s.StartedAt.Add(2 * time.Minute)}}
	h.st = s
	late := h.comment("bob", access.Write, "B")
	late.At = s.StartedAt.Add(time.Minute)
	res := h.apply(late)
	want(t, "late answer", ledgerOf(res.State, late.ID), "rejected:already-decided")
	if !hasBody(res.Effects, "in an older archive of decisions") {
		t.Errorf("reply: %q", bodies(res.Effects))
	}
	s = outbox.Clone(h.st)
	s.Archives[0].From, s.DecisionsArchived = 1, 60
	h.st = s
	late = h.comment("bob", access.Write, "B")
	late.At = s.StartedAt.Add(time.Minute)
	res = h.apply(late)
	want(t, "answer before every gate", ledgerOf(res.State, late.ID), "rejected:stale")
}
