// Package transport is the http.RoundTripper under the GitHub adapter
// (internal/github): the one place where GitHub's limits and politeness
// rules are enforced, for typed go-github calls, raw requests and GraphQL
// alike. Conditional GETs with ETags, one mutation at a time spaced by a
// gap (shared per token through a Pacer), no request inside a rate-limit
// window, jittered retries of transient failures, no repeat of a request
// GitHub rejected with 422, and a dry-run backstop. It decides nothing about
// a run and knows no endpoint: requests say what they are with an Op.
package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

// Op tells the transport what a request is: its name in Stats and the
// policies that apply to it. It travels in the request context (WithOp).
type Op struct {
	Kind string // "GET issue", "POST comment", ...
	// ETag makes a GET conditional on the cached ETag for its URL.
	ETag bool
	// NoRetry returns transient failures (5xx, network) at once instead of
	// retrying: for POSTs that are not idempotent. Rate-limit answers are
	// still waited out, because GitHub did not process the request.
	NoRetry bool
	// NoWait returns a rate-limit answer, or an open window, at once as
	// *forge.RateLimitError instead of waiting it out (tracker creates: the
	// flow never waits for the tracker).
	NoWait bool
	// Read: a POST that changes nothing (a GraphQL query): not paced as a
	// mutation, sent in dry-run, and its rate-limit headers describe
	// GraphQL's own budget.
	Read bool
}

type opKey struct{}

// WithOp attaches o to the requests made with ctx.
func WithOp(ctx context.Context, o Op) context.Context { return context.WithValue(ctx, opKey{}, o) }

func opFrom(req *http.Request) Op {
	if o, ok := req.Context().Value(opKey{}).(Op); ok {
		return o
	}
	return Op{Kind: req.Method + " " + req.URL.Path}
}

// ErrDryRun is returned by the transport if a mutation reaches it in dry-run
// mode; the client's methods short-circuit before that, this is the backstop.
var ErrDryRun = errors.New("dry run: mutating request not sent")

// Cache bounds: entries and body bytes kept for conditional requests.
const (
	maxCacheEntries = 1024
	maxCacheBytes   = 32 << 20
	maxRejected     = 1024
	backoffBase     = time.Second
	backoffCap      = 30 * time.Second
)

// Pacer spaces the mutations of every client that shares it. GitHub asks
// for mutations one at a time, a second apart, per token: clients of the
// same token (one per repository of an App installation) must share one.
type Pacer struct {
	mu   sync.Mutex
	last time.Time
}

// NewPacer returns a Pacer for one token.
func NewPacer() *Pacer { return &Pacer{} }

// Config configures a Transport; the adapter fills in every field.
type Config struct {
	// Next sends each attempt.
	Next  http.RoundTripper
	Now   func() time.Time
	Sleep func(context.Context, time.Duration) error
	// Rand returns a float in [0,1) for backoff jitter.
	Rand func() float64
	Log  *slog.Logger
	// Gap spaces mutations; MaxWait is the longest rate-limit wait sat
	// out; MaxRetries bounds retries and re-sends per request.
	Gap        time.Duration
	MaxWait    time.Duration
	MaxRetries int
	DryRun     bool
	// Timeout bounds each attempt.
	Timeout time.Duration
	// Pacer is shared by the clients of one token; nil: a new one.
	Pacer *Pacer
	// Cache keeps the answers of conditional GETs (Op.ETag); nil: a
	// memory cache of this transport's own. Clients of one installation
	// may share one, replicas through Redis (internal/ghcache).
	Cache Cache
	// ObserveAPI, when set, is told every answer's status and whether it
	// was a 304 served from the cache (cached; the status is then 304).
	ObserveAPI func(status int, cached bool)
	// Gate, when set, is a budget shared beyond this transport (App mode:
	// the installation's, across replicas; internal/budget).
	Gate Gate
}

