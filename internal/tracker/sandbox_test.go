package tracker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
)

func TestSandboxNumbersKeysAndHidesNewIssuesFromSearchDuringLag(t *testing.T) {
	c := newClock()
	sb := NewSandbox(SandboxOptions{Project: "ABC", Now: c.Now, SearchLag: time.Minute})
	ctx := context.Background()
	items := []Item{{IdemKey: "autopilot-0000000001", Title: "one"}, {IdemKey: "autopilot-0000000002", Title: "two"}}
	res, err := sb.CreateBulk(ctx, items)
	if err != nil || len(res) != 2 || res[0].Issue.Key != "ABC-1" || res[1].Issue.Key != "ABC-2" {
		t.Fatalf("CreateBulk = %+v, %v", res, err)
	}
	keys := []string{items[0].IdemKey, items[1].IdemKey}
	for _, tc := range []struct {
		after time.Duration
		want  int
	}{{0, 0}, {59 * time.Second, 0}, {time.Second, 2}} {
		c.Advance(tc.after)
		got, err := sb.FindByIdemKeys(ctx, keys)
		if err != nil || len(got) != tc.want {
			t.Fatalf("after +%s: found %d (%v), want %d", tc.after, len(got), err, tc.want)
		}
	}
	// Statuses reads by key and is not subject to search lag.
	st, err := sb.Statuses(ctx, []string{"ABC-2", "ABC-9"})
	if err != nil || len(st) != 1 || st["ABC-2"].IdemKey != items[1].IdemKey || st["ABC-2"].Done {
		t.Fatalf("Statuses = %+v, %v", st, err)
	}
}

