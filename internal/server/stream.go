package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server/metrics"
)

// The work queue in Redis (PRODUCT §11): one stream read by one consumer
// group shared by every replica. Intake appends an entry before it answers
// 202; a replica's workers read entries through the group, and an entry is
// acknowledged and deleted in one step once its job finished, so the
// stream holds exactly the deliveries not yet acknowledged: its length is
// the backlog QUEUE_MAX bounds. Entries left pending by a consumer that
// stopped renewing them are claimed by another after QUEUE_CLAIM_IDLE.

// streamGroup is the consumer group every replica reads through.
const streamGroup = "workers"

// Entry fields. v is the entry format, so a replica can refuse (and hand to
// the sweep) an entry written by a newer one instead of misreading it.
const (
	fieldVersion  = "v"
	fieldDelivery = "d"
	fieldEvent    = "e"
	fieldJSON     = "j"
	fieldReceived = "t"
	entryVersion  = "1"
)

// Enqueue answers from the intake script.
const (
	enqueuedFull      = -1
	enqueuedDuplicate = 0
	enqueuedOK        = 1
)

var (
	// enqueueScript checks room, records the delivery id and appends the
	// entry in one step, so an id is never recorded for a delivery that is
	// not queued (its redelivery would be answered "duplicate" and lost),
	// and a refused delivery leaves nothing behind.
	enqueueScript = redis.NewScript(`
if redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[1]) then return -1 end
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) then return 0 end
local args = {}
for i = 3, #ARGV do args[#args + 1] = ARGV[i] end
redis.call('XADD', KEYS[1], '*', unpack(args))
return 1`)
	// renewEntriesScript resets the idle time of the entries this consumer still
	// owns, so no replica claims work that is merely slow; an entry already
	// claimed by another consumer is left alone. It returns the ids no longer
	// owned.
	renewEntriesScript = redis.NewScript(`
local lost = {}
for i = 3, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1, ARGV[2])
  if #p == 1 then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
  else
    lost[#lost + 1] = ARGV[i]
  end
end
return lost`)
	// handBackScript re-appends an entry this consumer owns at the end of the
	// stream and drops the original, so another replica reads it at once
	// instead of waiting QUEUE_CLAIM_IDLE. 1: handed back; 0: no longer ours
	// (left alone); -1: gone from the stream (acknowledged).
	handBackScript = redis.NewScript(`
local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[3], ARGV[3], 1, ARGV[2])
if #p == 0 then return 0 end
local e = redis.call('XRANGE', KEYS[1], ARGV[3], ARGV[3])
redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
if #e == 0 then return -1 end
redis.call('XADD', KEYS[1], '*', unpack(e[1][2]))
redis.call('XDEL', KEYS[1], ARGV[3])
return 1`)
)

// entry is one stream entry read back: its id, the job it carries, and why
// it could not be decoded (then job is empty and the entry is dropped to
// the sweep).
type entry struct {
	id  string
	job Job
	bad error
	// deliveries is how often the group handed the entry out (claims
	// included); set for claimed entries only.
	deliveries int64
}

func (s *RedisStore) streamKey() string { return s.opts.Prefix + "queue" }

// Consumer is this store's consumer name in the group: its owner id, unique
// per process.
func (s *RedisStore) Consumer() string { return s.opts.Owner }

// ensureGroup creates the consumer group (and the stream) unless they
// exist. A new group starts at the stream's first entry, so entries added
// while the group was missing (Redis lost its data) are still read.
func (s *RedisStore) ensureGroup(ctx context.Context) error {
	err := s.rdb.XGroupCreateMkStream(ctx, s.streamKey(), streamGroup, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return fmt.Errorf("redis queue group: %w", err)
	}
	return nil
}

// enqueue appends job unless the stream holds max entries (enqueuedFull)
// or the delivery id was recorded before (enqueuedDuplicate). The id is
// recorded under the same key as Seen, for DedupeTTL.
func (s *RedisStore) enqueue(ctx context.Context, job Job, max int) (int, error) {
	ev, err := json.Marshal(job.Event)
	if err != nil {
		return 0, fmt.Errorf("queue entry for %s: %w", job.Delivery, err)
	}
	args := []any{max, s.opts.DedupeTTL.Milliseconds(),
		fieldVersion, entryVersion, fieldDelivery, job.Delivery, fieldEvent, job.Event.Name,
		fieldReceived, job.Received.UnixMilli(), fieldJSON, ev}
	n, err := enqueueScript.Run(ctx, s.rdb, []string{s.streamKey(), s.opts.Prefix + "delivery:" + job.Delivery}, args...).Int()
	if err != nil {
		return 0, fmt.Errorf("redis enqueue %s: %w", job.Delivery, err)
	}
	return n, nil
}

