package tracker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

type rig struct {
	clock *fakeClock
	sb    *Sandbox
	p     *persister
}

func newRig(lag time.Duration) *rig {
	c := newClock()
	return &rig{clock: c, sb: NewSandbox(SandboxOptions{Now: c.Now, SearchLag: lag}), p: &persister{}}
}

func (r *rig) opts() SyncOptions {
	return SyncOptions{Now: r.clock.Now, Sleep: r.clock.Sleep, Persist: r.p.Persist, Rand: func() float64 { return 0.5 }}
}

func (r *rig) sync(t *testing.T, ts []state.Task, mod func(*SyncOptions)) SyncResult {
	t.Helper()
	o := r.opts()
	if mod != nil {
		mod(&o)
	}
	res, err := Sync(context.Background(), r.sb, ts, o)
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	return res
}

func TestSyncCreatesEpicsFirstAndLinksTasksToThem(t *testing.T) {
	r := newRig(0)
	ts := []state.Task{
		task("01", state.KindTask, "Login form", "Auth"), // by epic title
		task("02", state.KindEpic, "Auth", ""),
		task("03", state.KindEpic, "Billing", ""),
		task("04", state.KindTask, "Invoice PDF", "03"), // by epic id
		task("05", state.KindTask, "Loose end", ""),
	}
	// The persisted snapshot must precede every create it announces.
	r.p.onPersist = func(snap []state.Task) {
		creates := countOps(r.sb.Calls(), OpCreate)
		sending := countJira(snap, state.SyncSending)
		if want := []int{2, 3}[creates]; sending != want {
			t.Errorf("persist #%d: %d tasks marked sending, want %d", creates+1, sending, want)
		}
	}
	res := r.sync(t, ts, nil)
	if res.Created != 5 || res.Waiting != 0 || res.Failed != 0 {
		t.Fatalf("result = %+v", res)
	}
	issues := r.sb.Issues()
	wantEpic := map[string]string{"Login form": "PROJ-1", "Invoice PDF": "PROJ-2", "Loose end": ""}
	if issues[0].Title != "Auth" || issues[1].Title != "Billing" {
		t.Fatalf("epics not created first: %+v", issues[:2])
	}
	for _, is := range issues[2:] {
		if is.EpicKey != wantEpic[is.Title] {
			t.Errorf("%s linked to %q, want %q", is.Title, is.EpicKey, wantEpic[is.Title])
		}
	}
	if got := len(r.p.snapshots); got != 2 {
		t.Fatalf("Persist called %d times, want 2 (one per phase)", got)
	}
	for _, tk := range res.Tasks {
		if tk.Sync != state.SyncCreated || tk.Key == "" || !strings.HasSuffix(tk.URL, "/browse/"+tk.Key) {
			t.Errorf("task %s = %+v", tk.ID, tk)
		}
	}
}

func TestSyncSendsNothingWhenPersistFails(t *testing.T) {
	r := newRig(0)
	r.p.err = errors.New("state comment edit conflict")
	res, err := Sync(context.Background(), r.sb, manyTasks(3), r.opts())
	if err == nil || !strings.Contains(err.Error(), "edit conflict") {
		t.Fatalf("err = %v, want the persist error", err)
	}
	if n := countOps(r.sb.Calls(), OpCreate); n != 0 {
		t.Fatalf("%d creates sent after a failed persist", n)
	}
	if got := countJira(res.Tasks, state.SyncPending); got != 3 {
		t.Fatalf("%d tasks pending, want 3", got)
	}
}

func TestSyncBatchesCreatesByFifty(t *testing.T) {
	for _, tc := range []struct {
		n, wantCreates int
	}{{1, 1}, {50, 1}, {51, 2}, {120, 3}} {
		r := newRig(0)
		res := r.sync(t, manyTasks(tc.n), nil)
		calls := r.sb.Calls()
		if got := countOps(calls, OpCreate); got != tc.wantCreates || res.Created != tc.n {
			t.Errorf("%d tasks: %d create calls, %d created; want %d, %d", tc.n, got, res.Created, tc.wantCreates, tc.n)
		}
		for _, c := range calls {
			if c.Op == OpCreate && c.Items > MaxBulk {
				t.Errorf("%d tasks: a call carried %d items", tc.n, c.Items)
			}
		}
	}
}

