package transport

import "time"

// Stats counts what a Client sent, for budgets and metrics.
type Stats struct {
	// Requests counts requests sent by kind, e.g. "GET issue", "POST comment".
	Requests map[string]int
	// Total is every request sent, 304s included.
	Total int
	// ConditionalHits counts 304 answers served from the ETag cache; they
	// do not count against the rate limit (Total-ConditionalHits does).
	ConditionalHits int
	// RateLimited counts rate-limit answers (403/429) received.
	RateLimited int
	// Retries counts transient retries.
	Retries int
	// Waited is the time spent sitting out rate-limit windows.
	Waited time.Duration
	// RateRemaining is the last x-ratelimit-remaining seen, -1 before any.
	RateRemaining int
	// RateReset is the last x-ratelimit-reset seen.
	RateReset time.Time
	// GraphQLRemaining is the last x-ratelimit-remaining seen on a GraphQL
	// answer (a budget of its own), -1 before any.
	GraphQLRemaining int

	rateSeen, gqlSeen bool
}

// Low reports that a budget seen so far (REST's or GraphQL's) is below
// floor: with GraphQL spent, every thread read falls back to REST.
func (s Stats) Low(floor int) bool {
	return s.RateRemaining >= 0 && s.RateRemaining < floor || s.GraphQLRemaining >= 0 && s.GraphQLRemaining < floor
}
