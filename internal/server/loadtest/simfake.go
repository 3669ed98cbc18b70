package loadtest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/budget"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghcache"
	gh "github.com/autopilot-dev/autopilot/internal/github"
	"github.com/autopilot-dev/autopilot/internal/server/appauth"
)

// The simulation's GitHub is internal/fake/fakegithub served over HTTP with
// GitHub's per-installation limits on (fakegithub.GitHubLimits: 5,000
// requests an hour, 100 in flight, 900 points a minute, 80 content
// creations a minute and 500 an hour; a 304 not charged). Every replica
// reaches it through the bot's own client stack: an installation token
// minted with the App's key (internal/server/appauth), the go-github
// adapter (internal/github) whose transport asks the replica's budget
// (internal/budget on the shared Redis) before each request and keeps
// conditional reads in the shared cache (internal/ghcache, per
// installation), as cmd/bot serve wires them.
const (
	simAppID      = 31
	simAppSlug    = "autopilot-sim"
	simMaintainer = "maintainer"
	simConfig     = ".github/autopilot.yml"
)

// simRepo is installation inst's repository.
func simRepo(inst int64) string { return fmt.Sprintf("inst%d/repo", inst) }

// simFake is the fake GitHub and what the jobs did with it.
type simFake struct {
	fake    *fakegithub.Server
	keyPEM  []byte
	issues  int           // issues per installation (the flooder has more)
	pr      int           // the pull request's number in every repository
	gap     time.Duration // SimOptions.MutationGap
	stateOf []int64       // the bot's state comment, by installation*(issues+1)+issue

	mu     sync.Mutex
	byKind map[string]*kindCalls
}

// kindCalls counts one event kind's jobs, their requests and what came of them.
type kindCalls struct {
	jobs, calls, failed int
}

// call is one request a job makes through the adapter.
type call struct {
	op string // issue, comments, config, permission, pull, checks, reviews, open; label, comment, edit, check
	n  int    // the issue or pull request
}

// newSimFake starts the fake with the limits on and seeds it: the App
// installed on every installation's repository, each with issues issues
// (the flooder flood more), a pull request, the bot's state comment on
// every issue, the config file and a maintainer.
func newSimFake(o SimOptions) (*simFake, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	lim := fakegithub.GitHubLimits()
	g := &simFake{
		fake:   fakegithub.New(fakegithub.Options{Limits: &lim, Latency: o.PerRequest}),
		keyPEM: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		issues: o.IssuesPer, pr: o.IssuesPer + 1, gap: o.MutationGap, byKind: map[string]*kindCalls{},
		stateOf: make([]int64, (o.Installations+1)*(o.IssuesPer+1)),
	}
	var installs []fakegithub.Installation
	for inst := int64(1); inst <= int64(o.Installations); inst++ {
		installs = append(installs, fakegithub.Installation{ID: inst, Account: fmt.Sprintf("inst%d", inst),
			Repos: []string{simRepo(inst)}})
	}
	if err := g.fake.RegisterApp(simAppID, simAppSlug, &key.PublicKey, installs...); err != nil {
		g.fake.Close()
		return nil, err
	}
	for inst := int64(1); inst <= int64(o.Installations); inst++ {
		if err := g.seed(inst, o); err != nil {
			g.fake.Close()
			return nil, err
		}
	}
	reset := time.Now().Add(time.Hour)
	for inst, left := range o.Budgets {
		if err := g.fake.SetInstallationRateLimit(inst, 5000, left, reset); err != nil {
			g.fake.Close()
			return nil, err
		}
	}
	return g, nil
}

func (g *simFake) seed(inst int64, o SimOptions) error {
	repo := simRepo(inst)
	if err := g.fake.AddRepo(repo); err != nil {
		return err
	}
	if err := g.fake.SetFile(repo, simConfig, []byte("jira:\n  enabled: false\n")); err != nil {
		return err
	}
	if err := g.fake.SetPermission(repo, simMaintainer, access.Admin); err != nil {
		return err
	}
	issues := o.IssuesPer
	if inst == floodInst {
		issues = max(issues, o.Flood)
	}
	for n := 1; n <= issues; n++ {
		if _, err := g.fake.CreateIssue(repo, simMaintainer, fmt.Sprintf("issue %d", n), "", nil); err != nil {
			return err
		}
		if inst == floodInst || n > o.IssuesPer {
			continue // the backfill posts its own
		}
		c, err := g.fake.AddComment(repo, n, simAppSlug+"[bot]", "<!-- autopilot:state -->")
		if err != nil {
			return err
		}
		g.stateOf[int(inst)*(o.IssuesPer+1)+n] = c.ID
	}
	if inst == floodInst {
		return nil // it only backfills
	}
	n, err := g.fake.CreatePull(repo, simMaintainer, "a change", "", "feature", fmt.Sprintf("sha%d", inst))
	if err != nil {
		return err
	}
	g.pr = n
	return nil
}

// touch is a person's comment on an issue: GitHub's copy changes, so the
// next conditional read of the comments is a 200.
func (g *simFake) touch(inst int64, n int) {
	_, _ = g.fake.AddComment(simRepo(inst), n, simMaintainer, "a comment")
}

// simClients is one replica's way to GitHub: its App authentication, its
// budget and cache on the shared Redis, one adapter per installation.
type simClients struct {
	g      *simFake
	auth   *appauth.Auth
	budget *budget.Budget
	cache  *ghcache.Redis
	holds  *holdCounter

	mu      sync.Mutex
	clients map[int64]*gh.Client
}

