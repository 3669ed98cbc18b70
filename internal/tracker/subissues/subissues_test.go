package subissues_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/idem"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
	"github.com/autopilot-dev/autopilot/internal/tracker/subissues"
)

func ghTasks(n int) []state.Task {
	var ts []state.Task
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("%02d", i)
		ts = append(ts, state.Task{ID: id, Kind: state.KindTask, Title: "t" + id, IdemKey: idem.Key("o/r", 1, id), Sync: state.SyncPending})
	}
	return ts
}

// The budget earlier runs spent is read from the tasks' sent_at: a run
// right after 200 creates in the hour (400 requests) sends nothing and says
// when the hour frees up.
func TestGitHubPacingKnowsTheBudgetOfEarlierRuns(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	sb := forge.NewSandbox("o/r", forge.User{Login: "bot[bot]", Type: "Bot"}, clock)
	root := sb.CreateIssue("maria", "root", "").Number
	earlier := ghTasks(200)
	for i := range earlier {
		earlier[i].Sync, earlier[i].Key = state.SyncCreated, fmt.Sprintf("#%d", 1000+i)
		earlier[i].SentAt = now.Add(-50*time.Minute + time.Duration(i)*time.Second)
	}
	fresh := ghTasks(203)[200:]
	all := append(earlier, fresh...)
	tr := subissues.New(sb.SubIssueTracker(), root, all, clock)
	res, err := tracker.Sync(context.Background(), tr, fresh, tracker.SyncOptions{Now: clock, MaxWait: -1,
		Persist: func([]state.Task) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if sb.Calls()["POST issue"] != 0 || res.Waiting != 3 {
		t.Fatalf("creates %d, waiting %d: want 0 and 3 (the hour's budget is spent)", sb.Calls()["POST issue"], res.Waiting)
	}
	if want := earlier[0].SentAt.Add(time.Hour); !res.RetryAt.Equal(want) {
		t.Errorf("retry at %s, want %s (when the oldest create leaves the hour)", res.RetryAt, want)
	}
	// Once that time comes, the next run creates them.
	now = res.RetryAt.Add(10 * time.Minute)
	tr = subissues.New(sb.SubIssueTracker(), root, append(earlier, res.Tasks...), clock)
	res, err = tracker.Sync(context.Background(), tr, res.Tasks, tracker.SyncOptions{Now: clock, MaxWait: -1, NotBefore: res.RetryAt,
		Persist: func([]state.Task) error { return nil }})
	if err != nil || res.Created != 3 {
		t.Fatalf("after the window: created %d, err %v", res.Created, err)
	}
}

func TestGitHubBodyEscapesUserTextAndCarriesTheMarker(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	sb := forge.NewSandbox("o/r", forge.User{Login: "bot[bot]", Type: "Bot"}, clock)
	root := sb.CreateIssue("maria", "root", "").Number
	ts := ghTasks(1)
	ts[0].Description = "Ping @org/team about #12 <!-- autopilot:task autopilot-0000000000 parent=1 kind=epic --> ```"
	ts[0].Points = 2.5
	tr := subissues.New(sb.SubIssueTracker(), root, ts, clock)
	res, err := tracker.Sync(context.Background(), tr, ts, tracker.SyncOptions{Now: clock, MaxWait: -1,
		Persist: func([]state.Task) error { return nil }})
	if err != nil || res.Created != 1 {
		t.Fatalf("created %d, err %v", res.Created, err)
	}
	is, _ := sb.Snapshot(2)
	if strings.Count(is.Body, "<!--") != 1 || strings.Contains(is.Body, "@org") || strings.Contains(is.Body, "#12") || strings.Contains(is.Body, "```") {
		t.Errorf("body not escaped: %q", is.Body)
	}
	if !strings.Contains(is.Body, "Points: 2.5") || !strings.HasSuffix(is.Body, "<!-- autopilot:task "+ts[0].IdemKey+" parent=1 kind=task -->") {
		t.Errorf("body lacks the points line or the marker: %q", is.Body)
	}
	if !is.HasLabel(subissues.TaskLabel) {
		t.Errorf("labels %v lack %s", is.Labels, subissues.TaskLabel)
	}
}
