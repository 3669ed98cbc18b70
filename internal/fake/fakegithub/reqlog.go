package fakegithub

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Request is one request the fake received.
type Request struct {
	// Time is when it arrived, by Options.Clock.
	Time   time.Time
	Method string
	// Path is the path as sent (escaped), without any /api/v3 prefix.
	Path  string
	Query string
	// Status is the answer: 0 when the connection was closed on purpose,
	// 499 when the client gave up during latency.
	Status int
	// Login is the token's identity, or the App slug for JWT calls.
	Login string
	// Body is the request body of mutations (non-GET requests).
	Body string
	// Listed holds the ids of the objects a 200 list answer carried,
	// comma-separated (so a test can tell which comments a run read; a
	// string keeps Request comparable).
	Listed string
}

// ListedIDs returns Listed as numbers.
func (r Request) ListedIDs() []int64 {
	var ids []int64
	for _, f := range strings.Split(r.Listed, ",") {
		if id, err := strconv.ParseInt(f, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// IsMutation reports whether the request asked to change state (anything
// but GET/HEAD, not counting App token minting; on GraphQL, a mutation
// document).
func (r Request) IsMutation() bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return false
	}
	if r.Path == "/graphql" {
		var doc struct {
			Query string `json:"query"`
		}
		return json.Unmarshal([]byte(r.Body), &doc) == nil && strings.HasPrefix(strings.TrimSpace(doc.Query), "mutation")
	}
	return !strings.HasPrefix(r.Path, "/app/")
}

func (s *Server) record(e Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, e)
}

// Requests returns every request so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// Count counts requests matching "METHOD /path/pattern" ("*" or "{name}"
// is one segment; a pattern without a method matches any method).
func (s *Server) Count(pattern string) int {
	method, path, found := strings.Cut(pattern, " ")
	if !found {
		method, path = "*", pattern
	}
	segs := splitPath(path)
	n := 0
	for _, r := range s.Requests() {
		if matchRequest(method, segs, r.Method, splitPath(r.Path)) {
			n++
		}
	}
	return n
}

// MutationTimes returns the arrival times of every mutation, in order.
func (s *Server) MutationTimes() []time.Time {
	var out []time.Time
	for _, r := range s.Requests() {
		if r.IsMutation() {
			out = append(out, r.Time)
		}
	}
	return out
}

// ResetLog forgets the requests recorded so far.
func (s *Server) ResetLog() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = nil
}
