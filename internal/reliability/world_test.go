package reliability

import (
	crand "crypto/rand"
	"crypto/rsa"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/fake/fakejira"
	gh "github.com/autopilot-dev/autopilot/internal/github"
	"github.com/autopilot-dev/autopilot/internal/jira"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// The world's repository and people. Permissions are what the
// collaborator-permission API reports; answer_permission is write.
const (
	Repo     = "acme/widgets"
	Maria    = "maria"         // admin
	Devin    = "devin"         // write
	Tess     = "tess"          // triage role (permission read)
	Reader   = "reader"        // read
	Stranger = "stranger"      // no access (the repository is private)
	LintBot  = "lint-bot[bot]" // another App's bot, write access
	// ActionsBot is the identity GITHUB_TOKEN acts as.
	ActionsBot = fakegithub.ActionsBotLogin
	// AppBot and AppID are the GitHub App of App mode.
	AppBot = "autopilot-app[bot]"
	AppID  = 424242
	// Installation is the App's installation on Repo.
	Installation = 77
)

// Start is the fake clock's reading when a world is built.
var Start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// DefaultConfig is the repository configuration of a world without Jira:
// greenfield, Jira off, limits wide enough that no kill-switch fires in a
// scenario, and the review-loop roles.
const DefaultConfig = `default_flow: greenfield
limits:
  max_hours: 24
  max_sessions: 50
roles:
  architect: [maria]
  critic: [devin]
jira:
  enabled: false
`

// JiraConfig is DefaultConfig with Jira on (search_lag is appended).
const JiraConfig = `default_flow: greenfield
limits:
  max_hours: 24
  max_sessions: 50
roles:
  architect: [maria]
  critic: [devin]
jira:
  deployment: cloud
`

// Mode says how deliveries reach reconcile.
type Mode int

const (
	// ModeAction runs each delivery as a GitHub Actions run would: a fresh
	// process (adapter, reconciler, GITHUB_TOKEN), nothing kept between runs.
	ModeAction Mode = iota
	// ModeApp posts each delivery, signed, to the App's webhook server.
	ModeApp
)

// Options configures a World.
type Options struct {
	Mode Mode
	// Jira wires a fake Jira Cloud as the tracker.
	Jira bool
	// SearchLag is the fake Jira's search lag (and jira.search_lag).
	SearchLag time.Duration
	// Config replaces the repository configuration.
	Config string
	// Seed drives the adapter's back-off jitter.
	Seed uint64
}

// World is one repository on the fake GitHub (and fake Jira), the clock
// they share, and the record of every run made against them.
type World struct {
	tb    testing.TB
	Clock *Clock
	GH    *fakegithub.Server
	// Jira is nil unless Options.Jira.
	Jira *fakejira.Server
	Key  []byte
	// BotLogin and AppIDTrusted are the identity whose state is trusted.
	BotLogin     string
	AppIDTrusted int64
	opts         Options
	calls        callLog
	rnd          *rand.Rand

	mu           sync.Mutex
	runs         []Run
	nextRun      int
	issues       []int
	versions     map[int][]VersionObs
	latency      time.Duration
	perms        []permChange
	assoc        map[string]string
	hooks        hooks
	app          *appServer
	appOpts      AppOptions
	nextDelivery int
}

// permChange records a permission change, for I4 ("at processing time").
type permChange struct {
	at    time.Time
	login string
	perm  access.Level
}

// NewWorld builds the fakes and seeds the repository.
func NewWorld(tb testing.TB, o Options) *World {
	tb.Helper()
	clock := NewClock(Start)
	w := &World{tb: tb, Clock: clock, Key: []byte("reliability-state-key"), opts: o,
		BotLogin: ActionsBot, versions: map[int][]VersionObs{}, assoc: map[string]string{}, rnd: rand.New(rand.NewPCG(o.Seed, 99))}
	w.GH = fakegithub.New(fakegithub.Options{Clock: clock.Now})
	tb.Cleanup(w.GH.Close)
	must(tb, w.GH.AddRepo(Repo))
	must(tb, w.GH.SetRepo(Repo, true, ""))
	for login, p := range map[string]access.Level{Maria: access.Admin, Devin: access.Write, Tess: access.Triage, Reader: access.Read} {
		w.GH.AddUser(login, "User")
		w.SetPermission(login, p)
	}
	w.GH.AddUser(Stranger, "User")
	w.GH.AddUser(LintBot, "Bot")
	w.SetPermission(LintBot, access.Write)
	cfg := o.Config
	if cfg == "" {
		cfg = DefaultConfig
		if o.Jira {
			cfg = JiraConfig
			if o.SearchLag > 0 {
				cfg += fmt.Sprintf("  search_lag: %ds\n", int(o.SearchLag/time.Second))
			}
		}
	}
	must(tb, w.GH.SetFile(Repo, config.DefaultPath, []byte(cfg)))
	if o.Jira {
		w.Jira = fakejira.New(fakejira.Options{Deployment: fakejira.Cloud, SearchLag: o.SearchLag, Now: clock.Now})
		tb.Cleanup(w.Jira.Close)
	}
	if o.Mode == ModeApp {
		w.BotLogin, w.AppIDTrusted = AppBot, AppID
		must(tb, w.GH.RegisterApp(AppID, strings.TrimSuffix(AppBot, "[bot]"), &appKey(tb).PublicKey,
			fakegithub.Installation{ID: Installation, Account: "acme", Repos: []string{Repo}}))
	}
	return w
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// SetPermission changes a person's role, as an admin would in the settings.
func (w *World) SetPermission(login string, p access.Level) {
	w.tb.Helper()
	must(w.tb, w.GH.SetPermission(Repo, login, p))
	w.mu.Lock()
	w.perms = append(w.perms, permChange{at: w.Clock.Now(), login: strings.ToLower(login), perm: p})
	w.mu.Unlock()
}

// SetAssociation sets login's author_association (as payloads carry it,
// e.g. "CONTRIBUTOR" for a private org member): autopilot must not use it.
func (w *World) SetAssociation(login, assoc string) {
	w.tb.Helper()
	must(w.tb, w.GH.SetAssociation(Repo, login, assoc))
	w.mu.Lock()
	w.assoc[strings.ToLower(login)] = assoc
	w.mu.Unlock()
}

// association is what a payload says about login.
func (w *World) association(login string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if a := w.assoc[strings.ToLower(login)]; a != "" {
		return a
	}
	for i := len(w.perms) - 1; i >= 0; i-- {
		if p := w.perms[i]; p.login == strings.ToLower(login) && p.perm != access.None {
			return "COLLABORATOR"
		}
	}
	return "NONE"
}

// PermissionAt is login's permission at t by the world's record.
func (w *World) PermissionAt(login string, t time.Time) access.Level {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := access.None
	for _, c := range w.perms {
		if c.login == strings.ToLower(login) && !c.at.After(t) {
			p = c.perm
		}
	}
	return p
}

// SetLatency adds d of fake time to every GitHub request from now on.
func (w *World) SetLatency(d time.Duration) {
	w.mu.Lock()
	w.latency = d
	w.mu.Unlock()
}

func (w *World) currentLatency() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.latency
}

// NewIssue opens an issue by maria and returns its number.
func (w *World) NewIssue(title, body string) int {
	w.tb.Helper()
	w.Clock.Advance(time.Minute)
	n, err := w.GH.CreateIssue(Repo, Maria, title, body, nil)
	must(w.tb, err)
	w.mu.Lock()
	w.issues = append(w.issues, n)
	w.mu.Unlock()
	return n
}

// Issues are the issues NewIssue opened.
func (w *World) Issues() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int(nil), w.issues...)
}

