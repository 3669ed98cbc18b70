package github

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/forge"
)

// endpoint is one REST (or GraphQL) endpoint the adapter calls and the
// repository permission GitHub's documentation names for it ("Permissions
// required for GitHub Apps" and each endpoint's "Fine-grained access
// tokens" section). Permission names are the App manifest's.
type endpoint struct {
	Method, Path string // Path with {placeholders} for one segment each
	Perm, Access string // e.g. "issues", "write"
}

// endpoints is every endpoint the adapter may call. (App mode also mints
// installation tokens with the App's JWT and lists an installation's
// repositories with its token: those need no repository permission.) A call that matches
// no row fails TestAdapterCallsAreGrantedInTheDocs: add its row, with the
// permission from GitHub's documentation, and grant it in docs/app.md's
// manifest and the workflow's permissions: if they lack it.
var endpoints = []endpoint{
	{"GET", "/repos/{owner}/{repo}", "metadata", "read"},
	{"GET", "/repos/{owner}/{repo}/collaborators/{username}/permission", "metadata", "read"},
	{"GET", "/repos/{owner}/{repo}/contents/{path...}", "contents", "read"},

	{"GET", "/repos/{owner}/{repo}/issues", "issues", "read"},
	{"POST", "/repos/{owner}/{repo}/issues", "issues", "write"},
	{"GET", "/repos/{owner}/{repo}/issues/{number}", "issues", "read"},
	{"PATCH", "/repos/{owner}/{repo}/issues/{number}", "issues", "write"},
	{"GET", "/repos/{owner}/{repo}/issues/{number}/comments", "issues", "read"},
	{"POST", "/repos/{owner}/{repo}/issues/{number}/comments", "issues", "write"},
	{"GET", "/repos/{owner}/{repo}/issues/comments/{id}", "issues", "read"},
	{"PATCH", "/repos/{owner}/{repo}/issues/comments/{id}", "issues", "write"},
	{"DELETE", "/repos/{owner}/{repo}/issues/comments/{id}", "issues", "write"},
	{"POST", "/repos/{owner}/{repo}/issues/comments/{id}/reactions", "issues", "write"},
	{"POST", "/repos/{owner}/{repo}/issues/{number}/labels", "issues", "write"},
	{"DELETE", "/repos/{owner}/{repo}/issues/{number}/labels/{name}", "issues", "write"},
	{"PATCH", "/repos/{owner}/{repo}/labels/{name}", "issues", "write"},
	{"GET", "/repos/{owner}/{repo}/issues/{number}/sub_issues", "issues", "read"},
	{"POST", "/repos/{owner}/{repo}/issues/{number}/sub_issues", "issues", "write"},
	{"GET", "/repos/{owner}/{repo}/issues/{number}/dependencies/blocked_by", "issues", "read"},
	{"POST", "/repos/{owner}/{repo}/issues/{number}/dependencies/blocked_by", "issues", "write"},
	// The thread query (gql.RecentQuery) reads one issue and its comments.
	{"POST", "/graphql", "issues", "read"},
	// The pinIssue mutation: "people with write access" may pin (GitHub's
	// "Pinning an issue to your repository"). Told apart by its document.
	{"POST", "/graphql#pinIssue", "issues", "write"},

	{"GET", "/repos/{owner}/{repo}/pulls/{number}", "pull_requests", "read"},
	{"GET", "/repos/{owner}/{repo}/pulls/{number}/reviews", "pull_requests", "read"},
	{"GET", "/repos/{owner}/{repo}/pulls/{number}/files", "pull_requests", "read"},
	{"GET", "/repos/{owner}/{repo}/commits/{ref}", "contents", "read"},

	// Approver policies with teams: an organization permission.
	{"GET", "/orgs/{org}/teams/{team_slug}/memberships/{username}", "members", "read"},
	{"GET", "/orgs/{org}/teams/{team_slug}", "members", "read"},

	{"GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs", "checks", "read"},
	{"POST", "/repos/{owner}/{repo}/check-runs", "checks", "write"},
	{"GET", "/repos/{owner}/{repo}/commits/{ref}/status", "statuses", "read"},

	{"POST", "/repos/{owner}/{repo}/actions/workflows/{workflow}/dispatches", "actions", "write"},
	{"GET", "/repos/{owner}/{repo}/actions/workflows/{workflow}/runs", "actions", "read"},

	// The deploy gate (App mode): the deploying run, and the answer or a
	// status report on its protection-rule request.
	{"GET", "/repos/{owner}/{repo}/actions/runs/{run_id}", "actions", "read"},
	{"POST", "/repos/{owner}/{repo}/actions/runs/{run_id}/deployment_protection_rule", "deployments", "write"},
	{"GET", "/repos/{owner}/{repo}/actions/runs/{run_id}/approvals", "actions", "read"},
}

