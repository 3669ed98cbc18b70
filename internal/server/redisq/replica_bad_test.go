package redisq

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
	"github.com/autopilot-dev/autopilot/internal/server/workq"
)

// TestAnUnreadableParkedEntryGivesItsInstallationsSlotBack: installation
// 7 fills its share of the replica, then an entry of 7 that cannot be
// decoded is parked behind it, then more of 7. Once everything ran, the
// replica holds nothing for any installation: the dropped entry gave back
// installation 7's slot, not installation 0's (which left 7 one slot short
// for good, each bad entry another).
func TestAnUnreadableParkedEntryGivesItsInstallationsSlotBack(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	a := servertest.OpenRedis(t, New, u, Options{Prefix: prefix, Owner: "a", LockTTL: time.Minute})
	ctx := context.Background()
	if err := a.EnsureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	enqueue := func(d string, issue int) {
		ev := &ghevent.Event{Name: "issues", Action: "labeled", Repo: "o/r", Issue: issue, Installation: 7}
		if res, err := a.Enqueue(ctx, job.Job{Delivery: d, Event: ev, Received: time.Now()}, 10000); err != nil || res != EnqueuedOK {
			t.Fatalf("enqueue %s = %d, %v", d, res, err)
		}
	}
	const workers = 1
	share := workers + InstallationAhead
	good := 0
	for range share {
		enqueue(fmt.Sprintf("d-%d", good), good+1)
		good++
	}
	// The bad entry: our format, installation 7, an event that is not JSON.
	if err := a.rdb.XAdd(ctx, &redis.XAddArgs{Stream: a.streamKey(), Values: []any{
		fieldVersion, entryVersion, fieldApp, 0, fieldInst, 7, fieldDelivery, "bad", fieldEvent, "issues",
		fieldReceived, time.Now().UnixMilli(), fieldJSON, "{not json"}}).Err(); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		enqueue(fmt.Sprintf("d-%d", good), good+1)
		good++
	}
	local := workq.New(10, nil)
	ra := testReplica(a, time.Minute, local, nil)
	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	go ra.ReadLoop(readCtx)
	go ra.AckLoop(readCtx)
	for ran := 0; ran < good; ran++ {
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		w, ok := local.Take(tctx)
		cancel()
		if !ok {
			t.Fatalf("nothing to start after %d of %d jobs", ran, good)
		}
		if ran == 0 {
			// The whole stream read: the share held, the bad entry and
			// the 5 after it parked.
			waitFor(t, func() bool { return ra.parkedLen() == 6 })
		}
		ra.Finish(ctx, w, nil)
		local.Done(w.Key)
	}
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		ra.mu.Lock()
		holding, parked := maps.Clone(ra.holding), ra.parkedN
		ra.mu.Unlock()
		if len(holding) == 0 && parked == 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("after every job ran the replica still counts %v entries per installation (%d parked), want none", holding, parked)
		}
	}
}