// Calls returns every request logged so far.
func (w *World) Calls() []Call { return w.calls.all() }

// newRun allocates a run id.
func (w *World) newRun() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nextRun++
	return w.nextRun
}

// OnCall sets (nil clears) the hook every later call passes through.
func (w *World) OnCall(h Hook) {
	w.hooks.mu.Lock()
	w.hooks.fn = h
	w.hooks.mu.Unlock()
}

// BeforeCall sets (nil clears) a function every later call passes through
// before it is sent; it may block to delay the request.
func (w *World) BeforeCall(f func(Call)) {
	w.hooks.mu.Lock()
	w.hooks.before = f
	w.hooks.mu.Unlock()
}

// client builds a fresh GitHub adapter for one run, with its own token;
// kill ends the run when a hook asks.
func (w *World) client(run int, token string, kill func()) *gh.Client {
	w.tb.Helper()
	rc := &runClock{c: w.Clock}
	rec := &recorder{next: inMemory{w.GH}, log: &w.calls, clock: w.Clock, run: run,
		service: ServiceGitHub, token: token, latency: w.currentLatency, hooks: &w.hooks, kill: kill, sentAt: rc.lastRead}
	w.mu.Lock()
	seed := w.rnd.Uint64()
	w.mu.Unlock()
	jitter := rand.New(rand.NewPCG(seed, 7))
	var jmu sync.Mutex
	c, err := gh.New(gh.Options{Repo: Repo, BaseURL: w.GH.URL(), HTTPClient: &http.Client{Transport: rec},
		Now: rc.Now, Sleep: w.Clock.Sleep, BotLogin: w.BotLogin, AppID: w.AppIDTrusted,
		Rand: func() float64 { jmu.Lock(); defer jmu.Unlock(); return jitter.Float64() }})
	must(w.tb, err)
	return c
}

