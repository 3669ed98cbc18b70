// Package redisurl opens a Redis client for side stores that must never
// stall a request: the conditional-read cache and the API budget.
package redisurl

import (
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Dial parses the redis:// (or rediss://) URL and gives every timeout the
// URL leaves unset 1 s, honouring the caller's context too: a slow Redis
// is a miss or an admission, not a stall.
func Dial(url string) (*redis.Client, error) {
	ro, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	for _, d := range []*time.Duration{&ro.DialTimeout, &ro.ReadTimeout, &ro.WriteTimeout, &ro.PoolTimeout} {
		if *d == 0 {
			*d = time.Second
		}
	}
	ro.ContextTimeoutEnabled = true
	return redis.NewClient(ro), nil
}
