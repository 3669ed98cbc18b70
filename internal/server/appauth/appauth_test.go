package appauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	jwt "github.com/golang-jwt/jwt/v4"
)

// fakeGitHub serves the App endpoints from the OpenAPI examples in testdata/
// under a path prefix, checks the credentials, and counts requests.
type fakeGitHub struct {
	t       *testing.T
	key     *rsa.PrivateKey
	appID   int64
	expires time.Time // expires_at of issued installation tokens

	mu       sync.Mutex
	tokens   map[string]int // installation id -> tokens issued
	requests []string       // "METHOD path auth-kind"
}

func (f *fakeGitHub) record(r *http.Request, kind string) {
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path+" "+kind)
	f.mu.Unlock()
}

// checkJWT verifies an App JWT signed by the App's key with iss = App id.
func (f *fakeGitHub) checkJWT(r *http.Request) error {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return fmt.Errorf("no Bearer JWT: %q", r.Header.Get("Authorization"))
	}
	claims := &jwt.RegisteredClaims{}
	_, err := jwt.ParseWithClaims(raw, claims, func(tok *jwt.Token) (any, error) {
		if tok.Method.Alg() != "RS256" {
			return nil, fmt.Errorf("alg %s", tok.Method.Alg())
		}
		return &f.key.PublicKey, nil
	})
	if err != nil {
		return err
	}
	if claims.Issuer != fmt.Sprint(f.appID) {
		return fmt.Errorf("iss = %q, want %d", claims.Issuer, f.appID)
	}
	return nil
}

func (f *fakeGitHub) handler(prefix string) http.Handler {
	mux := http.NewServeMux()
	fixture := func(name string) []byte {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.t.Fatal(err)
		}
		return b
	}
	app := func(w http.ResponseWriter, r *http.Request) bool {
		if err := f.checkJWT(r); err != nil {
			http.Error(w, `{"message":"A JSON web token could not be decoded"}`, http.StatusUnauthorized)
			f.record(r, "bad-jwt")
			return false
		}
		f.record(r, "jwt")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-RateLimit-Remaining", "4999")
		return true
	}
	mux.HandleFunc("GET "+prefix+"/app", func(w http.ResponseWriter, r *http.Request) {
		if app(w, r) {
			_, _ = w.Write(fixture("get-app.json"))
		}
	})
	mux.HandleFunc("GET "+prefix+"/app/installations", func(w http.ResponseWriter, r *http.Request) {
		if !app(w, r) {
			return
		}
		var items []map[string]any
		if err := json.Unmarshal(fixture("list-installations.json"), &items); err != nil {
			f.t.Fatal(err)
		}
		if r.URL.Query().Get("page") == "" {
			next := "http://" + r.Host + prefix + "/app/installations?page=2&per_page=100"
			w.Header().Set("Link", `<`+next+`>; rel="next"`)
		} else {
			items[0]["id"] = 2
		}
		_ = json.NewEncoder(w).Encode(items)
	})
	mux.HandleFunc("POST "+prefix+"/app/installations/{id}/access_tokens", func(w http.ResponseWriter, r *http.Request) {
		if !app(w, r) {
			return
		}
		var tok map[string]any
		if err := json.Unmarshal(fixture("installation-token.json"), &tok); err != nil {
			f.t.Fatal(err)
		}
		f.mu.Lock()
		f.tokens[r.PathValue("id")]++
		n := f.tokens[r.PathValue("id")]
		f.mu.Unlock()
		tok["token"] = fmt.Sprintf("ghs_inst%s_%d", r.PathValue("id"), n)
		tok["expires_at"] = f.expires.UTC().Format(time.RFC3339)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(tok)
	})
	mux.HandleFunc("GET "+prefix+"/repos/{owner}/{repo}/issues/{n}", func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if !strings.HasPrefix(auth, "token ghs_inst") {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			f.record(r, "bad-token")
			return
		}
		f.record(r, strings.TrimPrefix(auth, "token "))
		w.Header().Set("X-RateLimit-Remaining", "4321")
		_, _ = w.Write([]byte(`{"number":1}`))
	})
	return mux
}

func newFake(t *testing.T, prefix string, expires time.Time) (*fakeGitHub, *httptest.Server, []byte) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	f := &fakeGitHub{t: t, key: key, appID: 29310, expires: expires, tokens: map[string]int{}}
	srv := httptest.NewServer(f.handler(prefix))
	t.Cleanup(srv.Close)
	return f, srv, pemKey
}

func TestBotLoginComesFromGetApp(t *testing.T) {
	// A GitHub Enterprise Server base URL carries a path (/api/v3).
	f, srv, key := newFake(t, "/api/v3", time.Now().Add(time.Hour))
	a, err := New(Config{AppID: f.appID, PrivateKey: key, BaseURL: srv.URL + "/api/v3/"})
	if err != nil {
		t.Fatal(err)
	}
	login, err := a.BotLogin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if login != "octoapp[bot]" {
		t.Fatalf("bot login = %q, want octoapp[bot] (slug of the GET /app example)", login)
	}
	if got := strings.Join(f.requests, "|"); got != "GET /api/v3/app jwt" {
		t.Fatalf("requests = %s", got)
	}
}