// match finds the endpoint of a request.
func match(method, path string) (endpoint, bool) {
	for _, e := range endpoints {
		if e.Method != method {
			continue
		}
		pat := regexp.QuoteMeta(e.Path)
		pat = strings.ReplaceAll(pat, `\{path\.\.\.\}`, `.+`)
		pat = regexp.MustCompile(`\\\{[a-z_]+\\\}`).ReplaceAllString(pat, `[^/]+`)
		if regexp.MustCompile("^" + pat + "$").MatchString(path) {
			return e, true
		}
	}
	return endpoint{}, false
}

// noCalls are the exported methods of Client that make no API call.
var noCalls = []string{"Repo", "Stats", "Requests", "SubIssueTracker"}

// adapterDrivers call each exported method of Client that reaches GitHub
// once, on a world where it succeeds. A new method needs a driver here,
// so that its calls are checked against the endpoint table.
func adapterDrivers(w *permWorld) map[string]func(context.Context, *Client) error {
	ignore := func(_ any, err error) error { return err }
	return map[string]func(context.Context, *Client) error{
		"DefaultBranch": func(ctx context.Context, c *Client) error { return ignore(c.DefaultBranch(ctx)) },
		"Permission":    func(ctx context.Context, c *Client) error { return ignore(c.Permission(ctx, "alice")) },
		"ReadFile": func(ctx context.Context, c *Client) error {
			_, _, err := c.ReadFile(ctx, ".github/autopilot.yml")
			return err
		},
		"ListDir": func(ctx context.Context, c *Client) error {
			_, _, err := c.ListDir(ctx, "_docs")
			return err
		},
		"GetIssue":       func(ctx context.Context, c *Client) error { return ignore(c.GetIssue(ctx, w.issue)) },
		"ListOpenIssues": func(ctx context.Context, c *Client) error { return ignore(c.ListOpenIssues(ctx, "autopilot")) },
		"ListComments":   func(ctx context.Context, c *Client) error { return ignore(c.ListComments(ctx, w.issue)) },
		"ListCommentsHead": func(ctx context.Context, c *Client) error {
			_, _, err := c.ListCommentsHead(ctx, w.issue)
			return err
		},
		"ListCommentsSince": func(ctx context.Context, c *Client) error {
			return ignore(c.ListCommentsSince(ctx, w.issue, time.Time{}))
		},
		"GetComment":    func(ctx context.Context, c *Client) error { return ignore(c.GetComment(ctx, w.comment)) },
		"CreateComment": func(ctx context.Context, c *Client) error { return ignore(c.CreateComment(ctx, w.issue, "hello")) },
		"EditComment": func(ctx context.Context, c *Client) error {
			cm, err := c.CreateComment(ctx, w.issue, "to edit")
			if err != nil {
				return err
			}
			return ignore(c.EditComment(ctx, cm.ID, "edited"))
		},
		"DeleteIssueComment": func(ctx context.Context, c *Client) error {
			cm, err := c.CreateComment(ctx, w.issue, "to delete")
			if err != nil {
				return err
			}
			return c.DeleteIssueComment(ctx, cm.ID)
		},
		"React": func(ctx context.Context, c *Client) error { return c.React(ctx, w.comment, "+1") },
		"ReadRecent": func(ctx context.Context, c *Client) error {
			return ignore(c.ReadRecent(ctx, w.issue, func(forge.Issue, []forge.Comment) bool { return false }))
		},
		"AddLabels": func(ctx context.Context, c *Client) error {
			return c.AddLabels(ctx, w.issue, []forge.Label{{Name: "autopilot/status:done", Color: "0e8a16", Description: "done"}})
		},
		"RemoveLabel":    func(ctx context.Context, c *Client) error { return c.RemoveLabel(ctx, w.issue, "autopilot") },
		"GetPull":        func(ctx context.Context, c *Client) error { return ignore(c.GetPull(ctx, w.pull)) },
		"ListReviews":    func(ctx context.Context, c *Client) error { return ignore(c.ListReviews(ctx, w.pull)) },
		"ListChecks":     func(ctx context.Context, c *Client) error { return ignore(c.ListChecks(ctx, permSHA)) },
		"CheckRunsNamed": func(ctx context.Context, c *Client) error { return ignore(c.CheckRunsNamed(ctx, permSHA, "autopilot")) },
		"CreateCheckRun": func(ctx context.Context, c *Client) error {
			return ignore(c.CreateCheckRun(ctx, forge.CheckRunOut{Name: "autopilot", HeadSHA: permSHA, Status: "in_progress", Title: "t", Summary: "s"}))
		},
		"DispatchWorkflow": func(ctx context.Context, c *Client) error {
			return ignore(c.DispatchWorkflow(ctx, "autopilot-step.yml", "main", map[string]string{"session": "s1"}))
		},
		"ListWorkflowRuns": func(ctx context.Context, c *Client) error {
			return ignore(c.ListWorkflowRuns(ctx, "autopilot-step.yml", time.Time{}))
		},
		"GetWorkflowRun": func(ctx context.Context, c *Client) error {
			run, err := w.deploy(ctx, c)
			if err != nil {
				return err
			}
			return ignore(c.GetWorkflowRun(ctx, run))
		},
		"ListDeploymentApprovals": func(ctx context.Context, c *Client) error {
			run, err := w.deploy(ctx, c)
			if err != nil {
				return err
			}
			return ignore(c.ListDeploymentApprovals(ctx, run))
		},
		"ReviewDeploymentRule": func(ctx context.Context, c *Client) error {
			run, err := w.deploy(ctx, c)
			if err != nil {
				return err
			}
			return c.ReviewDeploymentRule(ctx, run, "production", "approved", "ok")
		},
		"CreateIssue": func(ctx context.Context, c *Client) error {
			return ignore(c.CreateIssue(ctx, "task", "body", nil))
		},
		"SubIssues": func(ctx context.Context, c *Client) error { return ignore(c.SubIssues(ctx, w.issue)) },
		"AddSubIssue": func(ctx context.Context, c *Client) error {
			child, err := c.CreateIssue(ctx, "child", "body", nil)
			if err != nil {
				return err
			}
			return c.AddSubIssue(ctx, w.issue, child.ID)
		},
		"AddBlockedBy": func(ctx context.Context, c *Client) error {
			blocker, err := c.CreateIssue(ctx, "blocker", "body", nil)
			if err != nil {
				return err
			}
			return c.AddBlockedBy(ctx, w.issue, blocker.ID)
		},
		"BlockedBy": func(ctx context.Context, c *Client) error { return ignore(c.BlockedBy(ctx, w.issue)) },
		"ListLabeled": func(ctx context.Context, c *Client) error {
			return ignore(c.ListLabeled(ctx, "autopilot", time.Time{}))
		},
		"ReadIssue": func(ctx context.Context, c *Client) error { return ignore(c.ReadIssue(ctx, w.issue)) },
		"TeamMembership": func(ctx context.Context, c *Client) error {
			return ignore(c.TeamMembership(ctx, "octo", "sre", "alice")) // 404, then the team read
		},
		"PullFiles":  func(ctx context.Context, c *Client) error { return ignore(c.PullFiles(ctx, w.pull)) },
		"HeadPusher": func(ctx context.Context, c *Client) error { return ignore(c.HeadPusher(ctx, permSHA)) },
		"ReadFileAt": func(ctx context.Context, c *Client) error {
			_, _, err := c.ReadFileAt(ctx, ".github/CODEOWNERS", "main")
			return err
		},
		"EditIssueBody": func(ctx context.Context, c *Client) error {
			is, err := c.CreateIssue(ctx, "dashboard", "body", nil)
			if err != nil {
				return err
			}
			return c.EditIssueBody(ctx, is.Number, "new body")
		},
		"PinIssue": func(ctx context.Context, c *Client) error {
			is, err := c.CreateIssue(ctx, "to pin", "body", nil)
			if err != nil {
				return err
			}
			return c.PinIssue(ctx, is.NodeID)
		},
		"CloseIssue": func(ctx context.Context, c *Client) error {
			is, err := c.CreateIssue(ctx, "to close", "body", nil)
			if err != nil {
				return err
			}
			return c.CloseIssue(ctx, is.Number)
		},
	}
}

