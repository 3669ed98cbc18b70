package github

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// epoch is the fake clock's start. It lies in the past so that nothing in
// go-github's wall-clock bookkeeping could ever line up with it.
var epoch = time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)

// fakeClock is the injected clock: Sleep records the wait and advances Now.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sleeps = append(f.sleeps, d)
	f.now = f.now.Add(d)
	return nil
}

func (f *fakeClock) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func (f *fakeClock) Sleeps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

// seen is one request the test server received, stamped with the fake clock.
type seen struct {
	Method, Path, Query string
	Header              http.Header
	Body                string
	At                  time.Time
}

// env is one httptest server with a mux, a fake clock and a Client on it.
type env struct {
	t      *testing.T
	prefix string
	mux    *http.ServeMux
	srv    *httptest.Server
	clock  *fakeClock
	client *Client

	mu   sync.Mutex
	reqs []seen
}

const testRepo = "octocat/Hello-World"

// newEnv starts a server whose API root is prefix ("" or "/api/v3") and a
// Client on it; mod adjusts the options.
func newEnv(t *testing.T, prefix string, mod func(*Options)) *env {
	t.Helper()
	e := &env{t: t, prefix: prefix, mux: http.NewServeMux(), clock: &fakeClock{now: epoch}}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.reqs = append(e.reqs, seen{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery,
			Header: r.Header.Clone(), Body: string(body), At: e.clock.Now()})
		e.mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		e.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(e.srv.Close)
	opts := Options{
		Repo: testRepo, Token: "t0ken", BaseURL: e.srv.URL + prefix,
		Now: e.clock.Now, Sleep: e.clock.Sleep, Rand: func() float64 { return 0.5 },
	}
	if mod != nil {
		mod(&opts)
	}
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.client = c
	return e
}

// handle registers "METHOD /path" under the env's prefix.
func (e *env) handle(pattern string, h http.HandlerFunc) {
	method, path, _ := strings.Cut(pattern, " ")
	e.mux.HandleFunc(method+" "+e.prefix+path, h)
}

// url returns an absolute URL on the test server for path (for Link headers).
func (e *env) url(path string) string { return e.srv.URL + e.prefix + path }

func (e *env) requests() []seen {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]seen(nil), e.reqs...)
}

// count returns how many requests matched method and path suffix.
func (e *env) count(method, pathSuffix string) int {
	n := 0
	for _, r := range e.requests() {
		if r.Method == method && strings.HasSuffix(r.Path, pathSuffix) {
			n++
		}
	}
	return n
}

// fixture reads testdata/name.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return b
}

// patchJSON decodes a fixture object, applies edits and re-encodes it.
func patchJSON(t *testing.T, raw []byte, edit func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("patchJSON: %v", err)
	}
	edit(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("patchJSON: %v", err)
	}
	return b
}

// reply writes a JSON answer with headers given as "Key: value" pairs.
func reply(w http.ResponseWriter, status int, body []byte, headers ...string) {
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		w.Header().Set(k, v)
	}
	if len(body) > 0 {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Real GitHub error bodies.
var (
	secondaryLimitBody = []byte(`{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 1234:5678.","documentation_url":"https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`)
	primaryLimitBody   = []byte(`{"message":"API rate limit exceeded for installation ID 1234.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`)
	forbiddenBody      = []byte(`{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/issues/comments#create-an-issue-comment","status":"403"}`)
	notFoundBody       = []byte(`{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`)
	serverErrorBody    = []byte(`{"message":"Server Error"}`)
)

// unix renders t as x-ratelimit-reset does.
func unix(t time.Time) string { return fmt.Sprint(t.Unix()) }

// script answers successive calls with the given handlers, repeating the
// last one.
func script(steps ...http.HandlerFunc) http.HandlerFunc {
	var mu sync.Mutex
	n := 0
	return func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		if i >= len(steps) {
			i = len(steps) - 1
		}
		steps[i](w, r)
	}
}

// status answers with a fixed status, body and headers.
func status(code int, body []byte, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { reply(w, code, body, headers...) }
}
