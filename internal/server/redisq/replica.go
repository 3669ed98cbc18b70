package redisq

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server/metrics"

	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/workq"
)

// streamRead bounds one read: the most entries taken at once, and how long
// a read waits for new ones (also how soon the reader notices shutdown).
const (
	streamBatch     = 64
	streamReadBlock = 500 * time.Millisecond
	// consumerSweepEvery is how often a replica removes consumers of
	// stopped replicas that hold nothing and have been idle for
	// consumerGone.
	consumerSweepEvery = 10 * time.Minute
	consumerGone       = time.Hour
	// ReadAhead is how many entries past its workers' count a replica
	// holds (read, waiting in its local queue's per-issue lanes): enough
	// that a flood on one issue or one installation, which runs a job at a
	// time per issue, does not keep the entries behind it in the stream
	// unread while workers are free (see Held).
	ReadAhead = 256
	// MaxDeliveries is how often an entry is handed out (first read plus
	// claims) before it is given up: a job that took that many replicas
	// down with it is left to the sweep rather than crash the next one.
	MaxDeliveries = 5
	// InstallationAhead is how many entries past the workers' count one
	// installation may hold in the local queue. Past it, the reader keeps
	// reading but keeps only the id of the installation's next entries
	// (parked: still pending with this replica's consumer, renewed like the
	// held ones, claimed by another replica after a crash) and reads their
	// payloads again when the installation's jobs finish. So a backlog of one
	// installation at the front of the stream does not keep the entries of
	// the others behind it unread.
	InstallationAhead = ReadAhead / 4
	// MaxParked bounds the ids parked at once (a few dozen bytes each).
	// Past it the reader reads nothing new until parked entries are run: the
	// entries behind them wait in the stream, as every entry did before
	// parking.
	MaxParked = 100_000
	// parkedReadBlock is how long a read waits for new entries while some
	// are parked: the reader must come back soon to run them once their
	// installation's jobs finish.
	parkedReadBlock = 50 * time.Millisecond
)

// Replica is a replica's side of the Redis work queue: a reader that
// takes entries (new ones, and ones a dead replica left pending past
// QUEUE_CLAIM_IDLE) into the local queue, never more than Held(workers),
// so the rest stay for other replicas; a renewer that keeps the entries it
// holds from being claimed while they wait or run; and an acker that
// acknowledges finished entries in batches, retrying while Redis is away.
//
// The local queue picks what runs (workq: the installation running fewest
// jobs first, then the issue waiting longest, one job per issue at a
// time); the read-ahead is what gives it a choice: an entry read but not
// started is pending with this replica's consumer and renewed like a
// running one, so after a crash another replica claims it, and at shutdown
// it is handed back at once.
type Replica struct {
	ReplicaOptions
	store *Store
	// tokens holds one token per entry this replica holds (read, not yet
	// finished); its capacity is Held(workers).
	tokens chan struct{}

	mu   sync.Mutex
	held map[string]bool // entries read and not yet acknowledged or handed back: true once finished
	// acked remembers entries acknowledged in the last minute: a claim
	// that ran in Redis just before the acknowledgement (the renewer could
	// not reach Redis) may still return one, and it must not run again.
	acked map[string]time.Time
	// seenForeign remembers the entries of another App already logged.
	seenForeign map[string]bool
	toAck       []string
	ackNote     chan struct{} // a value when toAck grew or acking should stop
	ackClose    bool
	// holding counts, per installation, the entries pushed into the local
	// queue and not yet finished; parked holds, per installation, the ids
	// read past InstallationAhead, in stream order (parkedN in all).
	holding  map[int64]int
	parked   map[int64][]string
	parkedN  int
	leftNote chan struct{} // a value when an installation's job finished
}

// ReplicaOptions connect a Replica to the server it feeds.
type ReplicaOptions struct {
	// Idle is QUEUE_CLAIM_IDLE: entries pending longer with a replica that
	// stopped renewing them are claimed.
	Idle time.Duration
	// Workers is the replica's worker count; it holds Held(Workers)
	// entries at most.
	Workers int
	// Queue is the local queue entries are pushed into.
	Queue *workq.Queue
	// Keys gives a job's serialisation key and the lease keys it holds.
	Keys func(*ghevent.Event) (string, []string)
	// NoteInstallation records an installation seen in a delivery.
	NoteInstallation func(int64)
	// NoteStore records a store failure (intake answers 503 until a probe
	// succeeds).
	NoteStore func(error)
	Log       *slog.Logger
	Metrics   *metrics.Metrics
}