const permSHA = "6dcb09b5b57875f334f61aebed695e2e4193db5e"

// permWorld is a repository where every driver's call succeeds.
type permWorld struct {
	issue, pull int
	comment     int64
	// deploy makes a run whose job waits for a protection rule of the
	// client's App on environment production.
	deploy func(ctx context.Context, c *Client) (int64, error)
}

// TestAdapterCallsAreGrantedInTheDocs drives every method of the adapter
// against the fake GitHub, maps each request it makes to its endpoint and
// the permission GitHub's documentation names for it, and checks that
// both the App manifest in docs/app.md (and its permission table) and the
// documented workflow's permissions: (docs/examples/autopilot.yml, shown
// in docs/action.md) grant it. A new call without its permission fails.
func TestAdapterCallsAreGrantedInTheDocs(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	const repo = "octo/repo"
	g := fakegithub.New(fakegithub.Options{Clock: clock.Now})
	t.Cleanup(g.Close)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(g.AddRepo(repo))
	g.AddActionsToken("tok-bot", repo)
	g.AddUser("alice", "User")
	must(g.SetPermission(repo, "alice", access.Write))
	must(g.SetFile(repo, ".github/autopilot.yml", []byte("jira: {enabled: false}\n")))
	must(g.SetFile(repo, "_docs/01-task.md", []byte("# Task\n")))
	must(g.SetWorkflow(repo, "autopilot-step.yml", "autopilot-step", "autopilot ${{ inputs.session }}"))
	must(g.SetCommit(repo, permSHA, "alice", "alice"))
	w := &permWorld{}
	var err error
	w.issue, err = g.CreateIssue(repo, "alice", "Add CSV export", "body", []string{"autopilot"})
	must(err)
	w.pull, err = g.CreatePull(repo, "alice", "CSV", "Fixes #1", "csv", permSHA)
	must(err)
	cm, err := g.AddComment(repo, w.issue, "alice", "a comment")
	must(err)
	w.comment = cm.ID
	must(g.AddEnvironment(repo, "production"))
	must(g.EnableProtectionRule(repo, "production", fakegithub.ActionsAppID))
	w.deploy = func(ctx context.Context, c *Client) (int64, error) {
		// The dispatch is the workflow's; only the run's id is wanted.
		run, err := c.DispatchWorkflow(ctx, "autopilot-step.yml", "main", map[string]string{"session": "s9"})
		if err != nil {
			return 0, err
		}
		_, err = g.RequestDeployment(repo, fakegithub.DeploymentRequest{RunID: run, Environment: "production"})
		return run, err
	}
	// GITHUB_TOKEN cannot read organization teams (403): team membership
	// goes out with the members_token input's token, as in the Action.
	g.AddToken("tok-members", fakegithub.Identity{Login: "alice"})
	c, err := New(Options{Repo: repo, Token: "tok-bot", BaseURL: g.URL(), Now: clock.Now, Sleep: clock.Sleep,
		MinMutationGap: -1, BotLogin: fakegithub.ActionsBotLogin, AppID: fakegithub.ActionsAppID, MembersToken: "tok-members"})
	must(err)

	drivers := adapterDrivers(w)
	ct := reflect.TypeOf(c)
	for i := 0; i < ct.NumMethod(); i++ {
		name := ct.Method(i).Name
		if _, ok := drivers[name]; !ok && !slices.Contains(noCalls, name) {
			t.Errorf("Client.%s has no driver in adapterDrivers (or entry in noCalls): its API calls are not checked against the permissions", name)
		}
	}
	used := map[endpoint][]string{}
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		before := len(g.Requests())
		if err := drivers[name](context.Background(), c); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		reqs := g.Requests()[before:]
		if len(reqs) == 0 {
			t.Errorf("%s made no request", name)
		}
		for _, q := range reqs {
			path := q.Path
			if path == "/graphql" && strings.Contains(q.Body, "pinIssue(") {
				path += "#pinIssue"
			}
			e, ok := match(q.Method, path)
			if !ok {
				t.Errorf("%s calls %s %s, which is not in the endpoint table: add it with the permission GitHub's documentation names", name, q.Method, q.Path)
				continue
			}
			if !slices.Contains(used[e], name) {
				used[e] = append(used[e], name)
			}
		}
	}

	manifest, table := appPermissions(t)
	for perm, level := range manifest {
		if table[perm] != level {
			t.Errorf("docs/app.md: the manifest grants %s: %s, its permission table %q", perm, level, table[perm])
		}
	}
	for perm, level := range table {
		if manifest[perm] != level {
			t.Errorf("docs/app.md: the permission table grants %s: %s, the manifest %q", perm, level, manifest[perm])
		}
	}
	workflow := workflowPermissions(t)
	for e, by := range used {
		if !grants(manifest[e.Perm], e.Access) {
			t.Errorf("%s %s (%s) needs %s: %s; the App manifest in docs/app.md grants %q", e.Method, e.Path, strings.Join(by, ", "), e.Perm, e.Access, manifest[e.Perm])
		}
		// GITHUB_TOKEN always has metadata: read; it is no workflow scope.
		// Nor is members (an organization permission GITHUB_TOKEN never
		// has): in Action mode team reads go out with the members_token
		// input, and without it a team read fails closed, the reply naming
		// the permission and the input.
		scope := strings.ReplaceAll(e.Perm, "_", "-")
		// Nor is deployments: only the App answers protection rules (the
		// Action's gate job reads the issue; docs/deploy-gate.md).
		if e.Perm != "metadata" && e.Perm != "members" && e.Perm != "deployments" && !grants(workflow[scope], e.Access) {
			t.Errorf("%s %s (%s) needs %s: %s; the workflow's permissions: in docs/examples/autopilot.yml grant %q", e.Method, e.Path, strings.Join(by, ", "), scope, e.Access, workflow[scope])
		}
	}
	for _, e := range endpoints {
		if _, ok := used[e]; !ok {
			t.Errorf("%s %s is in the endpoint table but no driver called it: remove the row or drive the method that calls it", e.Method, e.Path)
		}
	}
}

