package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/redisq"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
)

// appConfig is the configuration of App id on the Redis at u, with the
// default REDIS_PREFIX.
func appConfig(id int64, u string) settings.Config {
	cfg := testConfig()
	cfg.AppID = id
	cfg.RedisURL = u
	cfg.QueueClaimIdle = time.Second
	return cfg
}

// TestTwoAppsOnOneRedisNeverTakeEachOthersDeliveries: two Apps started on
// one Redis with the default REDIS_PREFIX each run every delivery sent to
// them, and none of the other's (a replica of another App would fail them
// with an installation it does not know and acknowledge them: lost until
// the right App's sweep, with nothing logged).
func TestTwoAppsOnOneRedisNeverTakeEachOthersDeliveries(t *testing.T) {
	rs := servertest.StartOwnRedis(t)
	recX, recY := newRecorder(), newRecorder()
	_, x := start(t, appConfig(101, rs.URL()), Deps{Processor: recX})
	_, y := start(t, appConfig(202, rs.URL()), Deps{Processor: recY})
	const n = 20
	for i := range n {
		if code, msg := issueDelivery(t, fmt.Sprintf("x-%d", i), 1+i).send(t, x.url); code != 202 {
			t.Fatalf("App X answered %d %s", code, msg)
		}
		if code, msg := issueDelivery(t, fmt.Sprintf("y-%d", i), 1+i).send(t, y.url); code != 202 {
			t.Fatalf("App Y answered %d %s", code, msg)
		}
	}
	eventually(t, "every delivery run by one App or the other", func() bool { return recX.total()+recY.total() == 2*n })
	for i := range n {
		if recX.count(fmt.Sprintf("y-%d", i)) != 0 || recY.count(fmt.Sprintf("x-%d", i)) != 0 {
			t.Fatalf("an App ran the other's delivery %d (X ran %d of Y's deliveries, Y %d of X's)", i, foreign(recX, "y-", n), foreign(recY, "x-", n))
		}
	}
}

func foreign(r *recorder, prefix string, n int) int {
	k := 0
	for i := range n {
		k += r.count(fmt.Sprintf("%s%d", prefix, i))
	}
	return k
}

// TestAppRefusesARedisPrefixAnotherAppUses: with REDIS_PREFIX set to the
// prefix another App's replicas use on that Redis, Serve refuses to start
// (bot serve exits 2), naming the prefix and the App that holds it.
func TestAppRefusesARedisPrefixAnotherAppUses(t *testing.T) {
	rs := servertest.StartOwnRedis(t)
	cfgX, cfgY := appConfig(101, rs.URL()), appConfig(202, rs.URL())
	cfgX.RedisPrefix, cfgY.RedisPrefix = "shared:", "shared:"
	start(t, cfgX, Deps{Processor: newRecorder()})
	// A second replica of the same App starts.
	start(t, cfgX, Deps{Processor: newRecorder()})
	// Serve records the App in its own goroutine: wait for it, or Y could
	// claim the prefix first.
	eventually(t, "App X recorded as the prefix's user", func() bool {
		v, err := rawRedis(t, rs.URL()).Get(context.Background(), "shared:app").Result()
		return err == nil && v == "101"
	})
	y, err := New(cfgY, Deps{Processor: newRecorder(), Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	err = y.Serve(ctx, ln)
	var taken *redisq.PrefixTakenError
	if !errors.As(err, &taken) {
		t.Fatalf("Serve = %v, want a PrefixTakenError", err)
	}
	for _, want := range []string{"REDIS_PREFIX", `"shared:"`, "101"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// TestReplicaLeavesAnotherAppsEntryAlone: an entry another App queued on
// this App's stream (both forced onto one prefix) is never run nor
// acknowledged: it stays in the stream for its own App, and it is logged
// and counted.
func TestReplicaLeavesAnotherAppsEntryAlone(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	other := servertest.OpenRedis(t, redisq.New, u, redisq.Options{Prefix: prefix, AppID: 999})
	ctx := context.Background()
	if err := other.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	d := issueDelivery(t, "theirs", 3)
	if res, err := other.Enqueue(ctx, job.Job{Delivery: d.id, Event: mustDecode(t, d.event, d.body), Received: time.Now()}, 100); err != nil || res != redisq.EnqueuedOK {
		t.Fatalf("enqueue = %d, %v", res, err)
	}
	rec := newRecorder()
	cfg := appConfig(101, "")
	cfg.QueueClaimIdle = 200 * time.Millisecond
	store := servertest.OpenRedis(t, redisq.New, u, redisq.Options{Prefix: prefix, AppID: 101, PollMax: 5 * time.Millisecond})
	s, srv := start(t, cfg, Deps{Processor: rec, Deduper: store, Locker: store, Queue: store})
	if code, _ := issueDelivery(t, "ours", 4).send(t, srv.url); code != 202 {
		t.Fatalf("ours answered %d", code)
	}
	eventually(t, "our delivery", func() bool { return rec.count("ours") == 1 })
	eventually(t, "their entry seen", func() bool { return value(t, s.metrics, "autopilot_queue_foreign_total") >= 1 })
	time.Sleep(3 * cfg.QueueClaimIdle) // claims of idle entries come round again
	if rec.count("theirs") != 0 {
		t.Fatal("ran another App's delivery")
	}
	eventually(t, "our entry acknowledged", func() bool { return streamStats(t, store).Length == 1 })
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	if n := streamStats(t, store).Length; n != 1 {
		t.Fatalf("stream holds %d entries, want 1: the other App's, unacknowledged", n)
	}
}

// TestAppFindsItsPrefixTakenOnceRedisAnswers: started while Redis was
// away, a replica checks the prefix once Redis answers; taken by another
// App, it refuses deliveries (503) and /readyz fails, naming that App.
func TestAppFindsItsPrefixTakenOnceRedisAnswers(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	if err := rawRedis(t, u).Set(context.Background(), prefix+"app", "999", 0).Err(); err != nil {
		t.Fatal(err)
	}
	px := startProxy(t, u)
	px.down()
	store, err := redisq.New(px.url, redisq.Options{Prefix: prefix, AppID: 101})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	_, srv := start(t, appConfig(101, ""), Deps{Processor: newRecorder(), Deduper: store, Locker: store, Queue: store})
	if code, _ := issueDelivery(t, "while-away", 1).send(t, srv.url); code != 503 {
		t.Fatalf("delivery with Redis away = %d, want 503", code)
	}
	px.up()
	eventually(t, "/readyz naming the other App", func() bool {
		code, body := get(t, srv.url, "/readyz")
		return code == 503 && strings.Contains(body, "App 999") && strings.Contains(body, "REDIS_PREFIX")
	})
	if code, _ := issueDelivery(t, "after", 1).send(t, srv.url); code != 503 {
		t.Fatalf("delivery on a prefix another App uses = %d, want 503", code)
	}
}
