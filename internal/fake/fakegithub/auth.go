package fakegithub

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// GitHub's well-known Actions identities: GITHUB_TOKEN acts as
// github-actions[bot] for the GitHub Actions App.
const (
	ActionsAppID    = 15368
	ActionsAppSlug  = "github-actions"
	ActionsBotLogin = "github-actions[bot]"
	ActionsBotID    = 41898282
)

// Identity is who a registered token acts as.
type Identity struct {
	Login string
	// Type is "User" (default) or "Bot".
	Type string
	// AppID is the App the token acts for (installation tokens and
	// GITHUB_TOKEN); comments it creates carry performed_via_github_app.
	AppID          int64
	InstallationID int64
	// Repos, when non-empty, are the only repositories ("owner/name") the
	// token can see; others answer 404 like GitHub.
	Repos []string
	// RateLimit is the hourly budget; 0 means Options.RateLimit.
	RateLimit int
	// ExpiresAt, when set, ends the token (401 afterwards, by AuthClock).
	ExpiresAt time.Time
}

func (id Identity) canSee(fullName string) bool {
	if len(id.Repos) == 0 {
		return true
	}
	for _, r := range id.Repos {
		if strings.EqualFold(r, fullName) {
			return true
		}
	}
	return false
}

// AddUser registers an account ("User", "Bot" or "Organization") and
// returns its numeric id. Registering an existing login returns its id.
func (s *Server) AddUser(login, typ string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.user(login, typ).id
}

// user finds or creates an account. Called with s.mu held.
func (s *Server) user(login, typ string) *user {
	if u := s.users[strings.ToLower(login)]; u != nil {
		return u
	}
	if typ == "" {
		typ = "User"
	}
	u := &user{login: login, id: s.newID(), typ: typ}
	s.users[strings.ToLower(login)] = u
	return u
}

// AddToken registers a token (sent as "token X" or "Bearer X").
func (s *Server) AddToken(tok string, id Identity) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addToken(tok, id)
}

// RevokeInstallationTokens revokes every token minted for an installation
// so far (as an admin revoking it, or GitHub rotating credentials): later
// requests with them answer 401 Bad credentials. It returns how many.
func (s *Server) RevokeInstallationTokens(installationID int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for tok, t := range s.tokens {
		if t.id.InstallationID == installationID {
			delete(s.tokens, tok)
			n++
		}
	}
	return n
}

func (s *Server) addToken(tok string, id Identity) {
	if id.Type == "" {
		id.Type = "User"
	}
	u := s.user(id.Login, id.Type)
	if id.AppID == 0 {
		id.AppID = u.appID
	}
	limit := id.RateLimit
	if limit <= 0 {
		limit = s.defaultLimit
	}
	s.tokens[tok] = &token{id: id, own: budget{limit: limit}}
}

// AddActionsToken registers tok as a GITHUB_TOKEN for repo: it acts as
// github-actions[bot] (type Bot, App 15368), sees only that repository and
// has GitHub's 1,000 requests per hour.
func (s *Server) AddActionsToken(tok, repo string) {
	s.AddToken(tok, Identity{Login: ActionsBotLogin, Type: "Bot", AppID: ActionsAppID,
		Repos: []string{repo}, RateLimit: 1000})
}

// SetRateLimit overrides a token's budget window: limit requests, of which
// remaining are left until reset.
func (s *Server) SetRateLimit(tok string, limit, remaining int, reset time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tokens[tok]
	if t == nil {
		return fmt.Errorf("fakegithub: unknown token")
	}
	b := s.budgetOf(t)
	b.limit, b.used, b.reset = limit, max(limit-remaining, 0), reset.UTC().Truncate(time.Second)
	return nil
}

// SetGraphQLRateLimit is SetRateLimit for the token's GraphQL budget
// (the window is shared; limit is the same).
func (s *Server) SetGraphQLRateLimit(tok string, remaining int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tokens[tok]
	if t == nil {
		return fmt.Errorf("fakegithub: unknown token")
	}
	b := s.window(t)
	b.gqlUsed = max(b.limit-remaining, 0)
	return nil
}

// tokenFor resolves the Authorization header. Called with s.mu held.
func (s *Server) tokenFor(r *http.Request) *token {
	scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "token") && !strings.EqualFold(scheme, "bearer") {
		return nil
	}
	t := s.tokens[strings.TrimSpace(cred)]
	if t == nil || (!t.id.ExpiresAt.IsZero() && !s.authClock().Before(t.id.ExpiresAt)) {
		return nil
	}
	return t
}

// window rolls the token's hourly window forward when it has passed and
// returns the budget it spends.
func (s *Server) window(t *token) *budget {
	b := s.budgetOf(t)
	now := s.clock()
	if b.reset.IsZero() || !now.Before(b.reset) {
		b.used, b.gqlUsed = 0, 0
		b.reset = now.Add(time.Hour).UTC().Truncate(time.Second)
	}
	return b
}

// limitedIn answers when the token's REST or GraphQL budget is spent:
// REST with 403, GraphQL with an HTTP 200 whose errors say RATE_LIMITED.
func (s *Server) limitedIn(t *token, graphql bool) (reply, bool) {
	if b := s.window(t); *b.bucket(graphql) < b.limit {
		return reply{}, false
	}
	s.countPrimary(t)
	who := fmt.Sprintf("user ID %d", s.user(t.id.Login, t.id.Type).id)
	if t.id.InstallationID != 0 {
		who = fmt.Sprintf("installation ID %d", t.id.InstallationID)
	}
	rep := errorReply(http.StatusForbidden, "API rate limit exceeded for "+who+".",
		"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits")
	if graphql {
		rep = gqlErrors(nil, obj{"type": "RATE_LIMITED", "message": "API rate limit exceeded for " + who + "."})
	} else if s.limits.lim.Primary429 {
		rep.status = http.StatusTooManyRequests
		rep.body.(map[string]any)["status"] = strconv.Itoa(http.StatusTooManyRequests)
	}
	s.bucketHeaders(t, graphql, &rep)
	return rep, true
}

func (s *Server) rateHeaders(t *token, rep *reply) { s.bucketHeaders(t, false, rep) }

func (s *Server) bucketHeaders(t *token, graphql bool, rep *reply) {
	b := s.window(t)
	used, resource := b.used, "core"
	if graphql {
		used, resource = b.gqlUsed, "graphql"
	}
	rep.set("X-RateLimit-Limit", strconv.Itoa(b.limit))
	rep.set("X-RateLimit-Remaining", strconv.Itoa(max(b.limit-used, 0)))
	rep.set("X-RateLimit-Used", strconv.Itoa(used))
	rep.set("X-RateLimit-Reset", strconv.FormatInt(b.reset.Unix(), 10))
	rep.set("X-RateLimit-Resource", resource)
}

// getAuthUser serves GET /user; installation tokens are refused like GitHub.
func (s *Server) getAuthUser(c *call) reply {
	if c.tok.id.AppID != 0 {
		return errorReply(http.StatusForbidden, "Resource not accessible by integration", docRoot)
	}
	return ok(s.userJSON(c.who))
}
