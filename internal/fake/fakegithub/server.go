package fakegithub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options configures a Server. The zero value is usable.
type Options struct {
	// Clock stamps every object (created_at, updated_at, ...), the request
	// log and rate-limit windows. Default time.Now.
	Clock func() time.Time
	// AuthClock checks credential lifetimes: App JWT iat/exp and
	// installation token expires_at. Default time.Now, because clients
	// (ghinstallation, go-github) mint and refresh credentials from the wall
	// clock whatever Clock says.
	AuthClock func() time.Time
	// Latency is added to every request before it is processed.
	Latency time.Duration
	// LegacyDispatch makes workflow dispatches that carry
	// return_run_details fail with 422, like a GHES that predates it.
	LegacyDispatch bool
	// RateLimit is the default hourly request budget per token (default 5000).
	RateLimit int
	// WebURL is the html_url base (default https://github.com).
	WebURL string
	// Limits, when set, turns on GitHub's per-installation limits
	// (limits.go): one primary budget per installation, concurrency,
	// points per minute, content creation. Nil: per-token budgets only.
	Limits *Limits
}

// Server is the fake GitHub. All methods are safe for concurrent use.
type Server struct {
	ts        *httptest.Server
	clock     func() time.Time
	authClock func() time.Time
	webURL    string
	routes    []route

	oauthSt oauthState // the OAuth web flow (oauth.go), under its own lock

	mu             sync.Mutex
	hookLog        *hookLog // the App webhook's deliveries (deliveries.go)
	latency        time.Duration
	legacyDispatch bool
	defaultLimit   int
	lastID         int64
	users          map[string]*user // lower login
	tokens         map[string]*token
	apps           map[int64]*app
	repos          map[string]*repository // lower full name
	comments       map[int64]*comment
	runs           map[int64]*run
	scripts        []*script
	log            []Request
	sub            *subState    // sub-issues, dependencies, content limits (subissues.go)
	deploy         *deployState // environments, protection-rule requests (deploy.go)
	teams          *teamState   // teams and pull request files (teams.go, codeowners.go)
	limits         *limitState  // per-installation limits and answer counts (limits.go)
}