// Gate is a rate budget shared with other transports. Admit says how long
// a request must wait before it is sent, and why (the request's class
// travels in its context); Observe records each answer's x-ratelimit-*
// headers and the end of a secondary limit's retry-after (zero: none).
type Gate interface {
	Admit(ctx context.Context, graphql bool) (time.Duration, string)
	Observe(ctx context.Context, h http.Header, secondaryUntil time.Time)
}

// New builds a Transport.
func New(c Config) *Transport {
	t := &Transport{
		next: c.Next, now: c.Now, sleep: c.Sleep, rand: c.Rand, log: c.Log,
		gap: c.Gap, maxWait: c.MaxWait, maxRetries: c.MaxRetries, dryRun: c.DryRun,
		timeout: c.Timeout, pace: c.Pacer, cache: c.Cache, observeAPI: c.ObserveAPI, gate: c.Gate,
	}
	if t.pace == nil {
		t.pace = NewPacer()
	}
	if t.cache == nil {
		t.cache = NewMemoryCache(0, 0)
	}
	return t
}

// Transport is the one place where GitHub's limits are enforced. It sits
// under go-github's http.Client and is the only authority on rate-limit
// windows: it strips the x-ratelimit-* headers from what it hands up so
// go-github's own wall-clock bookkeeping never second-guesses it.
type Transport struct {
	next       http.RoundTripper
	now        func() time.Time
	sleep      func(context.Context, time.Duration) error
	rand       func() float64
	log        *slog.Logger
	gap        time.Duration
	maxWait    time.Duration
	maxRetries int
	dryRun     bool
	timeout    time.Duration // per attempt

	// pace makes mutations go out one at a time, spaced by gap; clients
	// sharing a token share it.
	pace *Pacer
	// cache keeps conditional GETs' answers; observeAPI sees each answer.
	cache      Cache
	observeAPI func(status int, cached bool)
	gate       Gate

	mu             sync.Mutex
	blockedUntil   time.Time
	blockSecondary bool
	blockMsg       string
	// trackerUntil is a secondary limit GitHub answered to a tracker
	// request (Op.NoWait): it holds the tracker's requests only; the flow's
	// own go on, and if GitHub limits one of them too, blockedUntil holds
	// every request.
	trackerUntil    time.Time
	trackerMsg      string
	secondaryStreak int
	rejected        map[string]string // fingerprint of a 422'd request -> message
	rejectedOrder   []string
	stats           Stats
}

// RoundTrip sends req under the client's policies. Errors it returns are
// *forge.RateLimitError, *forge.TransientError, a forge.ErrValidation
// wrapper (identical request already rejected), ErrDryRun, ctx errors, or
// a forge.ErrUnauthorized the next transport returned (no credentials to
// send: never retried).
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close() // a RoundTripper must close the request body
	}
	ctx := req.Context()
	o := opFrom(req)
	mutating := req.Method != http.MethodGet && req.Method != http.MethodHead && !o.Read
	if mutating && t.dryRun {
		return nil, ErrDryRun
	}
	body, err := readBody(req)
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	fp := fingerprint(req, body)
	if msg, seen := t.rejectedBefore(fp); seen {
		return nil, fmt.Errorf("%w: identical request was already rejected, not repeating it: %s", forge.ErrValidation, msg)
	}
	a := &attempts{req: req, o: o, key: cacheKey(req), fp: fp}
	for {
		resp, err := t.send(ctx, req, o, mutating, body, a)
		var retry bool
		if err != nil {
			retry, err = t.failed(ctx, a, err)
		} else {
			t.observeRate(resp.Header)
			if t.gate != nil {
				t.gate.Observe(ctx, resp.Header, time.Time{})
			}
			resp, retry, err = t.answered(ctx, a, resp)
		}
		if !retry {
			return resp, err
		}
	}
}

// attempts is one request's state across its attempts.
type attempts struct {
	req     *http.Request
	o       Op
	key, fp string // cache key (URL and Accept); fingerprint (method, URL, body)
	// cached is the entry whose ETag the last attempt sent, if any.
	cached *Entry
	// limited and transient count the rate-limit answers and the transient
	// failures so far.
	limited, transient int
}

