// Package appauth authenticates autopilot as a GitHub App with
// ghinstallation: an App (JWT) client for GET /app, the installation list
// and the webhook deliveries API (list, redeliver), and one cached
// *http.Client per installation whose token ghinstallation refreshes before
// it expires. The base URL comes from GITHUB_API_URL, so GitHub Enterprise
// Server and test fakes work.
//
// It must never log or return a private key or a token, and never decide
// anything about a delivery: it hands out authenticated clients and makes
// the App's own calls it is asked for.
package appauth

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v60/github"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

// Observer is told about every API request made through a client of this
// package, with its response (nil when the request got no answer):
// installation is the installation id, 0 for App (JWT) calls.
// metrics.(*Metrics).ObserveResponse fits it.
type Observer func(installation int64, resp *http.Response)

// Config is what App authentication needs.
type Config struct {
	// AppID is the GitHub App's id (APP_ID).
	AppID int64
	// PrivateKey is the App's PEM private key.
	PrivateKey []byte
	// BaseURL is the REST base URL (GITHUB_API_URL); empty means
	// https://api.github.com.
	BaseURL string
	// Transport carries the requests (default http.DefaultTransport); share
	// one so connections are reused across installations.
	Transport http.RoundTripper
	// Observe, when set, sees every response.
	Observe Observer
	// Clock defaults to time.Now (it dates secondary rate-limit waits).
	Clock func() time.Time
}

// Auth hands out authenticated clients. Safe for concurrent use.
type Auth struct {
	appID   int64
	key     *rsa.PrivateKey
	tr      http.RoundTripper
	base    string
	baseURL *url.URL
	observe Observer
	now     func() time.Time
	app     *http.Client
	// gh is the go-github client on app, kept so that its rate-limit
	// bookkeeping (no request sent until a known reset) spans calls.
	gh *github.Client

	mu      sync.Mutex
	clients map[int64]*installClient
}

// installClient is one installation's client and the token source under it.
type installClient struct {
	http *http.Client
	itr  *ghinstallation.Transport
}

// New parses the key and prepares the App transport. It makes no request.
func New(cfg Config) (*Auth, error) {
	if cfg.AppID <= 0 {
		return nil, errors.New("appauth: APP_ID must be a positive integer")
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = "https://api.github.com"
	}
	u, err := url.Parse(base + "/")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("appauth: GITHUB_API_URL %q is not an http(s) URL", cfg.BaseURL)
	}
	tr := cfg.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	key, err := parseKey(cfg.PrivateKey)
	if err != nil {
		return nil, err
	}
	a := &Auth{
		appID:   cfg.AppID,
		key:     key,
		tr:      tr,
		base:    base,
		baseURL: u,
		observe: cfg.Observe,
		now:     cfg.Clock,
		clients: make(map[int64]*installClient),
	}
	if a.now == nil {
		a.now = time.Now
	}
	a.app = &http.Client{Transport: a.observed(0, a.appsTransport())}
	a.gh = a.GitHub(a.app)
	return a, nil
}

// appsTransport is a new JWT transport. Each installation gets its own:
// ghinstallation v2.10.0's installation Transport writes fields of the
// AppsTransport it was built from on every token refresh, which races when
// installations share one.
func (a *Auth) appsTransport() *ghinstallation.AppsTransport {
	atr := ghinstallation.NewAppsTransportFromPrivateKey(a.tr, a.appID, a.key)
	atr.BaseURL = a.base
	return atr
}

// parseKey reads an RSA private key in PEM, PKCS#1 (what GitHub issues) or
// PKCS#8. Errors never include the key.
func parseKey(pemBytes []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("appauth: private key is not PEM")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("appauth: private key is neither a PKCS#1 nor a PKCS#8 RSA key")
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("appauth: private key is %T, want RSA", k)
	}
	return rk, nil
}

// AppClient is authenticated as the App itself (a fresh JWT per request):
// for /app endpoints only.
func (a *Auth) AppClient() *http.Client { return a.app }

// ClientFor returns the client for an installation, creating it on first
// use. Its token is fetched on the first request and refreshed by
// ghinstallation a minute before it expires.
func (a *Auth) ClientFor(installationID int64) *http.Client {
	return a.installation(installationID).http
}

