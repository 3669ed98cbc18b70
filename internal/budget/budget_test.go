package budget

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/servertest"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func headers(limit, remaining int, reset time.Time, resource string) http.Header {
	h := http.Header{}
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", resource)
	return h
}

func TestBackgroundWaitsAtTheReserveWhileInteractiveProceeds(t *testing.T) {
	now := t0
	b := New(NewMemory(), Options{Reserve: 0.2, Now: func() time.Time { return now }})
	g := b.For(7)
	ctx := context.Background()
	bg := WithClass(ctx, Background)
	reset := t0.Add(40 * time.Minute)
	g.Observe(ctx, headers(5000, 1001, reset, "core"), time.Time{})
	if wait, why := g.Admit(bg, false); wait != 0 {
		t.Fatalf("background above the reserve waits %v (%s)", wait, why)
	}
	g.Observe(ctx, headers(5000, 1000, reset, "core"), time.Time{})
	wait, why := g.Admit(bg, false)
	if wait != 40*time.Minute || !strings.Contains(why, "reserve") || !strings.Contains(why, "1000 of 5000") {
		t.Fatalf("background at the reserve: wait %v, why %q", wait, why)
	}
	if w := b.Waiting(); len(w) != 1 || w[0].Installation != 7 || w[0].Why != why || !w[0].Until.Equal(reset) {
		t.Fatalf("waiting %+v", w)
	}
	if wait, why := g.Admit(ctx, false); wait != 0 {
		t.Fatalf("interactive at the reserve waits %v (%s)", wait, why)
	}
	if wait, _ := b.For(8).Admit(bg, false); wait != 0 {
		t.Fatalf("another installation's background waits %v", wait)
	}
	g.Observe(ctx, headers(5000, 0, reset, "core"), time.Time{})
	if wait, _ := g.Admit(ctx, false); wait != 40*time.Minute {
		t.Fatalf("interactive with nothing left: wait %v, want until the reset", wait)
	}
	// GraphQL's points are a budget of their own.
	if wait, _ := g.Admit(bg, true); wait != 0 {
		t.Fatalf("GraphQL with nothing seen waits %v", wait)
	}
	now = reset.Add(time.Second) // a new window: the old figures say nothing
	if wait, _ := g.Admit(bg, false); wait != 0 {
		t.Fatalf("after the reset: wait %v", wait)
	}
	w := b.Waiting()
	if len(w) != 0 {
		t.Fatalf("waiting after the reset: %v", w)
	}
}

func TestObservationsMerge(t *testing.T) {
	now := t0
	b := New(NewMemory(), Options{Now: func() time.Time { return now }})
	g := b.For(7)
	ctx := context.Background()
	reset := t0.Add(time.Hour)
	g.Observe(ctx, headers(5000, 300, reset, "core"), time.Time{})
	g.Observe(ctx, headers(5000, 400, reset, "core"), time.Time{}) // an older answer arriving late
	g.Observe(ctx, headers(5000, 4000, reset.Add(-time.Hour), "core"), time.Time{})
	g.Observe(ctx, headers(5000, 4990, reset, "graphql"), time.Time{})
	r, err := b.store.Load(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if r.Core.Remaining != 300 || r.Core.Limit != 5000 || !r.Core.Reset.Equal(reset) || r.GraphQL.Remaining != 4990 {
		t.Fatalf("record %+v", r)
	}
}

// TestSecondaryNotBeforeIsSharedAcrossReplicas: a retry-after one replica
// was told holds the other replica's requests of that installation.
func TestSecondaryNotBeforeIsSharedAcrossReplicas(t *testing.T) {
	url, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	now := t0
	clock := func() time.Time { return now }
	var replicas []*Budget
	for range 2 {
		s := servertest.OpenRedis(t, OpenRedis, url, RedisOptions{Prefix: prefix, Now: clock})
		replicas = append(replicas, New(s, Options{Now: clock}))
	}
	ctx := context.Background()
	replicas[0].For(7).Observe(ctx, nil, t0.Add(30*time.Second))
	wait, why := replicas[1].For(7).Admit(ctx, false)
	if wait != 30*time.Second || !strings.Contains(why, "secondary") {
		t.Fatalf("replica b: wait %v, why %q", wait, why)
	}
	if wait, _ := replicas[1].For(8).Admit(ctx, false); wait != 0 {
		t.Fatalf("installation 8 waits %v", wait)
	}
	// A shorter hold does not shorten a longer one.
	replicas[1].For(7).Observe(ctx, nil, t0.Add(5*time.Second))
	if wait, _ := replicas[0].For(7).Admit(ctx, false); wait != 30*time.Second {
		t.Fatalf("after a shorter hold: wait %v", wait)
	}
	// The primary figures are shared too.
	replicas[0].For(7).Observe(ctx, headers(5000, 10, t0.Add(time.Hour), "core"), time.Time{})
	now = t0.Add(31 * time.Second)
	if wait, _ := replicas[1].For(7).Admit(WithClass(ctx, Background), false); wait != time.Hour-31*time.Second {
		t.Fatalf("replica b's background: wait %v", wait)
	}
}
