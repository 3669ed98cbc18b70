package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// ownRedis is a redis-server of one test's own, persisting every write to
// its append-only file before answering (appendonly yes, appendfsync
// always), as docs/app.md requires of the queue's Redis.
type ownRedis struct {
	t    *testing.T
	bin  string
	dir  string
	port int
	cmd  *exec.Cmd
}

func startOwnRedis(t *testing.T) *ownRedis {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but redis-server is not installed")
		}
		t.Skip("redis-server not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	r := &ownRedis{t: t, bin: bin, dir: t.TempDir(), port: port}
	r.start()
	t.Cleanup(func() { r.kill() })
	return r
}

func (r *ownRedis) url() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

// start runs the server on its port and directory (reading back its
// append-only file) and waits until it answers.
func (r *ownRedis) start() {
	r.t.Helper()
	r.cmd = exec.Command(r.bin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--dir", r.dir,
		"--appendonly", "yes", "--appendfsync", "always", "--save", "")
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	for range 200 {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", r.port), 100*time.Millisecond)
		if err == nil {
			c.Close()
			store, err := NewRedisStore(r.url(), RedisOptions{})
			if err == nil {
				perr := store.Ping(context.Background())
				_ = store.Close()
				if perr == nil {
					return
				}
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	r.t.Fatal("own redis-server did not answer within 5s")
}

// kill stops the server with SIGKILL: no shutdown, no final save.
func (r *ownRedis) kill() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		r.cmd = nil
	}
}

// TestStreamQueueRedisKilledMidLoadLosesNoAcknowledgedDelivery: Redis is
// killed (SIGKILL) and restarted from its append-only file while
// deliveries pour in. Every delivery answered 202 is processed; deliveries
// refused meanwhile are accepted (or already queued: 200) when sent again.
func TestStreamQueueRedisKilledMidLoadLosesNoAcknowledgedDelivery(t *testing.T) {
	rs := startOwnRedis(t)
	rec := newRecorder()
	rec.delay = time.Millisecond
	cfg := testConfig()
	cfg.QueueClaimIdle = time.Second
	_, srv, store := streamServer(t, rs.url(), "autopilot:", cfg, rec)

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
	rs.kill()
	time.Sleep(300 * time.Millisecond)
	rs.start()
	sent.Wait()

	accepted, refused := 0, 0
	for k, c := range codes {
		switch c {
		case http.StatusAccepted:
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
	t.Logf("%d accepted, %d refused while Redis was down (then accepted on redelivery)", accepted, refused)
	if refused == 0 {
		t.Error("no delivery was refused: Redis was not down during the load")
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
