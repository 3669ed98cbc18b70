// Package jira implements tracker.Tracker (and tracker.Closer, for
// jira.transition_on_close) on Jira Cloud and Jira Data Center through
// go-jira v1.17.0 and Jira's REST API v2.
//
// It answers each call with one or a few HTTP requests and classifies every
// failure as a tracker error (auth, rate limit, transient, validation) so
// that the outbox rules (engine/tasksync) can decide what to do. It never retries, never sleeps,
// never re-sends a create and never sends an Idempotency-Key header (which
// would let Go's transport re-send a POST on its own).
package jira

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	gojira "github.com/andygrunwald/go-jira"

	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// Deployment values for Config.Deployment.
const (
	DeploymentCloud      = "cloud"
	DeploymentDataCenter = "datacenter"
)

// Config says how to reach one Jira project.
type Config struct {
	// URL is the site, e.g. "https://acme.atlassian.net" or
	// "https://jira.acme.internal/jira".
	URL string
	// User is the account e-mail on Cloud (with an API token in Token).
	// Leave it empty on Data Center to authenticate with a personal access
	// token (bearer); set it there only for basic auth with a password.
	User  string
	Token string
	// Project is the project key, e.g. "PROJ".
	Project string
	// Deployment is DeploymentCloud, DeploymentDataCenter, or empty to
	// detect it once from /rest/api/2/serverInfo (deploymentType).
	Deployment string
	// EpicLinkField is the Data Center Epic Link custom field id, e.g.
	// "customfield_10100". Cloud links tasks to epics through "parent".
	EpicLinkField string
	// EpicNameField is the Epic Name custom field id, required for epics on
	// Data Center, e.g. "customfield_10102".
	EpicNameField string
	// PointsField is the story points custom field id, e.g.
	// "customfield_10016"; empty leaves points out.
	PointsField string
	// IssueTypeTask and IssueTypeEpic name the issue types; defaults "Task"
	// and "Epic".
	IssueTypeTask, IssueTypeEpic string
	// HTTPClient supplies the transport and timeout; default a client with
	// a 30 s timeout (also used when HTTPClient has none) on
	// http.DefaultTransport.
	HTTPClient *http.Client
	// Now is the clock used to read HTTP-date Retry-After values; default
	// time.Now.
	Now func() time.Time
}

// DefaultTimeout bounds one HTTP request when Config.HTTPClient is nil.
const DefaultTimeout = 30 * time.Second

// searchPage is the page size asked of search.
const searchPage = 100

// Client is a Jira tracker. It is safe for concurrent use.
type Client struct {
	cfg  Config
	jc   *gojira.Client
	base string // site URL without a trailing slash

	mu    sync.Mutex
	cloud *bool // nil until known
}

var _ tracker.Tracker = (*Client)(nil)

// New checks the configuration and builds a client. It sends no request.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("jira url %q: want an http(s) site URL such as https://acme.atlassian.net", cfg.URL)
	}
	if cfg.Project == "" || cfg.Token == "" {
		return nil, errors.New("jira config: jira_project and jira_token are required")
	}
	if cfg.IssueTypeTask == "" {
		cfg.IssueTypeTask = "Task"
	}
	if cfg.IssueTypeEpic == "" {
		cfg.IssueTypeEpic = "Epic"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &Client{cfg: cfg, base: strings.TrimRight(cfg.URL, "/")}
	switch strings.ToLower(cfg.Deployment) {
	case DeploymentCloud:
		c.setCloud(true)
	case DeploymentDataCenter, "server", "dc":
		c.setCloud(false)
	case "":
		if strings.HasSuffix(strings.ToLower(u.Hostname()), ".atlassian.net") {
			c.setCloud(true)
		}
	default:
		return nil, fmt.Errorf("jira config: deployment %q: want %q, %q or empty to detect", cfg.Deployment, DeploymentCloud, DeploymentDataCenter)
	}
	if c.cloud != nil && *c.cloud && cfg.User == "" {
		return nil, errors.New("jira config: Jira Cloud needs jira_user (the account e-mail) with an API token in jira_token")
	}

	hc := &http.Client{Timeout: DefaultTimeout}
	base := http.DefaultTransport
	if cfg.HTTPClient != nil {
		if cfg.HTTPClient.Timeout > 0 {
			hc.Timeout = cfg.HTTPClient.Timeout
		}
		hc.CheckRedirect = cfg.HTTPClient.CheckRedirect
		if cfg.HTTPClient.Transport != nil {
			base = cfg.HTTPClient.Transport
		}
	}
	if cfg.User != "" {
		hc.Transport = &gojira.BasicAuthTransport{Username: cfg.User, Password: cfg.Token, Transport: base}
	} else {
		hc.Transport = &gojira.PATAuthTransport{Token: cfg.Token, Transport: base}
	}
	c.jc, err = gojira.NewClient(hc, c.base)
	if err != nil {
		return nil, fmt.Errorf("jira client: %w", err)
	}
	return c, nil
}

func (c *Client) setCloud(v bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cloud = &v
}

// IsCloud reports whether the site is Jira Cloud, asking serverInfo once
// when the configuration did not say.
func (c *Client) IsCloud(ctx context.Context) (bool, error) {
	c.mu.Lock()
	known := c.cloud
	c.mu.Unlock()
	if known != nil {
		return *known, nil
	}
	req, err := c.jc.NewRequestWithContext(ctx, http.MethodGet, "rest/api/2/serverInfo", nil)
	if err != nil {
		return false, fmt.Errorf("jira serverInfo: %w", err)
	}
	var info struct {
		DeploymentType string `json:"deploymentType"`
	}
	resp, err := c.jc.Do(req, &info)
	if err != nil {
		return false, c.classify("read serverInfo", resp, err)
	}
	cloud := strings.EqualFold(info.DeploymentType, "Cloud")
	if cloud && c.cfg.User == "" {
		return false, &tracker.AuthError{Status: http.StatusUnauthorized, Message: "Jira Cloud needs jira_user (the account e-mail) with an API token"}
	}
	c.setCloud(cloud)
	return cloud, nil
}

// CheckAuth implements tracker.Tracker with GET /rest/api/2/myself.
func (c *Client) CheckAuth(ctx context.Context) error {
	if _, err := c.IsCloud(ctx); err != nil {
		return err
	}
	req, err := c.jc.NewRequestWithContext(ctx, http.MethodGet, "rest/api/2/myself", nil)
	if err != nil {
		return fmt.Errorf("jira myself: %w", err)
	}
	var me map[string]any
	resp, err := c.jc.Do(req, &me)
	if err != nil {
		return c.classify("check credentials", resp, err)
	}
	return nil
}

// browseURL is the page people open for an issue.
func (c *Client) browseURL(key string) string { return c.base + "/browse/" + key }