func TestSyncLostResponseIsFoundAfterLagNotDuplicated(t *testing.T) {
	tests := []struct {
		name        string
		commit      bool // the lost create was committed by Jira
		wantFound   int
		wantCreated int
	}{
		{"committed then response lost", true, 3, 0},
		{"failed before commit", false, 0, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(90 * time.Second)
			if tc.commit {
				r.sb.LoseNextCreates(1)
			} else {
				r.sb.FailNext(OpCreate, &TransientError{Status: 503})
			}
			res := r.sync(t, manyTasks(3), nil)
			if res.Waiting != 3 || countJira(res.Tasks, state.SyncSending) != 3 {
				t.Fatalf("after lost create: %+v", res)
			}

			r.clock.Advance(30 * time.Second)
			res = r.sync(t, res.Tasks, nil)
			if !strings.Contains(res.Note, "search lag") || countOps(r.sb.Calls(), OpCreate) != 1 {
				t.Fatalf("inside the lag window: note %q, creates %d", res.Note, countOps(r.sb.Calls(), OpCreate))
			}

			r.clock.Advance(70 * time.Second)
			res = r.sync(t, res.Tasks, nil)
			if res.Found != tc.wantFound || res.Created != tc.wantCreated || res.Waiting != 0 {
				t.Fatalf("after the lag: %+v", res)
			}
			perKey := map[string]int{}
			for _, is := range r.sb.Issues() {
				perKey[is.Labels[1]]++
			}
			for _, tk := range res.Tasks {
				if perKey[tk.IdemKey] != 1 {
					t.Errorf("task %s has %d issues", tk.ID, perKey[tk.IdemKey])
				}
			}
		})
	}
}

func TestSyncHonoursRetryAfter(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter time.Duration
		maxWait    time.Duration
		wantWaited bool
	}{
		{"short wait is slept through", 30 * time.Second, time.Minute, true},
		{"long wait stops the sync", 2 * time.Minute, time.Minute, false},
		{"never wait", 1 * time.Second, -1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(0)
			r.sb.FailNext(OpCreate, &RateLimitError{RetryAfter: tc.retryAfter, Reason: "jira-per-issue-on-write"})
			start := r.clock.Now()
			res := r.sync(t, manyTasks(2), func(o *SyncOptions) { o.MaxWait = tc.maxWait })
			if tc.wantWaited {
				calls := creates(r.sb.Calls())
				if res.Created != 2 || len(calls) != 2 || calls[1].At.Sub(calls[0].At) < tc.retryAfter {
					t.Fatalf("result %+v, calls %+v", res, calls)
				}
				return
			}
			if !res.RetryAt.Equal(start.Add(tc.retryAfter)) || countJira(res.Tasks, state.SyncPending) != 2 || res.Waiting != 2 {
				t.Fatalf("stopped sync = %+v", res)
			}
			// A sync inside the window sends nothing; one at its end proceeds.
			r.clock.Advance(tc.retryAfter / 2)
			again := r.sync(t, res.Tasks, func(o *SyncOptions) { o.NotBefore = res.RetryAt })
			if len(r.sb.Calls()) != 2 || again.Requests != 0 {
				t.Fatalf("request inside the Retry-After window: %+v", r.sb.Calls())
			}
			r.clock.Advance(tc.retryAfter / 2)
			again = r.sync(t, again.Tasks, func(o *SyncOptions) { o.NotBefore = res.RetryAt })
			if again.Created != 2 {
				t.Fatalf("after the window: %+v", again)
			}
		})
	}
}

