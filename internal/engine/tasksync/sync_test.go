package tasksync

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// Each test is a transcript: the ops the rules name, in order, and the
// tracker's answers. They pin the rules without any tracker.

func TestEpicsAreCreatedBeforeTheirTasksWhichNameTheEpicKey(t *testing.T) {
	ts := []state.Task{
		task("01", state.KindTask, "Login form", "Auth"), // by epic title
		task("E1", state.KindEpic, "Auth", ""),
		task("02", state.KindTask, "Logout", "E1"), // by epic id
		task("03", state.KindTask, "Docs", ""),
	}
	s := newSync(t, ts, Options{})
	play(t, s, []step{
		{op: "lookup k01 kE1 k02 k03"},
		{op: "persist sending E1"},
		{op: "create kE1", out: createdAll([]string{"kE1"}, 1)},
		{op: "persist sending 01 02 03"},
		{op: "create k01(epic A-1) k02(epic A-1) k03", out: createdAll([]string{"k01", "k02", "k03"}, 2)},
	})
	res := s.Result(Extras{})
	if got, want := syncState(res.Tasks), "01:created=A-2 E1:created=A-1 02:created=A-3 03:created=A-4"; got != want {
		t.Errorf("tasks %s, want %s", got, want)
	}
	if res.Created != 4 || res.Waiting != 0 || res.Requests != 3 || res.Note != "" {
		t.Errorf("result %+v", res)
	}
}

func TestAPersistThatFailsSendsNothingAndLeavesTheTasksAsTheyWere(t *testing.T) {
	s := newSync(t, tasks(2), Options{})
	play(t, s, []step{
		{op: "lookup k01 k02"},
		{op: "persist sending 01 02", out: Outcome{Failed: fmt.Errorf("state write refused")}},
	})
	if s.Err() == nil || !strings.Contains(s.Err().Error(), "state write refused") {
		t.Errorf("Err() = %v", s.Err())
	}
	if got := syncState(s.Result(Extras{}).Tasks); got != "01:pending 02:pending" {
		t.Errorf("tasks %s", got)
	}
}

func TestCreatesGoInChunksOfFiftyFromAnyCount(t *testing.T) {
	for _, n := range []int{1, 49, 50, 51, 100, 124} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ts := tasks(n)
			s := newSync(t, ts, Options{})
			var sizes []int
			for op := s.Next(); op != nil; op = s.Next() {
				out := Outcome{At: t0}
				if c, ok := op.(Create); ok {
					sizes = append(sizes, len(c.Items))
					var ids []string
					for _, it := range c.Items {
						ids = append(ids, it.IdemKey)
					}
					out = createdAll(ids, 1)
				}
				s.Apply(out)
			}
			want := []int{}
			for left := n; left > 0; left -= MaxBulk {
				want = append(want, min(left, MaxBulk))
			}
			if !slices.Equal(sizes, want) {
				t.Errorf("chunks %v, want %v", sizes, want)
			}
			if res := s.Result(Extras{}); res.Created != n || res.Waiting != 0 {
				t.Errorf("created %d waiting %d", res.Created, res.Waiting)
			}
		})
	}
}