// NewReplica is this replica's side of the work queue in store.
func NewReplica(store *Store, o ReplicaOptions) *Replica {
	return &Replica{
		ReplicaOptions: o, store: store,
		tokens:   make(chan struct{}, Held(o.Workers)),
		held:     make(map[string]bool),
		acked:    make(map[string]time.Time),
		ackNote:  make(chan struct{}, 1),
		holding:  make(map[int64]int),
		parked:   make(map[int64][]string),
		leftNote: make(chan struct{}, 1),
	}
}

// installationCap is the most entries one installation holds in the local
// queue (running or waiting).
func (q *Replica) installationCap() int { return q.Workers + InstallationAhead }

// park keeps only e's id when its installation already holds
// installationCap entries or has parked ones (which go first: one issue's
// entries run in stream order); otherwise it counts e as held by its
// installation. True when parked.
func (q *Replica) park(id string, inst int64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.parked[inst]) == 0 && q.holding[inst] < q.installationCap() {
		q.holding[inst]++
		return false
	}
	q.parked[inst] = append(q.parked[inst], id)
	q.parkedN++
	return true
}

// left notes that a job of installation inst finished (or was handed
// back): its parked entries may run.
func (q *Replica) left(inst int64) {
	q.mu.Lock()
	if q.holding[inst]--; q.holding[inst] <= 0 {
		delete(q.holding, inst)
	}
	q.mu.Unlock()
	select {
	case q.leftNote <- struct{}{}:
	default:
	}
}

// parkedFull reports whether the reader must read nothing new (MaxParked).
func (q *Replica) parkedFull() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.parkedN >= MaxParked
}

func (q *Replica) parkedLen() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.parkedN
}

// unpark reads back and pushes up to n parked entries of installations
// under installationCap, one installation after another; it returns how
// many it pushed. When Redis does not answer they stay parked.
func (q *Replica) unpark(ctx context.Context, n int) (int, error) {
	type pick struct {
		id   string
		inst int64
	}
	var picks []pick
	q.mu.Lock()
	for more := true; more && len(picks) < n; {
		more = false
		for inst, ids := range q.parked {
			if len(picks) >= n {
				break
			}
			if q.holding[inst] >= q.installationCap() {
				continue
			}
			picks = append(picks, pick{ids[0], inst})
			q.holding[inst]++
			q.parkedN--
			if len(ids) == 1 {
				delete(q.parked, inst)
			} else {
				q.parked[inst] = ids[1:]
				more = true
			}
		}
	}
	q.mu.Unlock()
	if len(picks) == 0 {
		return 0, nil
	}
	ids := make([]string, len(picks))
	for i, p := range picks {
		ids[i] = p.id
	}
	es, gone, err := q.store.Entries(ctx, ids)
	if err != nil {
		q.mu.Lock()
		for i := len(picks) - 1; i >= 0; i-- {
			p := picks[i]
			q.parked[p.inst] = append([]string{p.id}, q.parked[p.inst]...)
			q.parkedN++
			q.holding[p.inst]--
		}
		q.mu.Unlock()
		return 0, err
	}
	if len(gone) > 0 {
		q.Metrics.QueueLost(len(gone))
		q.Log.Error("queue entries deleted before they were acknowledged; the sweep catches their issues up",
			"entries", gone)
		goneSet := make(map[string]bool, len(gone))
		for _, id := range gone {
			goneSet[id] = true
		}
		for _, p := range picks {
			if goneSet[p.id] {
				q.left(p.inst)
				q.ack(p.id)
			}
		}
	}
	inst := make(map[string]int64, len(picks))
	for _, p := range picks {
		inst[p.id] = p.inst
	}
	taken := 0
	for _, e := range es {
		if q.push(e, inst[e.ID]) {
			taken++
		}
	}
	return taken, nil
}

// push queues a read entry that holds one of installation inst's slots
// (the installation it was parked or counted under: an unreadable entry's
// event does not say). An unreadable entry is dropped instead — counted,
// logged, acknowledged, its slot given back — and its issue left to the
// sweep. It reports whether it queued the entry.
func (q *Replica) push(e Entry, inst int64) bool {
	if e.Bad != nil {
		q.Metrics.QueueLost(1)
		q.Log.Error("unreadable queue entry dropped; the sweep catches its issue up", "entry", e.ID, "err", e.Bad)
		q.left(inst)
		q.ack(e.ID)
		return false
	}
	q.NoteInstallation(e.Job.Event.Installation)
	key, locks := q.Keys(e.Job.Event)
	q.Queue.Push(workq.Work{Job: e.Job, Key: key, Locks: locks, Entry: e.ID, Queued: time.Now()})
	return true
}

