package codec

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/statetest"
)

// With tracker: github the Tasks section links sub-issues as #n, and a run
// with hundreds of them still renders within one comment.
func TestManySubIssueTasksRenderAsLinksWithinOneComment(t *testing.T) {
	for _, n := range []int{120, 600} {
		s := statetest.Sample()
		s.Tasks = nil
		for i := 1; i <= n; i++ {
			s.Tasks = append(s.Tasks, state.Task{ID: fmt.Sprintf("%02d", i), Kind: state.KindTask,
				Title: fmt.Sprintf("Parse the %dth column family of the CSV export", i), Points: 2,
				IdemKey: fmt.Sprintf("autopilot-%010x", i), Sync: state.SyncCreated, Key: fmt.Sprintf("#%d", 100+i),
				URL: fmt.Sprintf("https://github.com/acme/widgets/issues/%d", 100+i), SentAt: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)})
		}
		body, err := Render(s, View{}, []byte("k"))
		if err != nil {
			t.Fatalf("%d tasks: %v", n, err)
		}
		if len([]rune(body)) > 65536 {
			t.Fatalf("%d tasks: body of %d characters", n, len([]rune(body)))
		}
		if !strings.Contains(body, "[#101](https://github.com/acme/widgets/issues/101)") {
			t.Errorf("%d tasks: the first task is not linked as #101", n)
		}
		// The human part shows what fits; the machine block keeps them all.
		back, err := Parse(body, Want{Repo: s.Repo, Issue: s.Issue, Key: []byte("k")})
		if err != nil || len(back.Tasks) != n || back.Tasks[n-1].Key != fmt.Sprintf("#%d", 100+n) {
			t.Fatalf("%d tasks: read back %v, err %v", n, back != nil && len(back.Tasks) == n, err)
		}
		t.Logf("%d sub-issue tasks: state comment %d characters", n, len([]rune(body)))
	}
}

// A task whose issue is gone says so on its own line, with its remark
// (escaped like any user text), and the outcome survives the round trip.
func TestGoneTaskSaysWhatHappenedToItsIssue(t *testing.T) {
	s := statetest.Sample()
	s.Tasks = nil
	base := state.Task{Kind: state.KindTask, Sync: state.SyncCreated, SentAt: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	for i, g := range []string{state.IssueDeleted, state.IssueNotFound, state.IssueTransferred, ""} {
		tk := base
		tk.ID, tk.Title, tk.IdemKey, tk.Key, tk.Gone = fmt.Sprintf("%02d", i+1), "T", fmt.Sprintf("autopilot-%010x", i), fmt.Sprintf("#%d", 10+i), g
		s.Tasks = append(s.Tasks, tk)
	}
	s.Tasks[2].Remark = "now https://github.com/acme/elsewhere/issues/3"
	s.Tasks[3].Remark = "ignored #99: @mallory wrote it"
	body, err := Render(s, View{}, []byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#10 — issue deleted (410)", "#11 — issue not found (404)", "#12 — issue transferred to another repository",
		"acme/elsewhere/issues/3"} {
		if !strings.Contains(body, want) {
			t.Errorf("state comment lacks %q", want)
		}
	}
	if strings.Contains(body, " @mallory") {
		t.Errorf("remark not escaped: a mention pings")
	}
	back, err := Parse(body, Want{Repo: s.Repo, Issue: s.Issue, Key: []byte("k")})
	if err != nil || back.Tasks[0].Gone != state.IssueDeleted {
		t.Fatalf("round trip: %v", err)
	}
}
