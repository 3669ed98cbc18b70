package github

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	gh "github.com/google/go-github/v60/github"
	"golang.org/x/oauth2"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/github/gql"
	"github.com/autopilot-dev/autopilot/internal/github/transport"
)

// DefaultBaseURL is GitHub.com's REST API root.
const DefaultBaseURL = "https://api.github.com/"

// Defaults for the zero values of Options.
const (
	DefaultMinMutationGap = time.Second
	DefaultMaxWait        = 60 * time.Second
	DefaultMaxRetries     = 3
	defaultHTTPTimeout    = 30 * time.Second
)

// Options configures a Client.
type Options struct {
	// Repo is "owner/name".
	Repo string
	// Token authenticates through golang.org/x/oauth2 when HTTPClient is nil.
	Token string
	// HTTPClient, when set, is used (e.g. a ghinstallation transport in App
	// mode) and Token is ignored. Its Timeout, default 30s, bounds each
	// attempt rather than a whole call with its waits and retries.
	HTTPClient *http.Client
	// BaseURL is the REST root (GITHUB_API_URL); default DefaultBaseURL.
	// GHES roots such as https://ghes.example.com/api/v3 work as given.
	BaseURL string
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Sleep waits for d or until ctx ends; default a real timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// MinMutationGap spaces mutating requests (default 1s, GitHub's
	// guidance); negative disables spacing.
	MinMutationGap time.Duration
	// Pacer, when set, is shared with the other clients of the same token so
	// their mutations are spaced together (App installations); default a
	// pacer of this client's own.
	Pacer *transport.Pacer
	// MaxWait is the longest rate-limit wait worth sitting out; a longer one
	// returns *forge.RateLimitError at once (default 60s).
	MaxWait time.Duration
	// MaxRetries bounds transient retries and rate-limit re-sends per
	// request (default 3; negative means none).
	MaxRetries int
	// Rand returns a float in [0,1) for backoff jitter; default math/rand/v2.
	Rand func() float64
	// Logger receives waits, retries and dry-run notes; default discards.
	Logger *slog.Logger
	// DryRun logs mutations instead of sending them and returns plausible
	// values; reads still go out.
	DryRun bool
	// BotLogin is the identity the client posts as (e.g.
	// "github-actions[bot]" or "<slug>[bot]"). CreateComment only adopts an
	// already-committed comment authored by it; when empty, the identity
	// learnt from earlier writes is used, else any Bot account.
	BotLogin string
	// AppID, when non-zero, additionally requires an adopted comment's
	// performed_via_github_app.id to match.
	AppID int64
	// Cache keeps the answers of conditional reads; default a memory cache
	// of this client's own. App mode shares one per installation (in Redis
	// when REDIS_URL is set: internal/ghcache).
	Cache transport.Cache
	// ObserveAPI, when set, is told each answer's status and whether it
	// was a 304 served from the cache (for metrics).
	ObserveAPI func(status int, cached bool)
	// Gate, when set, is the installation's budget shared by the replicas
	// (internal/budget): background work waits at the interactive reserve,
	// and a retry-after told to one replica holds them all.
	Gate transport.Gate
}

// Client is a forge.Forge bound to one repository. It is safe for
// concurrent use; mutations are serialised and spaced.
type Client struct {
	gh          *gh.Client
	t           *transport.Transport
	owner, name string
	log         *slog.Logger
	now         func() time.Time
	dryRun      bool
	maxRetries  int
	botLogin    string
	appID       int64
	gqlURL      string

	mu       sync.Mutex
	identity string // login learnt from our own successful comment writes
	dryID    int64
}

var _ forge.Forge = (*Client)(nil)

// New builds a Client. It makes no request.
func New(o Options) (*Client, error) {
	owner, name, ok := strings.Cut(o.Repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("github: repo %q must be \"owner/name\"", o.Repo)
	}
	base := o.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	baseURL, err := url.Parse(base)
	if err != nil || baseURL.Scheme == "" || baseURL.Host == "" {
		return nil, fmt.Errorf("github: base URL %q is not an absolute URL", o.BaseURL)
	}
	withDefaults(&o)

	hc := o.HTTPClient
	if hc == nil {
		if o.Token != "" {
			hc = oauth2.NewClient(context.Background(), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: o.Token}))
		} else {
			hc = &http.Client{}
		}
	}
	// http.Client.Timeout would bound the whole RoundTrip, rate-limit waits
	// and retries included; the transport applies it to each attempt instead.
	timeout := hc.Timeout
	if timeout <= 0 {
		timeout = defaultHTTPTimeout
	}
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	t := transport.New(transport.Config{
		Next: next, Now: o.Now, Sleep: o.Sleep, Rand: o.Rand, Log: o.Logger,
		Gap: o.MinMutationGap, MaxWait: o.MaxWait, MaxRetries: o.MaxRetries, DryRun: o.DryRun,
		Timeout: timeout, Pacer: o.Pacer, Cache: o.Cache, ObserveAPI: o.ObserveAPI, Gate: o.Gate,
	})
	wrapped := *hc
	wrapped.Transport = t
	wrapped.Timeout = 0
	client := gh.NewClient(&wrapped)
	client.BaseURL = baseURL
	return &Client{
		gh: client, t: t, owner: owner, name: name, log: o.Logger, now: o.Now,
		dryRun: o.DryRun, maxRetries: o.MaxRetries, botLogin: o.BotLogin, appID: o.AppID,
		gqlURL: gql.URL(baseURL.String()),
	}, nil
}