func TestInstallationClientCachesAndRefreshesItsToken(t *testing.T) {
	tests := []struct {
		name       string
		expires    time.Duration
		wantTokens int
	}{
		{"valid token is reused", time.Hour, 1},
		// ghinstallation refreshes a minute before expiry.
		{"expiring token is refreshed", 30 * time.Second, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv, key := newFake(t, "", time.Now().Add(tt.expires))
			a, err := New(Config{AppID: f.appID, PrivateKey: key, BaseURL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			c := a.ClientFor(99)
			if a.ClientFor(99) != c {
				t.Fatal("ClientFor built a second client for the same installation")
			}
			for range 3 {
				resp, err := c.Get(srv.URL + "/repos/o/r/issues/1")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("installation request = %d", resp.StatusCode)
				}
			}
			if got := f.tokens["99"]; got != tt.wantTokens {
				t.Fatalf("tokens issued = %d, want %d", got, tt.wantTokens)
			}
			a.Forget(99)
			if a.ClientFor(99) == c {
				t.Fatal("Forget kept the cached client")
			}
		})
	}
}

func TestInstallationsListsEveryPage(t *testing.T) {
	f, srv, key := newFake(t, "", time.Now().Add(time.Hour))
	a, err := New(Config{AppID: f.appID, PrivateKey: key, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := a.Installations(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids) != "[1 2]" {
		t.Fatalf("installations = %v, want [1 2] over two pages", ids)
	}
}

func TestObserverSeesCallsPerInstallation(t *testing.T) {
	f, srv, key := newFake(t, "", time.Now().Add(time.Hour))
	var mu sync.Mutex
	seen := map[int64][]string{}
	a, err := New(Config{AppID: f.appID, PrivateKey: key, BaseURL: srv.URL, Observe: func(inst int64, resp *http.Response) {
		mu.Lock()
		seen[inst] = append(seen[inst], resp.Header.Get("X-RateLimit-Remaining"))
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.App(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, inst := range []int64{5, 5, 6} {
		resp, err := a.ClientFor(inst).Get(srv.URL + "/repos/o/r/issues/1")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	want := map[int64]string{0: "[4999]", 5: "[4321 4321]", 6: "[4321]"}
	for inst, w := range want {
		if got := fmt.Sprint(seen[inst]); got != w {
			t.Errorf("installation %d observed %s, want %s", inst, got, w)
		}
	}
}

func TestNewRefusesBadSettings(t *testing.T) {
	_, _, key := newFake(t, "", time.Now())
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no app id", Config{PrivateKey: key}, "APP_ID"},
		{"not a key", Config{AppID: 1, PrivateKey: []byte("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n")}, "private key"},
		{"not PEM", Config{AppID: 1, PrivateKey: []byte("hunter2")}, "not PEM"},
		{"not RSA", Config{AppID: 1, PrivateKey: ecKey(t)}, "want RSA"},
		{"bad url", Config{AppID: 1, PrivateKey: key, BaseURL: "ftp://example.com"}, "GITHUB_API_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %s", err, tt.want)
			}
		})
	}
}

func TestInstallationClientsRefreshConcurrently(t *testing.T) {
	f, srv, key := newFake(t, "", time.Now().Add(time.Hour))
	a, err := New(Config{AppID: f.appID, PrivateKey: key, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for inst := int64(1); inst <= 8; inst++ {
		wg.Go(func() {
			resp, err := a.ClientFor(inst).Get(srv.URL + "/repos/o/r/issues/1")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		})
	}
	wg.Wait()
	if len(f.tokens) != 8 {
		t.Fatalf("tokens issued for %d installations, want 8", len(f.tokens))
	}
}

func ecKey(t *testing.T) []byte {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

func TestNewAcceptsPKCS8Keys(t *testing.T) {
	f, srv, pkcs1 := newFake(t, "", time.Now().Add(time.Hour))
	block, _ := pem.Decode(pkcs1)
	k, _ := x509.ParsePKCS1PrivateKey(block.Bytes)
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{AppID: f.appID, PrivateKey: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.BotLogin(context.Background()); err != nil {
		t.Fatalf("JWT from a PKCS#8 key refused: %v", err)
	}
}

// TestObserverSeesRequestsWithoutAnswer: a request that gets no answer
// (GitHub unreachable) is observed too, with a nil response, so the
// metrics count it as an error rather than not at all.
func TestObserverSeesRequestsWithoutAnswer(t *testing.T) {
	f, srv, key := newFake(t, "", time.Now().Add(time.Hour))
	var mu sync.Mutex
	var seen []string
	a, err := New(Config{AppID: f.appID, PrivateKey: key, BaseURL: srv.URL, Observe: func(inst int64, resp *http.Response) {
		mu.Lock()
		defer mu.Unlock()
		if resp == nil {
			seen = append(seen, fmt.Sprintf("%d none", inst))
		} else {
			seen = append(seen, fmt.Sprintf("%d %d", inst, resp.StatusCode))
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := a.ClientFor(5).Get(srv.URL + "/repos/o/r/issues/1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	srv.Close()
	if _, err := a.ClientFor(5).Get(srv.URL + "/repos/o/r/issues/1"); err == nil {
		t.Fatal("a request to a closed server succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(seen, ", "); got != "5 200, 5 none" {
		t.Errorf("observed %q, want the answer and then the request without one", got)
	}
}
