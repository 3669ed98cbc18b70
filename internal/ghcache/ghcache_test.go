package ghcache

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	gh "github.com/autopilot-dev/autopilot/internal/github"
	"github.com/autopilot-dev/autopilot/internal/github/transport"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
)

func open(t *testing.T, o Options) *Redis {
	t.Helper()
	o.Prefix = servertest.Prefix(t)
	return servertest.OpenRedis(t, Open, servertest.RedisURL(t), o)
}

// TestTwoReplicasShareConditionalReads: two replicas (each its own Redis
// connection, its own token of installation 7) read one issue; the second
// read is a 304 the fake does not charge.
func TestTwoReplicasShareConditionalReads(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	lim := fakegithub.GitHubLimits()
	g := fakegithub.New(fakegithub.Options{Clock: clock.Now, Limits: &lim})
	t.Cleanup(g.Close)
	const repo = "octo/repo"
	if err := g.AddRepo(repo); err != nil {
		t.Fatal(err)
	}
	n, err := g.CreateIssue(repo, "alice", "shared", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	prefix := servertest.Prefix(t)
	var clients []*gh.Client
	for _, tok := range []string{"ghs_replica_a", "ghs_replica_b"} {
		g.AddToken(tok, fakegithub.Identity{Login: "autopilot[bot]", Type: "Bot", AppID: 99, InstallationID: 7})
		r := servertest.OpenRedis(t, Open, servertest.RedisURL(t), Options{Prefix: prefix})
		c, err := gh.New(gh.Options{Repo: repo, Token: tok, BaseURL: g.URL(), Now: clock.Now, Sleep: clock.Sleep,
			MinMutationGap: -1, Cache: r.For(7)})
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	ctx := context.Background()
	if _, err := clients[0].GetIssue(ctx, n); err != nil {
		t.Fatal(err)
	}
	is, err := clients[1].GetIssue(ctx, n)
	if err != nil || is.Title != "shared" {
		t.Fatalf("replica b: %+v, %v", is, err)
	}
	st := g.LimitStats()
	if st.NotModified != 1 || st.ByInstallation[7].Used != 1 || clients[1].Stats().ConditionalHits != 1 {
		t.Fatalf("304s %d, budget used %d, b's hits %d; want 1, 1, 1", st.NotModified, st.ByInstallation[7].Used, clients[1].Stats().ConditionalHits)
	}
}

func TestEntriesRoundTripCompressedWithATTL(t *testing.T) {
	r := open(t, Options{TTL: time.Minute})
	c := r.For(7)
	ctx := context.Background()
	body := []byte(strings.Repeat(`{"id":1,"body":"same text"},`, 200))
	h := http.Header{"Content-Type": {"application/json"}, "Link": {`<https://x/?page=2>; rel="next"`}}
	c.Put(ctx, "https://api/x ", transport.Entry{ETag: `W/"a"`, Header: h, Body: body})
	got, ok := c.Get(ctx, "https://api/x ")
	if !ok || got.ETag != `W/"a"` || string(got.Body) != string(body) || got.Header.Get("Link") != h.Get("Link") {
		t.Fatalf("got %v %+v", ok, got)
	}
	if _, ok := r.For(8).Get(ctx, "https://api/x "); ok {
		t.Fatal("installation 8 sees installation 7's entry")
	}
	st := r.Stats(ctx)
	if st.Entries != 1 || st.Bytes <= 0 || st.Bytes >= len(body)/4 {
		t.Fatalf("stats %+v: want one entry stored compressed (body %d bytes)", st, len(body))
	}
	ttl := r.ttlOf(ctx, 7, "https://api/x ")
	if ttl <= 0 || ttl > time.Minute {
		t.Fatalf("ttl %v", ttl)
	}
	c.Forget(ctx, "https://api/x ")
	if _, ok := c.Get(ctx, "https://api/x "); ok {
		t.Fatal("forgotten entry still there")
	}
}

func TestTheCacheIsBoundedInEntriesAndSize(t *testing.T) {
	r := open(t, Options{MaxEntries: 2, MaxBody: 512})
	c := r.For(7)
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c"} {
		c.Put(ctx, k, transport.Entry{ETag: k, Body: []byte(k)})
	}
	if _, ok := c.Get(ctx, "a"); ok {
		t.Fatal("the oldest entry outlived the bound")
	}
	for _, k := range []string{"b", "c"} {
		if _, ok := c.Get(ctx, k); !ok {
			t.Fatalf("entry %s lost", k)
		}
	}
	big := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(1, 2)) // random: does not compress below 512 bytes
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	c.Put(ctx, "big", transport.Entry{ETag: "big", Body: big})
	if _, ok := c.Get(ctx, "big"); ok {
		t.Fatal("an answer above MaxBody was kept")
	}
	if st := r.Stats(ctx); st.Entries != 2 {
		t.Fatalf("stats %+v", st)
	}
}

func TestAGarbledEntryIsAMiss(t *testing.T) {
	r := open(t, Options{})
	ctx := context.Background()
	if err := r.rdb.Set(ctx, r.entryKey(7, "k"), "not gzip", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.For(7).Get(ctx, "k"); ok {
		t.Fatal("a garbled entry was served")
	}
}