func (g *simFake) replica(rdb *redis.Client, prefix string, holds *holdCounter, tr http.RoundTripper) (*simClients, error) {
	auth, err := appauth.New(appauth.Config{AppID: simAppID, PrivateKey: g.keyPEM, BaseURL: g.fake.URL(), Transport: tr})
	if err != nil {
		return nil, err
	}
	return &simClients{g: g, auth: auth, holds: holds, clients: map[int64]*gh.Client{},
		budget: budget.New(budget.NewRedis(rdb, budget.RedisOptions{Prefix: prefix}), budget.Options{}),
		cache:  ghcache.New(rdb, ghcache.Options{Prefix: prefix})}, nil
}

// client is installation inst's adapter on this replica, built as App mode
// builds it (appmode.newClient): the installation's token, its budget
// gate, its shared cache.
func (r *simClients) client(inst int64) (*gh.Client, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.clients[inst]; c != nil {
		return c, nil
	}
	c, err := gh.New(gh.Options{Repo: simRepo(inst), BaseURL: r.g.fake.URL(), HTTPClient: r.auth.ClientFor(inst),
		Cache: r.cache.For(inst), Gate: holdCounting{r.budget.For(inst), r.holds}, BotLogin: simAppSlug + "[bot]",
		AppID: simAppID, MinMutationGap: r.g.gap})
	if err != nil {
		return nil, err
	}
	r.clients[inst] = c
	return c, nil
}

// job makes one job's calls for installation inst, one after another. A
// call GitHub refused after the adapter's own waits and retries is counted
// and the job goes on (as a reconcile's later step would); only a cut ends
// it early.
func (r *simClients) job(ctx context.Context, inst int64, kind string, calls []call) error {
	c, err := r.client(inst)
	if err != nil {
		return err
	}
	var done kindCalls
	for _, cl := range calls {
		err := r.do(ctx, c, inst, cl)
		if ctx.Err() != nil {
			return ctx.Err() // cut: the requests sent are in the fake's totals, not in the kind's
		}
		done.calls++
		if err != nil {
			done.failed++
		}
	}
	r.g.mu.Lock()
	k := r.g.byKind[kind]
	if k == nil {
		k = &kindCalls{}
		r.g.byKind[kind] = k
	}
	k.jobs++
	k.calls += done.calls
	k.failed += done.failed
	r.g.mu.Unlock()
	return nil
}

// do sends one call through the adapter: the reads are its conditional
// reads, the writes real ones.
func (r *simClients) do(ctx context.Context, c *gh.Client, inst int64, cl call) error {
	var err error
	switch cl.op {
	case "issue":
		_, err = c.GetIssue(ctx, cl.n)
	case "comments":
		_, err = c.ListComments(ctx, cl.n)
	case "config":
		_, _, err = c.ReadFile(ctx, simConfig)
	case "permission":
		_, err = c.Permission(ctx, simMaintainer)
	case "pull":
		_, err = c.GetPull(ctx, r.g.pr)
	case "checks":
		_, err = c.ListChecks(ctx, fmt.Sprintf("sha%d", inst))
	case "reviews":
		_, err = c.ListReviews(ctx, r.g.pr)
	case "open":
		_, err = c.ListOpenIssues(ctx, "")
	case "label":
		err = c.AddLabels(ctx, cl.n, []forge.Label{{Name: "autopilot"}})
	case "comment":
		_, err = c.CreateComment(ctx, cl.n, "the bot's reply")
	case "edit":
		id := r.g.stateOf[int(inst)*(r.g.issues+1)+cl.n]
		if id == 0 {
			return errors.New("no state comment")
		}
		_, err = c.EditComment(ctx, id, fmt.Sprintf("<!-- autopilot:state --> %d", time.Now().UnixNano()))
	case "check":
		_, err = c.CreateCheckRun(ctx, forge.CheckRunOut{Name: "autopilot", HeadSHA: fmt.Sprintf("sha%d", inst),
			Status: "completed", Conclusion: "success", Title: "ok", Summary: "ok"})
	default:
		err = fmt.Errorf("unknown call %q", cl.op)
	}
	return err
}

// holdCounting is a budget gate that counts the requests it held.
type holdCounting struct {
	g *budget.Gate
	h *holdCounter
}

func (h holdCounting) Admit(ctx context.Context, graphql bool) (time.Duration, string) {
	d, why := h.g.Admit(ctx, graphql)
	if d > 0 {
		h.h.add(budget.ClassOf(ctx), d)
	}
	return d, why
}

func (h holdCounting) Observe(ctx context.Context, hd http.Header, until time.Time) {
	h.g.Observe(ctx, hd, until)
}

// holdCounter counts the budget's holds by class: how many requests the
// gate made wait, and for how long in all (a request held twice counts
// twice).
type holdCounter struct {
	mu   sync.Mutex
	n    [2]int
	wait [2]time.Duration
}

func (h *holdCounter) add(c budget.Class, d time.Duration) {
	h.mu.Lock()
	h.n[c]++
	h.wait[c] += d
	h.mu.Unlock()
}

// Holds is what the budget held, of one class.
type Holds struct {
	Requests int
	Wait     time.Duration
}

func (h *holdCounter) get(c budget.Class) Holds {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Holds{Requests: h.n[c], Wait: h.wait[c]}
}
