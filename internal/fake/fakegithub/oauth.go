package fakegithub

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
)

// GitHub's user-to-server web flow for a GitHub App's OAuth client
// (docs.github.com, "Generating a user access token for a GitHub App"):
//
//   - GET /login/oauth/authorize?client_id&redirect_uri&state: GitHub asks
//     the browser's signed-in user, then redirects to redirect_uri with
//     ?code=…&state=…. Here the user is whoever SignInBrowser named, and
//     the App is authorized at once. An unknown client answers 404; a
//     redirect_uri outside the registered callback URL goes back to the
//     callback with ?error=redirect_uri_mismatch.
//   - POST /login/oauth/access_token (client_id, client_secret, code,
//     redirect_uri): the code, good once for ten minutes, for a user
//     access token "ghu_…" that expires after eight hours, with a refresh
//     token "ghr_…". Errors are 200 answers naming the error, like GitHub.
//     The answer is JSON with Accept: application/json, else a form.
//
// A user access token sees only the repositories both the user can read
// and the App is installed on (as computed when it is minted); other
// repositories answer 404.

// userTokenTTL is how long a user access token lives (expires_in).
const userTokenTTL = 8 * time.Hour

// codeTTL is how long an authorization code may be exchanged.
const codeTTL = 10 * time.Minute

type oauthClient struct {
	appID     int64
	id        string
	secret    string
	callbacks []string
}

type oauthCode struct {
	client   string
	login    string
	redirect string
	expires  time.Time
}

// oauthState is the fake's OAuth side; its own lock, as the web flow is
// served beside the API.
type oauthState struct {
	mu      sync.Mutex
	clients map[string]*oauthClient
	codes   map[string]oauthCode
	browser string // the login signed in to the fake's web UI
}

// oauth returns the server's OAuth side, its maps made on first use.
func (s *Server) oauth() *oauthState {
	o := &s.oauthSt
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.clients == nil {
		o.clients, o.codes = map[string]*oauthClient{}, map[string]oauthCode{}
	}
	return o
}

// RegisterOAuthClient gives App appID its OAuth client (client id and
// secret) and the callback URLs GitHub redirects to.
func (s *Server) RegisterOAuthClient(appID int64, clientID, secret string, callbacks ...string) error {
	s.mu.Lock()
	known := s.apps[appID] != nil
	s.mu.Unlock()
	if !known || clientID == "" || secret == "" || len(callbacks) == 0 {
		return fmt.Errorf("fakegithub: OAuth client for app %d: unknown app, or no client id, secret or callback URL", appID)
	}
	o := s.oauth()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.clients[clientID] = &oauthClient{appID: appID, id: clientID, secret: secret, callbacks: callbacks}
	return nil
}

// SignInBrowser makes login the user signed in to the fake's web UI: the
// one who authorizes an App at /login/oauth/authorize ("" signs out).
func (s *Server) SignInBrowser(login string) {
	o := s.oauth()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.browser = login
}

// MintUserToken returns a user access token of login for App appID, as
// the web flow would (for tests that need no browser).
func (s *Server) MintUserToken(appID int64, login string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mintUserToken(appID, login)
}

