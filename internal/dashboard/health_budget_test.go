package dashboard

import (
	"strings"
	"testing"
	"time"
)

// TestHealthShowsBackgroundWorkWaitingForTheBudget: an installation whose
// sweep waits at the interactive reserve is named on the health page, with
// why and until when, even before a rate-limit gauge was set for it.
func TestHealthShowsBackgroundWorkWaitingForTheBudget(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	h := &Health{Waiting: func() []BudgetWait {
		return []BudgetWait{{Installation: 7, Until: now.Add(40 * time.Minute), Why: "the interactive reserve: 1000 of 5000 REST requests left until 09:40:00"}}
	}}
	v := h.View(now)
	if len(v.Budgets) != 1 || v.Budgets[0].Installation != "7" ||
		!strings.Contains(v.Budgets[0].Waiting, "interactive reserve") || !strings.Contains(v.Budgets[0].Waiting, "40m") {
		t.Fatalf("budgets %+v", v.Budgets)
	}
}