// Held is the most entries a replica with workers workers holds at once:
// running, and waiting in its local queue.
func Held(workers int) int { return workers + ReadAhead }

// claimEvery is how often the reader looks for entries to claim.
func (q *Replica) claimEvery() time.Duration {
	return min(max(q.Idle/4, 50*time.Millisecond), 5*time.Second)
}

// ReadLoop takes entries until ctx ends.
func (q *Replica) ReadLoop(ctx context.Context) {
	log := q.Log
	cur := readCursor{id: "0-0", nextClaim: time.Now().Add(q.claimEvery())}
	nextConsumerSweep := time.Now().Add(consumerSweepEvery)
	wait := 100 * time.Millisecond
	for {
		n, ok := q.takeTokens(ctx)
		if !ok {
			return
		}
		taken, err := q.fetch(ctx, &cur, n)
		for range n - taken {
			<-q.tokens
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			q.NoteStore(err)
			log.Warn("queue read failed; retrying", "err", err, "in", wait)
			if !job.Sleep(ctx, wait) {
				return
			}
			wait = min(2*wait, 2*time.Second)
			continue
		}
		wait = 100 * time.Millisecond
		if taken == 0 && q.parkedFull() {
			// Nothing new may be read and no parked entry can run: wait
			// for a job to finish.
			select {
			case <-q.leftNote:
			case <-ctx.Done():
				return
			}
		}
		if time.Now().After(nextConsumerSweep) {
			nextConsumerSweep = time.Now().Add(consumerSweepEvery)
			if err := q.store.DropGoneConsumers(ctx, consumerGone); err != nil {
				log.Warn("removing stopped consumers", "err", err)
			}
		}
	}
}

// takeTokens waits for one free slot, then takes the others free now, up
// to streamBatch; false when ctx ended. While the replica holds enough
// entries to keep its workers busy (a backlog), it waits for a worker's
// worth of room (up to streamBatch) rather than reading one entry per
// finished job: each read is a write to Redis.
func (q *Replica) takeTokens(ctx context.Context) (int, bool) {
	select {
	case q.tokens <- struct{}{}:
	case <-ctx.Done():
		return 0, false
	}
	n := 1
	for n < streamBatch {
		select {
		case q.tokens <- struct{}{}:
			n++
			continue
		default:
		}
		if n >= min(q.Workers, streamBatch) || len(q.tokens)-n < 2*q.Workers {
			return n, true
		}
		select {
		case q.tokens <- struct{}{}:
			n++
		case <-ctx.Done():
			for range n {
				<-q.tokens
			}
			return 0, false
		}
	}
	return n, true
}

// readCursor is where the reader's claims of idle entries resume, and
// when the next claim pass is due.
type readCursor struct {
	id        string
	nextClaim time.Time
}

// fetch takes up to n entries: idle ones claimed from stopped consumers
// when a claim pass is due, then new ones. It returns how many it took.
func (q *Replica) fetch(ctx context.Context, cur *readCursor, n int) (taken int, err error) {
	log := q.Log
	if q.parkedLen() > 0 {
		if taken, err = q.unpark(ctx, n); err != nil {
			return taken, err
		}
	}
	if taken < n && !time.Now().Before(cur.nextClaim) {
		var es []Entry
		var gone []string
		es, cur.id, gone, err = q.store.Claim(ctx, cur.id, q.Idle, n)
		if err != nil {
			return 0, err
		}
		if cur.id == "0-0" {
			cur.nextClaim = time.Now().Add(q.claimEvery())
		}
		if len(gone) > 0 {
			q.Metrics.QueueLost(len(gone))
			log.Error("queue entries deleted before they were acknowledged; the sweep catches their issues up",
				"entries", gone)
		}
		taken += q.accept(es, true)
	}
	if taken < n && !q.parkedFull() {
		block := streamReadBlock
		if q.parkedLen() > 0 {
			block = parkedReadBlock
		}
		es, lostGroup, err := q.store.read(ctx, n-taken, block)
		if lostGroup {
			q.Metrics.QueueLost(1)
			log.Error("the queue's consumer group was missing (Redis lost its data?) and was created again; deliveries queued before are lost to the sweep")
		}
		taken += q.accept(es, false)
		return taken, err
	}
	return taken, nil
}