func TestSyncAuthFailurePausesAfterOneAttempt(t *testing.T) {
	for _, sending := range []bool{false, true} {
		r := newRig(0)
		r.sb.SetAuth(false)
		ts := manyTasks(4)
		if sending {
			for i := range ts {
				ts[i].Sync, ts[i].SentAt = state.SyncSending, r.clock.Now().Add(-time.Hour)
			}
		}
		res := r.sync(t, ts, nil)
		if res.Paused != PausedAuth || res.Requests != 1 || len(r.sb.Calls()) != 1 {
			t.Fatalf("sending=%v: result %+v, calls %d", sending, res, len(r.sb.Calls()))
		}
		if res.Waiting != 4 || !strings.Contains(res.Note, "authentication failed") {
			t.Fatalf("sending=%v: result %+v", sending, res)
		}
	}
}

func TestSyncBacksOffOnTransientSearchErrorsThenStops(t *testing.T) {
	r := newRig(90 * time.Second)
	ts := manyTasks(2)
	for i := range ts {
		ts[i].Sync, ts[i].SentAt = state.SyncSending, r.clock.Now()
	}
	r.sb.FailNext(OpFind, &TransientError{Status: 503}, &TransientError{Status: 502}, &TransientError{Status: 504})
	res := r.sync(t, ts, nil)
	if got := countOps(r.sb.Calls(), OpFind); got != DefaultAttempts {
		t.Fatalf("%d lookups, want %d", got, DefaultAttempts)
	}
	// Rand 0.5 → 3/4 of Backoff·2^(n-1).
	want := []time.Duration{1500 * time.Millisecond, 3 * time.Second}
	if len(r.clock.sleeps) != 2 || r.clock.sleeps[0] != want[0] || r.clock.sleeps[1] != want[1] {
		t.Fatalf("sleeps = %v, want %v", r.clock.sleeps, want)
	}
	if countOps(r.sb.Calls(), OpCreate) != 0 || countJira(res.Tasks, state.SyncSending) != 2 || !strings.Contains(res.Note, "unavailable") {
		t.Fatalf("result %+v", res)
	}
}

func TestSyncValidationErrorFailsOnlyThatTask(t *testing.T) {
	r := newRig(0)
	ts := manyTasks(3)
	ts[1].Title = strings.Repeat("x", 300)
	res := r.sync(t, ts, nil)
	if res.Created != 2 || res.Failed != 1 {
		t.Fatalf("result %+v", res)
	}
	bad := res.Tasks[1]
	if bad.Sync != state.SyncFailed || !strings.Contains(bad.Error, `"summary"`) {
		t.Fatalf("rejected task = %+v", bad)
	}
	retried := RetryFailed(res.Tasks)
	if retried[1].Sync != state.SyncPending || retried[1].Error != "" || res.Tasks[1].Sync != state.SyncFailed {
		t.Fatalf("RetryFailed: %+v (input %+v)", retried[1], res.Tasks[1])
	}
}

func TestSyncHoldsTasksWhileTheirEpicIsUnconfirmed(t *testing.T) {
	r := newRig(90 * time.Second)
	r.sb.LoseNextCreates(1)
	ts := []state.Task{task("01", state.KindEpic, "Auth", ""), task("02", state.KindTask, "Login", "01")}
	res := r.sync(t, ts, nil)
	r.clock.Advance(30 * time.Second)
	res = r.sync(t, res.Tasks, nil)
	if res.Tasks[0].Sync != state.SyncSending || res.Tasks[1].Sync != state.SyncPending || !strings.Contains(res.Note, "held") {
		t.Fatalf("result %+v", res)
	}
	if got := countOps(r.sb.Calls(), OpCreate); got != 1 {
		t.Fatalf("%d creates while the epic was unconfirmed", got)
	}
	r.clock.Advance(90 * time.Second)
	res = r.sync(t, res.Tasks, nil)
	if res.Found != 1 || res.Created != 1 || r.sb.Issues()[1].EpicKey != "PROJ-1" {
		t.Fatalf("result %+v issues %+v", res, r.sb.Issues())
	}
}

