package fakegithub

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Per-installation limits, as GitHub's "Rate limits for the REST API" and
// "Rate limits and query limits for the GraphQL API" describe them (the
// numbers and what the docs say are in docs/app.md, "GitHub's limits").
// Off unless Options.Limits is set: the tokens of one installation then
// share one primary budget (tokens rotate hourly, the budget is the
// installation's), and the secondary limits below answer 403 with
// retry-after and GitHub's message. A request sent inside an announced
// retry-after window is refused again and counted (InsideRetryAfter).

// Limits are the limits enforced per installation (per account for other
// tokens). A zero field is no limit.
type Limits struct {
	// Primary429 answers a spent primary budget with 429 instead of 403
	// (GitHub sends either, with x-ratelimit-remaining: 0).
	Primary429 bool
	// Concurrent bounds the requests in flight (GitHub: 100, REST and
	// GraphQL together).
	Concurrent int
	// PointsPerMinute bounds REST secondary points in any 60 s (GitHub:
	// 900; GET, HEAD and OPTIONS cost 1 point, other methods 5).
	PointsPerMinute int
	// GraphQLPointsPerMinute bounds GraphQL secondary points in any 60 s
	// (GitHub: 2,000; a query costs 1 point, a mutation 5).
	GraphQLPointsPerMinute int
	// ContentPerMinute and ContentPerHour bound content-creating requests
	// (issues, comments, reviews, sub-issue links, dependencies; GitHub: 80
	// and 500).
	ContentPerMinute, ContentPerHour int
	// RetryAfter is the retry-after of a concurrency answer (default 60 s).
	// A window's answer names the seconds until enough of it has passed.
	RetryAfter time.Duration
}

// GitHubLimits returns the limits GitHub documents for an installation.
func GitHubLimits() Limits {
	return Limits{Concurrent: 100, PointsPerMinute: 900, GraphQLPointsPerMinute: 2000,
		ContentPerMinute: 80, ContentPerHour: 500}
}

// LimitStats counts the answers given, for a simulation's report.
type LimitStats struct {
	// ByStatus counts every answer by HTTP status (0: connection closed).
	ByStatus map[int]int
	// NotModified counts 304 answers (not charged to the primary budget).
	NotModified int
	// Primary and Secondary count primary- and secondary-limit answers.
	Primary, Secondary int
	// InsideRetryAfter counts requests sent inside an announced window.
	InsideRetryAfter int
	// ByInstallation holds the same per installation (0: other tokens).
	ByInstallation map[int64]InstallationStats
}

// InstallationStats is LimitStats for one installation.
type InstallationStats struct {
	Requests, NotModified, Primary, Secondary, InsideRetryAfter int
	// Used and GraphQLUsed are the primary budget spent in the current
	// window (shared by the installation's tokens when Limits are on).
	Used, GraphQLUsed int
}

// budget is a primary rate-limit window: REST and GraphQL apart, one reset.
type budget struct {
	limit, used, gqlUsed int
	reset                time.Time
}

func (b *budget) bucket(graphql bool) *int {
	if graphql {
		return &b.gqlUsed
	}
	return &b.used
}

type stamped struct {
	at     time.Time
	points int
}

type limitState struct {
	on        bool
	lim       Limits
	budgets   map[int64]*budget // installation → its shared budget
	inflight  map[string]int
	points    map[string][]stamped // REST secondary points, last minute
	gqlPoints map[string][]stamped
	content   map[string][]time.Time // content creates, last hour
	notBefore map[string]time.Time   // end of an announced retry-after
	stats     LimitStats
}

func newLimitState(lim *Limits) *limitState {
	st := &limitState{budgets: map[int64]*budget{}, inflight: map[string]int{},
		points: map[string][]stamped{}, gqlPoints: map[string][]stamped{},
		content: map[string][]time.Time{}, notBefore: map[string]time.Time{},
		stats: LimitStats{ByStatus: map[int]int{}, ByInstallation: map[int64]InstallationStats{}}}
	if lim != nil {
		st.on, st.lim = true, *lim
		if st.lim.RetryAfter <= 0 {
			st.lim.RetryAfter = time.Minute
		}
	}
	return st
}

// LimitStats returns the answers counted so far.
func (s *Server) LimitStats() LimitStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.limits.stats
	out.ByStatus = map[int]int{}
	for k, v := range s.limits.stats.ByStatus {
		out.ByStatus[k] = v
	}
	out.ByInstallation = map[int64]InstallationStats{}
	for k, v := range s.limits.stats.ByInstallation {
		if b := s.limits.budgets[k]; b != nil {
			v.Used, v.GraphQLUsed = b.used, b.gqlUsed
		}
		out.ByInstallation[k] = v
	}
	return out
}

// InFlight is the number of requests of an installation being served.
func (s *Server) InFlight(installationID int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limits.inflight[installationKey(installationID)]
}

func installationKey(id int64) string { return "installation/" + strconv.FormatInt(id, 10) }

// limitKey is what the limits are counted against: the installation, or
// the account for other tokens.
func limitKey(t *token) string {
	if t.id.InstallationID != 0 {
		return installationKey(t.id.InstallationID)
	}
	return "account/" + strings.ToLower(t.id.Login)
}

// budgetOf is the primary budget a token spends: its installation's when
// Limits are on, else its own. Called with s.mu held.
func (s *Server) budgetOf(t *token) *budget {
	if !s.limits.on || t.id.InstallationID == 0 {
		return &t.own
	}
	b := s.limits.budgets[t.id.InstallationID]
	if b == nil {
		b = &budget{limit: t.own.limit}
		s.limits.budgets[t.id.InstallationID] = b
	}
	return b
}

