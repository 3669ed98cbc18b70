package transport

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	gh "github.com/google/go-github/v60/github"
)

// This file holds the transport's two memories: the ETag cache that turns a
// 304 back into the cached answer, and the set of requests GitHub rejected
// with 422, which are never sent again unchanged.

// Entry is a cached answer: the ETag that validates it, its headers
// (without the rate-limit ones) and its body.
type Entry struct {
	ETag   string
	Header http.Header
	Body   []byte
}

// Cache keeps the answers of conditional GETs by key (the URL and the
// Accept header). Implementations are safe for concurrent use and treat
// their own failures as misses: a lost entry costs one full read, never a
// wrong answer, because GitHub validates the ETag sent.
type Cache interface {
	Get(ctx context.Context, key string) (Entry, bool)
	Put(ctx context.Context, key string, e Entry)
	Forget(ctx context.Context, key string)
}

// cacheKey is what a GET's answer is cached under: the URL and the media
// type asked for (the raw and the JSON form of a file differ).
func cacheKey(req *http.Request) string {
	return req.URL.String() + " " + req.Header.Get("Accept")
}

// conditionalHit answers a 304 from the entry whose ETag was sent, as a
// 200, or returns nil when none was.
func (t *Transport) conditionalHit(req *http.Request, resp *http.Response, e *Entry) *http.Response {
	if e == nil {
		return nil
	}
	t.mu.Lock()
	t.stats.ConditionalHits++
	t.secondaryStreak = 0
	t.mu.Unlock()
	drain(resp)
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         resp.Proto,
		ProtoMajor:    resp.ProtoMajor,
		ProtoMinor:    resp.ProtoMinor,
		Header:        e.Header.Clone(),
		Body:          io.NopCloser(bytes.NewReader(e.Body)),
		ContentLength: int64(len(e.Body)),
		Request:       req,
	}
}

// store caches a 200's body under its ETag (it reads and replaces the body).
func (t *Transport) store(ctx context.Context, key string, resp *http.Response) error {
	etag := resp.Header.Get("ETag")
	if etag == "" {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return err
	}
	h := resp.Header.Clone()
	stripRateHeaders(h)
	t.cache.Put(ctx, key, Entry{ETag: etag, Header: h, Body: body})
	return nil
}

// observe tells ObserveAPI about an answer.
func (t *Transport) observe(status int, cached bool) {
	if t.observeAPI != nil {
		t.observeAPI(status, cached)
	}
}

// MemoryCache is a Cache in this process's memory, bounded in entries and
// body bytes (the oldest stored goes first). For gives the view of one
// installation, so clients of several installations can share one.
type MemoryCache struct {
	maxEntries, maxBytes int

	mu    sync.Mutex
	m     map[string]*Entry
	order []string
	bytes int
}

// NewMemoryCache returns a MemoryCache; a bound of 0 is the default
// (1,024 entries, 32 MiB). An answer larger than a quarter of maxBytes is
// not kept.
func NewMemoryCache(maxEntries, maxBytes int) *MemoryCache {
	if maxEntries <= 0 {
		maxEntries = maxCacheEntries
	}
	if maxBytes <= 0 {
		maxBytes = maxCacheBytes
	}
	return &MemoryCache{maxEntries: maxEntries, maxBytes: maxBytes, m: map[string]*Entry{}}
}

// For returns the view of one installation (its keys apart from others').
func (c *MemoryCache) For(installation int64) Cache {
	return prefixed{c, strconv.FormatInt(installation, 10) + " "}
}

// Get implements Cache.
func (c *MemoryCache) Get(_ context.Context, key string) (Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[key]; e != nil {
		return *e, true
	}
	return Entry{}, false
}

// Put implements Cache.
func (c *MemoryCache) Put(_ context.Context, key string, e Entry) {
	if len(e.Body) > c.maxBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[key]; old != nil {
		c.bytes -= len(old.Body)
	} else {
		c.order = append(c.order, key)
	}
	c.m[key] = &e
	c.bytes += len(e.Body)
	for (len(c.m) > c.maxEntries || c.bytes > c.maxBytes) && len(c.order) > 0 {
		oldest := c.order[0]
		c.order = c.order[1:]
		if old := c.m[oldest]; old != nil {
			c.bytes -= len(old.Body)
			delete(c.m, oldest)
		}
	}
}

// Forget implements Cache.
func (c *MemoryCache) Forget(_ context.Context, key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[key]; old != nil {
		c.bytes -= len(old.Body)
		delete(c.m, key)
		c.order = slices.DeleteFunc(c.order, func(k string) bool { return k == key })
	}
}

// Len is the number of entries kept.
func (c *MemoryCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// prefixed is a view of a Cache under a key prefix.
type prefixed struct {
	c      Cache
	prefix string
}

func (p prefixed) Get(ctx context.Context, key string) (Entry, bool) {
	return p.c.Get(ctx, p.prefix+key)
}
func (p prefixed) Put(ctx context.Context, key string, e Entry) { p.c.Put(ctx, p.prefix+key, e) }
func (p prefixed) Forget(ctx context.Context, key string)       { p.c.Forget(ctx, p.prefix+key) }

func (t *Transport) rejectedBefore(fp string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	msg, ok := t.rejected[fp]
	return msg, ok
}

func (t *Transport) rememberRejected(fp, msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rejected == nil {
		t.rejected = map[string]string{}
	}
	if _, ok := t.rejected[fp]; !ok {
		t.rejectedOrder = append(t.rejectedOrder, fp)
	}
	t.rejected[fp] = msg
	for len(t.rejectedOrder) > maxRejected {
		delete(t.rejected, t.rejectedOrder[0])
		t.rejectedOrder = t.rejectedOrder[1:]
	}
}

// rejectionDetail renders a 422 body as GitHub's message plus field errors.
func rejectionDetail(body []byte) string {
	var er gh.ErrorResponse
	if json.Unmarshal(body, &er) != nil {
		return string(body)
	}
	return ErrorDetail(&er)
}

// fingerprint identifies a request by method, URL and body.
func fingerprint(req *http.Request, body []byte) string {
	h := sha256.New()
	h.Write([]byte(req.Method))
	h.Write([]byte{0})
	h.Write([]byte(req.URL.String()))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// ErrorDetail renders GitHub's message plus its per-field errors.
func ErrorDetail(er *gh.ErrorResponse) string {
	var b strings.Builder
	b.WriteString(er.Message)
	if b.Len() == 0 && er.Response != nil {
		b.WriteString(er.Response.Status)
	}
	for _, e := range er.Errors {
		b.WriteString("; ")
		switch {
		case e.Message != "":
			b.WriteString(e.Message)
		default:
			fmt.Fprintf(&b, "%s.%s %s", e.Resource, e.Field, e.Code)
		}
	}
	return b.String()
}
