package subissues_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/idem"
	"github.com/autopilot-dev/autopilot/internal/reconcile/trackersync"
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
	res, err := trackersync.Outbox(context.Background(), tr, fresh, trackersync.Options{Now: clock, MaxWait: -1,
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
	res, err = trackersync.Outbox(context.Background(), tr, res.Tasks, trackersync.Options{Now: clock, MaxWait: -1, NotBefore: res.RetryAt,
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
	res, err := trackersync.Outbox(context.Background(), tr, ts, trackersync.Options{Now: clock, MaxWait: -1,
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

// appAPI stamps performed_via_github_app on the sandbox's issues: ours
// (created through it) carry our App's id, planted ones another App's.
type appAPI struct {
	tracker.SubIssueAPI
	app map[int]int64
}

func (a appAPI) stamp(is tracker.GHIssue) tracker.GHIssue {
	is.AppID = a.app[is.Number]
	return is
}

func (a appAPI) CreateIssue(ctx context.Context, title, body string, labels []string) (tracker.GHIssue, error) {
	is, err := a.SubIssueAPI.CreateIssue(ctx, title, body, labels)
	if err == nil && a.app[is.Number] == 0 {
		a.app[is.Number] = 4242
	}
	return a.stamp(is), err
}

func (a appAPI) ListLabeled(ctx context.Context, label string, since time.Time) ([]tracker.GHIssue, error) {
	list, err := a.SubIssueAPI.ListLabeled(ctx, label, since)
	for i := range list {
		list[i] = a.stamp(list[i])
	}
	return list, err
}

func (a appAPI) SubIssues(ctx context.Context, parent int) ([]tracker.GHIssue, error) {
	list, err := a.SubIssueAPI.SubIssues(ctx, parent)
	for i := range list {
		list[i] = a.stamp(list[i])
	}
	return list, err
}

// In App mode a task issue counts only when GitHub says our App wrote it:
// an issue under our bot's name that performed_via_github_app ties to
// another App is not adopted.
func TestAppModeAdoptsOnlyIssuesOfItsOwnApp(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	sb := forge.NewSandbox("o/r", forge.User{Login: "autopilot[bot]", Type: "Bot"}, clock)
	root := sb.CreateIssue("maria", "root", "").Number
	api := appAPI{SubIssueAPI: sb.SubIssueTracker(), app: map[int]int64{}}
	tasks := ghTasks(1)
	planted, err := api.SubIssueAPI.CreateIssue(context.Background(), "t01",
		fmt.Sprintf("<!-- autopilot:task %s parent=%d kind=task -->", tasks[0].IdemKey, root), []string{subissues.TaskLabel})
	if err != nil {
		t.Fatal(err)
	}
	api.app[planted.Number] = 999
	tr := subissues.New(api, root, tasks, clock).Trust("autopilot[bot]", 4242)
	res, err := trackersync.Outbox(context.Background(), tr, tasks, trackersync.Options{Now: clock, MaxWait: -1,
		Persist: func([]state.Task) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Tasks[0]
	if got.Key == fmt.Sprintf("#%d", planted.Number) || got.Sync != state.SyncCreated {
		t.Fatalf("task: %s %s, want a new issue of ours, not the planted #%d", got.Sync, got.Key, planted.Number)
	}
	if !strings.Contains(got.Remark, fmt.Sprintf("ignored #%d", planted.Number)) {
		t.Errorf("remark %q does not say the impostor was ignored", got.Remark)
	}
}