// grants reports whether level (read, write, "") covers need.
func grants(level, need string) bool {
	return level == need || level == "write" && need == "read"
}

// appPermissions parses docs/app.md: the manifest's default_permissions and
// the permission table of section 1, keyed by the manifest's names.
func appPermissions(t *testing.T) (manifest, table map[string]string) {
	t.Helper()
	doc := readDoc(t, "docs", "app.md")
	blocks := regexp.MustCompile("(?ms)^```json\n(.*?)^```").FindAllSubmatch(doc, -1)
	for _, b := range blocks {
		if !bytes.Contains(b[1], []byte(`"default_permissions"`)) {
			continue
		}
		var m struct {
			Perms map[string]string `json:"default_permissions"`
		}
		if err := json.Unmarshal(b[1], &m); err != nil {
			t.Fatalf("docs/app.md: the manifest does not parse: %v", err)
		}
		manifest = m.Perms
	}
	if manifest == nil {
		t.Fatal("docs/app.md: no manifest with default_permissions")
	}
	names := map[string]string{"Issues": "issues", "Pull requests": "pull_requests", "Actions": "actions", "Checks": "checks",
		"Contents": "contents", "Metadata": "metadata", "Commit statuses": "statuses", "Members": "members", "Deployments": "deployments"}
	levels := map[string]string{"read": "read", "read & write": "write"}
	table = map[string]string{}
	row := regexp.MustCompile(`(?m)^\| ([A-Z][a-z ]+) \| (read|read & write) \|`)
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		perm, ok := names[m[1]]
		if !ok {
			t.Errorf("docs/app.md: permission table row %q: not a permission this test knows", m[1])
			continue
		}
		table[perm] = levels[m[2]]
	}
	return manifest, table
}

// workflowPermissions parses the permissions: of the documented workflow.
func workflowPermissions(t *testing.T) map[string]string {
	t.Helper()
	var wf struct {
		Permissions map[string]string `yaml:"permissions"`
	}
	if err := yaml.Unmarshal(readDoc(t, "docs", "examples", "autopilot.yml"), &wf); err != nil {
		t.Fatalf("docs/examples/autopilot.yml: %v", err)
	}
	if len(wf.Permissions) == 0 {
		t.Fatal("docs/examples/autopilot.yml: no permissions: block")
	}
	return wf.Permissions
}

// readDoc reads a file of the repository from this package's directory.
func readDoc(t *testing.T, parts ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", ".."}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
