package servertest

import (
	"strings"
	"testing"
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