func TestALostCreateIsAdoptedOrSentAgainOnlyAfterTheSearchLag(t *testing.T) {
	sending := func(sentAgo time.Duration) []state.Task {
		ts := tasks(1)
		ts[0].Sync, ts[0].SentAt = state.SyncSending, t0.Add(-sentAgo)
		return ts
	}
	t.Run("found by its key: adopted, nothing created", func(t *testing.T) {
		s := newSync(t, sending(time.Second), Options{})
		play(t, s, []step{{op: "lookup k01", out: Outcome{Found: map[string]Issue{"k01": {Key: "A-7"}}}}})
		if res := s.Result(Extras{}); res.Found != 1 || syncState(res.Tasks) != "01:created=A-7" {
			t.Errorf("result %+v", res)
		}
	})
	t.Run("not found inside the lag: waits, nothing sent", func(t *testing.T) {
		s := newSync(t, sending(30*time.Second), Options{})
		play(t, s, []step{{op: "lookup k01"}})
		if res := s.Result(Extras{}); res.Waiting != 1 || !strings.Contains(res.Note, "1 waiting for Jira search lag") {
			t.Errorf("result %+v", res)
		}
	})
	t.Run("not found past the lag: sent again", func(t *testing.T) {
		s := newSync(t, sending(DefaultSearchLag), Options{})
		play(t, s, []step{
			{op: "lookup k01"},
			{op: "persist sending 01"},
			{op: "create k01", out: createdAll([]string{"k01"}, 1)},
		})
	})
	t.Run("a create whose answer is lost stays sending", func(t *testing.T) {
		s := newSync(t, tasks(2), Options{})
		play(t, s, []step{
			{op: "lookup k01 k02"},
			{op: "persist sending 01 02"},
			{op: "create k01 k02", out: refused(Transient, "Jira unavailable (HTTP 502)")},
		})
		res := s.Result(Extras{})
		if syncState(res.Tasks) != "01:sending 02:sending" || !strings.Contains(res.Note, "2 create outcomes unknown") {
			t.Errorf("result %s %q", syncState(res.Tasks), res.Note)
		}
	})
}

func TestNoRequestIsSentInsideTheRetryWindow(t *testing.T) {
	s := newSync(t, tasks(1), Options{NotBefore: t0.Add(time.Minute)})
	play(t, s, nil)
	if res := s.Result(Extras{}); !res.RetryAt.Equal(t0.Add(time.Minute)) || !strings.Contains(res.Note, "asked us to wait until") {
		t.Errorf("result %+v", res)
	}
}

func TestARateLimitIsWaitedOutWhenShortAndOtherwiseSetsTheRetryWindow(t *testing.T) {
	t.Run("short: waited out, then sent again", func(t *testing.T) {
		s := newSync(t, tasks(1), Options{})
		play(t, s, []step{
			{op: "lookup k01", out: Outcome{Err: &Refusal{Class: RateLimited, RetryAfter: 5 * time.Second}}},
			{op: "wait 5s"},
			{op: "lookup k01"},
			{op: "persist sending 01"},
			{op: "create k01", out: createdAll([]string{"k01"}, 1)},
		})
	})
	t.Run("long: a create not committed goes back to pending", func(t *testing.T) {
		s := newSync(t, tasks(1), Options{})
		play(t, s, []step{
			{op: "lookup k01"},
			{op: "persist sending 01"},
			{op: "create k01", out: Outcome{Err: &Refusal{Class: RateLimited, RetryAfter: 10 * time.Minute}}},
		})
		res := s.Result(Extras{})
		if syncState(res.Tasks) != "01:pending" || !res.RetryAt.Equal(t0.Add(10*time.Minute)) {
			t.Errorf("result %s %v", syncState(res.Tasks), res.RetryAt)
		}
	})
	t.Run("a window the tracker met elsewhere is the retry time", func(t *testing.T) {
		s := newSync(t, []state.Task{created("01", "A-1")}, Options{})
		play(t, s, []step{{op: "statuses A-1", out: Outcome{Found: map[string]Issue{}}}})
		if res := s.Result(Extras{LimitedUntil: t0.Add(time.Hour)}); !res.RetryAt.Equal(t0.Add(time.Hour)) {
			t.Errorf("RetryAt %v", res.RetryAt)
		}
	})
}

func TestARefusedTokenPausesTheSyncAtOnce(t *testing.T) {
	s := newSync(t, tasks(3), Options{})
	play(t, s, []step{{op: "lookup k01 k02 k03", out: Outcome{Err: &Refusal{Class: Auth, Status: 401, Msg: "Jira authentication failed (HTTP 401)"}}}})
	res := s.Result(Extras{})
	if res.Paused != PausedAuth || res.Waiting != 3 || !strings.Contains(res.Note, "/autopilot tasks retry") {
		t.Errorf("result %+v", res)
	}
}

