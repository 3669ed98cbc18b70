package server

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/servertest"
)

// TestStreamDeliveryRoundTrips counts the script and transaction round
// trips one delivery costs on the Redis work queue, one delivery at a
// time: its append, its issue's lease, and one step at the end that
// releases the lease and acknowledges the entry (reads are not counted:
// an idle reader's blocking reads come back empty every half second).
func TestStreamDeliveryRoundTrips(t *testing.T) {
	rs := servertest.StartOwnRedis(t)
	u, prefix := rs.URL(), servertest.Prefix(t)
	rec := newRecorder()
	cfg := testConfig()
	cfg.Workers = 1
	cfg.QueueClaimIdle = time.Minute // no renewal of held entries during the test
	cfg.LockTTL = time.Minute        // no lease renewal either
	_, srv, _ := streamServer(t, u, prefix, cfg, rec)
	rdb := rawRedis(t, u)
	deliver := func(id string, issue int) {
		if code, _ := issueDelivery(t, id, issue).send(t, srv.url); code != http.StatusAccepted {
			t.Fatalf("%s answered %d", id, code)
		}
		eventually(t, id+" processed and acknowledged", func() bool {
			n, err := rdb.XLen(context.Background(), prefix+"queue").Result()
			return rec.count(id) == 1 && err == nil && n == 0
		})
	}
	deliver("warm-up", 1) // loads the scripts
	before := servertest.CommandCalls(t, u)
	const n = 10
	for i := range n {
		deliver(fmt.Sprintf("d-%d", i), 2+i)
	}
	after := servertest.CommandCalls(t, u)
	if got := trips(after) - trips(before); got != 3*n {
		t.Errorf("%d script and transaction round trips for %d deliveries, want %d (append, lease, release-and-acknowledge); calls before %v after %v",
			got, n, 3*n, before, after)
	}

	// A pull request linking two issues locks three: still one round
	// trip for the leases when all three are free.
	var counted map[string]int64
	for i := -1; i < n; i++ { // pr--1 warms up the script
		if i == 0 {
			counted = servertest.CommandCalls(t, u)
		}
		id := fmt.Sprintf("pr-%d", i)
		body, err := servertest.WithIssue(payloadWithBody(t, "pull_request.edited", "Fixes #1, fixes #2"), 100+i)
		if err != nil {
			t.Fatal(err)
		}
		if code, _ := (delivery{event: "pull_request", id: id, body: body}).send(t, srv.url); code != http.StatusAccepted {
			t.Fatalf("%s answered %d", id, code)
		}
		eventually(t, id+" processed and acknowledged", func() bool {
			n, err := rdb.XLen(context.Background(), prefix+"queue").Result()
			return rec.count(id) == 1 && err == nil && n == 0
		})
	}
	after = servertest.CommandCalls(t, u)
	if got := trips(after) - trips(counted); got != 3*n {
		t.Errorf("%d script and transaction round trips for %d pull-request deliveries locking 3 issues each, want %d (append, leases, release-and-acknowledge)",
			got, n, 3*n)
	}
}

// trips counts the script and transaction round trips in commandstats.
func trips(m map[string]int64) int64 { return m["evalsha"] + m["eval"] + m["exec"] }
