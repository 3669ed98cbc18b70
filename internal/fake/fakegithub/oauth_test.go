package fakegithub

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

const (
	testClientID     = "Iv1.0123456789abcdef"
	testClientSecret = "s3cret"
	testCallback     = "http://127.0.0.1:9090/callback"
)

// oauthEnv is appEnv with the App's OAuth client, alice (write on
// octo/repo, where the App is installed) signed in to the fake's web UI,
// and a private repository of the App's account alice cannot read. The
// App is installed on octo/repo only: octo/other, public, is out of its
// user tokens' sight.
func oauthEnv(t *testing.T) *env {
	e, _ := appEnv(t)
	must(t, e.s.AddRepo("octo/secret"))
	must(t, e.s.SetRepo("octo/secret", true, "main"))
	must(t, e.s.RegisterOAuthClient(testAppID, testClientID, testClientSecret, testCallback))
	return e
}

// authorize follows GET /login/oauth/authorize without following the
// redirect; it returns the answer.
func authorize(t *testing.T, e *env, query url.Values) *http.Response {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(e.s.URL() + "/login/oauth/authorize?" + query.Encode())
	must(t, err)
	resp.Body.Close()
	return resp
}

// exchange POSTs the code to /login/oauth/access_token asking for JSON.
func exchange(t *testing.T, e *env, form url.Values) map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.s.URL()+"/login/oauth/access_token", strings.NewReader(form.Encode()))
	must(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("access_token = %d, want 200 (GitHub answers errors with 200 too)", resp.StatusCode)
	}
	var out map[string]any
	must(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

func TestOAuthWebFlowGivesAUserTokenForTheReposTheUserAndTheAppShare(t *testing.T) {
	e := oauthEnv(t)
	e.s.SignInBrowser("alice")
	q := url.Values{"client_id": {testClientID}, "redirect_uri": {testCallback}, "state": {"xyz"}}
	resp := authorize(t, e, q)
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize = %d, want 302", resp.StatusCode)
	}
	back, err := url.Parse(resp.Header.Get("Location"))
	must(t, err)
	code := back.Query().Get("code")
	if !strings.HasPrefix(back.String(), testCallback+"?") || back.Query().Get("state") != "xyz" || code == "" {
		t.Fatalf("redirect = %s", back)
	}
	tok := exchange(t, e, url.Values{"client_id": {testClientID}, "client_secret": {testClientSecret}, "code": {code}, "redirect_uri": {testCallback}})
	access, _ := tok["access_token"].(string)
	if !strings.HasPrefix(access, "ghu_") || tok["token_type"] != "bearer" || tok["expires_in"] != float64(28800) ||
		!strings.HasPrefix(tok["refresh_token"].(string), "ghr_") || tok["scope"] != "" {
		t.Fatalf("token answer = %v", tok)
	}
	var me map[string]any
	if r, b := e.do("GET", "/user", access, "", nil); r.StatusCode != http.StatusOK || json.Unmarshal(b, &me) != nil || me["login"] != "alice" {
		t.Fatalf("GET /user with the user token = %d %s", r.StatusCode, b)
	}
	for repo, want := range map[string]int{testRepo: 200, "octo/secret": 404, "octo/other": 404, "elsewhere/repo": 404} {
		if r, _ := e.do("GET", "/repos/"+repo, access, "", nil); r.StatusCode != want {
			t.Errorf("GET /repos/%s with alice's user token = %d, want %d", repo, r.StatusCode, want)
		}
	}
	// A code is good once.
	again := exchange(t, e, url.Values{"client_id": {testClientID}, "client_secret": {testClientSecret}, "code": {code}})
	if again["error"] != "bad_verification_code" || again["access_token"] != nil {
		t.Errorf("second exchange = %v", again)
	}
}

func TestOAuthUserTokenExpiresAfterEightHours(t *testing.T) {
	e := oauthEnv(t)
	now := time.Now()
	e.s.authClock = func() time.Time { return now }
	tok := e.s.MintUserToken(testAppID, "alice")
	if r, _ := e.do("GET", "/user", tok, "", nil); r.StatusCode != http.StatusOK {
		t.Fatalf("fresh user token = %d", r.StatusCode)
	}
	now = now.Add(8 * time.Hour)
	if r, _ := e.do("GET", "/user", tok, "", nil); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("user token after 8h = %d, want 401", r.StatusCode)
	}
}

func TestOAuthRefusesWhatGitHubRefuses(t *testing.T) {
	e := oauthEnv(t)
	q := url.Values{"client_id": {testClientID}, "redirect_uri": {testCallback}, "state": {"s"}}
	if resp := authorize(t, e, q); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("authorize without a signed-in browser = %d, want 401 (GitHub asks to sign in)", resp.StatusCode)
	}
	e.s.SignInBrowser("alice")
	if resp := authorize(t, e, url.Values{"client_id": {"Iv1.unknown"}, "redirect_uri": {testCallback}}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown client_id = %d, want 404", resp.StatusCode)
	}
	resp := authorize(t, e, url.Values{"client_id": {testClientID}, "redirect_uri": {"https://evil.example/callback"}, "state": {"s"}})
	if loc, _ := url.Parse(resp.Header.Get("Location")); resp.StatusCode != http.StatusFound || loc.Query().Get("error") != "redirect_uri_mismatch" ||
		!strings.HasPrefix(loc.String(), testCallback) {
		t.Errorf("foreign redirect_uri = %d %s, want a redirect to the registered callback with error=redirect_uri_mismatch", resp.StatusCode, loc)
	}
	loc, _ := url.Parse(authorize(t, e, q).Header.Get("Location"))
	code := loc.Query().Get("code")
	for name, form := range map[string]url.Values{
		"incorrect_client_credentials": {"client_id": {testClientID}, "client_secret": {"wrong"}, "code": {code}},
		"bad_verification_code":        {"client_id": {testClientID}, "client_secret": {testClientSecret}, "code": {"nope"}},
	} {
		if got := exchange(t, e, form); got["error"] != name || got["error_description"] == "" {
			t.Errorf("%s: %v", name, got)
		}
	}
}
