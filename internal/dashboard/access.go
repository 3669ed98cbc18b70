package dashboard

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// SignIn is GitHub sign-in with the App's OAuth client: the user-to-server
// web flow (/login → GitHub → /callback), a session cookie sealed with a
// key derived from the client secret (so every replica reads it), and
// per-repository read checks with the user's token, cached until the
// token expires. When the token expires the user signs in again, and every
// repository is checked again.
type SignIn struct {
	// ClientID and ClientSecret are the App's OAuth client (required).
	ClientID, ClientSecret string
	// WebURL is GitHub's web root ("https://github.com"; GHES: its host);
	// APIURL the REST root ("https://api.github.com").
	WebURL, APIURL string
	// HTTP defaults to a client with a 10s timeout.
	HTTP *http.Client
	// Now defaults to time.Now.
	Now func() time.Time

	once sync.Once
	aead cipher.AEAD
	mu   sync.Mutex
	// reads caches "token hash|repo" → whether the user can read it, until
	// the token expires.
	reads map[string]readCheck
}

type readCheck struct {
	ok    bool
	until time.Time
}

// session is a signed-in user, as sealed in the cookie.
type session struct {
	Login   string    `json:"login"`
	Token   string    `json:"token"`
	Expires time.Time `json:"expires"`
}

const (
	sessionCookie = "autopilot_session"
	stateCookie   = "autopilot_oauth_state"
	// defaultTokenTTL is how long a session lasts when GitHub gives the
	// token no expiry (expiring user tokens turned off): the read checks
	// are made again after it.
	defaultTokenTTL = 8 * time.Hour
	maxReadChecks   = 100000
)

// errRefused is a read check GitHub answered "no" to (404, 403).
var errRefused = errors.New("not readable")

func (s *SignIn) init() {
	s.once.Do(func() {
		if s.HTTP == nil {
			s.HTTP = &http.Client{Timeout: 10 * time.Second}
		}
		if s.Now == nil {
			s.Now = time.Now
		}
		s.WebURL = strings.TrimRight(cmpOr(s.WebURL, "https://github.com"), "/")
		s.APIURL = strings.TrimRight(cmpOr(s.APIURL, "https://api.github.com"), "/")
		mac := hmac.New(sha256.New, []byte(s.ClientSecret))
		mac.Write([]byte("autopilot dashboard session v1"))
		block, _ := aes.NewCipher(mac.Sum(nil))
		s.aead, _ = cipher.NewGCM(block)
		s.reads = map[string]readCheck{}
	})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// seal encrypts and authenticates v for a cookie.
func (s *SignIn) seal(v any) (string, error) {
	s.init()
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, b, nil)), nil
}

// open reverses seal; false when the value was not sealed by this client.
func (s *SignIn) open(text string, v any) bool {
	s.init()
	b, err := base64.RawURLEncoding.DecodeString(text)
	n := s.aead.NonceSize()
	if err != nil || len(b) < n {
		return false
	}
	plain, err := s.aead.Open(nil, b[:n], b[n:], nil)
	return err == nil && json.Unmarshal(plain, v) == nil
}

// user is the request's signed-in user; false without a valid session or
// once its token has expired.
func (s *SignIn) user(r *http.Request) (*session, bool) {
	s.init()
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, false
	}
	var u session
	if !s.open(c.Value, &u) || u.Login == "" || !s.Now().Before(u.Expires) {
		return nil, false
	}
	return &u, true
}

// canRead reports whether u can read repo: GET /repos/{repo} with the
// user's token (it sees only the repositories both the user and the App
// reach), cached until the token expires. A failed check denies and is
// not cached.
func (s *SignIn) canRead(ctx context.Context, u *session, repo string) bool {
	s.init()
	sum := sha256.Sum256([]byte(u.Token))
	key := hex.EncodeToString(sum[:8]) + "|" + strings.ToLower(repo)
	now := s.Now()
	s.mu.Lock()
	c, ok := s.reads[key]
	s.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.ok
	}
	err := s.check(ctx, u.Token, repo)
	if err != nil && !errors.Is(err, errRefused) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reads) >= maxReadChecks {
		for k, c := range s.reads {
			if !now.Before(c.until) {
				delete(s.reads, k)
			}
		}
	}
	s.reads[key] = readCheck{ok: err == nil, until: u.Expires}
	return err == nil
}

// check asks GitHub whether the token can read repo.
func (s *SignIn) check(ctx context.Context, token, repo string) error {
	owner, name, _ := strings.Cut(repo, "/")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.APIURL+"/repos/"+url.PathEscape(owner)+"/"+url.PathEscape(name), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/vnd.github+json")
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusOK:
		return nil
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusForbidden && resp.Header.Get("X-RateLimit-Remaining") != "0":
		return errRefused
	}
	return fmt.Errorf("GET /repos/%s: %s", repo, resp.Status)
}

