package reliability

import (
	"flag"
	"testing"
)

var debugRun = flag.Int("debugrun", 0, "print the calls of this run after TestRandomSchedules")

func TestDebugCalls(t *testing.T) {
	if *debugRun == 0 || *seedFlag < 0 {
		t.Skip("needs -seed and -debugrun")
	}
	w := lastWorld
	if w == nil {
		playSeed(t, uint64(*seedFlag))
		w = lastWorld
	}
	for _, c := range w.Calls() {
		if c.Run == *debugRun {
			t.Logf("%s %s %s %s %d", c.At.Format("15:04:05"), c.Service, c.Method, c.Path, c.Status)
		}
	}
}
