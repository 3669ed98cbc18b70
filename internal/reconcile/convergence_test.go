package reconcile

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
)

// said is one human comment of the convergence script.
type said struct{ who, body string }

// convergencePhases is a causally valid history: every comment of a phase
// is written by someone who has seen the bot's answer to the previous
// phase (an answer needs its gate on screen). Within a phase, comments may
// be processed in one run or several.
var convergencePhases = [][]said{
	{{"devin", "/autopilot done problem framed"}, {"reader", "A"}, {"devin", "looks useful"}, {"devin", "/autopilot status"}},
	{{"devin", "/autopilot done research done"}, {"lint-bot[bot]", "A"}, {"devin", "/autopilot done plan agreed"}},
	{{"devin", decompose}},
	{{"maria", "A"}, {"devin", "B"}, {"reader", "C"}, {"maria", "a"}},
	{{"devin", "/autopilot done implement merged"}, {"devin", "/autopilot done run-tests green"}},
}

// schedule decides, for one seed, how the events of posted comments are
// delivered: dropped, delayed past later comments, duplicated, reordered.
type schedule struct {
	rnd     *rand.Rand
	pending []*ghevent.Event
}

func (s *schedule) posted(ev *ghevent.Event) {
	switch p := s.rnd.IntN(10); {
	case p < 3: // dropped
	case p < 5: // duplicated
		s.pending = append(s.pending, ev, ev)
	default:
		s.pending = append(s.pending, ev)
	}
}

// flush delivers a random subset of the pending events in random order and
// keeps the rest for later; it reports how many runs happened.
func (s *schedule) flush(w *world, all bool) int {
	s.rnd.Shuffle(len(s.pending), func(i, j int) { s.pending[i], s.pending[j] = s.pending[j], s.pending[i] })
	var keep []*ghevent.Event
	runs := 0
	for _, ev := range s.pending {
		if !all && s.rnd.IntN(3) == 0 {
			keep = append(keep, ev)
			continue
		}
		w.mustHandle(ev)
		runs++
	}
	s.pending = keep
	return runs
}

// play runs the script on a fresh world. With rnd nil every comment's
// event is delivered once, at once (the reference); otherwise rnd drives
// the schedule. A final sweep stands for "quiescence plus one reconcile".
func play(t *testing.T, rnd *rand.Rand) (*world, int, []int64) {
	t.Helper()
	w := newWorld(t, nil)
	w.sb.AddUser(forge.User{Login: "lint-bot[bot]", Type: "Bot"}, access.Write)
	n := w.issue("Add CSV export")
	w.start(n)
	sch := &schedule{rnd: rnd}
	var ids []int64
	lastVersion := w.state(n).Version
	checkMonotonic := func() {
		if v := w.state(n).Version; v < lastVersion {
			t.Fatalf("state version went back from %d to %d", lastVersion, v)
		} else {
			lastVersion = v
		}
	}
	for _, phase := range convergencePhases {
		ranAfterLast := false
		for _, c := range phase {
			posted := w.say(n, c.who, c.body)
			ids = append(ids, posted.ID)
			ev := w.commentEvent(posted)
			if rnd == nil {
				w.mustHandle(ev)
				ranAfterLast = true
				checkMonotonic()
				continue
			}
			sch.posted(ev)
			ranAfterLast = sch.flush(w, false) > 0
			checkMonotonic()
		}
		if !ranAfterLast {
			// People answer what they can see: before the next phase, a run
			// (a late delivery, or the sweep) has shown this phase's result.
			if sch.flush(w, true) == 0 {
				w.sweep()
			}
			checkMonotonic()
		}
	}
	if rnd != nil {
		sch.flush(w, true)
	}
	w.sweep()
	checkMonotonic()
	return w, n, ids
}