func TestATransientLookupIsRetriedWithBackoffThenLeftForTheNextSync(t *testing.T) {
	down := Outcome{Jitter: 0.5, Err: &Refusal{Class: Transient, Status: 503, Msg: "Jira unavailable (HTTP 503)"}}
	s := newSync(t, tasks(1), Options{})
	play(t, s, []step{
		{op: "lookup k01", out: down},
		{op: "wait 1.5s"}, // 3/4 of 2s
		{op: "lookup k01", out: down},
		{op: "wait 3s"}, // 3/4 of 4s
		{op: "lookup k01", out: down},
	})
	if res := s.Result(Extras{}); res.Requests != 3 || !strings.Contains(res.Note, "after 3 attempts") {
		t.Errorf("result %+v", res)
	}
}

func TestARejectedItemFailsOnlyThatTask(t *testing.T) {
	s := newSync(t, tasks(3), Options{})
	play(t, s, []step{
		{op: "lookup k01 k02 k03"},
		{op: "persist sending 01 02 03"},
		{op: "create k01 k02 k03", out: Outcome{Results: []ItemResult{
			{IdemKey: "k01", Issue: Issue{Key: "A-1"}},
			{IdemKey: "k02", Err: &Refusal{Class: Rejected, Msg: `Jira rejected field "summary": too long`}},
			{IdemKey: "k03", Issue: Issue{Key: "A-2"}},
		}}},
	})
	res := s.Result(Extras{})
	if syncState(res.Tasks) != "01:created=A-1 02:failed 03:created=A-2" || res.Failed != 1 || !strings.Contains(res.Tasks[1].Error, "summary") {
		t.Errorf("result %s %+v", syncState(res.Tasks), res)
	}
}

func TestTasksWaitForTheirEpicButNotForAFailedOne(t *testing.T) {
	epic := task("E1", state.KindEpic, "Auth", "")
	child := task("01", state.KindTask, "Login", "E1")
	t.Run("epic on its way: the task is held", func(t *testing.T) {
		e := epic
		e.Sync, e.SentAt = state.SyncSending, t0
		s := newSync(t, []state.Task{e, child}, Options{})
		play(t, s, []step{{op: "lookup kE1 k01"}})
		if res := s.Result(Extras{}); !strings.Contains(res.Note, "1 held until their epic is in Jira") || res.Waiting != 2 {
			t.Errorf("result %+v", res)
		}
	})
	t.Run("epic failed: the task is created unlinked", func(t *testing.T) {
		e := epic
		e.Sync = state.SyncFailed
		s := newSync(t, []state.Task{e, child}, Options{})
		play(t, s, []step{
			{op: "lookup k01"},
			{op: "persist sending 01"},
			{op: "create k01", out: createdAll([]string{"k01"}, 1)},
		})
	})
	t.Run("an epic named by a key already in the tracker", func(t *testing.T) {
		c := child
		c.Epic = "PROJ-12"
		s := newSync(t, []state.Task{c}, Options{})
		play(t, s, []step{
			{op: "lookup k01"},
			{op: "persist sending 01"},
			{op: "create k01(epic PROJ-12)", out: createdAll([]string{"k01"}, 1)},
		})
	})
}

func TestStatusesTickDoneTasksAndAGoneIssueIsThatTasksAlone(t *testing.T) {
	ts := []state.Task{created("01", "A-1"), created("02", "A-2"), created("03", "A-3")}
	s := newSync(t, ts, Options{})
	play(t, s, []step{{op: "statuses A-1 A-2 A-3", out: Outcome{Found: map[string]Issue{
		"A-1": {Key: "A-1", Done: true},
		"A-2": {Key: "A-2", Gone: state.IssueDeleted},
		"A-3": {Key: "A-3"},
	}}}})
	res := s.Result(Extras{})
	if got, want := syncState(res.Tasks), "01:created=A-1+done 02:created=A-2+deleted 03:created=A-3"; got != want || res.Ticked != 1 {
		t.Errorf("tasks %s, want %s (ticked %d)", got, want, res.Ticked)
	}
}

