package redisq

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/autopilot-dev/autopilot/internal/server/job"
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

// Enqueue answers from the intake script.
const (
	EnqueuedFull      = -1
	EnqueuedDuplicate = 0
	EnqueuedOK        = 1
)

var (
	// enqueueScript appends a batch of deliveries in one step (one round
	// trip, one write to the append-only file for the lot). For each, in
	// order, it checks room, records the delivery id and appends the
	// entry, so an id is never recorded for a delivery that is not queued
	// (its redelivery would be answered "duplicate" and lost), and a
	// refused delivery leaves nothing behind. KEYS: the stream, then each
	// delivery's id key; ARGV: the ids' time to live, then per delivery
	// the stream's bound, the number of entry fields and the fields. It
	// returns one answer per delivery (EnqueuedFull, EnqueuedDuplicate,
	// EnqueuedOK).
	enqueueScript = redis.NewScript(`
local len = redis.call('XLEN', KEYS[1])
local out = {}
local a = 2
for i = 2, #KEYS do
  local max, n = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  a = a + 2
  if len >= max then
    out[#out + 1] = -1
  elseif not redis.call('SET', KEYS[i], '1', 'NX', 'PX', ARGV[1]) then
    out[#out + 1] = 0
  else
    redis.call('XADD', KEYS[1], '*', unpack(ARGV, a, a + n - 1))
    len = len + 1
    out[#out + 1] = 1
  end
  a = a + n
end
return out`)
	// renewEntriesScript resets the idle time of the entries this consumer still
	// owns, so no replica claims work that is merely slow; an entry already
	// claimed by another consumer is left alone. Which ones it owns is read
	// from its pending list between the first and the last id (ARGV[3],
	// ARGV[4]), a thousand at a time, not entry by entry; the owned ones are
	// claimed back with one XCLAIM per 500. It returns the ids no longer owned.
	renewEntriesScript = redis.NewScript(`
local want, found, owned = {}, {}, {}
for i = 5, #ARGV do want[ARGV[i]] = true end
local function claim()
  if #owned > 0 then
    owned[#owned + 1] = 'JUSTID' -- the delivery count stays as it is
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, unpack(owned))
    owned = {}
  end
end
local start = ARGV[3]
while true do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], start, ARGV[4], 1000, ARGV[2])
  for _, e in ipairs(p) do
    local id = e[1]
    if want[id] and not found[id] then
      found[id] = true
      owned[#owned + 1] = id
      if #owned == 500 then claim() end
    end
  end
  if #p < 1000 then break end
  start = '(' .. p[#p][1]
end
claim()
local lost = {}
for i = 5, #ARGV do
  if not found[ARGV[i]] then lost[#lost + 1] = ARGV[i] end
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
	// handBackEntriesScript is handBackScript for many entries at once, in
	// the order given (each issue's entries keep their order at the
	// stream's end); it returns how many it handed back.
	handBackEntriesScript = redis.NewScript(`
local n = 0
for i = 3, #ARGV do
  local id = ARGV[i]
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1, ARGV[2])
  if #p == 1 then
    local e = redis.call('XRANGE', KEYS[1], id, id)
    redis.call('XACK', KEYS[1], ARGV[1], id)
    if #e == 1 then
      redis.call('XADD', KEYS[1], '*', unpack(e[1][2]))
      redis.call('XDEL', KEYS[1], id)
      n = n + 1
    end
  end
end
return n`)
)

// Entry is one stream entry read back: its id, the job it carries, and why
// it could not be decoded (then Job is empty and the entry is dropped to
// the sweep).
type Entry struct {
	ID  string
	Job job.Job
	Bad error
	// AppID is the App that queued the entry (0 for format "1" entries,
	// which carry none).
	AppID int64
	// Deliveries is how often the group handed the entry out (claims
	// included); set for claimed entries only.
	Deliveries int64
	// vals are the fields of an entry not decoded yet (see peekEntry),
	// inst its installation.
	vals map[string]any
	inst int64
}

func (s *Store) streamKey() string { return s.opts.Prefix + "queue" }

// Consumer is this store's consumer name in the group: its owner id, unique
// per process.
func (s *Store) Consumer() string { return s.opts.Owner }

// EnsureGroup creates the consumer group (and the stream) unless they
// exist. A new group starts at the stream's first entry, so entries added
// while the group was missing (Redis lost its data) are still read.
func (s *Store) EnsureGroup(ctx context.Context) error {
	err := s.rdb.XGroupCreateMkStream(ctx, s.streamKey(), streamGroup, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return fmt.Errorf("redis queue group: %w", err)
	}
	return nil
}

// Enqueue appends job's entry (see entryFields) unless the stream holds max entries (EnqueuedFull)
// or the delivery id was recorded before (EnqueuedDuplicate). The id is
// recorded under the same key as Seen, for DedupeTTL.
//
// Appends are committed in groups: while one batch is on its way to Redis,
// the deliveries arriving meanwhile wait and go together in the next one
// (one script, one round trip), so under load a delivery costs a fraction
// of a round trip, and alone it costs one, as before. Enqueue returns only
// once the batch holding its entry came back from Redis: an entry it
// reports queued is in the stream.
func (s *Store) Enqueue(ctx context.Context, j job.Job, max int) (int, error) {
	fields, err := entryFields(j, s.opts.AppID)
	if err != nil {
		return 0, err
	}
	c := &enqueueCall{ctx: ctx, key: s.opts.Prefix + "delivery:" + j.Delivery, max: max, fields: fields,
		size: fieldsSize(fields), done: make(chan struct{})}
	s.commits.add(c, s.commit)
	select {
	case <-c.done:
	case <-ctx.Done():
		// The batch may still reach Redis: the delivery is then queued and
		// recorded, and GitHub's redelivery of it is answered "duplicate".
		return 0, fmt.Errorf("redis enqueue %s: %w", j.Delivery, ctx.Err())
	}
	if c.err != nil {
		return 0, fmt.Errorf("redis enqueue %s: %w", j.Delivery, c.err)
	}
	return c.res, nil
}

// Group commit bounds: a batch holds at most commitMax entries and, past
// its first, commitBytes of fields, so one round trip stays short.
const (
	commitMax   = 256
	commitBytes = 1 << 20
	// commitTimeout bounds one batch's round trip (intake's callers wait
	// for at most their own deadline).
	commitTimeout = 2 * time.Second
)

// enqueueCall is one delivery waiting for its batch.
type enqueueCall struct {
	ctx    context.Context
	key    string // the delivery id's dedupe key
	max    int
	fields []any
	size   int
	res    int
	err    error
	done   chan struct{}
}

func (c *enqueueCall) waiter() (context.Context, int) { return c.ctx, c.size }
func (c *enqueueCall) answer(err error) {
	c.err = err
	close(c.done)
}

// batched is one call waiting for a batch: its caller's context (a call
// whose caller gave up is answered and left out) and its size in bytes.
type batched interface {
	waiter() (context.Context, int)
	answer(err error)
}

// batcher gathers concurrent calls into batches, one batch in flight at a
// time (group commit): while one batch is on its way to Redis, the calls
// arriving meanwhile wait and go together in the next one, so under load a
// call costs a fraction of a round trip, and alone it costs one.
type batcher[C batched] struct {
	mu      sync.Mutex
	waiting []C
	running bool // a goroutine is committing batches
}

// add queues c and, unless a goroutine is already committing, starts one.
func (b *batcher[C]) add(c C, commit func([]C)) {
	b.mu.Lock()
	b.waiting = append(b.waiting, c)
	start := !b.running
	b.running = true
	b.mu.Unlock()
	if start {
		go b.loop(commit)
	}
}

// loop commits batches until none is waiting.
func (b *batcher[C]) loop(commit func([]C)) {
	for {
		b.mu.Lock()
		batch := b.next()
		if len(batch) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		commit(batch)
	}
}

// next takes the next batch off the waiting list (callers that gave up
// are answered and left out); b.mu held.
func (b *batcher[C]) next() []C {
	var batch []C
	size, i := 0, 0
	for ; i < len(b.waiting) && len(batch) < commitMax; i++ {
		c := b.waiting[i]
		ctx, n := c.waiter()
		if ctx.Err() != nil {
			c.answer(ctx.Err())
			continue
		}
		if len(batch) > 0 && size+n > commitBytes {
			break
		}
		batch = append(batch, c)
		size += n
	}
	rest := copy(b.waiting, b.waiting[i:])
	clear(b.waiting[rest:])
	b.waiting = b.waiting[:rest]
	return batch
}

// len is how many calls wait for the next batch.
func (b *batcher[C]) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiting)
}

// waitingEnqueues is how many appends wait for the next batch.
func (s *Store) waitingEnqueues() int { return s.commits.len() }

// AppendStats counts the append batches sent to Redis since the store
// opened: how many, the deliveries they carried, and the time from sending
// each to its answer (Redis's work, its sync of the append-only file, the
// network, and the wait of this process's goroutine to be run).
type AppendStats struct {
	Batches, Deliveries int64
	RoundTrips          time.Duration
}

// Appends is what the store's append batches came to so far.
func (s *Store) Appends() AppendStats {
	return AppendStats{Batches: s.appends.batches.Load(), Deliveries: s.appends.deliveries.Load(),
		RoundTrips: time.Duration(s.appends.nanos.Load())}
}

// commit sends one batch through enqueueScript and answers its callers.
func (s *Store) commit(batch []*enqueueCall) {
	keys := make([]string, 0, len(batch)+1)
	keys = append(keys, s.streamKey())
	n := 1
	for _, c := range batch {
		n += 2 + len(c.fields)
	}
	args := make([]any, 0, n)
	args = append(args, s.opts.DedupeTTL.Milliseconds())
	for _, c := range batch {
		keys = append(keys, c.key)
		args = append(args, c.max, len(c.fields))
		args = append(args, c.fields...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	start := time.Now()
	res, err := enqueueScript.Run(ctx, s.rdb, keys, args...).Int64Slice()
	cancel()
	s.appends.batches.Add(1)
	s.appends.deliveries.Add(int64(len(batch)))
	s.appends.nanos.Add(int64(time.Since(start)))
	if err == nil && len(res) != len(batch) {
		err = fmt.Errorf("%d answers from the enqueue script for %d deliveries", len(res), len(batch))
	}
	for i, c := range batch {
		if err == nil {
			c.res = int(res[i])
		}
		c.answer(err)
	}
}

// Read returns up to count entries no consumer has read yet, waiting up to
// block for one (0: forever; negative: not at all). A missing group (Redis lost its data, or someone deleted
// the key) is created again and reported through lostGroup.
func (s *Store) Read(ctx context.Context, count int, block time.Duration) (es []Entry, lostGroup bool, err error) {
	es, lostGroup, err = s.read(ctx, count, block)
	for i := range es {
		es[i].decode()
	}
	return es, lostGroup, err
}

// read is Read leaving the events of entries that carry their
// installation undecoded (see peekEntry): the reader decodes an entry's
// event only when it is about to queue it, not when it parks it.
func (s *Store) read(ctx context.Context, count int, block time.Duration) (es []Entry, lostGroup bool, err error) {
	res, err := s.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: streamGroup, Consumer: s.Consumer(), Streams: []string{s.streamKey(), ">"},
		Count: int64(count), Block: block,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		if strings.HasPrefix(err.Error(), "NOGROUP") {
			if gerr := s.EnsureGroup(ctx); gerr != nil {
				return nil, false, gerr
			}
			return nil, true, nil
		}
		return nil, false, fmt.Errorf("redis queue read: %w", err)
	}
	for _, st := range res {
		for _, m := range st.Messages {
			es = append(es, peekEntry(m.ID, m.Values))
		}
	}
	return es, false, nil
}

// Claim takes up to count entries pending with any consumer for longer
// than idle (XAUTOCLAIM from cursor). It returns them, the next cursor, and
// the ids that were pending but are no longer in the stream: deleted
// before they were acknowledged (Redis drops them from the group then).
func (s *Store) Claim(ctx context.Context, cursor string, idle time.Duration, count int) (es []Entry, next string, gone []string, err error) {
	raw, err := s.rdb.Do(ctx, "XAUTOCLAIM", s.streamKey(), streamGroup, s.Consumer(),
		idle.Milliseconds(), cursor, "COUNT", count).Slice()
	if err != nil {
		if strings.HasPrefix(err.Error(), "NOGROUP") {
			return nil, "0-0", nil, s.EnsureGroup(ctx)
		}
		return nil, cursor, nil, fmt.Errorf("redis queue claim: %w", err)
	}
	if len(raw) < 2 {
		return nil, "0-0", nil, fmt.Errorf("redis queue claim: %d elements in the XAUTOCLAIM reply, want 2 or 3", len(raw))
	}
	next, _ = raw[0].(string)
	msgs, _ := raw[1].([]any)
	es = claimedEntries(msgs)
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
		s.countDeliveries(ctx, es)
	}
	return es, next, gone, nil
}

// claimedEntries decodes the entries of an XAUTOCLAIM reply, whose fields
// come as a flat list (RESP2) or a map (RESP3).
func claimedEntries(msgs []any) []Entry {
	var es []Entry
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
	return es
}

// countDeliveries sets how often each claimed entry was handed out, to give
// up on an entry whose job takes every replica running it down. When Redis
// does not answer, the counts stay 0.
func (s *Store) countDeliveries(ctx context.Context, es []Entry) {
	pend, err := s.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{
		Stream: s.streamKey(), Group: streamGroup, Start: es[0].ID, End: es[len(es)-1].ID,
		Count: int64(len(es)) * 4, Consumer: s.Consumer(),
	}).Result()
	if err != nil {
		return
	}
	n := make(map[string]int64, len(pend))
	for _, p := range pend {
		n[p.ID] = p.RetryCount
	}
	for i := range es {
		es[i].Deliveries = n[es[i].ID]
	}
}

// Ack acknowledges and deletes entries in one transaction.
func (s *Store) Ack(ctx context.Context, ids []string) error {
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

// workScript runs a batch of the workers' writes in one step: first the
// ends of jobs — for each, the leases the job held are released (each only
// while its owner still holds it), then every ended job's entry is
// acknowledged and deleted — then the leases asked for, each job's all at
// once or none when one is held, every key with its owner and the TTL, the
// fence counter (KEYS[2]) growing by the number of leases. Ends go first
// so that a job taking an issue another job of the batch finished with
// gets it. KEYS: the stream, the fence counter, then each operation's
// lease keys in order; ARGV: the group, the TTL, then per operation "E",
// its entry id, its number of leases and their owners, or "L", its number
// of leases and their owners. It returns, per operation in order, for an
// end 1 or 0 per lease (released, or no longer held by that owner), for a
// lease request the fence counter's new value (the last lease's token), or
// 0 when none was taken.
var workScript = redis.NewScript(`
local out, ids, locks = {}, {}, {}
local k, a = 3, 3
while a <= #ARGV do
  local kind = ARGV[a]
  if kind == 'E' then
    ids[#ids + 1] = ARGV[a + 1]
    local n = tonumber(ARGV[a + 2])
    a = a + 3
    local r = {}
    for i = 1, n do
      if redis.call('GET', KEYS[k]) == ARGV[a] then
        redis.call('DEL', KEYS[k])
        r[i] = 1
      else
        r[i] = 0
      end
      k, a = k + 1, a + 1
    end
    out[#out + 1] = r
  else
    local n = tonumber(ARGV[a + 1])
    out[#out + 1] = 0
    locks[#locks + 1] = {#out, k, a + 2, n}
    k, a = k + n, a + 2 + n
  end
end
if #ids > 0 then
  redis.call('XACK', KEYS[1], ARGV[1], unpack(ids))
  redis.call('XDEL', KEYS[1], unpack(ids))
end
for _, l in ipairs(locks) do
  local at, k0, a0, n = l[1], l[2], l[3], l[4]
  local free = true
  for i = 0, n - 1 do
    if redis.call('EXISTS', KEYS[k0 + i]) == 1 then free = false break end
  end
  if free then
    for i = 0, n - 1 do
      redis.call('SET', KEYS[k0 + i], ARGV[a0 + i], 'PX', ARGV[2])
    end
    out[at] = redis.call('INCRBY', KEYS[2], n)
  end
end
return out`)

// workOp is one worker's write waiting for its batch: a job's end (entry
// set: release leases, acknowledge the entry) or a lease request (keys).
type workOp struct {
	ctx context.Context
	// end
	entry  string
	leases []job.Lease
	lost   []string
	// lease request
	keys   []string
	owners []string
	last   int64 // the last lease's token, 0: none taken

	err  error
	done chan struct{}
}

func (c *workOp) waiter() (context.Context, int) { return c.ctx, 0 }
func (c *workOp) answer(err error) {
	c.err = err
	close(c.done)
}

// runWork queues op for the next batch of workers' writes and waits for
// it (or for ctx: the batch may still reach Redis then).
func (s *Store) runWork(op *workOp) error {
	op.done = make(chan struct{})
	s.work.add(op, s.commitWork)
	select {
	case <-op.done:
		return op.err
	case <-op.ctx.Done():
		return op.ctx.Err()
	}
}

// FinishEntry releases leases (granted by this store) and acknowledges
// and deletes entry id. It returns the keys of the leases another owner
// held by then (they had expired). Like appends, the workers' writes —
// ends of jobs and lease requests — made while one batch of them is on its
// way to Redis go together in the next (one script, one round trip);
// FinishEntry returns once the batch holding its job's end came back.
func (s *Store) FinishEntry(ctx context.Context, id string, leases []job.Lease) (lost []string, err error) {
	op := &workOp{ctx: ctx, entry: id, leases: leases}
	if err := s.runWork(op); err != nil {
		// When the batch did not reach Redis, the leases expire and the
		// entry is claimed and run again, harmlessly.
		return nil, fmt.Errorf("redis queue finish %s: %w", id, err)
	}
	return op.lost, nil
}

// waitingFinishes is how many workers' writes wait for the next batch.
func (s *Store) waitingFinishes() int { return s.work.len() }

// commitWork sends one batch of workers' writes through workScript and
// answers its callers.
func (s *Store) commitWork(batch []*workOp) {
	keys := []string{s.streamKey(), s.fenceKey()}
	args := []any{streamGroup, s.opts.LockTTL.Milliseconds()}
	for _, op := range batch {
		if op.entry != "" {
			args = append(args, "E", op.entry, len(op.leases))
			for _, l := range op.leases {
				keys = append(keys, s.lockKey(l.Key))
				args = append(args, l.Owner)
			}
			continue
		}
		args = append(args, "L", len(op.keys))
		for i, k := range op.keys {
			keys = append(keys, s.lockKey(k))
			args = append(args, op.owners[i])
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	res, err := workScript.Run(ctx, s.rdb, keys, args...).Slice()
	cancel()
	if err == nil && len(res) != len(batch) {
		err = fmt.Errorf("%d answers from the work script for %d operations", len(res), len(batch))
	}
	for i, op := range batch {
		if err != nil {
			op.answer(err)
			continue
		}
		if op.entry == "" {
			op.last, _ = res[i].(int64)
			op.answer(nil)
			continue
		}
		rel, _ := res[i].([]any)
		for j, l := range op.leases {
			if j >= len(rel) || rel[j] != int64(1) {
				op.lost = append(op.lost, l.Key)
			}
		}
		op.answer(nil)
	}
}

// RenewEntries keeps the entries this consumer works on from being claimed
// and returns those another consumer claimed meanwhile.
func (s *Store) RenewEntries(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	first, last := idRange(ids)
	args := make([]any, 0, len(ids)+4)
	args = append(args, streamGroup, s.Consumer(), first, last)
	for _, id := range ids {
		args = append(args, id)
	}
	lost, err := renewEntriesScript.Run(ctx, s.rdb, []string{s.streamKey()}, args...).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("redis queue renew: %w", err)
	}
	return lost, nil
}

// idRange is the first and the last of stream entry ids in stream order
// ("-" and "+" when one is not an entry id: the whole stream).
func idRange(ids []string) (first, last string) {
	lo, hi := ids[0], ids[0]
	for _, id := range ids {
		c, ok := compareIDs(id, lo)
		if !ok {
			return "-", "+"
		}
		if c < 0 {
			lo = id
		}
		if c, _ = compareIDs(id, hi); c > 0 {
			hi = id
		}
	}
	return lo, hi
}

// compareIDs orders two stream entry ids ("<ms>-<seq>") as Redis does;
// false when one is not such an id.
func compareIDs(a, b string) (int, bool) {
	am, as, ok1 := parseID(a)
	bm, bs, ok2 := parseID(b)
	if !ok1 || !ok2 {
		return 0, false
	}
	if c := cmp.Compare(am, bm); c != 0 {
		return c, true
	}
	return cmp.Compare(as, bs), true
}

// parseID splits a stream entry id into its time and sequence parts.
func parseID(id string) (ms, seq uint64, ok bool) {
	m, q, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	ms, err1 := strconv.ParseUint(m, 10, 64)
	seq, err2 := strconv.ParseUint(q, 10, 64)
	return ms, seq, err1 == nil && err2 == nil
}

// HandBack gives an entry this consumer owns back to the group (see
// handBackScript); true when it was handed back.
func (s *Store) HandBack(ctx context.Context, id string) (bool, error) {
	n, err := handBackScript.Run(ctx, s.rdb, []string{s.streamKey()}, streamGroup, s.Consumer(), id).Int()
	if err != nil {
		return false, fmt.Errorf("redis queue hand back %s: %w", id, err)
	}
	return n == 1, nil
}

// handBackBatch is the most entries one handBackEntriesScript call
// hands back, so one call stays short.
const handBackBatch = 256

// HandBackEntries gives the entries among ids this consumer owns back to
// the group (see handBackEntriesScript), handBackBatch per round trip, in
// the order given; it returns how many it handed back. On an error (or ctx
// ending) it stops: the entries not yet handed back stay pending.
func (s *Store) HandBackEntries(ctx context.Context, ids []string) (int, error) {
	done := 0
	for len(ids) > 0 {
		k := min(len(ids), handBackBatch)
		args := make([]any, 0, k+2)
		args = append(args, streamGroup, s.Consumer())
		for _, id := range ids[:k] {
			args = append(args, id)
		}
		n, err := handBackEntriesScript.Run(ctx, s.rdb, []string{s.streamKey()}, args...).Int()
		if err != nil {
			return done, fmt.Errorf("redis queue hand back %d entries: %w", len(ids), err)
		}
		done += n
		ids = ids[k:]
	}
	return done, nil
}

// QueueStats reads the stream's length and pending summary in one round
// trip.
func (s *Store) QueueStats(ctx context.Context, now time.Time) (metrics.QueueStats, error) {
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

// DropConsumer removes consumer from the group if it holds nothing.
func (s *Store) DropConsumer(ctx context.Context, consumer string) (bool, error) {
	n, err := dropConsumerScript.Run(ctx, s.rdb, []string{s.streamKey()}, streamGroup, consumer).Int()
	if err != nil {
		return false, fmt.Errorf("redis queue drop consumer %s: %w", consumer, err)
	}
	return n == 1, nil
}

// DropGoneConsumers removes the consumers (of stopped replicas) that hold
// nothing and were idle for longer than idle; a live replica reads every
// half second, so it is never idle that long.
func (s *Store) DropGoneConsumers(ctx context.Context, idle time.Duration) error {
	cs, err := s.rdb.XInfoConsumers(ctx, s.streamKey(), streamGroup).Result()
	if err != nil {
		return fmt.Errorf("redis queue consumers: %w", err)
	}
	for _, c := range cs {
		if c.Pending == 0 && c.Idle > idle && c.Name != s.Consumer() {
			if _, err := s.DropConsumer(ctx, c.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// QueueLen is the number of entries not yet acknowledged.
func (s *Store) QueueLen(ctx context.Context) (int64, error) {
	n, err := s.rdb.XLen(ctx, s.streamKey()).Result()
	if err != nil {
		return 0, fmt.Errorf("redis queue length: %w", err)
	}
	return n, nil
}

// entryMillis is the append time encoded in an entry id ("<ms>-<seq>").
// EntryTime is when the entry of id was appended (by Redis's clock).
func EntryTime(id string) (time.Time, bool) {
	ms, ok := entryMillis(id)
	return time.UnixMilli(ms), ok
}

func entryMillis(id string) (int64, bool) {
	ms, _, ok := strings.Cut(id, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	return n, err == nil
}

// Entries reads the entries ids back from the stream in one round trip
// (XRANGE id id each), in the order asked; gone are the ids no longer in
// the stream (deleted before they were acknowledged).
func (s *Store) Entries(ctx context.Context, ids []string) (es []Entry, gone []string, err error) {
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.XMessageSliceCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.XRange(ctx, s.streamKey(), id, id)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, nil, fmt.Errorf("redis queue re-read: %w", err)
	}
	for i, c := range cmds {
		ms, err := c.Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, nil, fmt.Errorf("redis queue re-read %s: %w", ids[i], err)
		}
		if len(ms) == 0 {
			gone = append(gone, ids[i])
			continue
		}
		es = append(es, decodeEntry(ms[0].ID, ms[0].Values))
	}
	return es, gone, nil
}
