package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
)

// Redis is a Store on Redis, shared by the replicas: three hashes under
// the server's REDIS_PREFIX, "<prefix>dashboard:rows" (key → the row's
// JSON without its timeline, all a list needs), "<prefix>dashboard:timelines"
// (key → the timeline's JSON, read by Get only) and
// "<prefix>dashboard:versions" (key → the highest version put or removed);
// and one key per held issue, "<prefix>dashboard:held:<key>" (the hold's
// JSON), which expires when the hold ends.
type Redis struct {
	rdb       *redis.Client
	rows      string
	timelines string
	versions  string
	held      string
	owned     bool

	// decodedRows keeps each row List decoded with the JSON it came from:
	// a list page reads every row, and decoding a thousand of them cost
	// more than the rest of the page; an unchanged JSON is not decoded
	// again. decoded counts the decodes (for tests).
	mu          sync.Mutex
	decodedRows map[string]decodedRow
	decoded     atomic.Int64
}

type decodedRow struct {
	raw string
	row model.Row
}

// putScript stores the row unless a higher version was put or removed.
var putScript = redis.NewScript(`
local v = redis.call('HGET', KEYS[2], ARGV[1])
if v and tonumber(v) > tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[4])
return 1`)

// removeScript drops the row and keeps the higher of the versions.
var removeScript = redis.NewScript(`
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
local v = redis.call('HGET', KEYS[2], ARGV[1])
if not v or tonumber(v) < tonumber(ARGV[2]) then redis.call('HSET', KEYS[2], ARGV[1], ARGV[2]) end
return 1`)

// OpenRedis connects to the redis://, rediss:// or unix:// URL (REDIS_URL);
// prefix is the server's REDIS_PREFIX. Timeouts left unset are 1s: a page
// answers quickly when Redis is away.
func OpenRedis(url, prefix string) (*Redis, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	for _, d := range []*time.Duration{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout} {
		if *d == 0 {
			*d = time.Second
		}
	}
	o.ContextTimeoutEnabled = true
	r := NewRedis(redis.NewClient(o), prefix)
	r.owned = true
	return r, nil
}

// NewRedis uses an existing client; Close leaves it open.
func NewRedis(rdb *redis.Client, prefix string) *Redis {
	return &Redis{rdb: rdb, rows: prefix + "dashboard:rows", timelines: prefix + "dashboard:timelines", versions: prefix + "dashboard:versions", held: prefix + "dashboard:held:"}
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

// Put implements Store.
func (r *Redis) Put(ctx context.Context, row model.Row) (bool, error) {
	tl, err := json.Marshal(row.Timeline)
	if err != nil {
		return false, fmt.Errorf("dashboard row %s: %w", row.Key(), err)
	}
	row.Timeline = nil
	b, err := json.Marshal(row)
	if err != nil {
		return false, fmt.Errorf("dashboard row %s: %w", row.Key(), err)
	}
	n, err := putScript.Run(ctx, r.rdb, r.keys(), row.Key(), row.Version, b, tl).Int()
	if err != nil {
		return false, fmt.Errorf("dashboard: put %s: %w", row.Key(), err)
	}
	return n == 1, nil
}

func (r *Redis) keys() []string { return []string{r.rows, r.versions, r.timelines} }

// Remove implements Store.
func (r *Redis) Remove(ctx context.Context, key string, version int64) error {
	if err := removeScript.Run(ctx, r.rdb, r.keys(), key, version).Err(); err != nil {
		return fmt.Errorf("dashboard: remove %s: %w", key, err)
	}
	return r.Release(ctx, key)
}

// Release implements Store.
func (r *Redis) Release(ctx context.Context, key string) error {
	if err := r.rdb.Del(ctx, r.held+key).Err(); err != nil {
		return fmt.Errorf("dashboard: release %s: %w", key, err)
	}
	return nil
}

// Hold implements Store: the hold's key expires at h.Until.
func (r *Redis) Hold(ctx context.Context, h model.Hold) error {
	if !h.Until.After(time.Now()) {
		return nil
	}
	b, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("dashboard: hold %s: %w", h.Key(), err)
	}
	if err := r.rdb.SetArgs(ctx, r.held+h.Key(), b, redis.SetArgs{ExpireAt: h.Until}).Err(); err != nil {
		return fmt.Errorf("dashboard: hold %s: %w", h.Key(), err)
	}
	return nil
}

// Held implements Store.
func (r *Redis) Held(ctx context.Context, key string) (model.Hold, bool, error) {
	b, err := r.rdb.Get(ctx, r.held+key).Bytes()
	if err == redis.Nil {
		return model.Hold{}, false, nil
	}
	if err != nil {
		return model.Hold{}, false, fmt.Errorf("dashboard: held %s: %w", key, err)
	}
	var h model.Hold
	if err := json.Unmarshal(b, &h); err != nil {
		return model.Hold{}, false, fmt.Errorf("dashboard: held %s: %w", key, err)
	}
	return h, true, nil
}

// Get implements Store: the row and its timeline.
func (r *Redis) Get(ctx context.Context, key string) (model.Row, bool, error) {
	pipe := r.rdb.Pipeline()
	rowCmd := pipe.HGet(ctx, r.rows, key)
	tlCmd := pipe.HGet(ctx, r.timelines, key)
	_, _ = pipe.Exec(ctx)
	b, err := rowCmd.Bytes()
	if err == redis.Nil {
		return model.Row{}, false, nil
	}
	if err != nil {
		return model.Row{}, false, fmt.Errorf("dashboard: get %s: %w", key, err)
	}
	var row model.Row
	if err := json.Unmarshal(b, &row); err != nil {
		return model.Row{}, false, fmt.Errorf("dashboard: row %s: %w", key, err)
	}
	if tl, err := tlCmd.Bytes(); err == nil {
		if err := json.Unmarshal(tl, &row.Timeline); err != nil {
			return model.Row{}, false, fmt.Errorf("dashboard: timeline %s: %w", key, err)
		}
	} else if err != redis.Nil {
		return model.Row{}, false, fmt.Errorf("dashboard: get %s: %w", key, err)
	}
	return row, true, nil
}

// List implements Store: one HGETALL of the rows, without their
// timelines (a list shows none). Only rows whose JSON changed since the
// last List are decoded; the rows returned share their slices with the
// next List's, so callers must not modify them.
func (r *Redis) List(ctx context.Context) ([]model.Row, error) {
	all, err := r.rdb.HGetAll(ctx, r.rows).Result()
	if err != nil {
		return nil, fmt.Errorf("dashboard: list: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	next := make(map[string]decodedRow, len(all))
	out := make([]model.Row, 0, len(all))
	for k, v := range all {
		d, ok := r.decodedRows[k]
		if !ok || d.raw != v {
			d = decodedRow{raw: v}
			if err := json.Unmarshal([]byte(v), &d.row); err != nil {
				return nil, fmt.Errorf("dashboard: row %s: %w", k, err)
			}
			r.decoded.Add(1)
		}
		next[k] = d
		out = append(out, d.row)
	}
	r.decodedRows = next
	Sort(out)
	return out, nil
}

// cachedRows is how many decoded rows List keeps.
func (r *Redis) cachedRows() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.decodedRows)
}
