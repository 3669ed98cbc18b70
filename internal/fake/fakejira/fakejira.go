// Package fakejira is a stateful, in-process Jira REST v2 server for tests:
// Cloud or Data Center flavour (serverInfo, auth style, which search endpoint
// exists), issues with keys PROJ-1, PROJ-2, …, single and bulk create with
// Jira's validation answers, get, search with a configurable search lag,
// a workflow whose transitions are listed and performed through the REST
// transitions endpoints, per-endpoint fault scripts (status, headers such as
// Retry-After, delay, dropped connections, creates that commit but lose their
// response), outages on the fake clock and a timestamped request log.
//
// It is a test double only: it never talks to a real Jira and holds nothing
// but memory. Response shapes follow Atlassian's REST v2 documentation.
package fakejira

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"
)

// Deployment flavours for Options.Deployment.
const (
	Cloud      = "cloud"
	DataCenter = "datacenter"
)

// Endpoint names, for scripts, outages and the request log.
const (
	EndpointServerInfo = "serverInfo" // GET  /rest/api/2/serverInfo
	EndpointMyself     = "myself"     // GET  /rest/api/2/myself
	EndpointCreate     = "create"     // POST /rest/api/2/issue
	EndpointBulk       = "bulk"       // POST /rest/api/2/issue/bulk
	EndpointGet        = "get"        // GET  /rest/api/2/issue/{idOrKey}
	EndpointSearch     = "search"     // GET  /rest/api/2/search (Data Center; 410 Gone on Cloud)
	EndpointSearchJQL  = "search/jql" // GET  /rest/api/2/search/jql (Cloud; 404 on Data Center)
	// EndpointTransitions is GET /rest/api/2/issue/{idOrKey}/transitions.
	EndpointTransitions = "transitions"
	// EndpointDoTransition is POST /rest/api/2/issue/{idOrKey}/transitions.
	EndpointDoTransition = "doTransition"
	EndpointUnknown      = "unknown"
)

// Options configures a Server. Zero values take the defaults noted.
type Options struct {
	Deployment string           // Cloud (default) or DataCenter
	Project    string           // project key; default "PROJ"
	User       string           // basic-auth user (Cloud: e-mail); default "bot@example.com"
	Token      string           // API token (Cloud, basic) or personal access token (DC, bearer); default "secret-token"
	SearchLag  time.Duration    // how long a new issue is invisible to search
	Now        func() time.Time // clock; default time.Now
	// Workflow is the project's workflow; default DefaultWorkflow().
	Workflow []Transition
	// Custom field ids. Defaults: Cloud "customfield_10014" epic link (not
	// settable on Cloud, which uses parent), DC "customfield_10100" epic
	// link and "customfield_10102" epic name; story points
	// "customfield_10016" on both.
	EpicLinkField, EpicNameField, PointsField string
}

// Issue is an issue held by the fake.
type Issue struct {
	ID, Key     string
	Type        string
	Summary     string
	Description string
	Labels      []string
	Parent      string   // Cloud parent (epic) key
	EpicLink    string   // Data Center Epic Link value
	EpicName    string   // Data Center Epic Name value
	Points      *float64 // story points, if set
	Status      string
	Created     time.Time
}

// Request is one logged request.
type Request struct {
	Endpoint string
	Method   string
	Path     string
	Query    string
	Header   http.Header
	// Body is the request body as received (up to 8 MiB).
	Body   string
	At     time.Time // on the fake clock, when the request arrived
	Status int       // status answered; 0 when the connection was dropped
	// Answer holds the headers answered (Retry-After, RateLimit-Reason, …);
	// nil when no answer was sent.
	Answer http.Header
}

// Server is the fake Jira. Create it with New; Close it when done.
type Server struct {
	srv  *httptest.Server
	opts Options

	mu      sync.Mutex
	authOK  bool
	issues  []*Issue
	nextID  int
	log     []Request
	scripts map[string][]Fault
	outages []outage
	// workflow is the transitions offered (SetWorkflow changes it).
	workflow []Transition
}

