// Package budget is GitHub's rate budget per installation, shared by the
// App's replicas: every answer's x-ratelimit-* headers are merged into one
// record per installation (in Redis when REDIS_URL is set, else in memory),
// and a secondary limit's retry-after becomes the installation's "not
// before", honoured by every replica. Before each request the GitHub
// transport asks Admit how long to wait: interactive work (answers,
// commands, PR events, check clicks) may spend the whole budget; background
// work (the sweep, tracker backfills, catch-up reads) stops at the
// interactive reserve and waits for the reset instead of spending it.
// docs/app.md ("GitHub's limits") has the rules and the numbers.
package budget

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Class is what a request is for.
type Class int

const (
	// Interactive work answers a person: it may use the reserve.
	Interactive Class = iota
	// Background work (sweeps, backfills, catch-up) leaves the reserve.
	Background
)

type classKey struct{}

// WithClass marks the requests made with ctx as class c.
func WithClass(ctx context.Context, c Class) context.Context {
	return context.WithValue(ctx, classKey{}, c)
}

// ClassOf is ctx's class; Interactive unless marked.
func ClassOf(ctx context.Context) Class {
	c, _ := ctx.Value(classKey{}).(Class)
	return c
}

// DefaultReserve is the share of the hourly limit kept for interactive work.
const DefaultReserve = 0.2

// Bucket is one budget as last seen: REST's ("core") or GraphQL's points.
type Bucket struct {
	// Limit and Remaining are x-ratelimit-limit/remaining; Remaining is -1
	// before any answer.
	Limit, Remaining int
	// Reset is x-ratelimit-reset: when the window starts again.
	Reset time.Time
}

// Record is an installation's budget as the replicas saw it.
type Record struct {
	Core, GraphQL Bucket
	// NotBefore is the end of the longest retry-after GitHub announced to
	// any replica (a secondary limit): no request before it.
	NotBefore time.Time
}

// Store keeps the records. Observe merges: a later window replaces an
// earlier one, and within one window the lower remaining wins (answers
// arrive out of order; remaining only falls within a window). Hold keeps
// the later of two not-befores.
type Store interface {
	Load(ctx context.Context, installation int64) (Record, error)
	Observe(ctx context.Context, installation int64, graphql bool, b Bucket) error
	Hold(ctx context.Context, installation int64, until time.Time) error
}