func withDefaults(o *Options) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = realSleep
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case o.MinMutationGap == 0:
		o.MinMutationGap = DefaultMinMutationGap
	case o.MinMutationGap < 0:
		o.MinMutationGap = 0
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = DefaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
}

func realSleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// Repo returns "owner/name".
func (c *Client) Repo() string { return c.owner + "/" + c.name }

// Stats returns a copy of the request counters.
func (c *Client) Stats() transport.Stats { return c.t.Stats() }

// repoPath joins escaped path segments under repos/{owner}/{name}/.
func (c *Client) repoPath(segments ...string) string {
	parts := []string{"repos", url.PathEscape(c.owner), url.PathEscape(c.name)}
	for _, s := range segments {
		parts = append(parts, url.PathEscape(s))
	}
	return strings.Join(parts, "/")
}

// do sends one raw request through go-github's NewRequest/Do, decoding the
// answer into v (nil to discard, an io.Writer for raw bytes).
func (c *Client) do(ctx context.Context, o transport.Op, method, path string, body, v any, accept string) (*gh.Response, error) {
	req, err := c.gh.NewRequest(method, path, body)
	if err != nil {
		return nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	return c.gh.Do(transport.WithOp(ctx, o), req, v)
}

// maxPages stops a list that never ends (100 pages of 100 items).
const maxPages = 100

// paginate calls fetch for page 0 (first) and then each next page that the
// Link header announces.
func paginate(fetch func(page int) (*gh.Response, error)) error {
	page := 0
	for range maxPages {
		resp, err := fetch(page)
		if err != nil {
			return err
		}
		if resp == nil || resp.NextPage <= page {
			return nil
		}
		page = resp.NextPage
	}
	return fmt.Errorf("more than %d pages, stopping", maxPages)
}

// listQuery adds per_page=100 and the page (when not the first) to q.
func listQuery(q url.Values, page int) string {
	if q == nil {
		q = url.Values{}
	}
	q.Set("per_page", "100")
	if page > 0 {
		q.Set("page", fmt.Sprint(page))
	} else {
		q.Del("page")
	}
	return "?" + q.Encode()
}

// mapErr turns go-github and transport errors into forge's error types,
// wrapped with what was being done.
func (c *Client) mapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("github %s: %w", what, c.classify(err))
}

func (c *Client) classify(err error) error {
	var (
		rl *forge.RateLimitError
		te *forge.TransientError
		er *gh.ErrorResponse
	)
	switch {
	case errors.As(err, &rl):
		return rl
	case errors.As(err, &te):
		return te
	case errors.Is(err, forge.ErrValidation), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return unwrapURLError(err)
	case errors.As(err, &er):
		// go-github's own RateLimitError/AbuseRateLimitError never occur:
		// the transport turns every rate-limit answer into a
		// forge.RateLimitError and hides the headers go-github reads.
		return statusErr(er)
	}
	return unwrapURLError(err)
}

// unwrapURLError drops net/http's *url.Error wrapper (whose text repeats the
// URL) around an error our transport produced.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}

func statusErr(er *gh.ErrorResponse) error {
	status := 0
	if er.Response != nil {
		status = er.Response.StatusCode
	}
	msg := transport.ErrorDetail(er)
	switch {
	case status == http.StatusNotFound:
		return fmt.Errorf("%w: %s", forge.ErrNotFound, msg)
	case status == http.StatusForbidden:
		if hint := transport.PermissionHint(er.Response.Header); hint != "" {
			return fmt.Errorf("%w: %s; %s", forge.ErrForbidden, msg, hint)
		}
		return fmt.Errorf("%w: %s", forge.ErrForbidden, msg)
	case status == http.StatusUnprocessableEntity:
		return fmt.Errorf("%w: %s", forge.ErrValidation, msg)
	case status == http.StatusUnauthorized:
		return fmt.Errorf("%w (check the token or the App installation): %s", forge.ErrUnauthorized, msg)
	case status >= 500:
		return &forge.TransientError{Status: status, Err: errors.New(msg)}
	}
	return fmt.Errorf("status %d: %s", status, msg)
}

// statusOf returns the HTTP status behind a go-github error, 0 if none.
func statusOf(err error) int {
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	return 0
}

// nextDryID returns a fake, negative id for an object dry-run did not create.
func (c *Client) nextDryID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dryID--
	return c.dryID
}

// dry logs a mutation that dry-run mode does not send.
func (c *Client) dry(kind string, args ...any) {
	c.log.Info("dry run: mutation not sent", append([]any{"op", kind, "repo", c.Repo()}, args...)...)
}
