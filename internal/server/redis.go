package server

import (
	"github.com/redis/go-redis/v9"

	"github.com/autopilot-dev/autopilot/internal/server/redisq"
)

// The Redis store lives in package redisq; these names spare the callers
// that build a Server with one an import of redisq.
type (
	// RedisStore is a Deduper, Locker and work queue on one Redis.
	RedisStore = redisq.Store
	// RedisOptions tunes a RedisStore.
	RedisOptions = redisq.Options
)

// NewRedisStore connects to the redis:// (or rediss://) URL.
func NewRedisStore(url string, opts RedisOptions) (*RedisStore, error) {
	return redisq.New(url, opts)
}

// NewRedisStoreClient wraps an existing client; Close leaves it open.
func NewRedisStoreClient(rdb *redis.Client, opts RedisOptions) *RedisStore {
	return redisq.NewClient(rdb, opts)
}