// failed decides what follows an attempt that got no answer: a retry after
// a backoff (retry true), or the error to return.
func (t *Transport) failed(ctx context.Context, a *attempts, err error) (retry bool, _ error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	var rl *forge.RateLimitError
	if errors.As(err, &rl) || errors.Is(err, ErrDryRun) {
		return false, err
	}
	if errors.Is(err, forge.ErrUnauthorized) {
		// No credentials to send (an installation GitHub does not know):
		// final, and the same on every attempt.
		return false, err
	}
	if a.o.NoRetry || a.transient >= t.maxRetries {
		return false, &forge.TransientError{Err: fmt.Errorf("%s: %w", a.o.Kind, err)}
	}
	a.transient++
	if err := t.Backoff(ctx, a.o.Kind, a.transient, 0, err); err != nil {
		return false, err
	}
	return true, nil
}

// answered decides what follows an answer: hand it up (a 304 as the cached
// answer), retry (a rate limit waited out, a 5xx after a backoff), or
// return an error.
func (t *Transport) answered(ctx context.Context, a *attempts, resp *http.Response) (_ *http.Response, retry bool, _ error) {
	o := a.o
	switch status := resp.StatusCode; {
	case status == http.StatusNotModified:
		if hit := t.conditionalHit(a.req, resp, a.cached); hit != nil {
			t.observe(status, true)
			return hit, false, nil
		}
	case status == http.StatusForbidden || status == http.StatusTooManyRequests:
		l, isLimit := t.limitFor(status, resp.Header, bufferBody(resp))
		if !isLimit {
			break
		}
		if l.secondary && t.gate != nil {
			t.gate.Observe(ctx, nil, l.until) // every replica of the installation holds
		}
		if otherBucket(resp.Header) && !l.secondary {
			// GraphQL's own budget is spent; REST's may not be.
			return nil, false, &forge.RateLimitError{Until: l.until, Msg: l.msg}
		}
		if o.NoWait && l.secondary {
			// A tracker request is never waited for: the window is the
			// tracker's, recorded in the state by the flow's own write
			// (docs/tasks.md#limits).
			t.openTrackerWindow(o.Kind, l)
			return nil, false, &forge.RateLimitError{Until: l.until, Secondary: true, Msg: l.msg}
		}
		t.openWindow(o.Kind, l)
		if a.limited >= t.maxRetries || o.NoWait {
			return nil, false, &forge.RateLimitError{Until: l.until, Secondary: l.secondary, Msg: l.msg}
		}
		a.limited++
		return nil, true, nil // the next send waits the window out, or gives up if too long
	case status >= 500:
		if o.NoRetry || a.transient >= t.maxRetries {
			break
		}
		drain(resp)
		a.transient++
		if err := t.Backoff(ctx, o.Kind, a.transient, status, nil); err != nil {
			return nil, false, err
		}
		return nil, true, nil
	case status == http.StatusUnprocessableEntity:
		t.rememberRejected(a.fp, rejectionDetail(bufferBody(resp)))
	case status >= 200 && status < 300:
		t.mu.Lock()
		t.secondaryStreak = 0
		t.mu.Unlock()
		if o.ETag && a.req.Method == http.MethodGet {
			if err := t.store(ctx, a.key, resp); err != nil {
				return nil, false, &forge.TransientError{Status: status, Err: fmt.Errorf("%s: read body: %w", o.Kind, err)}
			}
		}
	case status == http.StatusNotFound:
		t.cache.Forget(ctx, a.key)
	}
	t.observe(resp.StatusCode, false)
	return stripRate(resp), false, nil
}