func TestSandboxFaultsAuthAndValidation(t *testing.T) {
	ctx := context.Background()
	boom := &TransientError{Status: 502}
	tests := []struct {
		name  string
		setup func(*Sandbox)
		items []Item
		check func(t *testing.T, res []CreateResult, err error, sb *Sandbox)
	}{
		{
			name:  "injected fault comes first and once",
			setup: func(sb *Sandbox) { sb.FailNext(OpCreate, boom) },
			items: []Item{{IdemKey: "k1", Title: "a"}},
			check: func(t *testing.T, res []CreateResult, err error, sb *Sandbox) {
				if !errors.Is(err, boom) || len(sb.Issues()) != 0 {
					t.Fatalf("err %v issues %d", err, len(sb.Issues()))
				}
				if _, err := sb.CreateBulk(ctx, []Item{{IdemKey: "k1", Title: "a"}}); err != nil {
					t.Fatalf("second call: %v", err)
				}
			},
		},
		{
			name:  "revoked credentials",
			setup: func(sb *Sandbox) { sb.SetAuth(false) },
			items: []Item{{IdemKey: "k1", Title: "a"}},
			check: func(t *testing.T, res []CreateResult, err error, sb *Sandbox) {
				var ae *AuthError
				if !errors.As(err, &ae) || ae.Status != 401 || sb.CheckAuth(ctx) == nil {
					t.Fatalf("err %v", err)
				}
			},
		},
		{
			name:  "lost response still commits",
			setup: func(sb *Sandbox) { sb.LoseNextCreates(1) },
			items: []Item{{IdemKey: "k1", Title: "a"}},
			check: func(t *testing.T, res []CreateResult, err error, sb *Sandbox) {
				var te *TransientError
				if !errors.As(err, &te) || res != nil || len(sb.Issues()) != 1 {
					t.Fatalf("err %v res %v issues %d", err, res, len(sb.Issues()))
				}
			},
		},
		{
			name:  "per-item validation",
			items: []Item{{IdemKey: "k1", Title: ""}, {IdemKey: "k2", Title: "ok"}, {IdemKey: "k3", Title: "t", Kind: "task", EpicKey: "PROJ-2"}},
			check: func(t *testing.T, res []CreateResult, err error, sb *Sandbox) {
				var ve *ValidationError
				if err != nil || len(res) != 3 || !errors.As(res[0].Err, &ve) || ve.Field != "summary" || res[1].Err != nil {
					t.Fatalf("res %+v err %v", res, err)
				}
				if !errors.As(res[2].Err, &ve) || ve.Field != "parent" {
					t.Fatalf("link to a non-epic: %+v", res[2])
				}
			},
		},
		{
			name:  "over the bulk limit",
			items: make([]Item, tasksync.MaxBulk+1),
			check: func(t *testing.T, res []CreateResult, err error, sb *Sandbox) {
				var ve *ValidationError
				if !errors.As(err, &ve) || len(sb.Issues()) != 0 {
					t.Fatalf("err %v", err)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sb := NewSandbox(SandboxOptions{})
			if tc.setup != nil {
				tc.setup(sb)
			}
			res, err := sb.CreateBulk(ctx, tc.items)
			tc.check(t, res, err, sb)
		})
	}
}

func TestSandboxTransitionMarksDone(t *testing.T) {
	sb := NewSandbox(SandboxOptions{})
	ctx := context.Background()
	if _, err := sb.CreateBulk(ctx, []Item{{IdemKey: "k1", Title: "a"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		status string
		done   bool
	}{{"In Progress", false}, {"Done", true}, {"To Do", false}, {"Closed", true}} {
		if err := sb.Transition("PROJ-1", tc.status); err != nil {
			t.Fatal(err)
		}
		st, _ := sb.Statuses(ctx, []string{"PROJ-1"})
		if st["PROJ-1"].Done != tc.done || st["PROJ-1"].Status != tc.status {
			t.Fatalf("%s: %+v", tc.status, st["PROJ-1"])
		}
	}
	if sb.Transition("PROJ-9", "Done") == nil {
		t.Fatal("transition of a missing issue succeeded")
	}
}

func TestSandboxCloseIssue(t *testing.T) {
	ctx := context.Background()
	sb := NewSandbox(SandboxOptions{})
	if _, err := sb.CreateBulk(ctx, []Item{{IdemKey: "autopilot-0000000001", Title: "one"}, {IdemKey: "autopilot-0000000002", Title: "two"}}); err != nil {
		t.Fatal(err)
	}
	if err := sb.Transition("PROJ-2", "Closed"); err != nil {
		t.Fatal(err)
	}
	var ve *ValidationError
	var ae *AuthError
	steps := []struct {
		name   string
		before func()
		key    string
		check  func(error) bool
		status string // of the key afterwards ("" when it does not exist)
	}{
		{"an open issue moves to Done", nil, "PROJ-1", func(err error) bool { return err == nil }, "Done"},
		{"again: nothing changes", nil, "PROJ-1", func(err error) bool { return err == nil }, "Done"},
		{"a done status other than Done is kept", nil, "PROJ-2", func(err error) bool { return err == nil }, "Closed"},
		{"an unknown key is refused", nil, "PROJ-9", func(err error) bool { return errors.As(err, &ve) && strings.Contains(ve.Message, "PROJ-9") }, ""},
		{"revoked credentials", func() { sb.SetAuth(false) }, "PROJ-1", func(err error) bool { return errors.As(err, &ae) && ae.Status == 401 }, "Done"},
		{"an injected fault comes first", func() { sb.SetAuth(true); sb.FailNext(OpClose, &RateLimitError{RetryAfter: time.Second}) }, "PROJ-1",
			func(err error) bool { var rl *RateLimitError; return errors.As(err, &rl) }, "Done"},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		err := sb.CloseIssue(ctx, st.key)
		if !st.check(err) {
			t.Fatalf("%s: err %v", st.name, err)
		}
		status := ""
		for _, is := range sb.Issues() {
			if is.Key == st.key {
				status = is.Status
				if !is.Done {
					t.Errorf("%s: %s not done", st.name, is.Key)
				}
			}
		}
		if status != st.status {
			t.Errorf("%s: %s is %q, want %q", st.name, st.key, status, st.status)
		}
	}
	if n := countOps(sb.Calls(), OpClose); n != len(steps) {
		t.Errorf("%d close calls logged, want %d", n, len(steps))
	}
}