// accept puts entries into the local queue and returns how many it took
// (each keeps one of the reader's tokens). An entry it cannot decode is
// acknowledged at once: its issue is left to the sweep.
func (q *Replica) accept(es []Entry, claimed bool) int {
	taken := 0
	for _, e := range es {
		if app := q.store.AppID(); e.AppID != 0 && app != 0 && e.AppID != app {
			e.decode()
			q.foreign(e)
			continue
		}
		if e.Bad != nil {
			q.Metrics.QueueLost(1)
			q.Log.Error("unreadable queue entry dropped; the sweep catches its issue up", "entry", e.ID, "err", e.Bad)
			q.ack(e.ID)
			continue
		}
		q.mu.Lock()
		_, dup := q.held[e.ID]
		_, done := q.acked[e.ID]
		if !dup && !done {
			q.held[e.ID] = false
		}
		q.mu.Unlock()
		if dup || done {
			continue // ours already, or just acknowledged: the renewer fell behind
		}
		if claimed && e.Deliveries > MaxDeliveries {
			e.decode()
			q.mu.Lock()
			delete(q.held, e.ID)
			q.mu.Unlock()
			q.Metrics.QueueLost(1)
			q.Log.Error("delivery given up: every replica that ran it died; the sweep catches its issue up",
				"delivery", e.Job.Delivery, "entry", e.ID, "deliveries", e.Deliveries)
			q.ack(e.ID)
			continue
		}
		if claimed {
			q.Metrics.QueueClaimed()
			q.Log.Info("claimed a delivery left pending by another replica", "delivery", e.Job.Delivery,
				"entry", e.ID, "idle_over", q.Idle.String())
		}
		inst := e.installation()
		if q.park(e.ID, inst) {
			continue // its payload is read (and decoded) again when its installation's turn comes
		}
		e.decode()
		if q.push(e, inst) {
			taken++
		}
	}
	return taken
}

// foreign leaves an entry of another App alone: neither run nor
// acknowledged (the other App's replicas read the same stream only when both
// were forced onto one REDIS_PREFIX; they claim it once it is idle). It is
// logged the first time this replica sees it, and counted.
func (q *Replica) foreign(e Entry) {
	q.Metrics.QueueForeign()
	q.mu.Lock()
	if q.seenForeign == nil {
		q.seenForeign = map[string]bool{}
	}
	first := !q.seenForeign[e.ID]
	if first && len(q.seenForeign) < 10000 {
		q.seenForeign[e.ID] = true
	}
	q.mu.Unlock()
	if first {
		q.Log.Error("queue entry of another App left alone: two Apps share this REDIS_PREFIX; give each its own (the default, autopilot:<APP_ID>:, does)",
			"entry", e.ID, "entry_app_id", e.AppID, "app_id", q.store.AppID(), "delivery", e.Job.Delivery)
	}
}

// Finish settles an entry whose job ran: acknowledged, or handed back when
// the shutdown deadline cut the job (ctx ended), for another replica to run
// again at once. leases are the job's leases still to release, granted by
// this replica's store: they are released in the same round trip as the
// acknowledgement. When that round trip fails, each lease is released on
// its own (or expires) and the acknowledgement is retried in the
// background.
func (q *Replica) Finish(ctx context.Context, w workq.Work, leases []job.Lease) {
	if ctx.Err() != nil {
		q.release(leases)
		q.GiveBack(w)
		return
	}
	if len(leases) == 0 {
		q.ack(w.Entry)
		q.left(w.Installation())
		<-q.tokens
		return
	}
	fctx, cancel := context.WithTimeout(ctx, storeTimeout)
	lost, err := q.store.FinishEntry(fctx, w.Entry, leases)
	cancel()
	if err != nil {
		q.Log.Warn("releasing leases and acknowledging in one step failed; releasing and acknowledging apart",
			"entry", w.Entry, "err", err)
		q.release(leases)
		q.ack(w.Entry)
		q.left(w.Installation())
		<-q.tokens
		return
	}
	if len(lost) > 0 {
		q.Log.Warn("lease release: held by another owner by then", "keys", lost)
	}
	q.Metrics.QueueAcked(1)
	q.mu.Lock()
	delete(q.held, w.Entry)
	q.acked[w.Entry] = time.Now()
	q.mu.Unlock()
	q.left(w.Installation())
	<-q.tokens
}

