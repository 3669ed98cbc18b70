package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/statetest"
)

// TestRedisListDecodesOnlyChangedRows: a second List decodes no row; a
// row put since (by this or another replica's client) is decoded again
// and read as put; a removed row is gone and forgotten.
func TestRedisListDecodesOnlyChangedRows(t *testing.T) {
	url, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	r := servertest.OpenRedis(t, OpenRedis, url, prefix)
	other := servertest.OpenRedis(t, OpenRedis, url, prefix)
	ctx := context.Background()
	for n := 1; n <= 3; n++ {
		if _, err := r.Put(ctx, model.Row{Repo: "a/b", Issue: n, Version: 1, Title: "v1"}); err != nil {
			t.Fatal(err)
		}
	}
	list := func() []model.Row {
		t.Helper()
		rows, err := r.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	list()
	before := r.decoded.Load()
	list()
	if got := r.decoded.Load() - before; got != 0 {
		t.Errorf("an unchanged List decoded %d rows, want 0", got)
	}
	if _, err := other.Put(ctx, model.Row{Repo: "a/b", Issue: 2, Version: 2, Title: "v2"}); err != nil {
		t.Fatal(err)
	}
	if err := other.Remove(ctx, model.Key("a/b", 3), 2); err != nil {
		t.Fatal(err)
	}
	before = r.decoded.Load()
	rows := list()
	if got := r.decoded.Load() - before; got != 1 {
		t.Errorf("List after one put decoded %d rows, want 1", got)
	}
	if len(rows) != 2 || rows[1].Title != "v2" || rows[1].Version != 2 {
		t.Errorf("List = %+v, want #1 v1 and #2 v2", rows)
	}
	if r.cachedRows() != 2 {
		t.Errorf("the cache keeps %d rows, want 2 (the removed one forgotten)", r.cachedRows())
	}
}

// BenchmarkRedisListThousandRows lists 1,000 rows as the list page does
// (each load after the first decodes only what changed).
func BenchmarkRedisListThousandRows(b *testing.B) {
	r := servertest.OpenRedis(b, OpenRedis, servertest.RedisURL(b), servertest.Prefix(b))
	for i := 1; i <= 1000; i++ {
		s := statetest.Sample()
		s.Repo, s.Issue, s.Title, s.Version = fmt.Sprintf("acme/repo-%02d", i%25), i, fmt.Sprintf("Generated issue %d", i), 1
		s.Run = state.RunAwaitingDecision
		Updater{Store: r}.Passed(context.Background(), model.Pass{Installation: 1, Repo: s.Repo, Issue: s.Issue, State: s, Listed: true})
	}
	for b.Loop() {
		if _, err := r.List(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
