package codec

import (
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/statetest"
)

// TestTheBannerSaysTheBackgroundSyncIsHeld: a state that records a hold
// says in its banner until when and why the background sync
// waits, and that it resumes then; without one the banner has no such line.
func TestTheBannerSaysTheBackgroundSyncIsHeld(t *testing.T) {
	s := statetest.Sample()
	s.BackgroundHeld = &state.BackgroundHold{Until: time.Date(2026, 3, 2, 9, 40, 0, 0, time.UTC), Reason: state.HeldAtReserve}
	body := mustRender(t, s, key)
	banner, _, _ := strings.Cut(body, "```\n\n")
	const line = " Held:    background sync of this issue was held by the GitHub budget (interactive reserve) until 09:40 UTC; it resumes then"
	if !strings.Contains(banner, line+"\n") {
		t.Errorf("banner lacks %q:\n%s", line, banner)
	}
	if strings.Contains(mustRender(t, statetest.Sample(), key), "Held:") {
		t.Error("a state without a hold shows a Held line")
	}
}
