package servertest

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestRedisTestsSkipWithoutRedisWhateverCISays: without a test Redis
// (AUTOPILOT_TEST_REDIS_URL unset, redis-server not on PATH) a test that
// needs one is skipped with a reason that says what to set, with CI=true
// as without it: CI's own script (.ci/run) installs and starts Redis, and a
// machine without one must not fail a build on it.
func TestRedisTestsSkipWithoutRedisWhateverCISays(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Run("CI="+ci+"/url", func(t *testing.T) {
			t.Setenv("CI", ci)
			t.Setenv("AUTOPILOT_TEST_REDIS_URL", "")
			var sub *testing.T
			t.Run("needs redis", func(t *testing.T) {
				sub = t
				RedisURL(t)
				t.Error("RedisURL returned without a Redis")
			})
			if !sub.Skipped() {
				t.Fatal("not skipped")
			}
		})
		t.Run("CI="+ci+"/own", func(t *testing.T) {
			t.Setenv("CI", ci)
			t.Setenv("PATH", t.TempDir())
			var sub *testing.T
			t.Run("needs redis-server", func(t *testing.T) {
				sub = t
				StartOwnRedis(t)
				t.Error("StartOwnRedis returned without redis-server")
			})
			if !sub.Skipped() {
				t.Fatal("not skipped")
			}
		})
	}
	if !strings.Contains(redisMissing, "AUTOPILOT_TEST_REDIS_URL") || !strings.Contains(redisServerMissing, "redis-server") {
		t.Fatalf("skip reasons do not say what is missing: %q, %q", redisMissing, redisServerMissing)
	}
}

// TestCommandStatsCountCallsAndTime: 200 SETs show as 200 more calls and
// some more time in INFO commandstats, read per command.
func TestCommandStatsCountCallsAndTime(t *testing.T) {
	rs := StartOwnRedis(t)
	opts, err := redis.ParseURL(rs.URL())
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	calls0, usec0 := CommandCalls(t, rs.URL())["set"], CommandTime(t, rs.URL())["set"]
	for i := range 200 {
		if err := rdb.Set(context.Background(), "k", i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if d := CommandCalls(t, rs.URL())["set"] - calls0; d != 200 {
		t.Errorf("set calls grew by %d, want 200", d)
	}
	if d := CommandTime(t, rs.URL())["set"] - usec0; d <= 0 {
		t.Errorf("set time grew by %d µs after 200 calls, want more than 0", d)
	}
}
