// Package ghcache is the GitHub adapter's conditional-read cache shared by
// the App's replicas through Redis (REDIS_URL): what one replica read, the
// next replica asks for with If-None-Match and gets as a 304, which GitHub
// does not charge to the installation's rate limit. It implements
// transport.Cache; without Redis the App uses transport.MemoryCache.
//
// Entries are per installation (GitHub's answer can vary with the token's
// access, so one installation never reuses another's), gzip-compressed,
// dropped when their compressed size exceeds MaxBody, expire after TTL, and
// at most MaxEntries are kept (the oldest stored goes first). Every failure
// is a miss: a lost entry costs one full read, never a wrong answer,
// because GitHub validates the ETag sent.
package ghcache

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/autopilot-dev/autopilot/internal/github/transport"
)

// Defaults of Options.
const (
	DefaultTTL        = time.Hour
	DefaultMaxEntries = 10000
	DefaultMaxBody    = 32 << 10 // compressed bytes
)

// Options configures a Redis cache.
type Options struct {
	// Prefix starts every key (REDIS_PREFIX).
	Prefix string
	// TTL is how long an entry is kept (default one hour).
	TTL time.Duration
	// MaxEntries bounds the entries of every installation together
	// (default 10,000).
	MaxEntries int
	// MaxBody is the largest compressed entry kept (default 32 KiB).
	MaxBody int
}

// Redis is a transport.Cache source on Redis; For gives one installation's.
type Redis struct {
	rdb   *redis.Client
	owned bool
	o     Options
	index string // sorted set of entry keys, by order of storing
	seq   string // counter giving that order
}

// Open connects to the redis:// (or rediss://) URL, with short timeouts
// left unset in the URL (1 s: a slow Redis is a miss, not a stall).
func Open(url string, o Options) (*Redis, error) {
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
	r := New(redis.NewClient(ro), o)
	r.owned = true
	return r, nil
}

// New uses an existing client; Close leaves it open.
func New(rdb *redis.Client, o Options) *Redis {
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	return &Redis{rdb: rdb, o: o, index: o.Prefix + "ghcache:index", seq: o.Prefix + "ghcache:seq"}
}

// Ping checks that Redis answers.
func (r *Redis) Ping(ctx context.Context) error { return r.rdb.Ping(ctx).Err() }

// Close closes the client Open opened.
func (r *Redis) Close() error {
	if r.owned {
		return r.rdb.Close()
	}
	return nil
}

// For returns installation's cache.
func (r *Redis) For(installation int64) transport.Cache { return view{r, installation} }

// entryKey is where an entry lives: a hash bounds the key's length.
func (r *Redis) entryKey(installation int64, key string) string {
	sum := sha256.Sum256([]byte(strconv.FormatInt(installation, 10) + " " + key))
	return r.o.Prefix + "ghcache:e:" + hex.EncodeToString(sum[:16])
}

// putScript stores an entry, records it in the index and drops the oldest
// entries beyond the bound. KEYS: entry, index, seq. ARGV: value, ttl
// (ms), max entries.
var putScript = redis.NewScript(`
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), KEYS[1])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[3])
if over > 0 then
  local old = redis.call('ZPOPMIN', KEYS[2], over)
  for i = 1, #old, 2 do redis.call('DEL', old[i]) end
end
return 0`)

type record struct {
	ETag   string
	Header http.Header
	Body   []byte
}

func (r *Redis) get(ctx context.Context, installation int64, key string) (transport.Entry, bool) {
	b, err := r.rdb.Get(ctx, r.entryKey(installation, key)).Bytes()
	if err != nil {
		return transport.Entry{}, false
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return transport.Entry{}, false
	}
	var rec record
	if err := gob.NewDecoder(io.LimitReader(zr, 64<<20)).Decode(&rec); err != nil {
		return transport.Entry{}, false
	}
	return transport.Entry{ETag: rec.ETag, Header: rec.Header, Body: rec.Body}, true
}

func (r *Redis) put(ctx context.Context, installation int64, key string, e transport.Entry) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if gob.NewEncoder(zw).Encode(record(e)) != nil || zw.Close() != nil {
		return
	}
	ek := r.entryKey(installation, key)
	if buf.Len() > r.o.MaxBody {
		r.forget(ctx, installation, key) // an older, smaller answer is stale now
		return
	}
	_ = putScript.Run(ctx, r.rdb, []string{ek, r.index, r.seq},
		buf.Bytes(), r.o.TTL.Milliseconds(), r.o.MaxEntries).Err()
}

func (r *Redis) forget(ctx context.Context, installation int64, key string) {
	ek := r.entryKey(installation, key)
	_, _ = r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, ek)
		p.ZRem(ctx, r.index, ek)
		return nil
	})
}

// Stats is what the cache holds.
type Stats struct {
	// Entries is the number of live entries; Bytes their compressed size.
	Entries, Bytes int
}

// Stats reads every entry's size: for tests and the load simulation's
// report, not for a hot path.
func (r *Redis) Stats(ctx context.Context) Stats {
	keys, err := r.rdb.ZRange(ctx, r.index, 0, -1).Result()
	if err != nil {
		return Stats{}
	}
	var st Stats
	for _, k := range keys {
		if n, err := r.rdb.StrLen(ctx, k).Result(); err == nil && n > 0 {
			st.Entries++
			st.Bytes += int(n)
		}
	}
	return st
}

// ttlOf is an entry's remaining time to live (tests).
func (r *Redis) ttlOf(ctx context.Context, installation int64, key string) time.Duration {
	d, _ := r.rdb.PTTL(ctx, r.entryKey(installation, key)).Result()
	return d
}

// view is one installation's cache.
type view struct {
	r            *Redis
	installation int64
}

func (v view) Get(ctx context.Context, key string) (transport.Entry, bool) {
	return v.r.get(ctx, v.installation, key)
}

func (v view) Put(ctx context.Context, key string, e transport.Entry) {
	v.r.put(ctx, v.installation, key, e)
}

func (v view) Forget(ctx context.Context, key string) { v.r.forget(ctx, v.installation, key) }
