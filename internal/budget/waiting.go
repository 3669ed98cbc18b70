package budget

import (
	"context"
	"time"
)

// HoldReason is why an installation's background work waits.
type HoldReason int

const (
	// HeldAtReserve: the budget is at the interactive reserve.
	HeldAtReserve HoldReason = iota + 1
	// HeldSpent: the budget is spent until its reset.
	HeldSpent
	// HeldRetryAfter: GitHub asked to wait (a secondary limit's
	// Retry-After), told to any replica.
	HeldRetryAfter
)

// String is the reason as the state names it (state.HoldReason, whose
// Words say it to people): "reserve", "spent", "retry-after".
func (r HoldReason) String() string {
	switch r {
	case HeldAtReserve:
		return "reserve"
	case HeldSpent:
		return "spent"
	case HeldRetryAfter:
		return "retry-after"
	}
	return "unknown"
}

// Hold is an installation's background work waiting for its budget, as
// the shared record says now.
type Hold struct {
	Installation int64
	Until        time.Time
	Reason       HoldReason
	// Why is the long reason, as a held request's error says it.
	Why string
}

// manyLoader is a Store that reads several records in one round trip.
type manyLoader interface {
	LoadMany(ctx context.Context, installations []int64) (map[int64]Record, error)
}

// Held lists the installations among ids whose background work waits now,
// read from the shared record (the same on every replica, unlike
// Waiting, which is what this replica's own requests met), in the order
// of ids. The REST and GraphQL budgets both count: the later wait wins.
func (b *Budget) Held(ctx context.Context, ids []int64) ([]Hold, error) {
	var recs map[int64]Record
	if m, ok := b.store.(manyLoader); ok {
		var err error
		if recs, err = m.LoadMany(ctx, ids); err != nil {
			return nil, err
		}
	} else {
		recs = make(map[int64]Record, len(ids))
		for _, id := range ids {
			r, err := b.store.Load(ctx, id)
			if err != nil {
				return nil, err
			}
			recs[id] = r
		}
	}
	now := b.now()
	var out []Hold
	for _, id := range ids {
		rec, ok := recs[id]
		if !ok {
			continue
		}
		if h, ok := holdOf(rec, b.reserve, now); ok {
			h.Installation = id
			out = append(out, h)
		}
	}
	return out, nil
}

// holdOf is decide's rule for background work, with its reason typed.
func holdOf(rec Record, reserve float64, now time.Time) (Hold, bool) {
	var h Hold
	for _, graphql := range []bool{false, true} {
		wait, why := decide(rec, graphql, Background, reserve, now)
		if wait <= 0 || !now.Add(wait).After(h.Until) {
			continue
		}
		bk := rec.Core
		if graphql {
			bk = rec.GraphQL
		}
		h.Until, h.Why = now.Add(wait), why
		switch {
		case rec.NotBefore.After(now):
			h.Reason = HeldRetryAfter
		case bk.Remaining == 0:
			h.Reason = HeldSpent
		default:
			h.Reason = HeldAtReserve
		}
	}
	return h, h.Reason != 0
}

// LoadMany reads the records of installations in one pipelined round trip.
func (r *Redis) LoadMany(ctx context.Context, installations []int64) (map[int64]Record, error) {
	pipe := r.rdb.Pipeline()
	for _, id := range installations {
		pipe.HGetAll(ctx, r.key(id))
	}
	cmds, err := pipe.Exec(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]Record, len(installations))
	for i, c := range cmds {
		m, err := c.(interface {
			Result() (map[string]string, error)
		}).Result()
		if err != nil {
			return nil, err
		}
		out[installations[i]] = recordOf(m)
	}
	return out, nil
}
