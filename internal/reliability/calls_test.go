package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Services named in Call.Service.
const (
	ServiceGitHub = "github"
	ServiceJira   = "jira"
)

// Call is one HTTP request the code under test sent, as seen on the wire
// below the adapter (so retries and rate-limit headers are all visible).
type Call struct {
	// Run is the run that sent it (see World.Runs).
	Run     int
	Service string
	// Token identifies the credentials: each Action run has its own
	// GITHUB_TOKEN, as on GitHub.
	Token  string
	At     time.Time // fake clock when sent
	Method string
	Path   string
	// Status is the answer; 0 when the connection failed.
	Status int
	// Window is the end of a wait the answer asked for (Retry-After,
	// x-ratelimit-reset with nothing remaining, or a secondary limit's
	// minute); zero when it asked for none.
	Window time.Time
	// Body is the request body of a mutation.
	Body string
	// Sent and Answered order the call among all calls of the world: a
	// request only has to respect a window whose answer came before it was
	// sent.
	Sent, Answered int64
}

// Mutation reports whether the call asked to change something (a GraphQL
// request is the thread read, a query).
func (c Call) Mutation() bool {
	return c.Method != http.MethodGet && c.Method != http.MethodHead && !c.GraphQL()
}

// GraphQL reports a request to the GraphQL endpoint (the thread read).
func (c Call) GraphQL() bool { return strings.HasSuffix(c.Path, "/graphql") }

// ListsComments reports a listing of comments: a REST page or a GraphQL
// page (the adapter reads threads through GraphQL, REST when that fails).
func (c Call) ListsComments() bool {
	return c.Method == http.MethodGet && strings.HasSuffix(c.Path, "/comments") || c.GraphQL()
}

// editListed calls f on every comment a listing's answer carries (REST:
// an array of comments; GraphQL: the page's nodes, whose id is
// fullDatabaseId) with its id, and returns the answer re-encoded.
func editListed(body []byte, f func(id int64, m map[string]any)) ([]byte, bool) {
	var cs []map[string]any
	if json.Unmarshal(body, &cs) == nil {
		for _, m := range cs {
			id, _ := m["id"].(float64)
			f(int64(id), m)
		}
		b, err := json.Marshal(cs)
		return b, err == nil
	}
	var g map[string]any
	if json.Unmarshal(body, &g) != nil {
		return nil, false
	}
	conn, _ := dig(g, "data", "repository", "issue", "comments").(map[string]any)
	nodes, _ := conn["nodes"].([]any)
	for _, n := range nodes {
		if m, ok := n.(map[string]any); ok {
			id, _ := strconv.ParseInt(fmt.Sprint(m["fullDatabaseId"]), 10, 64)
			f(id, m)
		}
	}
	b, err := json.Marshal(g)
	return b, err == nil && nodes != nil
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// Costs reports whether the call counts against GitHub's budget (a 304 is
// free).
func (c Call) Costs() bool { return c.Status != http.StatusNotModified }

// Faulted reports whether the answer was a fault (5xx, rate limit, dropped).
func (c Call) Faulted() bool {
	return c.Status == 0 || c.Status >= 500 || c.Status == http.StatusTooManyRequests ||
		c.Status == http.StatusForbidden && !c.Window.IsZero()
}

// callLog collects calls from every transport of a world.
type callLog struct {
	mu    sync.Mutex
	calls []Call
	seq   atomic.Int64
}

func (l *callLog) add(c Call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, c)
}

func (l *callLog) all() []Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Call(nil), l.calls...)
}

// recorder is the transport under an adapter: it authenticates GitHub
// requests with the run's token, adds fake-clock latency, and logs every
// request with the window its answer opened.
type recorder struct {
	next    http.RoundTripper
	log     *callLog
	clock   *Clock
	run     int
	service string
	token   string // GitHub token, sent as "token X"; empty for Jira
	// latency is fake time each request takes before it reaches the fake.
	latency func() time.Duration
	// hooks, when set, sees every call and answer (see World.OnCall).
	hooks *hooks
	// kill ends the run (its context) when a hook asks for it.
	kill func()
	// sentAt, when set, is when the adapter decided to send (its own last
	// clock reading); otherwise the shared clock is read.
	sentAt func() time.Time
}

// Hook is a test's view of one call, after its answer: it may rewrite the
// answer body (a stale read), and Kill ends the run as if its process died.
type Hook func(c Call, body []byte) (newBody []byte, kill bool)

type hooks struct {
	mu     sync.Mutex
	fn     Hook
	before func(Call)
}

func (h *hooks) getBefore() func(Call) {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.before
}

func (h *hooks) get() Hook {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fn
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		_ = req.Body.Close()
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	if r.token != "" {
		out.Header.Set("Authorization", "token "+r.token)
	}
	at := r.clock.Now()
	if r.sentAt != nil {
		at = r.sentAt()
	}
	c := Call{Run: r.run, Service: r.service, Token: r.token, At: at, Method: req.Method, Path: req.URL.Path, Sent: r.log.seq.Add(1)}
	if r.token == "" {
		c.Token = "jira"
	}
	if c.Mutation() || c.GraphQL() {
		c.Body = string(body)
	}
	if b := r.hooks.getBefore(); b != nil {
		b(c) // may block: "this request is delayed"
	}
	if r.latency != nil {
		r.clock.Advance(r.latency())
	}
	resp, err := r.next.RoundTrip(out)
	c.Answered = r.log.seq.Add(1)
	if err != nil {
		r.log.add(c)
		if hook := r.hooks.get(); hook != nil {
			if _, kill := hook(c, nil); kill && r.kill != nil {
				r.kill()
			}
		}
		return nil, err
	}
	c.Status = resp.StatusCode
	c.Window = window(r.service, resp, r.clock.Now())
	r.log.add(c)
	if hook := r.hooks.get(); hook != nil {
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		nb, kill := hook(c, b)
		if nb == nil {
			nb = b
		}
		resp.Body = io.NopCloser(bytes.NewReader(nb))
		resp.ContentLength = int64(len(nb))
		resp.Header.Del("Content-Length")
		if kill && r.kill != nil {
			r.kill()
		}
	}
	return resp, nil
}

// window is the end of the wait an answer asks for, zero when none.
func window(service string, resp *http.Response, now time.Time) time.Time {
	h := resp.Header
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.Atoi(v); err == nil && s >= 0 {
			return now.Add(time.Duration(s) * time.Second)
		}
		if t, err := http.ParseTime(v); err == nil {
			return t
		}
	}
	if service != ServiceGitHub {
		return time.Time{}
	}
	if strings.TrimSpace(h.Get("X-RateLimit-Remaining")) == "0" {
		if s, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil && s > 0 {
			if t := time.Unix(s, 0); t.After(now) {
				return t
			}
		}
	}
	if resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests {
		if secondaryLimit(resp) {
			// GitHub: without a header, wait at least one minute.
			return now.Add(time.Minute)
		}
	}
	return time.Time{}
}

// secondaryLimit peeks at an error body for GitHub's secondary-limit words,
// leaving the body readable.
func secondaryLimit(resp *http.Response) bool {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	var m struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(b, &m)
	msg := strings.ToLower(m.Message)
	return strings.Contains(msg, "secondary rate limit") || strings.Contains(msg, "rate limit")
}
