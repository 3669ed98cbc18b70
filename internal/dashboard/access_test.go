package dashboard

import (
	"crypto/rand"
	"crypto/rsa"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/dashboard/store"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/state"
)

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:9090": true, "[::1]:9090": true, "localhost:9090": true, "127.0.0.2:1": true,
		":9090": false, "0.0.0.0:9090": false, "10.1.2.3:9090": false, "[::]:9090": false, "dash.example:9090": false, "9090": false} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestExposedWithoutSignInRefusesEveryRequest: on a non-loopback admin
// address without GitHub sign-in, every dashboard path answers 403 with
// what to do.
func TestExposedWithoutSignInRefusesEveryRequest(t *testing.T) {
	d := newDash(t, Options{Store: fill(t, samplePass(nil)), Exposed: true})
	for _, p := range []string{"/", "/issues/octo-org/hello-world/12", "/health", "/login", "/?login=octocat"} {
		code, body := get(t, d, p)
		if code != http.StatusForbidden || !strings.Contains(body, "ADMIN_ADDR") || strings.Contains(body, "Add login") {
			t.Errorf("GET %s = %d %.120q", p, code, body)
		}
	}
	if code, _ := get(t, newDash(t, Options{Store: store.NewMemory()}), "/"); code != http.StatusOK {
		t.Errorf("loopback GET / = %d", code)
	}
}

// signInRig is an exposed dashboard with GitHub sign-in against the fake
// GitHub: the App installed on acme/widgets (public) and acme/vault
// (private, maria only), rows on both.
type signInRig struct {
	gh    *fakegithub.Server
	url   string
	clock *time.Time
}

func newSignInRig(t *testing.T) *signInRig {
	t.Helper()
	g := fakegithub.New(fakegithub.Options{})
	t.Cleanup(g.Close)
	for _, r := range []string{"acme/widgets", "acme/vault"} {
		must(t, g.AddRepo(r))
	}
	must(t, g.SetRepo("acme/vault", true, "main"))
	g.AddUser("maria", "User")
	g.AddUser("sam", "User")
	must(t, g.SetPermission("acme/vault", "maria", "admin"))
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	must(t, err)
	must(t, g.RegisterApp(42, "autopilot", &key.PublicKey, fakegithub.Installation{ID: 7, Account: "acme"}))
	clock := time.Now()
	rows := fill(t,
		samplePass(func(s *state.State) { s.Repo, s.Issue, s.Title = "acme/widgets", 1, "Public work" }),
		samplePass(func(s *state.State) {
			s.Repo, s.Issue, s.Title, s.Decisions[0].By = "acme/vault", 2, "Secret work", "maria"
		}))
	si := &SignIn{ClientID: "Iv1.dash", ClientSecret: "dash-secret", WebURL: g.URL(), APIURL: g.URL(), Now: func() time.Time { return clock }}
	d := newDash(t, Options{Store: rows, Exposed: true, SignIn: si, Now: func() time.Time { return clock }})
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	must(t, g.RegisterOAuthClient(42, "Iv1.dash", "dash-secret", srv.URL+"/callback"))
	return &signInRig{gh: g, url: srv.URL, clock: &clock}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// browser is a cookie-keeping client that follows redirects.
func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	must(t, err)
	return &http.Client{Jar: jar}
}

