package reliability

import (
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/fake/fakejira"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// case27: Jira degraded end to end, search lag 90 s throughout: (a) 429
// with Retry-After 30 (jira-per-issue-on-write); (b) two hours of 503, with
// one create that commits but loses its answer; (c) 401 from an expired
// token. The GitHub side never blocks and webhooks are acked within 1 s;
// the outbox holds the tasks ("Jira: pending (n)"); no request inside
// a Retry-After window; the lost create is found by its key, not
// duplicated; one alert for the 401 and no retry storm; after recovery the
// outbox drains in order. Measure: I2, I6 on FakeJira timestamps, outbox
// empty and I3 after recovery, 401 attempts ≤ 1 per backoff window.
func case27(t *testing.T) {
	w := NewWorld(t, Options{Mode: ModeApp, Jira: true, SearchLag: 90 * time.Second})
	w.StartApp(AppOptions{})
	sch := NewScheduler(w, 27)
	say := func(n int, who, body string) {
		w.Clock.Advance(20 * time.Second)
		sch.Send(w.CommentDelivery(w.Say(n, who, body), "created"), Fault{})
		sch.Drain()
	}
	n := w.NewIssue("Add CSV export", "Users want CSV.")
	w.Label(n, "autopilot")
	sch.Send(w.LabelDelivery(n, "labeled", "autopilot", Maria), Fault{})
	sch.Drain()
	say(n, Devin, "/autopilot done problem")
	say(n, Devin, "/autopilot done research")

	// (a) the epic's create is rate limited for 30 s.
	w.Jira.Script(fakejira.EndpointBulk, fakejira.RateLimited(30*time.Second, "jira-per-issue-on-write"))
	say(n, Devin, epics)
	if s := w.mustState(n); len(s.Tasks) != 1 || s.Tasks[0].Sync != state.SyncCreated {
		t.Fatalf("after the 429: tasks %+v, want the epic created once the window passed", s.Tasks)
	}

	// (b) the tasks' create commits and loses its answer, and from that
	// moment Jira answers 503 for two hours.
	var outageEnd time.Time
	w.Jira.Script(fakejira.EndpointBulk, fakejira.Fault{Commit: true, Drop: true})
	w.OnCall(func(c Call, _ []byte) ([]byte, bool) {
		if c.Service == ServiceJira && c.Method == "POST" && c.Status == 0 && outageEnd.IsZero() {
			outageEnd = w.Clock.Now().Add(2 * time.Hour)
			w.Jira.Outage(outageEnd, fakejira.Fault{Status: http.StatusServiceUnavailable})
		}
		return nil, false
	})
	say(n, Devin, decompose)
	w.OnCall(nil)
	if outageEnd.IsZero() {
		t.Fatal("the tasks' create was never sent")
	}
	if got := len(w.Jira.Issues()); got != 3 {
		t.Fatalf("Jira holds %d issues after the lost create, want 3", got)
	}
	s := w.mustState(n)
	if s.Gate == nil || s.Gate.Kind != "session-boundary" {
		t.Fatalf("the GitHub side blocked on Jira: gate %v", s.Gate)
	}
	if _, sc := w.stateComment(n); !strings.Contains(sc.Body, "Jira: pending (2)") {
		t.Errorf("the state comment does not say \"Jira: pending (2)\"")
	}
	say(n, Maria, "A") // the flow goes on while Jira is down
	if s := w.mustState(n); s.Slug != "implement" || s.Run != "in-progress" {
		t.Errorf("at %s/%s after the answer, want implement/in-progress", s.Slug, s.Run)
	}
	for w.Clock.Now().Before(outageEnd.Add(-20 * time.Minute)) {
		w.Clock.Advance(20 * time.Minute)
		w.MustSweep()
	}
	// (c) the token expires as Jira comes back.
	w.Clock.AdvanceTo(outageEnd.Add(time.Minute))
	w.Jira.SetAuthValid(false)
	for range 4 {
		w.Clock.Advance(15 * time.Minute)
		w.MustSweep()
	}
	unauthorized := 0
	for _, r := range w.Jira.Requests() {
		if r.Status == http.StatusUnauthorized {
			unauthorized++
		}
	}
	if unauthorized > 1 {
		t.Errorf("%d requests answered 401, want at most 1 (pause, no retry storm)", unauthorized)
	}
	alerts := 0
	for _, c := range w.BotComments(n) {
		if strings.Contains(c.Body, "Jira rejected autopilot's credentials") {
			alerts++
		}
	}
	if alerts != 1 {
		t.Errorf("%d 401 alerts, want exactly 1", alerts)
	}
	if s := w.mustState(n); tasksync.PendingCount(s) != 2 {
		t.Errorf("%d tasks wait in the outbox while Jira refuses the token, want 2", tasksync.PendingCount(s))
	}

	// Recovery: a new token, then "/autopilot jira retry".
	w.Jira.SetAuthValid(true)
	say(n, Maria, "/autopilot jira retry")
	w.Clock.Advance(10 * time.Minute)
	w.MustSweep()
	s = w.mustState(n)
	if tasksync.PendingCount(s) != 0 || len(s.Outbox) != 0 && !allDone(w, n, s) {
		t.Errorf("after recovery %d tasks wait and the outbox holds %d effects", tasksync.PendingCount(s), len(s.Outbox))
	}
	var keys []string
	for _, tk := range s.Tasks {
		keys = append(keys, tk.Key)
	}
	if !sort.SliceIsSorted(keys, func(i, j int) bool { return jiraNum(keys[i]) < jiraNum(keys[j]) }) {
		t.Errorf("Jira keys %v are not in the tasks' order", keys)
	}
	if got := len(w.Jira.Issues()); got != 3 {
		t.Errorf("Jira holds %d issues, want 3 (one per task, the lost create found by its key)", got)
	}
	for _, a := range w.Acks() {
		if a.Took >= MaxAck {
			t.Errorf("delivery %s acked after %s", a.Delivery, a.Took)
		}
	}
	w.MustSweep()
	check(t, w, CheckOptions{Issue: n})
}

// allDone: every outbox effect is already visible (kept until the next write).
func allDone(w *World, n int, s *state.State) bool {
	m := w.markers(n)
	for _, e := range s.Outbox {
		if m[e.Marker] == 0 {
			return false
		}
	}
	return true
}

func jiraNum(key string) int {
	_, num, _ := strings.Cut(key, "-")
	k := 0
	for _, r := range num {
		k = k*10 + int(r-'0')
	}
	return k
}