// read returns up to count entries no consumer has read yet, waiting up to
// block for one (0: forever; negative: not at all). A missing group (Redis lost its data, or someone deleted
// the key) is created again and reported through lostGroup.
func (s *RedisStore) read(ctx context.Context, count int, block time.Duration) (es []entry, lostGroup bool, err error) {
	res, err := s.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: streamGroup, Consumer: s.Consumer(), Streams: []string{s.streamKey(), ">"},
		Count: int64(count), Block: block,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		if strings.HasPrefix(err.Error(), "NOGROUP") {
			if gerr := s.ensureGroup(ctx); gerr != nil {
				return nil, false, gerr
			}
			return nil, true, nil
		}
		return nil, false, fmt.Errorf("redis queue read: %w", err)
	}
	for _, st := range res {
		for _, m := range st.Messages {
			es = append(es, decodeEntry(m.ID, m.Values))
		}
	}
	return es, false, nil
}

// claim takes up to count entries pending with any consumer for longer
// than idle (XAUTOCLAIM from cursor). It returns them, the next cursor, and
// the ids that were pending but are no longer in the stream: deleted
// before they were acknowledged (Redis drops them from the group then).
func (s *RedisStore) claim(ctx context.Context, cursor string, idle time.Duration, count int) (es []entry, next string, gone []string, err error) {
	raw, err := s.rdb.Do(ctx, "XAUTOCLAIM", s.streamKey(), streamGroup, s.Consumer(),
		idle.Milliseconds(), cursor, "COUNT", count).Slice()
	if err != nil {
		if strings.HasPrefix(err.Error(), "NOGROUP") {
			return nil, "0-0", nil, s.ensureGroup(ctx)
		}
		return nil, cursor, nil, fmt.Errorf("redis queue claim: %w", err)
	}
	if len(raw) < 2 {
		return nil, "0-0", nil, fmt.Errorf("redis queue claim: %d elements in the XAUTOCLAIM reply, want 2 or 3", len(raw))
	}
	next, _ = raw[0].(string)
	msgs, _ := raw[1].([]any)
	for _, m := range msgs {
		pair, ok := m.([]any)
		if !ok || len(pair) != 2 {
			continue
		}
		id, _ := pair[0].(string)
		vals := map[string]any{}
		switch fv := pair[1].(type) {
		case []any:
			for i := 0; i+1 < len(fv); i += 2 {
				if k, ok := fv[i].(string); ok {
					vals[k] = fv[i+1]
				}
			}
		case map[any]any: // RESP3 may send a map
			for k, v := range fv {
				if ks, ok := k.(string); ok {
					vals[ks] = v
				}
			}
		}
		es = append(es, decodeEntry(id, vals))
	}
	if len(raw) > 2 {
		ids, _ := raw[2].([]any)
		for _, id := range ids {
			if s, ok := id.(string); ok {
				gone = append(gone, s)
			}
		}
	}
	if next == "" {
		next = "0-0"
	}
	if len(es) > 0 {
		// How often each was handed out, to give up on an entry whose job
		// takes every replica running it down.
		pend, err := s.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{
			Stream: s.streamKey(), Group: streamGroup, Start: es[0].id, End: es[len(es)-1].id,
			Count: int64(len(es)) * 4, Consumer: s.Consumer(),
		}).Result()
		if err == nil {
			n := make(map[string]int64, len(pend))
			for _, p := range pend {
				n[p.ID] = p.RetryCount
			}
			for i := range es {
				es[i].deliveries = n[es[i].id]
			}
		}
	}
	return es, next, gone, nil
}

// ack acknowledges and deletes entries in one transaction.
func (s *RedisStore) ack(ctx context.Context, ids []string) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.XAck(ctx, s.streamKey(), streamGroup, ids...)
		p.XDel(ctx, s.streamKey(), ids...)
		return nil
	})
	if err != nil {
		return fmt.Errorf("redis queue ack: %w", err)
	}
	return nil
}

// renewEntries keeps the entries this consumer works on from being claimed
// and returns those another consumer claimed meanwhile.
func (s *RedisStore) renewEntries(ctx context.Context, ids []string) ([]string, error) {
	args := make([]any, 0, len(ids)+2)
	args = append(args, streamGroup, s.Consumer())
	for _, id := range ids {
		args = append(args, id)
	}
	lost, err := renewEntriesScript.Run(ctx, s.rdb, []string{s.streamKey()}, args...).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("redis queue renew: %w", err)
	}
	return lost, nil
}

