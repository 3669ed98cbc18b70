package budget

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisOptions configures a Redis store.
type RedisOptions struct {
	// Prefix starts every key (REDIS_PREFIX).
	Prefix string
}

// Redis is a Store shared by the replicas: one hash per installation
// (<prefix>budget:<installation>), merged by a script so two replicas'
// answers never undo each other; it expires two hours after its last
// change (a window is one hour).
type Redis struct {
	rdb    *redis.Client
	owned  bool
	prefix string
}

// OpenRedis connects to the redis:// (or rediss://) URL with short
// timeouts (1 s) left unset in the URL: a slow Redis admits, never stalls.
func OpenRedis(url string, o RedisOptions) (*Redis, error) {
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
	r := NewRedis(redis.NewClient(ro), o)
	r.owned = true
	return r, nil
}

// NewRedis uses an existing client; Close leaves it open.
func NewRedis(rdb *redis.Client, o RedisOptions) *Redis {
	return &Redis{rdb: rdb, prefix: o.Prefix + "budget:"}
}

// Ping checks that Redis answers.
func (r *Redis) Ping(ctx context.Context) error { return r.rdb.Ping(ctx).Err() }

// Close closes the client OpenRedis opened.
func (r *Redis) Close() error {
	if r.owned {
		return r.rdb.Close()
	}
	return nil
}

const recordTTL = 2 * time.Hour

func (r *Redis) key(installation int64) string { return r.prefix + strconv.FormatInt(installation, 10) }

// Fields: c*/g* are core's and GraphQL's limit (l), remaining (r) and
// reset (t, unix seconds); nb is the not-before (unix milliseconds).
var observeScript = redis.NewScript(`
local p = ARGV[1]
local reset, rem = tonumber(ARGV[4]), tonumber(ARGV[3])
local curReset = tonumber(redis.call('HGET', KEYS[1], p..'t') or '0')
local curRem = tonumber(redis.call('HGET', KEYS[1], p..'r') or '-1')
if reset > curReset or (reset == curReset and (curRem < 0 or rem < curRem)) then
  redis.call('HSET', KEYS[1], p..'l', ARGV[2], p..'r', ARGV[3], p..'t', ARGV[4])
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 0`)

var holdScript = redis.NewScript(`
local cur = tonumber(redis.call('HGET', KEYS[1], 'nb') or '0')
if tonumber(ARGV[1]) > cur then redis.call('HSET', KEYS[1], 'nb', ARGV[1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 0`)

// Load implements Store.
func (r *Redis) Load(ctx context.Context, installation int64) (Record, error) {
	m, err := r.rdb.HGetAll(ctx, r.key(installation)).Result()
	if err != nil {
		return Record{}, err
	}
	rec := blank()
	num := func(k string) (int64, bool) {
		n, err := strconv.ParseInt(m[k], 10, 64)
		return n, err == nil
	}
	for _, b := range []struct {
		p  string
		to *Bucket
	}{{"c", &rec.Core}, {"g", &rec.GraphQL}} {
		l, ok1 := num(b.p + "l")
		rem, ok2 := num(b.p + "r")
		t, ok3 := num(b.p + "t")
		if ok1 && ok2 && ok3 {
			*b.to = Bucket{Limit: int(l), Remaining: int(rem), Reset: time.Unix(t, 0).UTC()}
		}
	}
	if nb, ok := num("nb"); ok {
		rec.NotBefore = time.UnixMilli(nb).UTC()
	}
	return rec, nil
}

// Observe implements Store.
func (r *Redis) Observe(ctx context.Context, installation int64, graphql bool, b Bucket) error {
	p := "c"
	if graphql {
		p = "g"
	}
	return observeScript.Run(ctx, r.rdb, []string{r.key(installation)},
		p, b.Limit, b.Remaining, b.Reset.Unix(), recordTTL.Milliseconds()).Err()
}

// Hold implements Store.
func (r *Redis) Hold(ctx context.Context, installation int64, until time.Time) error {
	return holdScript.Run(ctx, r.rdb, []string{r.key(installation)}, until.UnixMilli(), recordTTL.Milliseconds()).Err()
}
