package fakegithub

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v60/github"
)

const (
	testAppID   = 4242
	testInstall = 77
)

func rsaKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	must(t, err)
	return k
}

// signJWT builds an App JWT by hand so tests can break any part of it.
func signJWT(t *testing.T, key *rsa.PrivateKey, alg string, claims map[string]any) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		must(t, err)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	unsigned := enc(map[string]string{"alg": alg, "typ": "JWT"}) + "." + enc(claims)
	sum := sha256.Sum256([]byte(unsigned))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	must(t, err)
	return unsigned + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func appEnv(t *testing.T) (*env, *rsa.PrivateKey) {
	e := newEnv(t)
	key := rsaKey(t)
	must(t, e.s.AddRepo("octo/other"))
	must(t, e.s.AddRepo("elsewhere/repo"))
	must(t, e.s.RegisterApp(testAppID, "autopilot-test", &key.PublicKey,
		Installation{ID: testInstall, Account: "octo", Repos: []string{testRepo}}))
	return e, key
}

func TestAppJWTValidation(t *testing.T) {
	e, key := appEnv(t)
	other := rsaKey(t)
	now := time.Now().Unix()
	claims := func(iss any, iat, exp int64) map[string]any {
		return map[string]any{"iss": iss, "iat": iat, "exp": exp}
	}
	tests := []struct {
		name string
		jwt  string
		want int
	}{
		{"valid, string iss", signJWT(t, key, "RS256", claims("4242", now-30, now+120)), 200},
		{"valid, numeric iss", signJWT(t, key, "RS256", claims(4242, now-30, now+600)), 200},
		{"signed by another key", signJWT(t, other, "RS256", claims("4242", now-30, now+120)), 401},
		{"expired", signJWT(t, key, "RS256", claims("4242", now-700, now-10)), 401},
		{"exp too far ahead", signJWT(t, key, "RS256", claims("4242", now-30, now+3600)), 401},
		{"iat in the future", signJWT(t, key, "RS256", claims("4242", now+300, now+400)), 401},
		{"unknown app", signJWT(t, key, "RS256", claims("99", now-30, now+120)), 401},
		{"wrong alg", signJWT(t, key, "none", claims("4242", now-30, now+120)), 401},
		{"not a JWT", "abc", 401},
		{"a plain token", humanTok, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body map[string]any
			resp, raw := e.do("GET", "/app", "", "", map[string]string{"Authorization": "Bearer " + tt.jwt})
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, raw, tt.want)
			}
			must(t, json.Unmarshal(raw, &body))
			if tt.want == 200 && (body["slug"] != "autopilot-test" || body["id"] != float64(testAppID)) {
				t.Fatalf("GET /app = %v", body)
			}
		})
	}
	// Repository endpoints do not take a JWT.
	jwt := signJWT(t, key, "RS256", claims("4242", now-30, now+120))
	resp, _ := e.do("GET", "/repos/octo/repo", "", "", map[string]string{"Authorization": "Bearer " + jwt})
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("JWT on a repository endpoint: %d, want 401", resp.StatusCode)
	}
}