// handBack gives an entry this consumer owns back to the group (see
// handBackScript); true when it was handed back.
func (s *RedisStore) handBack(ctx context.Context, id string) (bool, error) {
	n, err := handBackScript.Run(ctx, s.rdb, []string{s.streamKey()}, streamGroup, s.Consumer(), id).Int()
	if err != nil {
		return false, fmt.Errorf("redis queue hand back %s: %w", id, err)
	}
	return n == 1, nil
}

// queueStats reads the stream's length and pending summary in one round
// trip.
func (s *RedisStore) queueStats(ctx context.Context, now time.Time) (metrics.QueueStats, error) {
	var xlen *redis.IntCmd
	var pend *redis.XPendingCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		xlen = p.XLen(ctx, s.streamKey())
		pend = p.XPending(ctx, s.streamKey(), streamGroup)
		return nil
	})
	var st metrics.QueueStats
	if err != nil && !strings.HasPrefix(err.Error(), "NOGROUP") {
		return st, fmt.Errorf("redis queue stats: %w", err)
	}
	st.Length = xlen.Val()
	if p, err := pend.Result(); err == nil && p != nil {
		st.Pending = p.Count
		if p.Count > 0 {
			if ms, ok := entryMillis(p.Lower); ok {
				st.OldestPending = max(0, now.Sub(time.UnixMilli(ms)))
			}
		}
	}
	return st, nil
}

// dropConsumerScript removes a consumer from the group only while it
// holds no pending entry (XGROUP DELCONSUMER would drop them). 1: removed.
var dropConsumerScript = redis.NewScript(`
local p = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2])
if #p > 0 then return 0 end
redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
return 1`)

// dropConsumer removes consumer from the group if it holds nothing.
func (s *RedisStore) dropConsumer(ctx context.Context, consumer string) (bool, error) {
	n, err := dropConsumerScript.Run(ctx, s.rdb, []string{s.streamKey()}, streamGroup, consumer).Int()
	if err != nil {
		return false, fmt.Errorf("redis queue drop consumer %s: %w", consumer, err)
	}
	return n == 1, nil
}

// dropGoneConsumers removes the consumers (of stopped replicas) that hold
// nothing and were idle for longer than idle; a live replica reads every
// half second, so it is never idle that long.
func (s *RedisStore) dropGoneConsumers(ctx context.Context, idle time.Duration) error {
	cs, err := s.rdb.XInfoConsumers(ctx, s.streamKey(), streamGroup).Result()
	if err != nil {
		return fmt.Errorf("redis queue consumers: %w", err)
	}
	for _, c := range cs {
		if c.Pending == 0 && c.Idle > idle && c.Name != s.Consumer() {
			if _, err := s.dropConsumer(ctx, c.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// queueLen is the number of entries not yet acknowledged.
func (s *RedisStore) queueLen(ctx context.Context) (int64, error) {
	n, err := s.rdb.XLen(ctx, s.streamKey()).Result()
	if err != nil {
		return 0, fmt.Errorf("redis queue length: %w", err)
	}
	return n, nil
}

// entryMillis is the append time encoded in an entry id ("<ms>-<seq>").
func entryMillis(id string) (int64, bool) {
	ms, _, ok := strings.Cut(id, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	return n, err == nil
}

// decodeEntry turns an entry's fields back into its job.
func decodeEntry(id string, vals map[string]any) entry {
	str := func(k string) string {
		switch v := vals[k].(type) {
		case string:
			return v
		case []byte:
			return string(v)
		}
		return ""
	}
	e := entry{id: id}
	if v := str(fieldVersion); v != entryVersion {
		e.bad = fmt.Errorf("queue entry %s: format %q, this replica reads %q", id, v, entryVersion)
		return e
	}
	e.job.Delivery = str(fieldDelivery)
	var ev ghevent.Event
	if err := json.Unmarshal([]byte(str(fieldJSON)), &ev); err != nil || e.job.Delivery == "" || ev.Name != str(fieldEvent) {
		e.bad = fmt.Errorf("queue entry %s (delivery %q): malformed event: %v", id, e.job.Delivery, err)
		return e
	}
	e.job.Event = &ev
	if ms, err := strconv.ParseInt(str(fieldReceived), 10, 64); err == nil {
		e.job.Received = time.UnixMilli(ms)
	}
	return e
}