// New starts a fake GitHub on a local port. Call Close when done.
func New(opts Options) *Server {
	s := &Server{
		clock:          opts.Clock,
		authClock:      opts.AuthClock,
		webURL:         strings.TrimRight(opts.WebURL, "/"),
		latency:        opts.Latency,
		legacyDispatch: opts.LegacyDispatch,
		defaultLimit:   opts.RateLimit,
		lastID:         1000,
		users:          map[string]*user{},
		tokens:         map[string]*token{},
		apps:           map[int64]*app{},
		repos:          map[string]*repository{},
		comments:       map[int64]*comment{},
		runs:           map[int64]*run{},
		limits:         newLimitState(opts.Limits),
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	if s.authClock == nil {
		s.authClock = time.Now
	}
	if s.webURL == "" {
		s.webURL = "https://github.com"
	}
	if s.defaultLimit <= 0 {
		s.defaultLimit = 5000
	}
	s.routes = buildRoutes()
	s.addActionsApp()
	s.ts = httptest.NewUnstartedServer(s)
	s.ts.Start() // sets ts.URL before any handler can read it
	return s
}

// URL is the API base URL (use it as GITHUB_API_URL or go-github's BaseURL).
func (s *Server) URL() string { return s.ts.URL }

// Close shuts the server down.
func (s *Server) Close() { s.ts.Close() }

// SetLatency changes the latency added to every request.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// SetLegacyDispatch toggles the Options.LegacyDispatch knob.
func (s *Server) SetLegacyDispatch(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.legacyDispatch = on
}

// now is the object timestamp: GitHub stores whole seconds, so do we.
func (s *Server) now() time.Time { return s.clock().UTC().Truncate(time.Second) }

func (s *Server) newID() int64 {
	s.lastID++
	return s.lastID
}

// call is one request on its way through a handler.
type call struct {
	r      *http.Request
	params map[string]string
	query  url.Values
	body   []byte
	tok    *token      // token routes
	who    *user       // acting account on token routes
	app    *app        // JWT routes
	repo   *repository // routes under /repos/{owner}/{repo}
	cost   int         // a GraphQL query's primary cost in points (0: 1)
}

// reply is a handler's answer before headers are finalised.
type reply struct {
	status int
	body   any // JSON-encoded unless raw is set
	raw    []byte
	header http.Header
	// listed overrides the ids listedIDs finds (a GraphQL page).
	listed string
}

func (r *reply) set(k, v string) {
	if r.header == nil {
		r.header = http.Header{}
	}
	r.header.Set(k, v)
}

// statusClientGone is logged when the client gave up during latency.
const statusClientGone = 499

const maxBody = 32 << 20

// ServeHTTP implements http.Handler: latency, fault scripts, auth, rate
// limits, the route handler, ETags, then the request log.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.serveOAuth(w, r) { // the web flow (oauth.go), not the API
		return
	}
	escaped := r.URL.EscapedPath()
	if p, ok := strings.CutPrefix(escaped, "/api/v3"); ok && (p == "" || p[0] == '/') {
		escaped = p
	}
	if escaped == "/api/graphql" { // GHES's GraphQL endpoint
		escaped = "/graphql"
	}
	segs := splitPath(escaped)
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	entry := Request{Method: r.Method, Path: "/" + strings.Trim(escaped, "/"), Query: r.URL.RawQuery}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		entry.Body = string(body)
	}

	s.mu.Lock()
	entry.Time = s.clock()
	latency := s.latency
	tok := s.tokenFor(r)
	if tok != nil {
		entry.Login = tok.id.Login
	}
	step := s.nextStep(r.Method, segs)
	held, refused := s.admit(tok, r.Method, segs, body)
	s.mu.Unlock()
	defer s.release(held)
	if step != nil {
		latency += step.Delay
	}
	if !sleep(r.Context(), latency) {
		entry.Status = statusClientGone
		s.record(entry)
		return
	}

	var rep reply
	s.mu.Lock()
	if step != nil && !step.Pass && !step.CommitThenFail {
		rep = s.scripted(r, step)
	} else if refused != nil {
		rep = *refused
		s.bucketHeaders(tok, len(segs) == 1 && segs[0] == "graphql", &rep)
	} else {
		rep = s.handle(r, segs, body, &entry)
		if step != nil && step.CommitThenFail {
			rep = s.scripted(r, step)
		}
	}
	s.count(tok, rep.status, refused != nil)
	s.mu.Unlock()

	entry.Status = rep.status
	entry.Listed = listedIDs(rep)
	if rep.listed != "" {
		entry.Listed = rep.listed
	}
	s.record(entry)
	writeReply(w, rep)
}

// listedIDs returns the ids of a 200 list answer's objects.
func listedIDs(rep reply) string {
	list, ok := rep.body.([]obj)
	if rep.status != http.StatusOK || !ok {
		return ""
	}
	ids := make([]string, 0, len(list))
	for _, o := range list {
		if id, ok := o["id"].(int64); ok {
			ids = append(ids, strconv.FormatInt(id, 10))
		}
	}
	return strings.Join(ids, ",")
}

// handle runs auth, rate limits and the route. Called with s.mu held.
func (s *Server) handle(r *http.Request, segs []string, body []byte, entry *Request) reply {
	rt, params := s.match(r.Method, segs)
	if rt == nil {
		return notFound()
	}
	c := &call{r: r, params: params, query: r.URL.Query(), body: body}
	if rt.jwt {
		a, rep := s.verifyJWT(r)
		if a == nil {
			return rep
		}
		c.app = a
		entry.Login = a.slug
		return finish(r, rt.h(s, c))
	}
	c.tok = s.tokenFor(r)
	if c.tok == nil {
		return errorReply(http.StatusUnauthorized, "Bad credentials", docRoot)
	}
	c.who = s.user(c.tok.id.Login, c.tok.id.Type)
	gql := len(segs) == 1 && segs[0] == "graphql" // a bucket of its own on GitHub
	if rep, limited := s.limitedIn(c.tok, gql); limited {
		return rep
	}
	rep := s.scoped(c)
	if rep.status == 0 {
		rep = s.goneIssue(c)
	}
	if rep.status == 0 {
		rep = finish(r, rt.h(s, c))
	}
	if rep.status != http.StatusNotModified {
		*s.window(c.tok).bucket(gql) += max(c.cost, 1)
	}
	s.bucketHeaders(c.tok, gql, &rep)
	return rep
}

