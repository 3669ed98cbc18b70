package fakegithub

import (
	"crypto/rsa"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
)

// Internal state. Every field is guarded by Server.mu; nothing here escapes
// the package except through the snapshot types in snapshot.go.

type user struct {
	login string
	id    int64
	typ   string // User, Bot, Organization
	appID int64  // for "<slug>[bot]" accounts: the App they act for
}

type label struct {
	id          int64
	name        string
	color       string
	description string
	isDefault   bool
}

type reaction struct {
	id      int64
	user    *user
	content string
	created time.Time
}

type comment struct {
	id        int64
	repo      *repository
	issue     int
	user      *user
	appID     int64
	body      string
	created   time.Time
	updated   time.Time
	deleted   bool
	deletedAt time.Time
	edits     []Edit
	reactions []*reaction
}

type pullInfo struct {
	id                        int64
	headRef, headSHA, baseRef string
	// headRepo is the fork the head branch lives in; nil for a branch of
	// the base repository.
	headRepo *repository
	merged   bool
	mergedAt time.Time
	draft    bool
	reviews  []*review
}

type review struct {
	id        int64
	user      *user
	state     string
	body      string
	commitID  string
	submitted time.Time
}

type issue struct {
	id       int64
	number   int
	title    string
	body     string
	state    string
	user     *user
	labels   []*label
	comments []*comment
	created  time.Time
	updated  time.Time
	closed   time.Time
	pull     *pullInfo // nil for plain issues
	pinned   bool      // pinned above the issue list (pins.go)
	// appID is the App whose token created the issue through the API
	// (performed_via_github_app); 0 for people and the control API.
	appID int64
}

type checkRun struct {
	id                 int64
	name               string
	status, conclusion string
	started, completed time.Time
	// Set when written through the API (checkruns.go); appID 0 is a run
	// added by the control API, shown as GitHub Actions'.
	externalID, detailsURL string
	title, summary         string
	actions                []CheckRunAction
	appID                  int64
}

type status struct {
	id      int64
	context string
	state   string
	created time.Time
}

type workflow struct {
	id      int64
	file    string
	name    string
	runName string
	runs    int
}

type run struct {
	id         int64
	repo       *repository
	wf         *workflow
	number     int
	title      string
	ref        string
	sha        string
	inputs     map[string]string
	actor      *user
	status     string
	conclusion string
	created    time.Time
	updated    time.Time
	// event is what triggered the run ("" means workflow_dispatch);
	// headRepo is the fork its head came from (nil: the repository).
	event    string
	headRepo *repository
}

type repository struct {
	id            int64
	owner         string
	name          string
	private       bool
	defaultBranch string
	issues        map[int]*issue
	lastNumber    int
	labels        []*label
	perms         map[string]access.Level // lower login
	assoc         map[string]string       // lower login -> author_association override
	files         map[string][]byte
	checks        map[string][]*checkRun
	// job is the workflow job whose own check run GitHub attaches to each
	// run's commit (SetWorkflowJob; nil: none modelled).
	job       *WorkflowJob
	statuses  map[string][]*status
	workflows []*workflow
	runs      []*run
	// fork: created as a fork (CreateForkPull); "fork": true in its JSON.
	fork bool
	// gone are deleted issues (nil) and transferred ones (where to), by
	// number (gone.go).
	gone map[int]*movedIssue
}

func (r *repository) fullName() string { return r.owner + "/" + r.name }

func (r *repository) label(name string) *label {
	for _, l := range r.labels {
		if strings.EqualFold(l.name, name) {
			return l
		}
	}
	return nil
}

type app struct {
	id            int64
	slug          string
	name          string
	key           *rsa.PublicKey
	bot           *user
	installations []*installation
	created       time.Time
}

type installation struct {
	id      int64
	app     *app
	account string
	repos   []string // full names; empty means every repo of account
}

func (in *installation) covers(fullName string) bool {
	if len(in.repos) == 0 {
		owner, _, _ := strings.Cut(fullName, "/")
		return strings.EqualFold(owner, in.account)
	}
	for _, r := range in.repos {
		if strings.EqualFold(r, fullName) {
			return true
		}
	}
	return false
}

// token is a registered credential and its own rate-limit window (GraphQL
// is budgeted apart from REST, x-ratelimit-resource: graphql, in the same
// hourly window). With Limits on, an installation's tokens spend their
// installation's budget instead (budgetOf).
type token struct {
	id  Identity
	own budget
}
