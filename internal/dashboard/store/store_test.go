package store

import (
	"context"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/statetest"
)

// stores runs f on the memory store and, with AUTOPILOT_TEST_REDIS_URL, on
// Redis.
func stores(t *testing.T, f func(t *testing.T, s Store)) {
	t.Run("memory", func(t *testing.T) { f(t, NewMemory()) })
	t.Run("redis", func(t *testing.T) {
		r := servertest.OpenRedis(t, OpenRedis, servertest.RedisURL(t), servertest.Prefix(t))
		f(t, r)
	})
}

func pass(version int64, run state.RunStatus, listed bool) model.Pass {
	s := statetest.Sample()
	s.Version, s.Run = version, run
	return model.Pass{Installation: 1, Repo: "Octo-Org/hello-world", Issue: 12, State: s, Listed: listed}
}

func TestUpdaterKeepsTheNewestPassAndRemovesClosedIssues(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		u := Updater{Store: s}
		u.Passed(ctx, pass(7, state.RunAwaitingDecision, true))
		u.Passed(ctx, pass(6, state.RunInProgress, true)) // a late, older pass
		r, ok, err := s.Get(ctx, "octo-org/hello-world#12")
		if err != nil || !ok || r.Status != state.RunAwaitingDecision || r.Version != 7 {
			t.Fatalf("row = %+v %v %v", r, ok, err)
		}
		u.Passed(ctx, pass(8, state.RunStopped, false)) // closed
		if rows, err := s.List(ctx); err != nil || len(rows) != 0 {
			t.Fatalf("after close: %v rows, %v", len(rows), err)
		}
		u.Passed(ctx, pass(7, state.RunAwaitingDecision, true)) // stale again
		if _, ok, _ := s.Get(ctx, "octo-org/hello-world#12"); ok {
			t.Fatal("a pass older than the removal brought the row back")
		}
		u.Passed(ctx, pass(9, state.RunInProgress, true)) // reopened, labelled
		if r, ok, _ := s.Get(ctx, "octo-org/hello-world#12"); !ok || r.Version != 9 {
			t.Fatalf("reopened row = %+v %v", r, ok)
		}
		u.Passed(ctx, model.Pass{Repo: "octo-org/hello-world", Issue: 12}) // run and label gone
		if _, ok, _ := s.Get(ctx, "octo-org/hello-world#12"); ok {
			t.Fatal("a pass without state left the row")
		}
	})
}

func TestListSortsByRepositoryThenIssue(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		for _, k := range []struct {
			repo string
			n    int
		}{{"b/x", 2}, {"a/y", 10}, {"a/y", 9}} {
			if _, err := s.Put(ctx, model.Row{Repo: k.repo, Issue: k.n, Version: 1}); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			got = append(got, r.Key())
		}
		if len(got) != 3 || got[0] != "a/y#9" || got[1] != "a/y#10" || got[2] != "b/x#2" {
			t.Errorf("order = %v", got)
		}
	})
}

func TestGetHasTheTimeline(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		Updater{Store: s}.Passed(ctx, pass(3, state.RunAwaitingDecision, true))
		r, ok, err := s.Get(ctx, "octo-org/hello-world#12")
		if err != nil || !ok || len(r.Timeline) != 5 || r.Wait == nil {
			t.Fatalf("Get = %d timeline items, wait %v, %v %v", len(r.Timeline), r.Wait, ok, err)
		}
	})
}

func TestUpdaterLinksIssuesOnItsGitHub(t *testing.T) {
	m := NewMemory()
	p := pass(1, state.RunAwaitingDecision, true)
	Updater{Store: m, WebURL: "https://ghe.example/"}.Passed(context.Background(), p)
	r, _, _ := m.Get(context.Background(), "octo-org/hello-world#12")
	if r.URL != "https://ghe.example/Octo-Org/hello-world/issues/12" {
		t.Errorf("url = %q", r.URL)
	}
}
