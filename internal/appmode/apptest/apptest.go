// Package apptest is test support for App mode: a fake GitHub
// (fakegithub) with a GitHub App registered under a freshly generated RSA
// key and installed on some repositories, signed webhook deliveries built
// from the vendored octokit payloads in testdata/webhooks/, and readers of
// the state the App left in the fake. The appmode unit tests and the
// end-to-end tests of the `bot serve` binary share it.
//
// It must never be imported by production code, and it never invents a
// payload shape: every delivery starts from a vendored example.
package apptest

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/server"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
	"github.com/autopilot-dev/autopilot/internal/state/marker"
)

// The App and installation every GitHub is set up with.
const (
	AppID        = 424242
	Slug         = "autopilot-e2e"
	BotLogin     = Slug + "[bot]"
	Installation = 77
	Account      = "acme"
	Repo         = "acme/widgets"
	StateKey     = "app-e2e-state-key"
	Secret       = "app-e2e-webhook-secret"
)

// People on every repository: a maintainer, a writer, a reader, and
// someone with no role at all.
const (
	Maintainer = "maria"
	Writer     = "devin"
	Reader     = "rita"
	Stranger   = "sam"
)

var (
	keyOnce sync.Once
	key     *rsa.PrivateKey
	keyErr  error
)

// appKey generates the App's RSA key once per test binary.
func appKey(tb testing.TB) *rsa.PrivateKey {
	tb.Helper()
	keyOnce.Do(func() { key, keyErr = rsa.GenerateKey(rand.Reader, 2048) })
	if keyErr != nil {
		tb.Fatal(keyErr)
	}
	return key
}

// GitHub is a fake GitHub with the App registered.
type GitHub struct {
	// Server is the fake: seed it and inspect it through its control API.
	*fakegithub.Server
	// URL is the fake's own address: use it as GITHUB_API_URL.
	URL string
	// SweepURL is the address to use when the App sweeps (the fake serves
	// GET /installation/repositories itself; it equals URL).
	SweepURL string
	// KeyPEM is the App's private key, PKCS#1 PEM as GitHub issues it.
	KeyPEM []byte

	tb    testing.TB
	repos []string
}

// New starts a fake GitHub with the App installed (installation
// Installation, account Account) on repos (default Repo), the four people
// given their roles on each, and an empty .github/autopilot.yml saying
// jira is off (the Jira path has its own tests).
func New(tb testing.TB, repos ...string) *GitHub {
	tb.Helper()
	if len(repos) == 0 {
		repos = []string{Repo}
	}
	k := appKey(tb)
	g := &GitHub{
		Server: fakegithub.New(fakegithub.Options{}),
		KeyPEM: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}),
		tb:     tb,
		repos:  repos,
	}
	tb.Cleanup(g.Server.Close)
	for _, r := range repos {
		g.must(g.AddRepo(r))
		g.must(g.SetFile(r, ".github/autopilot.yml", []byte("default_flow: greenfield\njira:\n  enabled: false\n")))
	}
	g.must(g.RegisterApp(AppID, Slug, &k.PublicKey, fakegithub.Installation{ID: Installation, Account: Account, Repos: repos}))
	for login, p := range map[string]access.Level{Maintainer: access.Admin, Writer: access.Write, Reader: access.Read} {
		g.AddUser(login, "User")
		for _, r := range repos {
			g.must(g.SetPermission(r, login, p))
		}
	}
	g.AddUser(Stranger, "User")
	g.URL = g.Server.URL()
	g.SweepURL = g.URL
	return g
}

func (g *GitHub) must(err error) {
	g.tb.Helper()
	if err != nil {
		g.tb.Fatal(err)
	}
}

// Delivery is one webhook delivery as GitHub sends it.
type Delivery struct {
	Event string
	ID    string
	Body  []byte
}

