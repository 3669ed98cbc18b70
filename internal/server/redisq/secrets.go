package redisq

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// noteSecretScript records ARGV[1] (a replica's "<owner>=<fingerprint>")
// as seen now (Redis's clock) and drops the replicas not seen for ARGV[2]
// ms; it returns the members left.
var noteSecretScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - tonumber(ARGV[2])))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return redis.call('ZRANGE', KEYS[1], 0, -1)`)

// NoteSecret records this replica's webhook secret fingerprint (key
// <prefix>secrets, one member per replica) and returns how many replicas
// seen within ttl use each fingerprint, this one included.
func (s *Store) NoteSecret(ctx context.Context, fingerprint string, ttl time.Duration) (map[string]int, error) {
	ms, err := noteSecretScript.Run(ctx, s.rdb, []string{s.opts.Prefix + "secrets"},
		s.Consumer()+"="+fingerprint, ttl.Milliseconds()).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("redis: comparing webhook secret fingerprints: %w", err)
	}
	out := map[string]int{}
	for _, m := range ms {
		if _, fp, ok := strings.Cut(m, "="); ok {
			out[fp]++
		}
	}
	return out, nil
}