// Options configures a Budget.
type Options struct {
	// Reserve is the share of the limit background work leaves for
	// interactive work (default DefaultReserve; 0 < Reserve < 1).
	Reserve float64
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Budget applies the split to the shared records. Safe for concurrent use.
type Budget struct {
	store   Store
	reserve float64
	now     func() time.Time

	mu      sync.Mutex
	waiting map[int64]Wait
}

// Wait is background work of an installation held back, for the health page.
type Wait struct {
	Installation int64
	Until        time.Time
	Why          string
}

// New returns a Budget on store.
func New(store Store, o Options) *Budget {
	if o.Reserve <= 0 || o.Reserve >= 1 {
		o.Reserve = DefaultReserve
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Budget{store: store, reserve: o.Reserve, now: o.Now, waiting: map[int64]Wait{}}
}

// For is the installation's gate, as the GitHub transport uses it.
func (b *Budget) For(installation int64) *Gate { return &Gate{b: b, installation: installation} }

// Waiting lists the installations whose background work waits now (on
// this replica), by installation.
func (b *Budget) Waiting() []Wait {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Wait
	for id, w := range b.waiting {
		if !w.Until.After(now) {
			delete(b.waiting, id)
			continue
		}
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b Wait) int { return int(a.Installation - b.Installation) })
	return out
}

// Gate is one installation's budget.
type Gate struct {
	b            *Budget
	installation int64
}

// Admit says how long a request must wait before it is sent (0: send
// now) and why. A store that does not answer admits: GitHub still
// enforces its limits, and the transport still honours its answers.
func (g *Gate) Admit(ctx context.Context, graphql bool) (time.Duration, string) {
	b := g.b
	rec, err := b.store.Load(ctx, g.installation)
	if err != nil {
		return 0, ""
	}
	now := b.now()
	class := ClassOf(ctx)
	wait, why := decide(rec, graphql, class, b.reserve, now)
	if class == Background {
		b.mu.Lock()
		if wait > 0 {
			b.waiting[g.installation] = Wait{Installation: g.installation, Until: now.Add(wait), Why: why}
		} else {
			delete(b.waiting, g.installation)
		}
		b.mu.Unlock()
	}
	return wait, why
}

// decide is the rule: nothing before a not-before; nothing once a bucket
// is spent until its reset; background nothing at or below the reserve.
func decide(rec Record, graphql bool, class Class, reserve float64, now time.Time) (time.Duration, string) {
	if rec.NotBefore.After(now) {
		return rec.NotBefore.Sub(now), fmt.Sprintf("GitHub asked to wait (secondary rate limit) until %s", rec.NotBefore.UTC().Format(time.TimeOnly))
	}
	bk, name := rec.Core, "REST"
	if graphql {
		bk, name = rec.GraphQL, "GraphQL"
	}
	if bk.Remaining < 0 || !bk.Reset.After(now) {
		return 0, "" // nothing seen in this window
	}
	until := bk.Reset.Sub(now)
	if bk.Remaining == 0 {
		return until, fmt.Sprintf("the %s rate budget is spent until %s", name, bk.Reset.UTC().Format(time.TimeOnly))
	}
	if class == Background && float64(bk.Remaining) <= reserve*float64(bk.Limit) {
		return until, fmt.Sprintf("the interactive reserve: %d of %d %s requests left until %s", bk.Remaining, bk.Limit, name, bk.Reset.UTC().Format(time.TimeOnly))
	}
	return 0, ""
}

// Observe records an answer: its rate-limit headers (h may be nil), and
// the end of a secondary limit's wait (zero: none). Store failures are
// dropped: the next answer brings the figures again.
func (g *Gate) Observe(ctx context.Context, h http.Header, secondaryUntil time.Time) {
	if !secondaryUntil.IsZero() {
		_ = g.b.store.Hold(ctx, g.installation, secondaryUntil)
	}
	if bk, graphql, ok := bucketOf(h); ok {
		_ = g.b.store.Observe(ctx, g.installation, graphql, bk)
	}
}

// bucketOf reads x-ratelimit-limit/remaining/reset/resource.
func bucketOf(h http.Header) (Bucket, bool, bool) {
	if h == nil {
		return Bucket{}, false, false
	}
	rem, err1 := strconv.Atoi(h.Get("X-RateLimit-Remaining"))
	limit, err2 := strconv.Atoi(h.Get("X-RateLimit-Limit"))
	reset, err3 := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || rem < 0 {
		return Bucket{}, false, false
	}
	resource := strings.ToLower(h.Get("X-RateLimit-Resource"))
	if resource != "" && resource != "core" && resource != "graphql" {
		return Bucket{}, false, false // search, code scanning, ...: not budgeted here
	}
	return Bucket{Limit: limit, Remaining: rem, Reset: time.Unix(reset, 0).UTC()}, resource == "graphql", true
}

// merge is Store.Observe's rule.
func merge(cur, next Bucket) Bucket {
	if next.Reset.After(cur.Reset) || next.Reset.Equal(cur.Reset) && (cur.Remaining < 0 || next.Remaining < cur.Remaining) {
		return next
	}
	return cur
}

// Memory is a Store in this process (one replica).
type Memory struct {
	mu   sync.Mutex
	recs map[int64]Record
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory { return &Memory{recs: map[int64]Record{}} }

func blank() Record {
	return Record{Core: Bucket{Remaining: -1}, GraphQL: Bucket{Remaining: -1}}
}

// Load implements Store.
func (m *Memory) Load(_ context.Context, installation int64) (Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.recs[installation]; ok {
		return r, nil
	}
	return blank(), nil
}

// Observe implements Store.
func (m *Memory) Observe(_ context.Context, installation int64, graphql bool, b Bucket) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[installation]
	if !ok {
		r = blank()
	}
	if graphql {
		r.GraphQL = merge(r.GraphQL, b)
	} else {
		r.Core = merge(r.Core, b)
	}
	m.recs[installation] = r
	return nil
}

// Hold implements Store.
func (m *Memory) Hold(_ context.Context, installation int64, until time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[installation]
	if !ok {
		r = blank()
	}
	if until.After(r.NotBefore) {
		r.NotBefore = until
	}
	m.recs[installation] = r
	return nil
}