// admit applies the secondary limits to an arriving request and holds its
// place among the requests in flight (release gives it back). It returns
// the key held ("" for none) and the answer when the request is refused.
// Called with s.mu held.
func (s *Server) admit(t *token, method string, segs []string, body []byte) (string, *reply) {
	st := s.limits
	if !st.on || t == nil {
		return "", nil
	}
	key, now := limitKey(t), s.clock()
	st.inflight[key]++
	refuse := func(wait time.Duration) (string, *reply) {
		secs := int((wait + time.Second - 1) / time.Second)
		secs = max(secs, 1)
		if nb := now.Add(time.Duration(secs) * time.Second); nb.After(st.notBefore[key]) {
			st.notBefore[key] = nb
		}
		rep := errorReply(http.StatusForbidden, secondaryMsg, secondaryDoc)
		rep.set("Retry-After", strconv.Itoa(secs))
		return key, &rep
	}
	if nb := st.notBefore[key]; now.Before(nb) {
		st.stats.InsideRetryAfter++
		in := st.stats.ByInstallation[t.id.InstallationID]
		in.InsideRetryAfter++
		st.stats.ByInstallation[t.id.InstallationID] = in
		return refuse(nb.Sub(now))
	}
	if st.lim.Concurrent > 0 && st.inflight[key] > st.lim.Concurrent {
		return refuse(st.lim.RetryAfter)
	}
	gql := len(segs) == 1 && segs[0] == "graphql"
	window, perMinute, cost := st.points, st.lim.PointsPerMinute, 1
	if gql {
		window, perMinute = st.gqlPoints, st.lim.GraphQLPointsPerMinute
		if bytes.Contains(bytes.TrimSpace(body), []byte(`"mutation`)) {
			cost = 5
		}
	} else if method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions {
		cost = 5
	}
	recent := keepSince(window[key], now.Add(-time.Minute))
	window[key] = recent
	if perMinute > 0 {
		sum := cost
		for _, p := range recent {
			sum += p.points
		}
		if sum > perMinute {
			// wait until enough of the oldest points have left the minute
			for _, p := range recent {
				sum -= p.points
				if sum <= perMinute {
					return refuse(p.at.Add(time.Minute).Sub(now))
				}
			}
		}
	}
	creates := st.content[key]
	if isContentCreate(method, segs) {
		creates = keepTimesSince(creates, now.Add(-time.Hour))
		st.content[key] = creates
		if w := contentWait(creates, now, st.lim); w > 0 {
			return refuse(w)
		}
		st.content[key] = append(creates, now)
	}
	window[key] = append(recent, stamped{at: now, points: cost})
	return key, nil
}

// contentWait is how long a content create must wait, 0 for not at all.
func contentWait(creates []time.Time, now time.Time, lim Limits) time.Duration {
	if lim.ContentPerHour > 0 && len(creates) >= lim.ContentPerHour {
		return creates[len(creates)-lim.ContentPerHour].Add(time.Hour).Sub(now)
	}
	if lim.ContentPerMinute > 0 {
		minute := keepTimesSince(creates, now.Add(-time.Minute))
		if len(minute) >= lim.ContentPerMinute {
			return minute[len(minute)-lim.ContentPerMinute].Add(time.Minute).Sub(now)
		}
	}
	return 0
}

// release gives back a place held by admit.
func (s *Server) release(key string) {
	if key == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limits.inflight[key]--; s.limits.inflight[key] <= 0 {
		delete(s.limits.inflight, key)
	}
}

// count records an answer. Called with s.mu held.
func (s *Server) count(t *token, status int, secondary bool) {
	st := &s.limits.stats
	st.ByStatus[status]++
	var inst int64
	if t != nil {
		inst = t.id.InstallationID
	}
	in := st.ByInstallation[inst]
	in.Requests++
	if status == http.StatusNotModified {
		st.NotModified++
		in.NotModified++
	}
	if secondary {
		st.Secondary++
		in.Secondary++
	}
	st.ByInstallation[inst] = in
}

// countPrimary records a primary-limit answer. Called with s.mu held.
func (s *Server) countPrimary(t *token) {
	s.limits.stats.Primary++
	in := s.limits.stats.ByInstallation[t.id.InstallationID]
	in.Primary++
	s.limits.stats.ByInstallation[t.id.InstallationID] = in
}

// isContentCreate reports whether a request creates content in GitHub's
// sense: an issue, a comment, a review, a sub-issue link, a dependency.
func isContentCreate(method string, segs []string) bool {
	if method != http.MethodPost || len(segs) == 0 {
		return false
	}
	switch segs[len(segs)-1] {
	case "issues", "comments", "reviews", "sub_issues", "blocked_by", "pulls":
		return true
	}
	return false
}

func keepSince(list []stamped, from time.Time) []stamped {
	i := 0
	for i < len(list) && !list[i].at.After(from) {
		i++
	}
	return list[i:]
}

func keepTimesSince(list []time.Time, from time.Time) []time.Time {
	i := 0
	for i < len(list) && !list[i].After(from) {
		i++
	}
	return list[i:]
}

// SetInstallationRateLimit sets an installation's shared primary budget
// (Options.Limits on): limit requests, of which remaining are left until
// reset, whichever of its tokens spends them.
func (s *Server) SetInstallationRateLimit(installationID int64, limit, remaining int, reset time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.limits.on || installationID == 0 {
		return fmt.Errorf("fakegithub: installation budgets need Options.Limits and an installation id")
	}
	b := s.limits.budgets[installationID]
	if b == nil {
		b = &budget{}
		s.limits.budgets[installationID] = b
	}
	b.limit, b.used, b.reset = limit, max(limit-remaining, 0), reset.UTC().Truncate(time.Second)
	return nil
}