// scoped resolves {owner}/{repo}; a zero reply means "go on".
func (s *Server) scoped(c *call) reply {
	owner, ok := c.params["owner"]
	if !ok {
		return reply{}
	}
	full := owner + "/" + c.params["repo"]
	rp := s.repos[strings.ToLower(full)]
	if rp == nil || !c.tok.id.canSee(full) {
		return notFound()
	}
	c.repo = rp
	return reply{}
}

// finish encodes the body and applies ETag / If-None-Match on GET 200s.
func finish(r *http.Request, rep reply) reply {
	if rep.raw == nil && rep.body != nil {
		rep.raw, _ = json.Marshal(rep.body)
	}
	if r.Method != http.MethodGet || rep.status != http.StatusOK {
		return rep
	}
	sum := sha256.Sum256(append([]byte(r.Header.Get("Accept")+"\n"), rep.raw...))
	etag := `W/"` + hex.EncodeToString(sum[:16]) + `"`
	rep.set("ETag", etag)
	lastMod, hasLastMod := lastModified(rep.body)
	if hasLastMod {
		rep.set("Last-Modified", lastMod.Format(http.TimeFormat))
	}
	if etagMatches(r.Header.Get("If-None-Match"), etag) || notModifiedSince(r, lastMod, hasLastMod) {
		rep.status = http.StatusNotModified
		rep.raw = nil
	}
	return rep
}

// lastModified is a single object's updated_at, which GitHub sends as
// Last-Modified. Lists carry none here: a deletion does not move the
// newest updated_at, so a list's date cannot tell it changed (the ETag does).
func lastModified(body any) (time.Time, bool) {
	o, isObj := body.(obj)
	if !isObj {
		return time.Time{}, false
	}
	v, _ := o["updated_at"].(string)
	t, err := time.Parse(time.RFC3339, v)
	return t, err == nil
}

// notModifiedSince applies If-Modified-Since, which a request's
// If-None-Match overrides (RFC 9110 13.1.3).
func notModifiedSince(r *http.Request, lastMod time.Time, has bool) bool {
	if !has || r.Header.Get("If-None-Match") != "" {
		return false
	}
	since, err := http.ParseTime(r.Header.Get("If-Modified-Since"))
	return err == nil && !lastMod.After(since)
}

func etagMatches(header, etag string) bool {
	bare := strings.TrimPrefix(etag, "W/")
	for _, v := range strings.Split(header, ",") {
		v = strings.TrimSpace(v)
		if v == "*" || strings.TrimPrefix(v, "W/") == bare {
			return true
		}
	}
	return false
}

func writeReply(w http.ResponseWriter, rep reply) {
	if rep.status == 0 {
		closeConn(w)
		return
	}
	if rep.raw == nil && rep.body != nil {
		rep.raw, _ = json.Marshal(rep.body)
	}
	for k, vs := range rep.header {
		w.Header()[k] = vs
	}
	if rep.raw != nil && w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	w.Header().Set("X-GitHub-Media-Type", "github.v3; format=json")
	w.WriteHeader(rep.status)
	if rep.status != http.StatusNotModified && rep.status != http.StatusNoContent {
		_, _ = w.Write(rep.raw)
	}
}

// closeConn drops the connection without an answer: the client sees EOF,
// as when a response is lost after GitHub committed the change.
func closeConn(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	_ = buf.Flush()
	_ = conn.Close()
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func splitPath(escaped string) []string {
	var segs []string
	for _, p := range strings.Split(strings.Trim(escaped, "/"), "/") {
		if p == "" {
			continue
		}
		if u, err := url.PathUnescape(p); err == nil {
			p = u
		}
		segs = append(segs, p)
	}
	return segs
}
