package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/redisq"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
)

func TestRedisLockerExclusiveFencedOwnerOnly(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	a := servertest.OpenRedis(t, redisq.New, u, redisq.Options{Prefix: prefix, Owner: "a", PollMax: 10 * time.Millisecond})
	b := servertest.OpenRedis(t, redisq.New, u, redisq.Options{Prefix: prefix, Owner: "b", PollMax: 10 * time.Millisecond})
	lockerContract(t, a, b)
}

func TestRedisOutageRefusesDeliveriesAndRecovers(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	px := startProxy(t, u)
	store := servertest.OpenRedis(t, redisq.New, px.url, redisq.Options{Prefix: prefix, Owner: "outage"})
	rec := newRecorder()
	_, srv := start(t, testConfig(), Deps{Processor: rec, Deduper: store, Locker: store})
	if code, _ := get(t, srv.url, "/readyz"); code != http.StatusOK {
		t.Fatalf("readyz = %d with Redis up", code)
	}
	if code, _ := issueDelivery(t, "r-1", 1).send(t, srv.url); code != http.StatusAccepted {
		t.Fatalf("delivery with Redis up = %d", code)
	}
	rec.waitDone(t, 1)

	px.down()
	if code, _ := get(t, srv.url, "/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("readyz = %d with Redis away, want 503", code)
	}
	code, retry := issueDelivery(t, "r-2", 2).send(t, srv.url)
	if code != http.StatusServiceUnavailable || retry == "" {
		t.Fatalf("delivery with Redis away = %d Retry-After %q, want 503 with Retry-After", code, retry)
	}

	px.up()
	eventually(t, "readyz after Redis returns", func() bool { c, _ := get(t, srv.url, "/readyz"); return c == http.StatusOK })
	if code, _ := issueDelivery(t, "r-2", 2).send(t, srv.url); code != http.StatusAccepted {
		t.Fatalf("redelivery after Redis returned = %d, want 202", code)
	}
	rec.waitDone(t, 1)
	if rec.count("r-2") != 1 {
		t.Fatal("redelivered job not processed")
	}
}

// TestTwoReplicasOneRedis sends every delivery to two replicas sharing one
// Redis at the same time, with many deliveries per issue: each delivery must
// be processed exactly once, jobs on one issue must never overlap (across
// replicas), and fencing tokens must grow per issue in processing order.
func TestTwoReplicasOneRedis(t *testing.T) {
	u, prefix := servertest.RedisURL(t), servertest.Prefix(t)
	rec := newRecorder()
	rec.delay = 2 * time.Millisecond
	var fenceMu sync.Mutex
	lastToken := map[int]int64{}
	var fenceErrs []string
	rec.hook = func(ctx context.Context, job job.Job) error {
		l, ok := LeaseFor(ctx, job.Event.Repo, job.Event.Issue)
		if !ok {
			return errors.New("job ran without its issue lease")
		}
		fenceMu.Lock()
		defer fenceMu.Unlock()
		if l.Token <= lastToken[job.Event.Issue] {
			fenceErrs = append(fenceErrs, fmt.Sprintf("issue %d: token %d after %d", job.Event.Issue, l.Token, lastToken[job.Event.Issue]))
		}
		lastToken[job.Event.Issue] = l.Token
		return nil
	}
	var replicas []running
	for i := range 2 {
		store := servertest.OpenRedis(t, redisq.New, u, redisq.Options{Prefix: prefix, Owner: fmt.Sprintf("replica-%d", i), PollMax: 5 * time.Millisecond})
		cfg := testConfig()
		cfg.QueueSize, cfg.Workers = 512, 4
		s, err := New(cfg, Deps{Processor: rec, Deduper: store, Locker: store, Logger: quietLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, serve(t, s))
	}

	const deliveries, issues = 120, 5
	type answer struct {
		id    string
		codes [2]int
	}
	answers := make([]answer, deliveries)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range deliveries {
		d := issueDelivery(t, fmt.Sprintf("rep-%03d", i), 1+i%issues)
		answers[i].id = d.id
		for r := range replicas {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				answers[i].codes[r], _ = d.send(t, replicas[r].url)
			}()
		}
	}
	wg.Wait()
	for _, a := range answers {
		c := a.codes
		if !(c == [2]int{202, 200} || c == [2]int{200, 202}) {
			t.Errorf("%s answered %v, want one 202 and one 200", a.id, c)
		}
	}
	eventually(t, "every delivery processed", func() bool { return rec.total() >= deliveries })
	for _, r := range replicas {
		if err := r.stop(); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range answers {
		if n := rec.count(a.id); n != 1 {
			t.Errorf("%s processed %d times, want exactly once", a.id, n)
		}
	}
	if rec.overlaps != 0 {
		t.Errorf("%d jobs on one issue overlapped across replicas", rec.overlaps)
	}
	if len(fenceErrs) > 0 {
		t.Errorf("fencing tokens did not grow per issue: %v", fenceErrs)
	}
}

// proxy is a TCP relay to Redis that can be cut and restored, to play an
// outage without touching the shared test Redis.
type proxy struct {
	t      *testing.T
	target string
	addr   string
	url    string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

func startProxy(t *testing.T, rawURL string) *proxy {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, target: u.Host}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	u.Host = p.addr
	p.url = u.String()
	p.serve(ln)
	t.Cleanup(p.down)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, r)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(r, c); r.Close() }()
			go func() { _, _ = io.Copy(c, r); c.Close() }()
		}
	}()
}

// down closes the listener and every relayed connection.
func (p *proxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// up listens again on the same address.
func (p *proxy) up() {
	var ln net.Listener
	var err error
	for range 50 {
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		p.t.Fatalf("proxy up: %v", err)
	}
	p.serve(ln)
}

func TestNewOpensRedisFromConfig(t *testing.T) {
	cfg := testConfig()
	cfg.RedisURL = servertest.RedisURL(t)
	rec := newRecorder()
	s, err := New(cfg, Deps{Processor: rec, Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.deps.Deduper.(*redisq.Store); !ok {
		t.Fatalf("Deduper = %T, want the RedisStore from REDIS_URL", s.deps.Deduper)
	}
	if _, ok := s.deps.Locker.(*redisq.Store); !ok {
		t.Fatalf("Locker = %T, want the RedisStore from REDIS_URL", s.deps.Locker)
	}
	srv := serve(t, s)
	if code, _ := get(t, srv.url, "/readyz"); code != http.StatusOK {
		t.Fatalf("readyz = %d", code)
	}
	id := fmt.Sprintf("cfg-%d", time.Now().UnixNano())
	if code, _ := issueDelivery(t, id, 1).send(t, srv.url); code != http.StatusAccepted {
		t.Fatalf("delivery = %d", code)
	}
	rec.waitDone(t, 1)
}
