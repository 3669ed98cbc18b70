package budget

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/autopilot-dev/autopilot/internal/redisurl"
	"github.com/redis/go-redis/v9"
)

// RedisOptions configures a Redis store.
type RedisOptions struct {
	// Prefix starts every key (REDIS_PREFIX).
	Prefix string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Fresh is how long Load answers from this replica's copy of a record
	// (default DefaultFresh).
	Fresh time.Duration
}

// DefaultFresh is how long a replica reads its copy of a record.
const DefaultFresh = time.Second

// Redis is a Store shared by the replicas: one hash per installation
// (<prefix>budget:<installation>), merged by a script so two replicas'
// answers never undo each other; it expires two hours after its last
// change (a window is one hour).
//
// A replica keeps its own copy of each record it read or merged, and Load
// answers from that copy while it is younger than Fresh (1 s): every
// merge's script answers the merged record, so a replica busy with an
// installation asks Redis once per GitHub request (the merge of its
// answer), not twice. What another replica merged in the meantime reaches
// this one with its next answer's merge or once the copy is a second old;
// docs/app.md ("GitHub's limits") says why that second is safe.
type Redis struct {
	rdb    *redis.Client
	owned  bool
	prefix string
	fresh  time.Duration
	now    func() time.Time

	mu     sync.Mutex
	copies map[int64]copyOf
}

// copyOf is a replica's copy of a record and when Redis answered it.
type copyOf struct {
	rec Record
	at  time.Time
}

// maxCopies bounds the copies kept; past it the stale ones are dropped.
const maxCopies = 10_000

// OpenRedis connects to the redis:// (or rediss://) URL with short
// timeouts (1 s) left unset in the URL: a slow Redis admits, never stalls.
func OpenRedis(url string, o RedisOptions) (*Redis, error) {
	rdb, err := redisurl.Dial(url)
	if err != nil {
		return nil, err
	}
	r := NewRedis(rdb, o)
	r.owned = true
	return r, nil
}

// NewRedis uses an existing client; Close leaves it open.
func NewRedis(rdb *redis.Client, o RedisOptions) *Redis {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Fresh <= 0 {
		o.Fresh = DefaultFresh
	}
	return &Redis{rdb: rdb, prefix: o.Prefix + "budget:", fresh: o.Fresh, now: o.Now, copies: map[int64]copyOf{}}
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
return redis.call('HGETALL', KEYS[1])`)

var holdScript = redis.NewScript(`
local cur = tonumber(redis.call('HGET', KEYS[1], 'nb') or '0')
if tonumber(ARGV[1]) > cur then redis.call('HSET', KEYS[1], 'nb', ARGV[1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return redis.call('HGETALL', KEYS[1])`)

// holds reports whether this replica's fresh copy of the record already
// holds b (merging it changes nothing: a 304's unchanged figures, an
// older answer arriving late). The copy came from Redis, whose record
// only ever holds back more, so writing b would change nothing there
// either.
func (r *Redis) holds(installation int64, graphql bool, b Bucket, now time.Time) bool {
	r.mu.Lock()
	c, ok := r.copies[installation]
	r.mu.Unlock()
	if !ok || now.Before(c.at) || now.Sub(c.at) >= r.fresh {
		return false
	}
	cur := c.rec.Core
	if graphql {
		cur = c.rec.GraphQL
	}
	next := merge(cur, b)
	return next.Limit == cur.Limit && next.Remaining == cur.Remaining && next.Reset.Equal(cur.Reset)
}

// Load implements Store: this replica's copy while it is fresh, else
// the record in Redis.
func (r *Redis) Load(ctx context.Context, installation int64) (Record, error) {
	now := r.now()
	r.mu.Lock()
	c, ok := r.copies[installation]
	r.mu.Unlock()
	if ok && !now.Before(c.at) && now.Sub(c.at) < r.fresh && !nearEnd(c.rec, now) {
		return c.rec, nil
	}
	m, err := r.rdb.HGetAll(ctx, r.key(installation)).Result()
	if err != nil {
		return Record{}, err
	}
	return r.keep(installation, recordOf(m), now), nil
}

// copyMargin is how many requests a copy must show left in its window to
// be trusted: within its second other replicas may spend about that many
// (GitHub's 900 points a minute allow 15 reads a second, and each replica
// runs at most 16 jobs of an installation), and a request sent on a copy
// that missed the last of them is answered with a primary-limit 403.
const copyMargin = 100

// nearEnd reports whether rec shows a bucket of the current window with
// at most copyMargin requests left: then Redis is read every time.
func nearEnd(rec Record, now time.Time) bool {
	for _, b := range []Bucket{rec.Core, rec.GraphQL} {
		if b.Remaining >= 0 && b.Reset.After(now) && b.Remaining <= copyMargin {
			return true
		}
	}
	return false
}

// keep stores rec as this replica's copy, merged with the copy it has:
// two merges of one replica may come back in either order, and a merged
// record only ever holds back more (a later window, a lower remaining, a
// later not-before), as Redis' does.
func (r *Redis) keep(installation int64, rec Record, at time.Time) Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.copies[installation]; ok {
		rec = mergeRecord(c.rec, rec)
	} else if len(r.copies) >= maxCopies {
		for id, c := range r.copies {
			if at.Sub(c.at) >= r.fresh {
				delete(r.copies, id)
			}
		}
	}
	r.copies[installation] = copyOf{rec: rec, at: at}
	return rec
}

// mergeRecord is the record that holds both a's and b's figures.
func mergeRecord(a, b Record) Record {
	a.Core, a.GraphQL = merge(a.Core, b.Core), merge(a.GraphQL, b.GraphQL)
	if b.NotBefore.After(a.NotBefore) {
		a.NotBefore = b.NotBefore
	}
	return a
}

// recordOf reads a record's hash (HGETALL's answer).
func recordOf(m map[string]string) Record {
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
	return rec
}

// merged keeps the record a script answered (HGETALL's flat list of
// fields and values) as this replica's copy.
func (r *Redis) merged(installation int64, now time.Time, res any, err error) error {
	if err != nil {
		return err
	}
	flat, ok := res.([]any)
	if !ok || len(flat)%2 != 0 {
		return fmt.Errorf("budget script answered %T, want the record's fields", res)
	}
	m := make(map[string]string, len(flat)/2)
	for i := 0; i < len(flat); i += 2 {
		k, _ := flat[i].(string)
		v, _ := flat[i+1].(string)
		m[k] = v
	}
	r.keep(installation, recordOf(m), now)
	return nil
}

// Observe implements Store.
func (r *Redis) Observe(ctx context.Context, installation int64, graphql bool, b Bucket) error {
	p := "c"
	if graphql {
		p = "g"
	}
	now := r.now()
	if r.holds(installation, graphql, b, now) {
		return nil
	}
	res, err := observeScript.Run(ctx, r.rdb, []string{r.key(installation)},
		p, b.Limit, b.Remaining, b.Reset.Unix(), recordTTL.Milliseconds()).Result()
	return r.merged(installation, now, res, err)
}

// Hold implements Store.
func (r *Redis) Hold(ctx context.Context, installation int64, until time.Time) error {
	now := r.now()
	res, err := holdScript.Run(ctx, r.rdb, []string{r.key(installation)}, until.UnixMilli(), recordTTL.Milliseconds()).Result()
	return r.merged(installation, now, res, err)
}