// mintUserToken registers a user access token. Called with s.mu held.
func (s *Server) mintUserToken(appID int64, login string) string {
	var repos []string
	if a := s.apps[appID]; a != nil {
		for _, rp := range s.repos {
			full := rp.owner + "/" + rp.name
			for _, in := range a.installations {
				if in.covers(full) && effectivePermission(rp, login).AtLeast(access.Read) {
					repos = append(repos, full)
					break
				}
			}
		}
	}
	if len(repos) == 0 {
		repos = []string{"\x00none"} // Repos empty would mean every repository
	}
	tok := "ghu_" + randomHex(18)
	s.addToken(tok, Identity{Login: login, Repos: repos, ExpiresAt: s.authClock().Add(userTokenTTL)})
	return tok
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// serveOAuth answers the web flow's two paths; false for any other path.
func (s *Server) serveOAuth(w http.ResponseWriter, r *http.Request) bool {
	switch {
	case r.URL.Path == "/login/oauth/authorize" && r.Method == http.MethodGet:
		s.authorizePage(w, r)
	case r.URL.Path == "/login/oauth/access_token" && r.Method == http.MethodPost:
		s.accessToken(w, r)
	default:
		return false
	}
	return true
}

func (s *Server) authorizePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	o := s.oauth()
	o.mu.Lock()
	c, login := o.clients[q.Get("client_id")], o.browser
	o.mu.Unlock()
	if c == nil {
		http.Error(w, "Not Found", http.StatusNotFound)
		return
	}
	redirect := q.Get("redirect_uri")
	if redirect == "" {
		redirect = c.callbacks[0]
	}
	if !c.allows(redirect) {
		back := c.callbacks[0] + "?" + url.Values{"error": {"redirect_uri_mismatch"},
			"error_description": {"The redirect_uri is not associated with this application."},
			"error_uri":         {"https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#redirect-uri-mismatch"},
			"state":             {q.Get("state")}}.Encode()
		http.Redirect(w, r, back, http.StatusFound)
		return
	}
	if login == "" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = fmt.Fprint(w, "<!doctype html><title>Sign in to GitHub</title><p>Sign in to GitHub to continue.</p>")
		return
	}
	code := randomHex(10)
	o.mu.Lock()
	o.codes[code] = oauthCode{client: c.id, login: login, redirect: redirect, expires: s.authClock().Add(codeTTL)}
	o.mu.Unlock()
	sep := "?"
	if strings.Contains(redirect, "?") {
		sep = "&"
	}
	http.Redirect(w, r, redirect+sep+url.Values{"code": {code}, "state": {q.Get("state")}}.Encode(), http.StatusFound)
}

// allows reports whether redirect is under a registered callback URL
// (same scheme, host and port; the path at or below the callback's).
func (c *oauthClient) allows(redirect string) bool {
	u, err := url.Parse(redirect)
	if err != nil {
		return false
	}
	for _, cb := range c.callbacks {
		v, err := url.Parse(cb)
		if err == nil && u.Scheme == v.Scheme && u.Host == v.Host && strings.HasPrefix(u.Path, v.Path) {
			return true
		}
	}
	return false
}

const oauthErrorDocs = "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/"

func (s *Server) accessToken(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	f := r.Form
	o := s.oauth()
	o.mu.Lock()
	c := o.clients[f.Get("client_id")]
	code, found := o.codes[f.Get("code")]
	var answer map[string]any
	switch {
	case c == nil || c.secret != f.Get("client_secret"):
		answer = oauthError("incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.")
	case !found || code.client != c.id || !s.authClock().Before(code.expires):
		answer = oauthError("bad_verification_code", "The code passed is incorrect or expired.")
	case f.Get("redirect_uri") != "" && f.Get("redirect_uri") != code.redirect:
		answer = oauthError("redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL for this application.")
	default:
		delete(o.codes, f.Get("code"))
	}
	o.mu.Unlock()
	if answer == nil {
		s.mu.Lock()
		tok := s.mintUserToken(c.appID, code.login)
		s.mu.Unlock()
		answer = map[string]any{"access_token": tok, "expires_in": int(userTokenTTL.Seconds()), "refresh_token": "ghr_" + randomHex(30),
			"refresh_token_expires_in": 15897600, "scope": "", "token_type": "bearer"}
	}
	if strings.Contains(r.Header.Get("Accept"), "json") {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(answer)
		return
	}
	v := url.Values{}
	for k, x := range answer {
		v.Set(k, fmt.Sprint(x))
	}
	w.Header().Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	_, _ = w.Write([]byte(v.Encode()))
}

func oauthError(name, description string) map[string]any {
	return map[string]any{"error": name, "error_description": description, "error_uri": oauthErrorDocs + "#" + strings.ReplaceAll(name, "_", "-")}
}
