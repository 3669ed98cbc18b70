package dashboard

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// heldAt answers Options.Held: installation 77 waits for its budget.
type heldAt struct {
	reason state.HoldReason
	off    bool // nothing waits
	asked  [][]int64
}

func (h *heldAt) held(_ context.Context, ids []int64) ([]BudgetWait, error) {
	h.asked = append(h.asked, slices.Clone(ids))
	if h.off || !slices.Contains(ids, 77) {
		return nil, nil
	}
	return []BudgetWait{{Installation: 77, Until: now.Add(29 * time.Minute), Reason: h.reason,
		Why: "the interactive reserve: 1000 of 5000 REST requests left until 16:40:00"}}, nil
}

// TestTheListShowsBackgroundSyncWaitingForTheBudget: every issue of an
// installation whose background work waits for its GitHub budget says so
// in its row, with until when and why, read when the page is drawn (no
// GitHub call, no pass needed), and a banner above the list names the
// installations waiting; the other installation's rows say nothing.
func TestTheListShowsBackgroundSyncWaitingForTheBudget(t *testing.T) {
	h := &heldAt{reason: state.HeldAtReserve}
	d := newDash(t, Options{Held: h.held, Store: fill(t,
		samplePass(nil),
		samplePass(func(s *state.State) { s.Issue, s.Title = 13, "Second" }),
		func() model.Pass {
			p := samplePass(func(s *state.State) { s.Issue, s.Title = 14, "Elsewhere" })
			p.Installation = 78
			return p
		}(),
	)})
	// A first render before the wait began: rows are cached, the wait is not.
	h.off = true
	if _, body := get(t, d, "/"); strings.Contains(body, "⏳") {
		t.Fatal("a wait shown before it began")
	}
	h.off = false
	_, body := get(t, d, "/")
	const line = "⏳ sync waits for GitHub budget until 16:40 UTC (interactive reserve)"
	if n := strings.Count(body, line); n != 2 {
		t.Errorf("%d rows say %q, want the 2 of installation 77:\n%s", n, line, body)
	}
	banner := between(body, `<p class="held">`, "</p>")
	if !strings.Contains(banner, "installation 77") || strings.Contains(banner, "78") || !strings.Contains(banner, "16:40 UTC") {
		t.Errorf("banner %q", banner)
	}
	row14 := between(body, `id="octo-org/hello-world#14"`, "</tr>")
	if strings.Contains(row14, "⏳") {
		t.Errorf("installation 78's row shows a wait: %s", row14)
	}
	if last := h.asked[len(h.asked)-1]; !slices.Equal(last, []int64{77, 78}) {
		t.Errorf("asked for %v, want every installation listed once", last)
	}
	_, body = get(t, d, "/issues/octo-org/hello-world/12")
	if !strings.Contains(body, line) {
		t.Errorf("the issue page lacks %q", line)
	}
	_, body = get(t, d, "/issues/octo-org/hello-world/14")
	if strings.Contains(body, "⏳") {
		t.Error("installation 78's issue page shows a wait")
	}
}

// TestAHeldReasonRendersInert: the reason is escaped like any text.
func TestAHeldReasonRendersInert(t *testing.T) {
	h := &heldAt{reason: state.HoldReason(hostile[0] + hostile[1])}
	d := newDash(t, Options{Held: h.held, Store: fill(t, samplePass(nil))})
	for _, path := range []string{"/", "/issues/octo-org/hello-world/12"} {
		_, body := get(t, d, path)
		if strings.Contains(body, "<script") || strings.Contains(body, "<img") || !strings.Contains(body, "&lt;script&gt;") {
			t.Errorf("GET %s: the reason is not escaped", path)
		}
	}
}

// TestAFailedBudgetReadLeavesThePageUp: a budget that cannot be read
// leaves the page as it was, saying the waits are not known.
func TestAFailedBudgetReadLeavesThePageUp(t *testing.T) {
	d := newDash(t, Options{Store: fill(t, samplePass(nil)),
		Held: func(context.Context, []int64) ([]BudgetWait, error) { return nil, context.DeadlineExceeded }})
	code, body := get(t, d, "/")
	if code != http.StatusOK || !strings.Contains(body, "budget not read") {
		t.Fatalf("GET / = %d: %s", code, between(body, "<main>", "<table"))
	}
}
