package servertest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// RedisURL is the Redis the tests share (AUTOPILOT_TEST_REDIS_URL, e.g.
// redis://127.0.0.1:6390/0; .ci/run starts one). Without it the test is
// skipped, except in CI (CI=true), where it fails: CI must run the Redis
// tests.
func RedisURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("AUTOPILOT_TEST_REDIS_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but AUTOPILOT_TEST_REDIS_URL is empty: the Redis tests must run in CI")
		}
		t.Skip("AUTOPILOT_TEST_REDIS_URL not set (e.g. redis://127.0.0.1:6390/0)")
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