func TestInstallationTokenActsAsAppBot(t *testing.T) {
	e, key := appEnv(t)
	ctx := context.Background()
	n := e.issue("app")

	atr := ghinstallation.NewAppsTransportFromPrivateKey(http.DefaultTransport, testAppID, key)
	atr.BaseURL = e.s.URL()
	base := e.client("").BaseURL
	appClient := github.NewClient(&http.Client{Transport: atr})
	appClient.BaseURL = base

	inst, resp, err := appClient.Apps.FindRepositoryInstallation(ctx, "octo", "repo")
	wantStatus(t, resp, err, http.StatusOK)
	if inst.GetID() != testInstall || inst.GetAppID() != testAppID {
		t.Fatalf("installation %+v", inst)
	}
	_, resp, err = appClient.Apps.FindRepositoryInstallation(ctx, "elsewhere", "repo")
	wantStatus(t, resp, err, http.StatusNotFound)
	list, resp, err := appClient.Apps.ListInstallations(ctx, nil)
	wantStatus(t, resp, err, http.StatusOK)
	if len(list) != 1 {
		t.Fatalf("installations %v", list)
	}

	itr := ghinstallation.NewFromAppsTransport(atr, testInstall)
	itr.BaseURL = e.s.URL()
	gh := github.NewClient(&http.Client{Transport: itr})
	gh.BaseURL = base

	c, resp, err := gh.Issues.CreateComment(ctx, "octo", "repo", n, &github.IssueComment{Body: github.String("<!-- state -->")})
	wantStatus(t, resp, err, http.StatusCreated)
	if c.GetUser().GetLogin() != "autopilot-test[bot]" || c.GetUser().GetType() != "Bot" {
		t.Fatalf("comment author %+v, want autopilot-test[bot] (Bot)", c.GetUser())
	}
	// go-github v60 does not decode performed_via_github_app; read the raw JSON.
	var raw struct {
		Via *struct {
			ID   int64  `json:"id"`
			Slug string `json:"slug"`
		} `json:"performed_via_github_app"`
	}
	e.doJSON("GET", fmt.Sprintf("/repos/octo/repo/issues/comments/%d", c.GetID()), humanTok, "", &raw)
	if raw.Via == nil || raw.Via.ID != testAppID || raw.Via.Slug != "autopilot-test" {
		t.Fatalf("performed_via_github_app = %+v, want app %d", raw.Via, testAppID)
	}
	if snap, _ := e.s.Comment(c.GetID()); snap.AppID != testAppID {
		t.Fatalf("snapshot AppID %d", snap.AppID)
	}

	// The token sees only the installation's repositories.
	_, resp, err = gh.Repositories.Get(ctx, "octo", "other")
	wantStatus(t, resp, err, http.StatusNotFound)
	_, resp, err = gh.Users.Get(ctx, "")
	wantStatus(t, resp, err, http.StatusForbidden)

	// A human's comment has no App.
	hc, err := e.s.AddComment(testRepo, n, "alice", "A")
	must(t, err)
	raw.Via = nil
	e.doJSON("GET", fmt.Sprintf("/repos/octo/repo/issues/comments/%d", hc.ID), humanTok, "", &raw)
	if raw.Via != nil {
		t.Fatalf("human comment carries performed_via_github_app %+v", raw.Via)
	}
	if got := e.s.Count("POST /app/installations/*/access_tokens"); got != 1 {
		t.Fatalf("%d token mints, want 1 (ghinstallation caches the token)", got)
	}
}

func TestActionsTokenModelsGitHubToken(t *testing.T) {
	e := newEnv(t)
	must(t, e.s.AddRepo("octo/other"))
	n := e.issue("actions")
	e.s.AddActionsToken("ghs_actions", testRepo)
	var c map[string]any
	resp := e.doJSON("POST", fmt.Sprintf("/repos/octo/repo/issues/%d/comments", n), "ghs_actions", `{"body":"state"}`, &c)
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("X-RateLimit-Limit") != "1000" {
		t.Fatalf("status %d limit %s", resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"))
	}
	u := c["user"].(map[string]any)
	via, _ := c["performed_via_github_app"].(map[string]any)
	if u["login"] != ActionsBotLogin || u["type"] != "Bot" || u["id"] != float64(ActionsBotID) ||
		via == nil || via["id"] != float64(ActionsAppID) || via["slug"] != "github-actions" {
		t.Fatalf("user %v via %v", u, via)
	}
	if resp, _ := e.do("GET", "/repos/octo/other", "ghs_actions", "", nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GITHUB_TOKEN saw another repository: %d", resp.StatusCode)
	}
	// A comment seeded as github-actions[bot] also carries the App.
	sc, err := e.s.AddComment(testRepo, n, ActionsBotLogin, "forged by another workflow")
	must(t, err)
	if sc.AppID != ActionsAppID || sc.Author.Type != "Bot" {
		t.Fatalf("seeded bot comment %+v", sc)
	}
}

// TestTokenForAnUnknownInstallationIs404: GitHub answers a token request
// for an installation it does not know (or another App's) 404, with its
// error body naming the endpoint's documentation.
func TestTokenForAnUnknownInstallationIs404(t *testing.T) {
	e, key := appEnv(t)
	now := time.Now().Unix()
	jwt := signJWT(t, key, "RS256", map[string]any{"iss": fmt.Sprint(testAppID), "iat": now - 30, "exp": now + 120})
	resp, raw := e.do("POST", "/app/installations/4040/access_tokens", "", "", map[string]string{"Authorization": "Bearer " + jwt})
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("status %d (%s), want 404", resp.StatusCode, raw)
	}
	var body map[string]string
	must(t, json.Unmarshal(raw, &body))
	want := map[string]string{"message": "Not Found", "status": "404",
		"documentation_url": "https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app"}
	if fmt.Sprint(body) != fmt.Sprint(want) {
		t.Errorf("body %v, want %v", body, want)
	}
}
