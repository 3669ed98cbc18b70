package wiring

import (
	"fmt"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/reconcile/writes"
)

// Knobs are the advanced settings both modes read from AUTOPILOT_* variables
// (the Action too: they are not action inputs). Tests turn them down.
type Knobs struct {
	// MutationGap spaces mutating requests per repository: 0 is the
	// adapter's default of 1s (GitHub's guidance), negative is none.
	MutationGap time.Duration
	// ClaimSettle is how long a pass waits after recording Jira creates in
	// the state before reading it back and sending them.
	ClaimSettle time.Duration
}

// LoadKnobs reads AUTOPILOT_MUTATION_GAP and AUTOPILOT_CLAIM_SETTLE.
func LoadKnobs(getenv func(string) string) (Knobs, error) {
	gap, err := mutationGap(getenv("AUTOPILOT_MUTATION_GAP"))
	if err != nil {
		return Knobs{}, err
	}
	settle, err := writes.ParseClaimSettle(getenv("AUTOPILOT_CLAIM_SETTLE"))
	if err != nil {
		return Knobs{}, err
	}
	return Knobs{MutationGap: gap, ClaimSettle: settle}, nil
}

// mutationGap parses AUTOPILOT_MUTATION_GAP: empty is the default, "0s"
// turns spacing off (for tests), a negative duration is refused.
func mutationGap(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("AUTOPILOT_MUTATION_GAP: want a duration such as 1s, got %q", v)
	}
	if d == 0 {
		return -1, nil
	}
	return d, nil
}