// send waits for any open window (and, for a mutation, its slot), then
// sends one attempt.
func (t *Transport) send(ctx context.Context, req *http.Request, o Op, mutating bool, body []byte, a *attempts) (*http.Response, error) {
	if mutating {
		t.pace.mu.Lock()
		defer t.pace.mu.Unlock()
	}
	for {
		if err := t.awaitWindow(ctx, o.Kind, o.NoWait); err != nil {
			return nil, err
		}
		if err := t.awaitGate(ctx, o); err != nil {
			return nil, err
		}
		if !mutating {
			break
		}
		last := t.pace.last // guarded by pace.mu, held for the whole mutation
		wait := last.Add(t.gap).Sub(t.now())
		if last.IsZero() || wait <= 0 {
			break
		}
		if err := t.sleep(ctx, wait); err != nil {
			return nil, err
		}
		// A window may have opened while we waited for the slot: re-check.
	}

	attempt := req.Clone(ctx)
	if body != nil {
		attempt.Body = io.NopCloser(bytes.NewReader(body))
		attempt.ContentLength = int64(len(body))
	}
	a.cached = nil
	if o.ETag && req.Method == http.MethodGet {
		if e, ok := t.cache.Get(ctx, a.key); ok && e.ETag != "" {
			a.cached = &e
			attempt.Header.Set("If-None-Match", e.ETag)
		}
	}
	t.mu.Lock()
	now := t.now()
	if mutating {
		t.pace.last = now
	}
	if t.stats.Requests == nil {
		t.stats.Requests = map[string]int{}
	}
	t.stats.Requests[o.Kind]++
	t.stats.Total++
	t.mu.Unlock()
	actx, cancel := context.WithTimeout(ctx, t.timeout)
	resp, err := t.next.RoundTrip(attempt.WithContext(actx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose releases an attempt's timeout once its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// awaitWindow blocks until no rate-limit window is open, or returns a
// *forge.RateLimitError at once when the wait would exceed maxWait.
func (t *Transport) awaitWindow(ctx context.Context, kind string, noWait bool) error {
	for {
		t.mu.Lock()
		until, secondary, msg := t.blockedUntil, t.blockSecondary, t.blockMsg
		if noWait && t.trackerUntil.After(until) {
			until, secondary, msg = t.trackerUntil, true, t.trackerMsg
		}
		t.mu.Unlock()
		wait := until.Sub(t.now())
		if wait <= 0 {
			return nil
		}
		if wait > t.maxWait || noWait {
			return &forge.RateLimitError{Until: until, Secondary: secondary, Msg: msg}
		}
		t.log.Info("github rate limit: waiting", "op", kind, "wait", wait, "until", until, "secondary", secondary)
		t.mu.Lock()
		t.stats.Waited += wait
		t.mu.Unlock()
		if err := t.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// awaitGate waits for the shared budget to admit the request, or returns
// a *forge.RateLimitError at once when the wait would exceed maxWait.
func (t *Transport) awaitGate(ctx context.Context, o Op) error {
	if t.gate == nil {
		return nil
	}
	for {
		wait, why := t.gate.Admit(ctx, o.Read)
		if wait <= 0 {
			return nil
		}
		until := t.now().Add(wait)
		if wait > t.maxWait || o.NoWait {
			return &forge.RateLimitError{Until: until, Msg: why, Held: true}
		}
		t.log.Info("github budget: waiting", "op", o.Kind, "wait", wait, "until", until, "why", why)
		t.mu.Lock()
		t.stats.Waited += wait
		t.mu.Unlock()
		if err := t.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

func (t *Transport) limitFor(status int, h http.Header, body []byte) (limit, bool) {
	t.mu.Lock()
	streak := t.secondaryStreak
	t.mu.Unlock()
	return classifyLimit(status, h, body, t.now(), streak)
}

// openTrackerWindow records a secondary limit answered to a tracker
// request: only tracker requests (Op.NoWait) wait for it.
func (t *Transport) openTrackerWindow(kind string, l limit) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.countLimit(l)
	if l.until.After(t.trackerUntil) {
		t.trackerUntil, t.trackerMsg = l.until, l.msg
	}
	t.log.Warn("github rate limit hit on a tracker request: the tracker waits, the flow goes on", "op", kind, "until", l.until, "secondary", true, "message", l.msg)
}

// countLimit counts a limit answer; a headerless one lengthens the
// secondary streak the next wait grows with. t.mu is held.
func (t *Transport) countLimit(l limit) {
	t.stats.RateLimited++
	if l.headerless {
		t.secondaryStreak++
	}
}

func (t *Transport) openWindow(kind string, l limit) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.countLimit(l)
	if l.until.After(t.blockedUntil) {
		t.blockedUntil, t.blockSecondary, t.blockMsg = l.until, l.secondary, l.msg
	}
	t.log.Warn("github rate limit hit", "op", kind, "until", l.until, "secondary", l.secondary, "message", l.msg)
}

// observeRate records x-ratelimit-remaining/reset and, when the budget is
// spent, opens a window until the reset so the next request is not sent
// into a certain 403.
func (t *Transport) observeRate(h http.Header) {
	rem := h.Get("X-RateLimit-Remaining")
	if rem == "" {
		return
	}
	n, err := strconv.Atoi(rem)
	if err != nil {
		return
	}
	if otherBucket(h) {
		if strings.EqualFold(h.Get("X-RateLimit-Resource"), "graphql") {
			t.mu.Lock()
			t.stats.GraphQLRemaining, t.stats.gqlSeen = n, true
			t.mu.Unlock()
		}
		return
	}
	reset, hasReset := parseReset(h.Get("X-RateLimit-Reset"))
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stats.RateRemaining = n
	t.stats.rateSeen = true
	if hasReset {
		t.stats.RateReset = reset
	}
	if n == 0 && hasReset && reset.After(t.blockedUntil) && reset.After(t.now()) {
		t.blockedUntil, t.blockSecondary, t.blockMsg = reset, false, "x-ratelimit-remaining is 0"
	}
}

// otherBucket reports rate-limit headers of a budget other than REST's
// (x-ratelimit-resource: graphql): Stats, BudgetLow and the windows that
// hold every request back describe REST's "core" budget only.
func otherBucket(h http.Header) bool {
	r := h.Get("X-RateLimit-Resource")
	return r != "" && !strings.EqualFold(r, "core")
}

// Backoff sleeps before transient retry n (1-based): exponential with
// jitter in [d/2, d). The adapter calls it between its own retries.
func (t *Transport) Backoff(ctx context.Context, kind string, n, status int, cause error) error {
	d := backoffBase << (n - 1)
	if d > backoffCap || d <= 0 {
		d = backoffCap
	}
	d = d/2 + time.Duration(t.rand()*float64(d/2))
	t.mu.Lock()
	t.stats.Retries++
	t.mu.Unlock()
	t.log.Warn("github transient failure: retrying", "op", kind, "attempt", n, "status", status, "err", cause, "backoff", d)
	return t.sleep(ctx, d)
}

// Total is Stats().Total without copying the counters.
func (t *Transport) Total() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stats.Total
}

// Stats returns a copy of what the transport sent.
func (t *Transport) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.stats
	s.Requests = make(map[string]int, len(t.stats.Requests))
	for k, v := range t.stats.Requests {
		s.Requests[k] = v
	}
	if !s.rateSeen {
		s.RateRemaining = -1
	}
	if !s.gqlSeen {
		s.GraphQLRemaining = -1
	}
	return s
}

// readBody returns the request body's bytes (nil when there is none).
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	if req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(rc)
	}
	return io.ReadAll(req.Body)
}

// bufferBody reads an error answer's body (up to 1 MiB) and puts it back
// so go-github can still decode it.
func bufferBody(resp *http.Response) []byte {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return b
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
}

func stripRate(resp *http.Response) *http.Response {
	stripRateHeaders(resp.Header)
	return resp
}

// stripRateHeaders removes the headers go-github would use for its own
// wall-clock rate-limit bookkeeping; the transport already acted on them.
func stripRateHeaders(h http.Header) {
	for _, k := range []string{"X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset", "X-Ratelimit-Used", "X-Ratelimit-Resource", "Retry-After"} {
		h.Del(k)
	}
}
