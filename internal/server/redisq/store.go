// Package redisq is the App server's shared store on Redis: delivery
// dedupe, per-issue leases, and the work queue (a stream read by one
// consumer group shared by every replica).
package redisq

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
)

// Options tunes a Store. Zero values take the defaults.
type Options struct {
	// Prefix starts every key the store writes (default
	// "autopilot:<AppID>:", settings.RedisPrefixFor).
	Prefix string
	// AppID is the App whose store this is: every queue entry carries it,
	// a replica leaves an entry of another App alone, and ClaimPrefix
	// records it as the prefix's owner. 0: no App (tests), nothing checked.
	AppID int64
	// DedupeTTL is how long delivery ids are kept (default and minimum 72h).
	DedupeTTL time.Duration
	// LockTTL is a lease's time to live until renewed (default 60s).
	LockTTL time.Duration
	// Owner names this replica in lock values (default: random hex).
	Owner string
	// PollMax caps the wait between attempts on a held lock (default 250ms).
	PollMax time.Duration
}

// Store is a Deduper and Locker on one Redis, shared by every replica:
// dedupe is SET NX with a TTL; a lease is a key holding its owner id with a
// TTL, a fencing token from INCR, renewal by compare-and-pexpire and release
// by compare-and-delete (Lua), so only the owner can extend or drop it.
type Store struct {
	rdb   *redis.Client
	opts  Options
	seq   atomic.Int64
	owned bool // Close closes rdb
	// commits batches the appends of concurrent deliveries (Enqueue).
	commits batcher[*enqueueCall]
	// work batches the workers' concurrent writes: ends of jobs
	// (FinishEntry) and lease requests (TryLockAll, Lock).
	work batcher[*workOp]
	// appends counts the append batches (see Appends).
	appends struct{ batches, deliveries, nanos atomic.Int64 }
}

var (
	renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)
	releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)
)

// New connects to the redis:// (or rediss://) URL. Timeouts left
// unset in the URL are kept short (1s) so that intake answers 503 quickly
// when Redis is away instead of hanging the delivery.
func New(url string, opts Options) (*Store, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	for _, d := range []*time.Duration{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout} {
		if *d == 0 {
			*d = time.Second
		}
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 1
	}
	o.ContextTimeoutEnabled = true
	s := NewClient(redis.NewClient(o), opts)
	s.owned = true
	return s, nil
}

// NewClient wraps an existing client; Close leaves it open.
func NewClient(rdb *redis.Client, opts Options) *Store {
	if opts.Prefix == "" {
		opts.Prefix = settings.RedisPrefixFor(opts.AppID)
	}
	if opts.DedupeTTL < settings.MinDedupeTTL {
		opts.DedupeTTL = settings.MinDedupeTTL
	}
	if opts.LockTTL <= 0 {
		opts.LockTTL = settings.DefaultLockTTL
	}
	if opts.PollMax <= 0 {
		opts.PollMax = 250 * time.Millisecond
	}
	if opts.Owner == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		opts.Owner = hex.EncodeToString(b[:])
	}
	return &Store{rdb: rdb, opts: opts}
}

// Close closes the connection pool when the store opened it.
func (s *Store) Close() error {
	if !s.owned {
		return nil
	}
	return s.rdb.Close()
}

// Ping implements Pinger.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis ping: %w", err)
	}
	return nil
}

// AppID is the App this store queues for (Options.AppID).
func (s *Store) AppID() int64 { return s.opts.AppID }

// Prefix is the prefix of every key of this store.
func (s *Store) Prefix() string { return s.opts.Prefix }

// claimPrefixScript records ARGV[1] as the App using the prefix unless
// one is recorded, and returns the App recorded.
var claimPrefixScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], ARGV[1])
  return ARGV[1]