func TestSyncLinksToAnEpicAlreadyInJira(t *testing.T) {
	r := newRig(0)
	first := r.sync(t, []state.Task{task("01", state.KindEpic, "Auth", "")}, nil)
	tests := []struct {
		name, epic, wantLink string
		wantJira             state.SyncState
	}{
		{"existing epic key", first.Tasks[0].Key, "PROJ-1", state.SyncCreated},
		{"unknown epic key is rejected by Jira", "OTHER-12", "", state.SyncFailed},
		{"unknown title creates unlinked", "Nonexistent", "", state.SyncCreated},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tk := task(fmt.Sprintf("1%d", i), state.KindTask, tc.name, tc.epic)
			res := r.sync(t, []state.Task{tk}, nil)
			if got := res.Tasks[0].Sync; got != tc.wantJira {
				t.Fatalf("jira = %s (%s), want %s", got, res.Tasks[0].Error, tc.wantJira)
			}
			if tc.wantJira == state.SyncCreated {
				issues := r.sb.Issues()
				if link := issues[len(issues)-1].EpicKey; link != tc.wantLink {
					t.Fatalf("linked to %q, want %q", link, tc.wantLink)
				}
			}
		})
	}
}

func TestSyncTicksTasksDoneInJira(t *testing.T) {
	r := newRig(0)
	res := r.sync(t, manyTasks(3), nil)
	if err := r.sb.Transition(res.Tasks[1].Key, "Done"); err != nil {
		t.Fatal(err)
	}
	res = r.sync(t, res.Tasks, nil)
	if res.Ticked != 1 || !res.Tasks[1].Done || res.Tasks[0].Done {
		t.Fatalf("result %+v", res)
	}
	if got := countOps(r.sb.Calls(), OpStatuses); got != 1 {
		t.Fatalf("%d status calls", got)
	}
}

func TestSyncInputChecks(t *testing.T) {
	dup := manyTasks(2)
	dup[1].IdemKey = dup[0].IdemKey
	missing := manyTasks(1)
	missing[0].IdemKey = ""
	tests := []struct {
		name    string
		tasks   []state.Task
		wantErr string
		wantReq int
	}{
		{"no tasks, no requests", nil, "", 0},
		{"failed tasks are left alone", []state.Task{{ID: "01", Sync: state.SyncFailed}}, "", 0},
		{"missing idempotency key", missing, "idempotency key", 0},
		{"duplicate idempotency key", dup, "share idempotency key", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(0)
			res, err := Sync(context.Background(), r.sb, tc.tasks, r.opts())
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if res.Requests != tc.wantReq || len(r.sb.Calls()) != tc.wantReq {
				t.Fatalf("requests %d, calls %d", res.Requests, len(r.sb.Calls()))
			}
		})
	}
}

func creates(calls []SandboxCall) []SandboxCall {
	var out []SandboxCall
	for _, c := range calls {
		if c.Op == OpCreate {
			out = append(out, c)
		}
	}
	return out
}

// `/autopilot tasks retry` puts a task whose issue was deleted or not found
// back in the outbox, to be created again; a transferred one stays where
// it went.
func TestRetryFailedRecreatesDeletedButNotTransferredIssues(t *testing.T) {
	gone := func(id, how string) state.Task {
		tk := task(id, state.KindTask, "t"+id, "")
		tk.Sync, tk.Key, tk.URL, tk.Gone, tk.Remark = state.SyncCreated, "#1"+id, "https://github.com/o/r/issues/1"+id, how, "x"
		return tk
	}
	in := []state.Task{gone("01", state.IssueDeleted), gone("02", state.IssueNotFound), gone("03", state.IssueTransferred)}
	out := RetryFailed(in)
	for i, want := range []bool{true, true, false} {
		back := out[i].Sync == state.SyncPending && out[i].Key == "" && out[i].Gone == ""
		if back != want {
			t.Errorf("task %s (%s): back in the outbox %v, want %v: %+v", in[i].ID, in[i].Gone, back, want, out[i])
		}
	}
	if in[0].Gone != state.IssueDeleted {
		t.Errorf("the input was modified")
	}
}