// oauthState is the sign-in in progress, sealed in a short-lived cookie.
type oauthState struct {
	State string    `json:"state"`
	Next  string    `json:"next"`
	Until time.Time `json:"until"`
}

// callbackURL is where GitHub sends the browser back: this host's
// /callback (the App's callback URL must name it).
func callbackURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/callback"
}

// localPath keeps next when it is a path on this site, else "/".
func localPath(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}

func secure(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

func (d *Dashboard) login(w http.ResponseWriter, r *http.Request) {
	s := d.o.SignIn
	s.init()
	st := oauthState{State: randomState(), Next: localPath(r.URL.Query().Get("next")), Until: s.Now().Add(10 * time.Minute)}
	sealed, err := s.seal(st)
	if err != nil {
		d.fail(w, "the sign-in state", err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: sealed, Path: "/callback", MaxAge: 600, HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteLaxMode})
	q := url.Values{"client_id": {s.ClientID}, "redirect_uri": {callbackURL(r)}, "state": {st.State}}
	http.Redirect(w, r, s.WebURL+"/login/oauth/authorize?"+q.Encode(), http.StatusFound)
}

func randomState() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (d *Dashboard) callback(w http.ResponseWriter, r *http.Request) {
	s := d.o.SignIn
	s.init()
	q := r.URL.Query()
	var st oauthState
	c, err := r.Cookie(stateCookie)
	if err != nil || !s.open(c.Value, &st) || !s.Now().Before(st.Until) || q.Get("state") == "" ||
		!hmac.Equal([]byte(st.State), []byte(q.Get("state"))) {
		http.Error(w, "sign-in refused: the state GitHub sent back is not the one this dashboard issued (an old or forged link); start again at /login", http.StatusBadRequest)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: "", Path: "/callback", MaxAge: -1})
	if e := q.Get("error"); e != "" {
		http.Error(w, "GitHub refused the sign-in: "+e+": "+q.Get("error_description")+
			" (check that the App's callback URL is "+callbackURL(r)+")", http.StatusForbidden)
		return
	}
	u, err := s.exchange(r.Context(), q.Get("code"), callbackURL(r))
	if err != nil {
		d.o.Logger.Warn("dashboard: sign-in failed", "err", err)
		http.Error(w, "sign-in failed: "+err.Error(), http.StatusBadGateway)
		return
	}
	sealed, err := s.seal(u)
	if err != nil {
		d.fail(w, "the session", err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: sealed, Path: "/", Expires: u.Expires, HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, localPath(st.Next), http.StatusFound)
}

func (d *Dashboard) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteLaxMode})
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "signed out\n")
}

// exchange trades the code for the user's token and reads its login.
func (s *SignIn) exchange(ctx context.Context, code, redirect string) (*session, error) {
	s.init()
	form := url.Values{"client_id": {s.ClientID}, "client_secret": {s.ClientSecret}, "code": {code}, "redirect_uri": {redirect}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.WebURL+"/login/oauth/access_token", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := s.do(req, &tok); err != nil {
		return nil, fmt.Errorf("POST /login/oauth/access_token: %w", err)
	}
	if tok.Error != "" || tok.AccessToken == "" {
		return nil, fmt.Errorf("GitHub answered %s: %s (check DASHBOARD_CLIENT_ID and DASHBOARD_CLIENT_SECRET)", cmpOr(tok.Error, "no token"), tok.Description)
	}
	ttl := defaultTokenTTL
	if tok.ExpiresIn > 0 {
		ttl = time.Duration(tok.ExpiresIn) * time.Second
	}
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, s.APIURL+"/user", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	req.Header.Set("Accept", "application/vnd.github+json")
	var me struct {
		Login string `json:"login"`
	}
	if err := s.do(req, &me); err != nil || me.Login == "" {
		return nil, fmt.Errorf("GET /user with the new token: %v", err)
	}
	return &session{Login: me.Login, Token: tok.AccessToken, Expires: s.Now().Add(ttl)}, nil
}

func (s *SignIn) do(req *http.Request, v any) error {
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s", resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v)
}

// WebURLFor is GitHub's web root for the REST root apiURL (GITHUB_API_URL):
// github.com for api.github.com, the host for GHES's /api/v3, else the
// same URL (a fake serving both).
func WebURLFor(apiURL string) string {
	u := strings.TrimRight(apiURL, "/")
	switch {
	case strings.EqualFold(u, "https://api.github.com"):
		return "https://github.com"
	case strings.HasSuffix(u, "/api/v3"):
		return strings.TrimSuffix(u, "/api/v3")
	}
	return u
}