end
return v`)

// PrefixTakenError is a start on a prefix another App's replicas use in
// that Redis.
type PrefixTakenError struct {
	Prefix string
	Key    string
	Owner  string // the App id recorded in Key
	AppID  int64
}

func (e *PrefixTakenError) Error() string {
	return fmt.Sprintf("REDIS_PREFIX %q is used by App %s on this Redis (key %s), and this is App %d: Apps sharing a prefix take each other's deliveries. "+
		"Leave REDIS_PREFIX unset (the default, autopilot:<APP_ID>:, keeps Apps apart) or give this App a prefix of its own; "+
		"if App %s no longer runs here, delete %s", e.Prefix, e.Owner, e.Key, e.AppID, e.Owner, e.Key)
}

// ClaimPrefix records this store's App as the one using its prefix in
// this Redis (key <prefix>app, kept for good), or returns a
// *PrefixTakenError when another App is recorded there. Without an App id
// it checks nothing.
func (s *Store) ClaimPrefix(ctx context.Context) error {
	if s.opts.AppID <= 0 {
		return nil
	}
	key := s.opts.Prefix + "app"
	id := strconv.FormatInt(s.opts.AppID, 10)
	owner, err := claimPrefixScript.Run(ctx, s.rdb, []string{key}, id).Text()
	if err != nil {
		return fmt.Errorf("redis: recording the App using REDIS_PREFIX %q: %w", s.opts.Prefix, err)
	}
	if owner != id {
		return &PrefixTakenError{Prefix: s.opts.Prefix, Key: key, Owner: owner, AppID: s.opts.AppID}
	}
	return nil
}

// Seen implements Deduper with SET NX EX.
func (s *Store) Seen(ctx context.Context, id string) (bool, error) {
	set, err := s.rdb.SetNX(ctx, s.opts.Prefix+"delivery:"+id, 1, s.opts.DedupeTTL).Result()
	if err != nil {
		return false, fmt.Errorf("redis dedupe %s: %w", id, err)
	}
	return !set, nil
}

func (s *Store) lockKey(key string) string { return s.opts.Prefix + "{locks}:issue:" + key }
func (s *Store) fenceKey() string          { return s.opts.Prefix + "{locks}:fence" }

// Lock implements Locker: it polls (10ms doubling to PollMax) while another
// owner holds the key, and returns at once on a Redis error. Each attempt
// goes with the workers' other writes (see FinishEntry).
func (s *Store) Lock(ctx context.Context, key string) (job.Lease, error) {
	wait := 10 * time.Millisecond
	for {
		ls, ok, err := s.TryLockAll(ctx, []string{key})
		if err != nil {
			return job.Lease{}, err
		}
		if ok {
			return ls[0], nil
		}
		if !job.Sleep(ctx, wait) {
			return job.Lease{}, fmt.Errorf("lock %s: %w", key, ctx.Err())
		}
		wait = min(2*wait, s.opts.PollMax)
	}
}

// TryLockAll takes the leases on keys in one step when none of them is
// held (ok true), in the order given, with increasing tokens; when one is
// held it takes none (ok false), and the caller takes them one by one with
// Lock, waiting as it does. The request goes with the workers' other
// writes (see FinishEntry).
func (s *Store) TryLockAll(ctx context.Context, keys []string) (ls []job.Lease, ok bool, err error) {
	op := &workOp{ctx: ctx, keys: keys, owners: make([]string, len(keys))}
	for i := range keys {
		op.owners[i] = s.opts.Owner + ":" + strconv.FormatInt(s.seq.Add(1), 10)
	}
	if err := s.runWork(op); err != nil {
		return nil, false, fmt.Errorf("redis lock %v: %w", keys, err)
	}
	if op.last == 0 {
		return nil, false, nil
	}
	first := op.last - int64(len(keys)) + 1
	for i, k := range keys {
		ls = append(ls, job.NewLease(k, first+int64(i), op.owners[i], s))
	}
	return ls, true, nil
}

// RenewLease implements job.Holder.
func (s *Store) RenewLease(ctx context.Context, l job.Lease) error {
	ok, err := renewScript.Run(ctx, s.rdb, []string{s.lockKey(l.Key)}, l.Owner, s.opts.LockTTL.Milliseconds()).Int64()
	if err != nil {
		return fmt.Errorf("redis renew %s: %w", l.Key, err)
	}
	if ok == 0 {
		return fmt.Errorf("renew %s: %w", l.Key, job.ErrLeaseLost)
	}
	return nil
}

// ReleaseLease implements job.Holder.
func (s *Store) ReleaseLease(ctx context.Context, l job.Lease) error {
	n, err := releaseScript.Run(ctx, s.rdb, []string{s.lockKey(l.Key)}, l.Owner).Int64()
	if err != nil {
		return fmt.Errorf("redis release %s: %w", l.Key, err)
	}
	if n == 0 {
		return fmt.Errorf("release %s: %w", l.Key, job.ErrLeaseLost)
	}
	return nil
}