// release releases leases one by one (a failure leaves the lease to
// expire).
func (q *Replica) release(leases []job.Lease) {
	if len(leases) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	for _, l := range leases {
		if err := l.Release(ctx); err != nil {
			q.Log.Warn("lease release", "key", l.Key, "err", err)
		}
	}
}

// GiveBack hands an entry that will not run here back to the group. When
// Redis does not answer, the entry stays pending and another replica claims
// it after QUEUE_CLAIM_IDLE.
func (q *Replica) GiveBack(w workq.Work) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	ok, err := q.store.HandBack(ctx, w.Entry)
	cancel()
	switch {
	case err != nil:
		q.Log.Warn("could not hand a delivery back; another replica claims it after QUEUE_CLAIM_IDLE",
			"delivery", w.Job.Delivery, "entry", w.Entry, "err", err)
	case ok:
		q.Metrics.QueueHandedBack()
	}
	q.mu.Lock()
	delete(q.held, w.Entry)
	q.mu.Unlock()
	q.left(w.Installation())
	<-q.tokens
}

// ack schedules an acknowledgement.
func (q *Replica) ack(id string) {
	q.mu.Lock()
	if _, ok := q.held[id]; ok {
		q.held[id] = true
	}
	q.toAck = append(q.toAck, id)
	q.mu.Unlock()
	select {
	case q.ackNote <- struct{}{}:
	default:
	}
}

// CloseAcks lets ackLoop return once everything scheduled is acknowledged.
func (q *Replica) CloseAcks() {
	q.mu.Lock()
	q.ackClose = true
	q.mu.Unlock()
	select {
	case q.ackNote <- struct{}{}:
	default:
	}
}

// AckLoop acknowledges scheduled entries in batches until closeAcks was
// called and nothing is left, or ctx ends (what is left stays pending and
// is claimed by another replica: run again, harmlessly).
func (q *Replica) AckLoop(ctx context.Context) {
	wait := 100 * time.Millisecond
	for {
		q.mu.Lock()
		batch, closing := q.toAck, q.ackClose
		q.toAck = nil
		q.mu.Unlock()
		if len(batch) == 0 {
			if closing {
				return
			}
			select {
			case <-q.ackNote:
				continue
			case <-ctx.Done():
				return
			}
		}
		for len(batch) > 0 {
			n := min(len(batch), 512)
			actx, cancel := context.WithTimeout(ctx, storeTimeout)
			err := q.store.Ack(actx, batch[:n])
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					q.Log.Warn("acknowledgements left undone at shutdown; other replicas run those deliveries again",
						"entries", len(batch))
					return
				}
				q.NoteStore(err)
				q.Log.Warn("queue acknowledgement failed; retrying", "err", err, "in", wait)
				job.Sleep(ctx, wait)
				wait = min(2*wait, 2*time.Second)
				continue
			}
			wait = 100 * time.Millisecond
			q.Metrics.QueueAcked(n)
			now := time.Now()
			q.mu.Lock()
			for _, id := range batch[:n] {
				delete(q.held, id)
				q.acked[id] = now
			}
			q.mu.Unlock()
			batch = batch[n:]
		}
	}
}

// RenewLoop keeps the held entries from being claimed, every third of
// QUEUE_CLAIM_IDLE, until ctx ends.
func (q *Replica) RenewLoop(ctx context.Context) {
	job.Every(ctx, max(q.Idle/3, 10*time.Millisecond), func() {
		q.forgetAcked(time.Now().Add(-ackedMemory))
		ids := q.heldIDs()
		// In stream order, so each batch's ids are one short range of the
		// consumer's pending list (see RenewEntries).
		slices.SortFunc(ids, func(a, b string) int { c, _ := compareIDs(a, b); return c })
		for len(ids) > 0 {
			n := min(len(ids), 512)
			rctx, cancel := context.WithTimeout(ctx, storeTimeout)
			lost, err := q.store.RenewEntries(rctx, ids[:n])
			cancel()
			if err != nil {
				if ctx.Err() == nil {
					q.Log.Warn("renewing held queue entries failed", "err", err)
				}
				return
			}
			lost = q.unfinished(lost)
			if dropped, rest := q.dropParked(lost); len(dropped) > 0 {
				// Not read again: the replica that claimed them runs them.
				q.Log.Warn("parked deliveries were claimed by another replica; left to it", "entries", dropped)
				lost = rest
			}
			if len(lost) > 0 {
				// Slow enough to be claimed: the other replica runs it too,
				// which the issue lease serialises and the ledger makes harmless.
				q.Log.Warn("held deliveries were claimed by another replica", "entries", lost)
			}
			ids = ids[n:]
		}
	})
}

