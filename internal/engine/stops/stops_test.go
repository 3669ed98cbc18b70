package stops

import (
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// Every stop reason is a state.StopReason (the type of Stop.Reason) with a
// hint of its own.
func TestRecoveryHintsNameEveryKillSwitch(t *testing.T) {
	generic := RecoveryHint("")
	seen := map[string]bool{}
	for _, k := range []state.StopReason{KillMaxSessions, KillMaxHours, KillSpiral, KillFailedWave, KillCarryover, KillLowConfidence, KillResource, KillUserAbort, StopMaxIterations} {
		h := RecoveryHint(k)
		if h == generic || h == "" {
			t.Errorf("%s has the generic hint", k)
		}
		if seen[h] {
			t.Errorf("%s shares its hint", k)
		}
		seen[h] = true
		var stop state.Stop
		stop.Reason = k
		if stop.Reason != k {
			t.Errorf("Stop.Reason does not hold %s", k)
		}
	}
}
