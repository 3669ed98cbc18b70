package server

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/servertest"
)

// TestStreamQueueRedisKilledMidLoadLosesNoAcknowledgedDelivery: Redis is
// killed (SIGKILL) and restarted from its append-only file while
// deliveries pour in. Every delivery answered 202 is processed; deliveries
// refused meanwhile are accepted (or already queued: 200) when sent again.
func TestStreamQueueRedisKilledMidLoadLosesNoAcknowledgedDelivery(t *testing.T) {
	rs := servertest.StartOwnRedis(t)
	rec := newRecorder()
	rec.delay = time.Millisecond
	cfg := testConfig()
	cfg.QueueClaimIdle = time.Second
	_, srv, store := streamServer(t, rs.URL(), "autopilot:", cfg, rec)

	const n = 600
	codes := make([]int, n)
	var sent sync.WaitGroup
	var next sync.Mutex
	i := 0
	send := func() {
		for {
			next.Lock()
			k := i
			i++
			next.Unlock()
			if k >= n {
				return
			}
			req := issueDelivery(t, fmt.Sprintf("k-%d", k), 1+k%9).request(t, srv.url)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				codes[k] = -1
				continue
			}
			resp.Body.Close()
			codes[k] = resp.StatusCode
			time.Sleep(time.Millisecond)
		}
	}
	for range 8 {
		sent.Go(send)
	}
	eventually(t, "a third of the load sent", func() bool { next.Lock(); defer next.Unlock(); return i >= n/3 })
	rs.Kill()
	next.Lock()
	atKill := i
	next.Unlock()
	time.Sleep(time.Second)
	rs.Start()
	sent.Wait()

	accepted, refused := 0, 0
	for k, c := range codes {
		switch c {
		case http.StatusAccepted, http.StatusOK:
			// 200: queued by an attempt whose answer the connection lost,
			// then found recorded by the client's retry.
			accepted++
		case http.StatusServiceUnavailable:
			refused++
			// GitHub's redelivery (the server's redelivery job asks for it).
			eventually(t, "the refused delivery accepted again", func() bool {
				c, _ := issueDelivery(t, fmt.Sprintf("k-%d", k), 1+k%9).send(t, srv.url)
				codes[k] = c
				return c == http.StatusAccepted || c == http.StatusOK
			})
		default:
			t.Fatalf("k-%d answered %d", k, c)
		}
	}
	t.Logf("Redis killed after %d of %d deliveries; %d accepted, %d refused while it was down (then accepted on redelivery)",
		atKill, n, accepted, refused)
	if atKill >= n {
		t.Error("Redis was killed after the load, not during it")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var missing []string
		for k := range n {
			if rec.count(fmt.Sprintf("k-%d", k)) == 0 {
				missing = append(missing, fmt.Sprintf("k-%d (%d)", k, codes[k]))
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			st := streamStats(t, store)
			t.Fatalf("%d queued deliveries never processed (answer in brackets): %v; stream %+v", len(missing), missing, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	dups := 0
	for k := range n {
		if rec.count(fmt.Sprintf("k-%d", k)) > 1 {
			dups++
		}
	}
	if dups > 0 {
		t.Errorf("%d deliveries processed twice by the only replica", dups)
	}
}