// dropParked forgets the parked entries among ids (another replica
// claimed them) and returns them, and the other ids.
func (q *Replica) dropParked(ids []string) (dropped, rest []string) {
	if len(ids) == 0 {
		return nil, nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.parkedN == 0 {
		return nil, ids
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	for inst, pids := range q.parked {
		kept := pids[:0]
		for _, id := range pids {
			if want[id] {
				dropped = append(dropped, id)
				delete(want, id)
				delete(q.held, id)
				q.parkedN--
				continue
			}
			kept = append(kept, id)
		}
		if len(kept) == 0 {
			delete(q.parked, inst)
		} else {
			q.parked[inst] = kept
		}
	}
	for _, id := range ids {
		if want[id] {
			rest = append(rest, id)
		}
	}
	return dropped, rest
}

// ackedMemory is how long acknowledged entries are remembered (see
// Replica.acked): far longer than a claim's round trip.
const ackedMemory = time.Minute

// forgetAcked drops the acknowledged entries remembered since before t.
func (q *Replica) forgetAcked(t time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for id, at := range q.acked {
		if at.Before(t) {
			delete(q.acked, id)
		}
	}
}

// unfinished keeps the ids whose jobs have not finished (a finished one
// may have been acknowledged since the renewal read it).
func (q *Replica) unfinished(ids []string) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []string
	for _, id := range ids {
		if done, ok := q.held[id]; ok && !done {
			out = append(out, id)
		}
	}
	return out
}

func (q *Replica) heldIDs() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	ids := make([]string, 0, len(q.held))
	for id := range q.held {
		ids = append(ids, id)
	}
	return ids
}

// Leave ends this replica's part at shutdown: entries still held stay
// pending for another replica to claim after QUEUE_CLAIM_IDLE; with none,
// the consumer is removed from the group.
func (q *Replica) Leave() {
	if ids := q.heldIDs(); len(ids) > 0 {
		q.Log.Warn("deliveries left pending; another replica claims them after QUEUE_CLAIM_IDLE",
			"entries", len(ids), "claim_idle", q.Idle.String())
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if _, err := q.store.DropConsumer(ctx, q.store.Consumer()); err != nil {
		q.Log.Warn("removing this replica's queue consumer", "err", err)
	}
}

// storeTimeout bounds one Redis call made outside a job.
const storeTimeout = 2 * time.Second

// HandBack, at shutdown once the reader has stopped, gives the entries this
// replica read but will not run back to the group, for another replica to
// read at once: ws (queued in the local queue, not started) first, then the
// parked ones, each installation's in stream order, handBackBatch per round
// trip. It stops when ctx ends (SHUTDOWN_TIMEOUT) or Redis fails: the
// entries left then stay pending and are claimed after QUEUE_CLAIM_IDLE.
func (q *Replica) HandBack(ctx context.Context, ws []workq.Work) {
	ids := make([]string, 0, len(ws)+q.parkedLen())
	for _, w := range ws {
		ids = append(ids, w.Entry)
	}
	q.mu.Lock()
	for inst, pids := range q.parked {
		ids = append(ids, pids...)
		delete(q.parked, inst)
	}
	q.parkedN = 0
	q.mu.Unlock()
	n, err := 0, error(nil)
	if len(ids) > 0 {
		n, err = q.store.HandBackEntries(ctx, ids)
	}
	for range n {
		q.Metrics.QueueHandedBack()
	}
	if err != nil {
		q.Log.Warn("could not hand every delivery back; another replica claims the rest after QUEUE_CLAIM_IDLE",
			"handed_back", n, "of", len(ids), "err", err, "claim_idle", q.Idle.String())
	}
	// Handed back or left to the claim: no longer this replica's to renew.
	q.mu.Lock()
	for _, id := range ids {
		delete(q.held, id)
	}
	q.mu.Unlock()
	for _, w := range ws {
		q.left(w.Installation())
		<-q.tokens
	}
}
