package reliability

import (
	"testing"
	"time"
)

func TestPerfRuns(t *testing.T) {
	w := NewWorld(t, Options{})
	n := w.NewIssue("Add CSV export", "Users want CSV.")
	w.Label(n, "autopilot")
	w.MustRun(w.LabelDelivery(n, "labeled", "autopilot", Maria))
	start := time.Now()
	for i := 0; i < 40; i++ {
		w.Clock.Advance(time.Minute)
		c := w.Say(n, Devin, "/autopilot progress 1 drafting-"+string(rune('a'+i%26)))
		w.MustRun(w.CommentDelivery(c, "created"))
	}
	t.Logf("per run: %s", time.Since(start)/40)
}