func TestDependencyLinksAreSentOnceBothIssuesExist(t *testing.T) {
	a, b, c := created("01", "A-1"), created("02", "A-2"), task("03", state.KindTask, "Task 03", "")
	b.DependsOn = []string{"01"}
	c.DependsOn = []string{"01"}
	t.Run("without the capability nothing is linked", func(t *testing.T) {
		s := newSync(t, []state.Task{a, b}, Options{})
		play(t, s, []step{{op: "statuses A-1 A-2"}})
	})
	t.Run("linked; a refusal is recorded and not sent again", func(t *testing.T) {
		s := newSync(t, []state.Task{a, b, c}, Options{DependencyLinks: true})
		play(t, s, []step{
			{op: "lookup k03"},
			{op: "persist sending 03"},
			{op: "create k03", out: createdAll([]string{"k03"}, 3)},
			{op: "link A-2 blocked by A-1"},
			{op: "link A-3 blocked by A-1", out: refused(Rejected, "GitHub rejected the request: cycle")},
			{op: "statuses A-1 A-2"},
		})
		res := s.Result(Extras{})
		if res.Waiting != 0 || !slices.Equal(res.Tasks[2].DepsLinked, []string{"01"}) || !strings.Contains(res.Note, "refused") {
			t.Errorf("result %+v", res)
		}
	})
	t.Run("a rate limit stops the links until the window ends", func(t *testing.T) {
		s := newSync(t, []state.Task{a, b}, Options{DependencyLinks: true})
		play(t, s, []step{{op: "link A-2 blocked by A-1", out: Outcome{Err: &Refusal{Class: RateLimited, RetryAfter: time.Minute}}}})
		if res := s.Result(Extras{}); res.Waiting != 1 || !res.RetryAt.Equal(t0.Add(time.Minute)) {
			t.Errorf("result %+v", res)
		}
	})
}

func TestBadIdempotencyKeysAreRefusedBeforeAnything(t *testing.T) {
	dup := tasks(2)
	dup[1].IdemKey = dup[0].IdemKey
	blank := tasks(1)
	blank[0].IdemKey = "a b"
	for name, ts := range map[string][]state.Task{"shared": dup, "with a space": blank} {
		if _, err := NewSync(ts, Options{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestRetryPutsFailedAndDeletedTasksBackButNotTransferredOnes(t *testing.T) {
	failed := tasks(1)[0]
	failed.Sync, failed.Error = state.SyncFailed, "rejected"
	deleted, moved := created("02", "A-2"), created("03", "A-3")
	deleted.Gone, moved.Gone = state.IssueDeleted, state.IssueTransferred
	in := []state.Task{failed, deleted, moved}
	got := RetryFailed(in)
	if s := syncState(got); s != "01:pending 02:pending 03:created=A-3+transferred" {
		t.Errorf("tasks %s", s)
	}
	if in[0].Sync != state.SyncFailed {
		t.Error("input modified")
	}
}

// When an idempotency key is on several issues (two runs both created it
// before either saw the other), the one created first is adopted: the
// lowest number of the key.
func TestTheFirstCreatedOfDuplicatesIsAdopted(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"PROJ-12", "PROJ-13", "PROJ-12"},
		{"PROJ-13", "PROJ-12", "PROJ-12"},
		{"PROJ-9", "PROJ-10", "PROJ-9"},
		{"PROJ-7", "PROJ-7", "PROJ-7"},
	} {
		if got := FirstCreated(tc.a, tc.b); got != tc.want {
			t.Errorf("FirstCreated(%s, %s) = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
}
