package reliability

import (
	"testing"
	"time"
)

func TestSmokeGreenfieldToGate(t *testing.T) {
	w := NewWorld(t, Options{})
	n := w.NewIssue("Add CSV export", "Users want CSV.")
	w.Label(n, "autopilot")
	w.MustRun(w.LabelDelivery(n, "labeled", "autopilot", Maria))
	for _, s := range []string{"problem", "research", "plan"} {
		w.Clock.Advance(time.Minute)
		c := w.Say(n, Devin, "/autopilot done "+s)
		r := w.MustRun(w.CommentDelivery(c, "created"))
		t.Logf("run %d: %+v", r.ID, r.Outcomes)
	}
	w.Clock.Advance(time.Minute)
	c := w.Say(n, Devin, "/autopilot done decomposed\n\n```autopilot-tasks\n- title: Writer\n- title: Endpoint\n```")
	w.MustRun(w.CommentDelivery(c, "created"))
	s := w.State(n)
	t.Logf("state: step=%s run=%s gate=%+v v=%d", s.Slug, s.Run, s.Gate, s.Version)
	w.Clock.Advance(time.Minute)
	a := w.Say(n, Maria, "A")
	r := w.MustRun(w.CommentDelivery(a, "created"))
	t.Logf("%+v", r.Outcomes)
	perRun := map[int]int{}
	for _, c := range w.Calls() {
		perRun[c.Run]++
	}
	t.Logf("calls per run %v; labels %v", perRun, w.GH.Labels(Repo, n))
}

func TestSmokeStartCalls(t *testing.T) {
	w := NewWorld(t, Options{})
	n := w.NewIssue("Add CSV export", "Users want CSV.")
	w.Label(n, "autopilot")
	w.MustRun(w.LabelDelivery(n, "labeled", "autopilot", Maria))
	for _, c := range w.Calls() {
		t.Logf("%s %s %s %d", c.At.Format("15:04:05"), c.Method, c.Path, c.Status)
	}
}
