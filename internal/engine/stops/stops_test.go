package stops

import "testing"

func TestRecoveryHintsNameEveryKillSwitch(t *testing.T) {
	generic := RecoveryHint("")
	seen := map[string]bool{}
	for _, k := range []string{KillMaxSessions, KillMaxHours, KillSpiral, KillFailedWave, KillCarryover, KillLowConfidence, KillResource, KillUserAbort, StopMaxIterations} {
		h := RecoveryHint(k)
		if h == generic || h == "" {
			t.Errorf("%s has the generic hint", k)
		}
		if seen[h] {
			t.Errorf("%s shares its hint", k)
		}
		seen[h] = true
	}
}