func fetch(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	must(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestSignInShowsOnlyTheRepositoriesTheUserCanRead: through GitHub's web
// flow (the fake's), maria sees both repositories, sam only the public
// one; a stranger without a session is sent to sign in and sees nothing.
func TestSignInShowsOnlyTheRepositoriesTheUserCanRead(t *testing.T) {
	rig := newSignInRig(t)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(rig.url + "/issues/acme/vault/2")
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/login?next=%2Fissues%2Facme%2Fvault%2F2" {
		t.Fatalf("no session: %d %s, want a redirect to /login", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, c := range []struct {
		login       string
		sees, hides string
	}{{"maria", "Secret work", ""}, {"sam", "Public work", "Secret work"}} {
		rig.gh.SignInBrowser(c.login)
		b := browser(t)
		code, body := fetch(t, b, rig.url+"/")
		if code != http.StatusOK || !strings.Contains(body, "signed in as @"+c.login) || !strings.Contains(body, c.sees) ||
			!strings.Contains(body, "Public work") || (c.hides != "" && strings.Contains(body, c.hides)) {
			t.Errorf("%s: GET / = %d, sees %q: %v, hides %q", c.login, code, c.sees, strings.Contains(body, c.sees), c.hides)
		}
		if c.hides != "" {
			if code, _ := fetch(t, b, rig.url+"/issues/acme/vault/2"); code != http.StatusNotFound {
				t.Errorf("%s: the private issue's page = %d, want 404", c.login, code)
			}
		}
	}
}

// TestSignInIsCheckedAgainWhenTheTokenExpires: the read checks are cached
// (one GET /repos per repository per token), and once the token expired
// the user signs in again and every repository is checked again.
func TestSignInIsCheckedAgainWhenTheTokenExpires(t *testing.T) {
	rig := newSignInRig(t)
	rig.gh.SignInBrowser("maria")
	b := browser(t)
	for range 3 {
		if code, body := fetch(t, b, rig.url+"/"); code != http.StatusOK || !strings.Contains(body, "Secret work") {
			t.Fatalf("GET / = %d", code)
		}
	}
	if n := rig.gh.Count("GET /repos/*/*"); n != 2 {
		t.Errorf("%d repository checks for three page loads, want 2 (one per repository, cached)", n)
	}
	must(t, rig.gh.SetPermission("acme/vault", "maria", "none")) // maria loses access
	*rig.clock = rig.clock.Add(8*time.Hour + time.Second)
	// Her token expired: she signs in again (the fake's browser does it at
	// once) and gets a new token, which no longer sees the vault.
	code, body := fetch(t, b, rig.url+"/")
	if code != http.StatusOK || strings.Contains(body, "Secret work") || !strings.Contains(body, "Public work") {
		t.Errorf("after expiry: %d, still sees the vault: %v", code, strings.Contains(body, "Secret work"))
	}
}

func TestSignInRefusesAForgedStateOrSession(t *testing.T) {
	rig := newSignInRig(t)
	rig.gh.SignInBrowser("maria")
	if code, body := fetch(t, browser(t), rig.url+"/callback?code=x&state=forged"); code != http.StatusBadRequest || !strings.Contains(body, "/login") {
		t.Errorf("callback without the state cookie = %d %q", code, body)
	}
	req, _ := http.NewRequest(http.MethodGet, rig.url+"/", nil)
	req.AddCookie(&http.Cookie{Name: sessionCookie, Value: "eyJsb2dpbiI6Im1hcmlhIn0"})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Errorf("a forged session cookie = %d, want a redirect to sign in", resp.StatusCode)
	}
	for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example"} {
		if got := localPath(next); got != "/" {
			t.Errorf("localPath(%q) = %q", next, got)
		}
	}
}

func TestWebURLFor(t *testing.T) {
	for api, want := range map[string]string{"https://api.github.com": "https://github.com", "https://api.github.com/": "https://github.com",
		"https://ghe.example/api/v3": "https://ghe.example", "http://127.0.0.1:5555": "http://127.0.0.1:5555"} {
		if got := WebURLFor(api); got != want {
			t.Errorf("WebURLFor(%q) = %q, want %q", api, got, want)
		}
	}
}

// TestSignInWithDefaultsStartsTheFlow: a SignIn with only its client set
// (no clock given, as bot serve builds it) sends a visitor to GitHub.
func TestSignInWithDefaultsStartsTheFlow(t *testing.T) {
	d, err := New(Options{Store: store.NewMemory(), Exposed: true, SignIn: &SignIn{ClientID: "Iv1.x", ClientSecret: "s"}})
	must(t, err)
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://dash.example/login?next=/health", nil))
	loc := rec.Header().Get("Location")
	if rec.Code != http.StatusFound || !strings.HasPrefix(loc, "https://github.com/login/oauth/authorize?") ||
		!strings.Contains(loc, "redirect_uri=http%3A%2F%2Fdash.example%2Fcallback") {
		t.Errorf("GET /login = %d %s", rec.Code, loc)
	}
}

// TestWaitingForMeIsTheSignedInUser: signed in, "waiting for me" is the
// user's own login, and ?login= cannot look at someone else's.
func TestWaitingForMeIsTheSignedInUser(t *testing.T) {
	rig := newSignInRig(t)
	rig.gh.SignInBrowser("maria")
	b := browser(t)
	_, body := fetch(t, b, rig.url+"/?waiting=me")
	if !strings.Contains(body, "Secret work") || strings.Contains(body, "Public work") || !strings.Contains(body, "1</b> of 2") {
		t.Errorf("maria waiting for me: %s", between(body, `<p class="sum">`, "</p>"))
	}
	rig.gh.SignInBrowser("sam")
	b = browser(t)
	_, body = fetch(t, b, rig.url+"/?login=maria")
	if strings.Contains(body, "Secret work") || !strings.Contains(body, "0</b> of 1") {
		t.Errorf("sam asking for maria's: %s", between(body, `<p class="sum">`, "</p>"))
	}
}