// trackerFor builds the Jira tracker of one run, as cmd/bot does.
func (w *World) trackerFor(run int, kill func()) func(config.Jira) (tracker.Tracker, error) {
	if w.Jira == nil {
		return nil
	}
	return func(j config.Jira) (tracker.Tracker, error) {
		fo := w.Jira.Options()
		rec := &recorder{next: http.DefaultTransport, log: &w.calls, clock: w.Clock, run: run, service: ServiceJira, hooks: &w.hooks, kill: kill}
		return jira.New(jira.Config{URL: w.Jira.URL(), User: fo.User, Token: fo.Token, Project: fo.Project,
			Deployment: j.Deployment, EpicLinkField: j.EpicLinkField, EpicNameField: j.EpicNameField,
			PointsField: j.PointsField, IssueTypeTask: j.TaskType, IssueTypeEpic: j.EpicType,
			HTTPClient: &http.Client{Transport: rec}, Now: w.Clock.Now})
	}
}

// State returns the newest trusted, valid state of issue n (nil if none),
// read the way the bot reads it.
func (w *World) State(n int) *state.State {
	s, _ := w.stateComment(n)
	return s
}

func (w *World) trusted(c fakegithub.Comment) bool {
	if !strings.EqualFold(c.Author.Login, w.BotLogin) || !c.Author.IsBot() {
		return false
	}
	return w.AppIDTrusted == 0 || c.AppID == w.AppIDTrusted
}

func (w *World) stateComment(n int) (*state.State, fakegithub.Comment) {
	var best *state.State
	var at fakegithub.Comment
	for _, c := range w.GH.Comments(Repo, n) {
		if !w.trusted(c) || !strings.HasPrefix(c.Body, state.Marker) {
			continue
		}
		s, err := codec.Parse(c.Body, codec.Want{Repo: Repo, Issue: n, Key: w.Key})
		if err != nil {
			continue
		}
		if best == nil || s.Version > best.Version {
			best, at = s, c
		}
	}
	return best, at
}

// BotComments returns the live comments of issue n written by the bot.
func (w *World) BotComments(n int) []fakegithub.Comment {
	var out []fakegithub.Comment
	for _, c := range w.GH.Comments(Repo, n) {
		if w.trusted(c) {
			out = append(out, c)
		}
	}
	return out
}

var (
	appKeyOnce sync.Once
	appKeyVal  *rsa.PrivateKey
	appKeyErr  error
)

// appKey is the App's RSA key, generated once per test binary.
func appKey(tb testing.TB) *rsa.PrivateKey {
	appKeyOnce.Do(func() { appKeyVal, appKeyErr = rsa.GenerateKey(crand.Reader, 2048) })
	must(tb, appKeyErr)
	return appKeyVal
}

// fakegitIdentity is the App installation token's identity.
func fakegitIdentity() fakegithub.Identity {
	return fakegithub.Identity{Login: AppBot, Type: "Bot", AppID: AppID, InstallationID: Installation, Repos: []string{Repo}, RateLimit: 5000}
}