// Request builds the signed POST of d to url, as GitHub's hookshot sends it.
func (d Delivery) Request(tb testing.TB, url, secret string) *http.Request {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(d.Body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/apptest")
	req.Header.Set("X-GitHub-Event", d.Event)
	req.Header.Set("X-GitHub-Delivery", d.ID)
	req.Header.Set("X-GitHub-Hook-Installation-Target-Type", "integration")
	req.Header.Set("X-Hub-Signature-256", server.Sign([]byte(secret), d.Body))
	return req
}

// Post sends d signed with secret and returns the status code.
func (d Delivery) Post(tb testing.TB, url, secret string) int {
	tb.Helper()
	return Send(tb, d.Request(tb, url, secret))
}

// Send does req and returns the status code, the body discarded.
func Send(tb testing.TB, req *http.Request) int {
	tb.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// NewDeliveryID returns a random delivery id shaped like GitHub's (a
// version 4 UUID), so ids never repeat across runs sharing one Redis.
func NewDeliveryID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// payload moves a vendored example to repo and the App's installation.
func (g *GitHub) payload(file, repo string, set map[string]any) []byte {
	g.tb.Helper()
	b := ghtest.WithRepo(g.tb, ghtest.Payload(g.tb, file), repo)
	set["installation.id"] = Installation
	set["installation.node_id"] = "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNzc="
	return ghtest.Mutate(g.tb, b, set)
}

func (g *GitHub) labels(repo string, n int) []any {
	return ghtest.Labels(g.Server.Labels(repo, n)...)
}

// Labeled is the issues.labeled delivery of who adding label to issue n
// (the label is added on the fake first, as the person did).
func (g *GitHub) Labeled(repo string, n int, who, label string) Delivery {
	g.tb.Helper()
	g.addIssueLabel(repo, n, label)
	return Delivery{Event: "issues", ID: NewDeliveryID(), Body: g.payload("issues.labeled.json", repo, map[string]any{
		"issue.number": n, "issue.labels": g.labels(repo, n), "label.name": label,
		"sender.login": who, "sender.type": "User",
	})}
}

// addIssueLabel labels the issue as the maintainer, through the API (the
// fake's control API has no issue labelling); the request is the
// maintainer's, not the App's, in the fake's log.
func (g *GitHub) addIssueLabel(repo string, n int, label string) {
	g.tb.Helper()
	for _, l := range g.Server.Labels(repo, n) {
		if l == label {
			return
		}
	}
	tok := "ghp_apptest_" + strings.ReplaceAll(repo, "/", "_")
	g.AddToken(tok, fakegithub.Identity{Login: Maintainer, Type: "User"})
	body := `{"labels":["` + label + `"]}`
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/repos/%s/issues/%d/labels", g.Server.URL(), repo, n), strings.NewReader(body))
	g.must(err)
	req.Header.Set("Authorization", "token "+tok)
	if code := Send(g.tb, req); code != http.StatusOK {
		g.tb.Fatalf("label #%d: %d", n, code)
	}
}

// Say posts body on issue n as who (on the fake) and returns the
// issue_comment.created delivery for it.
func (g *GitHub) Say(repo string, n int, who, body string) Delivery {
	g.tb.Helper()
	c, err := g.Server.AddComment(repo, n, who, body)
	g.must(err)
	return g.CommentDelivery(repo, n, c)
}

// CommentDelivery is the issue_comment.created delivery of an existing
// comment.
func (g *GitHub) CommentDelivery(repo string, n int, c fakegithub.Comment) Delivery {
	g.tb.Helper()
	set := map[string]any{
		"issue.number": n, "issue.labels": g.labels(repo, n), "issue.pull_request": ghtest.Delete,
		"sender.login": c.Author.Login, "sender.type": c.Author.Type,
	}
	set["comment.id"], set["comment.body"] = c.ID, c.Body
	set["comment.user.login"], set["comment.user.type"] = c.Author.Login, c.Author.Type
	set["comment.created_at"] = c.CreatedAt.UTC().Format(time.RFC3339)
	set["comment.updated_at"] = c.UpdatedAt.UTC().Format(time.RFC3339)
	set["comment.performed_via_github_app"] = nil
	return Delivery{Event: "issue_comment", ID: NewDeliveryID(), Body: g.payload("issue_comment.created.json", repo, set)}
}

// WorkflowRun is the workflow_run.completed delivery of a run whose display
// title is title.
func (g *GitHub) WorkflowRun(repo string, runID int64, title, conclusion string) Delivery {
	g.tb.Helper()
	return Delivery{Event: "workflow_run", ID: NewDeliveryID(), Body: g.payload("workflow_run.completed.json", repo, map[string]any{
		"workflow_run.id": runID, "workflow_run.display_title": title, "workflow_run.conclusion": conclusion,
		"sender.login": Maintainer, "sender.type": "User",
	})}
}

// Issue creates an issue opened by the maintainer.
func (g *GitHub) Issue(repo, title string) int {
	g.tb.Helper()
	n, err := g.CreateIssue(repo, Maintainer, title, "Opened by apptest.", nil)
	g.must(err)
	return n
}

// States returns the state comments of issue n written by the App (its
// bot, through its App id), oldest first.
func (g *GitHub) States(repo string, n int) []fakegithub.Comment {
	var out []fakegithub.Comment
	for _, c := range g.Comments(repo, n) {
		if c.Author.Login == BotLogin && c.AppID == AppID && strings.HasPrefix(c.Body, state.Marker) {
			out = append(out, c)
		}
	}
	return out
}

// State parses the newest state the App wrote on issue n (nil when none),
// failing the test when it does not verify under StateKey.
func (g *GitHub) State(repo string, n int) *state.State {
	g.tb.Helper()
	var best *state.State
	for _, c := range g.States(repo, n) {
		s, err := codec.Parse(c.Body, codec.Want{Repo: repo, Issue: n, Key: []byte(StateKey)})
		if err != nil {
			g.tb.Fatalf("state comment %d does not verify: %v", c.ID, err)
		}
		if best == nil || s.Version > best.Version {
			best = s
		}
	}
	return best
}

// BotComments counts the App's comments on issue n whose body contains sub.
func (g *GitHub) BotComments(repo string, n int, sub string) int {
	k := 0
	for _, c := range g.Comments(repo, n) {
		if c.Author.Login == BotLogin && strings.Contains(c.Body, sub) {
			k++
		}
	}
	return k
}

// RepliesTo counts the App's replies to comment id (their marker names it).
func (g *GitHub) RepliesTo(repo string, n int, id int64) int {
	return g.BotComments(repo, n, marker.Build(marker.Reply, strconv.FormatInt(id, 10)))
}

// Reacted reports whether the App reacted to comment id with content.
func (g *GitHub) Reacted(id int64, content string) bool {
	for _, r := range g.Reactions(id) {
		if r.User.Login == BotLogin && r.Content == content {
			return true
		}
	}
	return false
}

// HasLabel reports whether issue n carries label.
func (g *GitHub) HasLabel(repo string, n int, label string) bool {
	for _, l := range g.Server.Labels(repo, n) {
		if l == label {
			return true
		}
	}
	return false
}

// AppRequests returns the requests the App made (with its JWT or an
// installation token) among the fake's log entries from index from on.
func (g *GitHub) AppRequests(from int) []fakegithub.Request {
	var out []fakegithub.Request
	all := g.Requests()
	for _, r := range all[min(from, len(all)):] {
		if r.Login == BotLogin || r.Login == Slug {
			out = append(out, r)
		}
	}
	return out
}
