package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// `/autopilot status` is read-only: its reply is composed from the state as
// the pass read it, before the tracker is read back. When the reply cannot
// show what the tracker knows, it says so and says what will: with
// sub-issues the same pass reads the task issues back after the reply;
// inside the tracker's limit window nothing is read or sent until its end;
// with Jira only the sweep or `/autopilot tasks sync` reads statuses back.
func TestStatusSaysWhenItsTasksAreNotReadBack(t *testing.T) {
	open := []state.Task{{ID: "01", Kind: state.KindTask, Title: "a", IdemKey: "autopilot-0000000001", Sync: state.SyncCreated, Key: "#20"}}
	for _, tc := range []struct {
		name, cfg string
		retryIn   time.Duration
		done      bool
		want      []string
	}{
		{"sub-issues", "tracker: github\n", 0, false, []string{"read back from GitHub by this run after this reply", "state comment"}},
		{"sub-issues in the window", "tracker: github\n", 2 * time.Minute, false, []string{"GitHub asked to wait until", "not read back"}},
		{"jira", "jira: {enabled: true}\n", 0, false, []string{"Jira statuses are read back by the scheduled sweep", "/autopilot tasks sync"}},
		{"every task done", "tracker: github\n", 0, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.cfg)
			h.start("greenfield")
			on := true
			h.st.TrackerEnabled = &on
			h.st.Tasks = append([]state.Task(nil), open...)
			h.st.Tasks[0].Done = tc.done
			if tc.retryIn > 0 {
				h.st.TrackerRetryAt = h.now().Add(tc.retryIn)
			}
			h.advance(time.Second)
			body := strings.Join(bodies(h.say("maria", "/autopilot status").Effects), "\n")
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("status reply lacks %q:\n%s", w, body)
				}
			}
			if tc.want == nil && strings.Contains(body, "read back") {
				t.Errorf("status reply speaks of a read-back with no open task:\n%s", body)
			}
		})
	}
}