func (a *Auth) installation(installationID int64) *installClient {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.clients[installationID]; ok {
		return c
	}
	itr := ghinstallation.NewFromAppsTransport(a.appsTransport(), installationID)
	itr.BaseURL = a.base
	c := &installClient{
		http: &http.Client{Transport: a.observed(installationID, tokenErrors{installation: installationID, next: itr})},
		itr:  itr,
	}
	a.clients[installationID] = c
	return c
}

// CheckInstallation makes sure the installation has a token, minting one
// when the cached one is missing or about to expire: the request its
// client's next call would make anyway, made first so that a job learns
// before it starts whether it can be authenticated at all. A 404 (GitHub
// does not know the installation) is forge.ErrNoInstallation; other
// failures are returned as they are (the client's calls retry them).
func (a *Auth) CheckInstallation(ctx context.Context, installationID int64) error {
	_, err := a.installation(installationID).itr.Token(ctx)
	return tokenError(installationID, err)
}

// Forget drops an installation's cached client (the App was uninstalled).
func (a *Auth) Forget(installationID int64) {
	a.mu.Lock()
	delete(a.clients, installationID)
	a.mu.Unlock()
}

// GitHub returns a go-github client on hc with the configured base URL.
func (a *Auth) GitHub(hc *http.Client) *github.Client {
	c := github.NewClient(hc)
	u := *a.baseURL
	c.BaseURL = &u
	return c
}

// App reads the App's own record (GET /app).
func (a *Auth) App(ctx context.Context) (*github.App, error) {
	app, _, err := a.GitHub(a.app).Apps.Get(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("GET /app: %w", err)
	}
	return app, nil
}

// BotLogin reads the App's slug once (GET /app) and returns its bot login,
// "<slug>[bot]": the identity its comments carry.
func (a *Auth) BotLogin(ctx context.Context) (string, error) {
	app, err := a.App(ctx)
	if err != nil {
		return "", err
	}
	if app.GetSlug() == "" {
		return "", errors.New("GET /app: response has no slug")
	}
	return app.GetSlug() + "[bot]", nil
}

// Installations lists the App's installation ids (GET /app/installations,
// every page). It fits server.InstallationLister.
func (a *Auth) Installations(ctx context.Context) ([]int64, error) {
	gh := a.GitHub(a.app)
	opts := &github.ListOptions{PerPage: 100}
	var ids []int64
	for {
		page, resp, err := gh.Apps.ListInstallations(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("GET /app/installations: %w", err)
		}
		for _, in := range page {
			if in.GetSuspendedAt().IsZero() {
				ids = append(ids, in.GetID())
			}
		}
		if resp.NextPage == 0 {
			return ids, nil
		}
		opts.Page = resp.NextPage
	}
}

// tokenErrors turns the installation token request's 404 (GitHub does not
// know the installation: uninstalled, or another App's) into
// forge.ErrNoInstallation, which no layer above retries. Other token
// failures (5xx, network) pass as they are: transient.
type tokenErrors struct {
	installation int64
	next         http.RoundTripper
}

func (t tokenErrors) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, tokenError(t.installation, err)
	}
	return resp, nil
}

// tokenError is err, or forge.ErrNoInstallation when err is the token
// request's 404.
func tokenError(installation int64, err error) error {
	var he *ghinstallation.HTTPError
	if err != nil && errors.As(err, &he) && he.Response != nil && he.Response.StatusCode == http.StatusNotFound {
		return fmt.Errorf("installation %d (its token request answered 404 Not Found): %w", installation, forge.ErrNoInstallation)
	}
	return err
}

// observed wraps next so the Observer sees each response.
func (a *Auth) observed(installation int64, next http.RoundTripper) http.RoundTripper {
	if a.observe == nil {
		return next
	}
	return observeRT{installation: installation, next: next, observe: a.observe}
}

type observeRT struct {
	installation int64
	next         http.RoundTripper
	observe      Observer
}

func (o observeRT) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := o.next.RoundTrip(req)
	if err != nil {
		o.observe(o.installation, nil) // no answer
	} else {
		o.observe(o.installation, resp)
	}
	return resp, err
}