// TestConvergence: the same human comments, delivered as runs in any
// order, duplicated, or with runs missing, end in the same state (I3),
// with every comment classified exactly once (I1), at most one bot comment
// per marker (I2) and versions that never go back (I5).
func TestConvergence(t *testing.T) {
	ref, rn, refIDs := play(t, nil)
	want := normalised(t, ref.state(rn), names(refIDs), done(ref, rn))
	if st := ref.state(rn); st.Slug != "security-audit" || len(st.Decisions) != 1 || st.Decisions[0].Option != "A" || st.Decisions[0].By != "maria" {
		t.Fatalf("reference run ended at %s with decisions %+v", st.Slug, st.Decisions)
	}
	checkInvariants(t, ref, rn, refIDs)
	refMarkers := named(markers(ref, rn), names(refIDs))

	seeds := 40
	if testing.Short() {
		seeds = 8
	}
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) {
			w, n, ids := play(t, rand.New(rand.NewPCG(uint64(seed), 0x5eed)))
			got := normalised(t, w.state(n), names(ids), done(w, n))
			if !reflect.DeepEqual(got, want) {
				var d []string
				diffPaths(got, want, "", &d)
				t.Fatalf("state differs from the reference (got vs want):\n%s", strings.Join(d, "\n"))
			}
			checkInvariants(t, w, n, ids)
			if got := named(markers(w, n), names(ids)); !reflect.DeepEqual(got, refMarkers) {
				t.Errorf("bot comments by marker = %v, reference %v", got, refMarkers)
			}
		})
	}
}

// checkInvariants asserts I1 (each human comment in the ledger exactly
// once) and I2 (at most one bot comment per marker).
func checkInvariants(t *testing.T, w *world, n int, ids []int64) {
	t.Helper()
	st := w.state(n)
	seen := map[int64]int{}
	for _, e := range st.Ledger {
		seen[e.CommentID]++
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Errorf("comment %d is in the ledger %d times, want exactly once", id, seen[id])
		}
	}
	for m, k := range markers(w, n) {
		if k != 1 {
			t.Errorf("%d bot comments carry marker %s", k, m)
		}
	}
}

// names names each scripted comment by its place in the script.
func names(ids []int64) map[int64]string {
	m := map[int64]string{}
	for i, id := range ids {
		m[id] = fmt.Sprintf("c%d", i)
	}
	return m
}

var replyRef = regexp.MustCompile(`autopilot:reply ([0-9]+)`)

// named rewrites the comment ids in reply markers to script names.
func named(ms map[string]int, ids map[int64]string) map[string]int {
	out := map[string]int{}
	for m, k := range ms {
		m = replyRef.ReplaceAllStringFunc(m, func(s string) string {
			id, _ := strconv.ParseInt(strings.TrimPrefix(s, "autopilot:reply "), 10, 64)
			return "autopilot:reply " + ids[id]
		})
		out[m] += k
	}
	return out
}

// done is the set of markers visible on the issue.
func done(w *world, n int) map[string]bool {
	m := map[string]bool{}
	for k := range markers(w, n) {
		m[strings.TrimSpace(k)] = true
	}
	return m
}

// markers counts the bot's comments by their hidden first line.
func markers(w *world, n int) map[string]int {
	out := map[string]int{}
	for _, c := range w.sb.Comments(n) {
		if c.Author.Login != bot {
			continue
		}
		first, _, _ := strings.Cut(c.Body, "\n")
		out[first]++
	}
	return out
}

// diffPaths lists where two decoded JSON values differ.
func diffPaths(a, b any, path string, out *[]string) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: %v vs %v", path, a, b))
			return
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		var ks []string
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			diffPaths(x[k], y[k], path+"."+k, out)
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			*out = append(*out, fmt.Sprintf("%s: %v vs %v", path, a, b))
			return
		}
		for i := range x {
			diffPaths(x[i], y[i], fmt.Sprintf("%s[%d]", path, i), out)
		}
	default:
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, fmt.Sprintf("%s: %v vs %v", path, a, b))
		}
	}
}
