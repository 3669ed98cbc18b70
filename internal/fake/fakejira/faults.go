package fakejira

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"time"
)

// Fault replaces the answer to one request.
type Fault struct {
	// Status is the status answered (ignored with Drop).
	Status int
	// Header is added to the answer, e.g. Retry-After and RateLimit-Reason.
	Header http.Header
	// Body is the answer body; default Jira's error shape naming the status.
	Body string
	// Delay is real time waited before answering (to trip client timeouts,
	// or to give a test time to kill the client mid-request). A client that
	// gives up during the Delay is logged with status 0.
	Delay time.Duration
	// Commit processes the request first, so its effect is kept (an issue
	// is created), and only then waits out Delay and answers with the
	// fault: a lost response, or a client that died after the commit.
	Commit bool
	// Drop closes the connection without any answer.
	Drop bool
}

// RateLimited is a 429 fault as Jira Cloud sends it.
func RateLimited(retryAfter time.Duration, reason string) Fault {
	h := http.Header{}
	h.Set("Retry-After", fmt.Sprint(int(retryAfter/time.Second)))
	h.Set("RateLimit-Reason", reason)
	h.Set("X-RateLimit-Limit", "100")
	h.Set("X-RateLimit-Remaining", "0")
	return Fault{Status: http.StatusTooManyRequests, Header: h}
}

func (f Fault) record() *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	maps.Copy(rec.Header(), f.Header)
	if f.Body != "" {
		rec.WriteHeader(f.Status)
		_, _ = rec.WriteString(f.Body)
		return rec
	}
	writeErrors(rec, f.Status, []string{fmt.Sprintf("%d %s", f.Status, http.StatusText(f.Status))}, nil)
	return rec
}

type outage struct {
	until     time.Time
	fault     Fault
	endpoints []string // empty: all
}

// Script queues faults for the next calls to endpoint, one per call, ahead
// of any outage.
func (s *Server) Script(endpoint string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts[endpoint] = append(s.scripts[endpoint], faults...)
}

// Outage answers every call to the endpoints (all endpoints when none are
// named) with fault until the fake clock reaches until.
func (s *Server) Outage(until time.Time, fault Fault, endpoints ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outages = append(s.outages, outage{until: until, fault: fault, endpoints: endpoints})
}

// nextFault pops the scripted fault for ep, or returns an active outage's;
// s.mu must be held.
func (s *Server) nextFault(ep string, now time.Time) (Fault, bool) {
	if q := s.scripts[ep]; len(q) > 0 {
		s.scripts[ep] = q[1:]
		return q[0], true
	}
	for _, o := range s.outages {
		if now.Before(o.until) && (len(o.endpoints) == 0 || slices.Contains(o.endpoints, ep)) {
			return o.fault, true
		}
	}
	return Fault{}, false
}
