package transport

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	gh "github.com/google/go-github/v60/github"
)

// This file holds the transport's two memories: the ETag cache that turns a
// 304 back into the cached answer, and the set of requests GitHub rejected
// with 422, which are never sent again unchanged.

func (t *Transport) cachedETag(key string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.cache[key]; c != nil {
		return c.etag
	}
	return ""
}

// conditionalHit answers a 304 from the cache as a 200, or returns nil when
// nothing is cached for the URL.
func (t *Transport) conditionalHit(req *http.Request, resp *http.Response, key string) *http.Response {
	t.mu.Lock()
	c := t.cache[key]
	if c != nil {
		t.stats.ConditionalHits++
		t.secondaryStreak = 0
	}
	t.mu.Unlock()
	if c == nil {
		return nil
	}
	drain(resp)
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         resp.Proto,
		ProtoMajor:    resp.ProtoMajor,
		ProtoMinor:    resp.ProtoMinor,
		Header:        c.header.Clone(),
		Body:          io.NopCloser(bytes.NewReader(c.body)),
		ContentLength: int64(len(c.body)),
		Request:       req,
	}
}

// store caches a 200's body under its ETag (it reads and replaces the body).
func (t *Transport) store(key string, resp *http.Response) error {
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
	if len(body) > maxCacheBytes/4 {
		return nil
	}
	h := resp.Header.Clone()
	stripRateHeaders(h)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cache == nil {
		t.cache = map[string]*cached{}
	}
	if old := t.cache[key]; old != nil {
		t.cacheBytes -= len(old.body)
	} else {
		t.cacheOrder = append(t.cacheOrder, key)
	}
	t.cache[key] = &cached{etag: etag, header: h, body: body}
	t.cacheBytes += len(body)
	for (len(t.cache) > maxCacheEntries || t.cacheBytes > maxCacheBytes) && len(t.cacheOrder) > 0 {
		oldest := t.cacheOrder[0]
		t.cacheOrder = t.cacheOrder[1:]
		if c := t.cache[oldest]; c != nil {
			t.cacheBytes -= len(c.body)
			delete(t.cache, oldest)
		}
	}
	return nil
}

func (t *Transport) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.cache[key]; c != nil {
		t.cacheBytes -= len(c.body)
		delete(t.cache, key)
		t.cacheOrder = slices.DeleteFunc(t.cacheOrder, func(k string) bool { return k == key })
	}
}

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
