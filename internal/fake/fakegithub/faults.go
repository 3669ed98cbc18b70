package fakegithub

import (
	"net/http"
	"strconv"
	"time"
)

// Step is one scripted answer to a matching request, in the style of
// policy-bot's ResponsePlayer. Steps of a script are consumed in order.
type Step struct {
	// Status is the answer; 0 closes the connection without one.
	Status int
	// Headers are set on the answer after the token's x-ratelimit-*
	// headers (which GitHub sends on errors too); an empty value removes one.
	Headers map[string]string
	// Body is the answer body; empty means GitHub's {"message": ...}.
	Body string
	// Delay is waited before the request is processed.
	Delay time.Duration
	// CommitThenFail applies the request (the mutation happens) and then
	// answers Status instead of the real answer: the "response lost after
	// commit" case.
	CommitThenFail bool
	// Pass processes the request normally after Delay.
	Pass bool
}

type script struct {
	method  string
	pattern []string
	steps   []Step
}

// Script queues steps for requests matching method ("*" for any) and a
// path pattern where "*" or "{name}" is one segment, e.g.
// Script("PATCH", "/repos/*/*/issues/comments/*", Fail(502), Fail(502)).
// Requests beyond the queued steps are served normally.
func (s *Server) Script(method, pattern string, steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts = append(s.scripts, &script{method: method, pattern: splitPath(pattern), steps: steps})
}

// PendingSteps is the number of scripted steps not consumed yet.
func (s *Server) PendingSteps() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, sc := range s.scripts {
		n += len(sc.steps)
	}
	return n
}

// ClearScripts drops every pending step.
func (s *Server) ClearScripts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts = nil
}

// nextStep pops the first pending step whose script matches. Called with
// s.mu held.
func (s *Server) nextStep(method string, segs []string) *Step {
	for _, sc := range s.scripts {
		if len(sc.steps) > 0 && matchRequest(sc.method, sc.pattern, method, segs) {
			st := sc.steps[0]
			sc.steps = sc.steps[1:]
			return &st
		}
	}
	return nil
}

// scripted renders a step's answer. Called with s.mu held.
func (s *Server) scripted(r *http.Request, st *Step) reply {
	if st.Status == 0 {
		return reply{}
	}
	rep := reply{status: st.Status, raw: []byte(st.Body)}
	if st.Body == "" {
		rep = errorReply(st.Status, defaultMessage(st.Status), docRoot)
	}
	if t := s.tokenFor(r); t != nil {
		s.rateHeaders(t, &rep)
	}
	for k, v := range st.Headers {
		rep.set(k, v)
		if v == "" {
			rep.header.Del(k)
		}
	}
	return rep
}

func defaultMessage(status int) string {
	if status >= 500 {
		return "Server Error"
	}
	return http.StatusText(status)
}

// Fail answers status without processing the request.
func Fail(status int) Step { return Step{Status: status} }

// Delayed processes the request normally after d.
func Delayed(d time.Duration) Step { return Step{Delay: d, Pass: true} }

// Disconnect closes the connection without processing the request.
func Disconnect() Step { return Step{} }

// AfterCommit processes the request, then answers status instead (0 closes
// the connection): the change is made but the client does not learn it.
func AfterCommit(status int) Step { return Step{Status: status, CommitThenFail: true} }

const (
	secondaryMsg = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. " +
		"If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000."
	secondaryDoc = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
)

func secondary(status int, retryAfter time.Duration) Step {
	st := Step{Status: status, Headers: map[string]string{},
		Body: `{"message":"` + secondaryMsg + `","documentation_url":"` + secondaryDoc + `"}`}
	if retryAfter > 0 {
		st.Headers["Retry-After"] = strconv.Itoa(int(retryAfter.Round(time.Second) / time.Second))
	}
	return st
}

// SecondaryRateLimit is GitHub's 403 secondary rate limit, with a
// retry-after header (whole seconds) when retryAfter > 0, else without.
func SecondaryRateLimit(retryAfter time.Duration) Step {
	return secondary(http.StatusForbidden, retryAfter)
}

// SecondaryRateLimit429 is the 429 form of the secondary rate limit.
func SecondaryRateLimit429(retryAfter time.Duration) Step {
	return secondary(http.StatusTooManyRequests, retryAfter)
}

// PrimaryRateLimit is a 403 with x-ratelimit-remaining: 0 and the reset.
func PrimaryRateLimit(limit int, reset time.Time) Step {
	return Step{Status: http.StatusForbidden,
		Body: `{"message":"API rate limit exceeded for installation ID 1.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits"}`,
		Headers: map[string]string{"X-RateLimit-Limit": strconv.Itoa(limit), "X-RateLimit-Remaining": "0",
			"X-RateLimit-Used": strconv.Itoa(limit), "X-RateLimit-Reset": strconv.FormatInt(reset.Unix(), 10),
			"X-RateLimit-Resource": "core"}}
}