// New starts a fake Jira on a loopback port.
func New(opts Options) *Server {
	if opts.Deployment == "" {
		opts.Deployment = Cloud
	}
	if opts.Project == "" {
		opts.Project = "PROJ"
	}
	if opts.User == "" {
		opts.User = "bot@example.com"
	}
	if opts.Token == "" {
		opts.Token = "secret-token"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PointsField == "" {
		opts.PointsField = "customfield_10016"
	}
	if opts.Deployment == DataCenter {
		if opts.EpicLinkField == "" {
			opts.EpicLinkField = "customfield_10100"
		}
		if opts.EpicNameField == "" {
			opts.EpicNameField = "customfield_10102"
		}
	}
	if opts.Workflow == nil {
		opts.Workflow = DefaultWorkflow()
	}
	s := &Server{opts: opts, authOK: true, nextID: 10000, scripts: map[string][]Fault{}, workflow: slices.Clone(opts.Workflow)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the base URL of the fake, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string { return s.srv.URL }

// Client returns an HTTP client for the fake's listener.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// Options returns the options in force (defaults filled in).
func (s *Server) Options() Options { return s.opts }

// SetAuthValid makes the configured credentials work (true) or be refused
// with 401 (false), as when an API token expires.
func (s *Server) SetAuthValid(ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authOK = ok
}

// SetSearchLag changes the search lag.
func (s *Server) SetSearchLag(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.SearchLag = d
}

// Issues returns copies of every issue in creation order.
func (s *Server) Issues() []Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Issue, len(s.issues))
	for i, is := range s.issues {
		out[i] = *is
		out[i].Labels = slices.Clone(is.Labels)
	}
	return out
}

// CountLabel reports how many issues carry label.
func (s *Server) CountLabel(label string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, is := range s.issues {
		if slices.Contains(is.Labels, label) {
			n++
		}
	}
	return n
}

// Requests returns a copy of the request log.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// RequestsTo returns the logged requests to one endpoint.
func (s *Server) RequestsTo(endpoint string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Endpoint == endpoint {
			out = append(out, r)
		}
	}
	return out
}

