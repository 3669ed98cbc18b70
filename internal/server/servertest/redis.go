package servertest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// The skip reasons of a test that needs Redis and finds none.
const (
	redisMissing = "needs Redis: set AUTOPILOT_TEST_REDIS_URL (e.g. redis://127.0.0.1:6390/0 after " +
		"`redis-server --port 6390 --save '' --appendonly no --daemonize yes`; .ci/run starts one)"
	redisServerMissing = "needs redis-server on PATH (apt-get install redis-server; .ci/run installs it)"
)

// RedisURL is the Redis the tests share (AUTOPILOT_TEST_REDIS_URL, e.g.
// redis://127.0.0.1:6390/0; .ci/run starts one). Without it the test is
// skipped, saying what to set, whatever CI says: CI's script installs and
// starts Redis itself, so a skip there shows in its -v output, not as a
// failure of a machine that has none.
func RedisURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("AUTOPILOT_TEST_REDIS_URL")
	if u == "" {
		t.Skip(redisMissing)
	}
	return u
}

// Prefix is a Redis key prefix of one test's own, so tests sharing a
// server never see each other's keys.
func Prefix(t testing.TB) string {
	return fmt.Sprintf("autopilot-test:%s:%d:", t.Name(), time.Now().UnixNano())
}

// redisStore is what OpenRedis needs of a store on Redis.
type redisStore interface {
	Ping(context.Context) error
	Close() error
}

// OpenRedis opens a store with open(url, opts), closes it when the test
// ends, and fails the test when that Redis does not answer.
func OpenRedis[O any, S redisStore](t testing.TB, open func(string, O) (S, error), url string, opts O) S {
	t.Helper()
	s, err := open(url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Ping(context.Background()); err != nil {
		t.Fatalf("test Redis unreachable: %v", err)
	}
	return s
}