// Transition moves an issue to "To Do", "In Progress" or "Done".
func (s *Server) Transition(key, status string) error {
	if _, ok := categories[status]; !ok {
		return fmt.Errorf("fakejira: unknown status %q", status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.find(key)
	if is == nil {
		return fmt.Errorf("fakejira: no issue %s", key)
	}
	is.Status = status
	return nil
}

// find returns the issue with the id or key; s.mu must be held.
func (s *Server) find(idOrKey string) *Issue {
	for _, is := range s.issues {
		if is.Key == idOrKey || is.ID == idOrKey {
			return is
		}
	}
	return nil
}

func endpointOf(method, path string) string {
	p := strings.TrimSuffix(strings.TrimPrefix(path, "/rest/api/2/"), "/")
	switch {
	case method == http.MethodGet && p == "serverInfo":
		return EndpointServerInfo
	case method == http.MethodGet && p == "myself":
		return EndpointMyself
	case method == http.MethodPost && p == "issue":
		return EndpointCreate
	case method == http.MethodPost && p == "issue/bulk":
		return EndpointBulk
	case method == http.MethodGet && strings.HasPrefix(p, "issue/") && !strings.Contains(p[len("issue/"):], "/"):
		return EndpointGet
	case strings.HasPrefix(p, "issue/") && strings.Count(p, "/") == 2 && strings.HasSuffix(p, "/transitions"):
		switch method {
		case http.MethodGet:
			return EndpointTransitions
		case http.MethodPost:
			return EndpointDoTransition
		}
	case method == http.MethodGet && p == "search":
		return EndpointSearch
	case method == http.MethodGet && p == "search/jql":
		return EndpointSearchJQL
	}
	return EndpointUnknown
}

// serve logs the request, applies any fault, and otherwise answers it.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	ep := endpointOf(r.Method, r.URL.Path)
	body, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	s.mu.Lock()
	now := s.opts.Now()
	s.log = append(s.log, Request{
		Endpoint: ep, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: string(body), At: now,
	})
	entry := len(s.log) - 1
	fault, faulted := s.nextFault(ep, now)
	s.mu.Unlock()

	rec := httptest.NewRecorder()
	if faulted && fault.Commit {
		// The effect happens first, whatever becomes of the answer: a client
		// that times out or dies during the Delay has still created the issue.
		s.handle(rec, r, ep, body)
	}
	if faulted && fault.Delay > 0 {
		select {
		case <-r.Context().Done():
			s.setStatus(entry, 0)
			return
		case <-time.After(fault.Delay):
		}
	}
	if !faulted {
		s.handle(rec, r, ep, body)
	}
	if faulted {
		if fault.Drop {
			s.setStatus(entry, 0)
			panic(http.ErrAbortHandler)
		}
		rec = fault.record()
	}
	s.mu.Lock()
	s.log[entry].Status, s.log[entry].Answer = rec.Code, rec.Header().Clone()
	s.mu.Unlock()
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func (s *Server) setStatus(entry, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log[entry].Status = status
}

// authorized checks the Authorization header: basic user:token on both
// flavours, bearer personal access token on Data Center only.
func (s *Server) authorized(r *http.Request) bool {
	s.mu.Lock()
	ok := s.authOK
	s.mu.Unlock()
	if !ok {
		return false
	}
	if u, p, basic := r.BasicAuth(); basic {
		return u == s.opts.User && p == s.opts.Token
	}
	if tok, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); bearer {
		return s.opts.Deployment == DataCenter && tok == s.opts.Token
	}
	return false
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request, ep string, body []byte) {
	if ep == EndpointServerInfo {
		s.serverInfo(w)
		return
	}
	if ep == EndpointUnknown || (ep == EndpointSearchJQL && s.opts.Deployment == DataCenter) {
		w.Header().Set("Content-Type", "text/html;charset=UTF-8")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, "<html><body><h1>404 Not Found</h1></body></html>")
		return
	}
	if !s.authorized(r) {
		writeErrors(w, http.StatusUnauthorized, []string{"You are not authenticated. Authentication required to perform this operation."}, nil)
		return
	}
	switch ep {
	case EndpointMyself:
		s.myself(w)
	case EndpointCreate:
		s.create(w, body)
	case EndpointBulk:
		s.bulk(w, body)
	case EndpointGet:
		s.get(w, r)
	case EndpointTransitions:
		s.transitions(w, r)
	case EndpointDoTransition:
		s.doTransition(w, r, body)
	case EndpointSearch:
		if s.opts.Deployment == Cloud {
			writeErrors(w, http.StatusGone, []string{"The requested API has been removed. Please migrate to the /rest/api/3/search/jql API. A full migration guideline is available at https://developer.atlassian.com/changelog/#CHANGE-2046"}, nil)
			return
		}
		s.search(w, r, false)
	case EndpointSearchJQL:
		s.search(w, r, true)
	}
}

func (s *Server) serverInfo(w http.ResponseWriter) {
	info := map[string]any{
		"baseUrl":        s.srv.URL,
		"version":        "9.12.0",
		"versionNumbers": []int{9, 12, 0},
		"deploymentType": "Server",
		"buildNumber":    9120000,
		"serverTitle":    "Jira",
	}
	if s.opts.Deployment == Cloud {
		info["version"] = "1001.0.0-SNAPSHOT"
		info["versionNumbers"] = []int{1001, 0, 0}
		info["deploymentType"] = "Cloud"
		info["buildNumber"] = 100290
	}
	info["serverTime"] = s.opts.Now().UTC().Format("2006-01-02T15:04:05.000-0700")
	writeJSON(w, http.StatusOK, info)
}

func (s *Server) myself(w http.ResponseWriter) {
	me := map[string]any{"self": s.srv.URL + "/rest/api/2/myself", "active": true, "displayName": "Autopilot Bot"}
	if s.opts.Deployment == Cloud {
		me["accountId"] = "5b10ac8d82e05b22cc7d4ef5"
		me["emailAddress"] = s.opts.User
		me["accountType"] = "atlassian"
	} else {
		me["name"] = "autopilot"
		me["key"] = "JIRAUSER10100"
	}
	writeJSON(w, http.StatusOK, me)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		fmt.Fprintf(&buf, `{"errorMessages":[%q],"errors":{}}`, err.Error())
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// writeErrors answers Jira's ErrorCollection shape.
func writeErrors(w http.ResponseWriter, status int, messages []string, fields map[string]string) {
	if messages == nil {
		messages = []string{}
	}
	if fields == nil {
		fields = map[string]string{}
	}
	writeJSON(w, status, map[string]any{"errorMessages": messages, "errors": fields})
}
