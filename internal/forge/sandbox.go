package forge

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
)

// Sandbox is a faithful in-memory Forge for one repository: issue and
// comment ids, timestamps from an injected clock, authors with their
// account type, repository permissions, label rules (labels must exist or
// are created grey, names ≤ 50 characters), reactions, files, PRs, reviews,
// checks and workflow runs. It counts every call by kind. It is what
// `bot demo` and the core tests run on; it answers only what its state
// says, never what a caller wishes.
type Sandbox struct {
	mu       sync.Mutex
	repo     string
	now      func() time.Time
	nextID   int64
	issues   map[int]*sbIssue
	comments map[int64]*Comment
	order    []int64
	labels   map[string]Label
	perms    map[string]access.Level
	users    map[string]User
	files    map[string][]byte
	pulls    map[int]*Pull
	reviews  map[int][]Review
	checks   map[string][]Check
	// created are the check runs the bot created, by head commit.
	created map[string][]sbCheckRun
	runs    []WorkflowRun
	deploys []DeployCall // protection-rule answers and reports (sandbox_deploy.go)
	// approvals are the environment page's decisions by run.
	approvals map[int64][]DeploymentApproval
	reacts    map[int64][]string
	calls     map[string]int
	// Identity is the account the sandbox acts as (the bot).
	Identity User
	// AppID marks comments made by the sandbox with performed_via_github_app.
	AppID int64
	// Fail makes the next call of a kind ("POST comment", ...) fail with err.
	fail map[string][]error
	// OnChange is called (without the lock) after every mutation, so a
	// transcript printer can show comments and label changes as they happen.
	OnChange func(Change)
	// sub holds sub-issues and dependencies (sandbox_subissues.go).
	sub *sbSubs
}

// Change describes one mutation of the sandbox.
type Change struct {
	Kind    string // comment, edit, label+, label-, react, dispatch, deployment-rule
	Issue   int
	Comment *Comment
	Label   string
	Content string
	Actor   string
	At      time.Time
}

type sbIssue struct {
	Issue
	labels []string
	// updated is GitHub's updated_at: a label, a comment or closing moves
	// it (ListLabeled's since reads it); zero means CreatedAt.
	updated time.Time
}

// updatedAt is when the issue last changed.
func (is *sbIssue) updatedAt() time.Time {
	if is.updated.IsZero() {
		return is.CreatedAt
	}
	return is.updated
}

// NewSandbox creates an empty repository "owner/name" acting as bot.
func NewSandbox(repo string, bot User, now func() time.Time) *Sandbox {
	return &Sandbox{
		repo: repo, now: now, nextID: 1000, Identity: bot,
		issues: map[int]*sbIssue{}, comments: map[int64]*Comment{}, labels: map[string]Label{},
		perms: map[string]access.Level{}, users: map[string]User{}, files: map[string][]byte{},
		pulls: map[int]*Pull{}, reviews: map[int][]Review{}, checks: map[string][]Check{},
		reacts: map[int64][]string{}, calls: map[string]int{}, fail: map[string][]error{},
	}
}

// Repo returns "owner/name".
func (s *Sandbox) Repo() string { return s.repo }

func (s *Sandbox) id() int64 { s.nextID++; return s.nextID }

func (s *Sandbox) url(kind string, n int64) string {
	return fmt.Sprintf("https://github.com/%s/%s/%d", s.repo, kind, n)
}

// call counts a call and returns a scripted failure, if any.
func (s *Sandbox) call(kind string) error {
	s.calls[kind]++
	if q := s.fail[kind]; len(q) > 0 {
		s.fail[kind] = q[1:]
		return q[0]
	}
	return nil
}

func (s *Sandbox) notify(c Change) {
	if s.OnChange != nil {
		s.OnChange(c)
	}
}

// --- control API (not part of Forge) ---

// AddUser registers an account with a repository permission.
func (s *Sandbox) AddUser(u User, p access.Level) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u.ID == 0 {
		u.ID = s.id()
	}
	if u.Type == "" {
		u.Type = "User"
	}
	s.users[strings.ToLower(u.Login)] = u
	s.perms[strings.ToLower(u.Login)] = p
}

// User returns a registered account.
func (s *Sandbox) User(login string) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.users[strings.ToLower(login)]; ok {
		return u
	}
	return User{Login: login, Type: "User"}
}

// CreateIssue opens an issue as author.
func (s *Sandbox) CreateIssue(author, title, body string) Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.issues) + len(s.pulls) + 1
	is := &sbIssue{Issue: Issue{Number: n, Title: title, Body: body, State: "open", Author: s.userLocked(author), URL: s.url("issues", int64(n)), CreatedAt: s.now()}}
	s.issues[n] = is
	return is.Issue
}

// CreatePull opens a PR as author.
func (s *Sandbox) CreatePull(author, title, body, sha string) Pull {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.issues) + len(s.pulls) + 1
	p := &Pull{Number: n, Title: title, Body: body, State: "open", Author: s.userLocked(author), HeadSHA: sha, URL: s.url("pull", int64(n)), HeadRepo: s.repo}
	s.pulls[n] = p
	s.issues[n] = &sbIssue{Issue: Issue{Number: n, Title: title, Body: body, State: "open", IsPR: true, Author: p.Author, URL: p.URL, CreatedAt: s.now()}}
	return *p
}

func (s *Sandbox) userLocked(login string) User {
	if u, ok := s.users[strings.ToLower(login)]; ok {
		return u
	}
	return User{Login: login, Type: "User"}
}

// Comment posts a comment as a person (or another bot).
func (s *Sandbox) Comment(author string, issue int, body string) (Comment, error) {
	s.mu.Lock()
	c, err := s.commentLocked(s.userLocked(author), issue, body, 0)
	s.mu.Unlock()
	if err == nil {
		s.notify(Change{Kind: "comment", Issue: issue, Comment: &c, Actor: author, At: c.CreatedAt})
	}
	return c, err
}

func (s *Sandbox) commentLocked(u User, issue int, body string, app int64) (Comment, error) {
	is, ok := s.issues[issue]
	if !ok {
		return Comment{}, fmt.Errorf("issue %d: %w", issue, ErrNotFound)
	}
	if n := len([]rune(body)); n > 65536 {
		return Comment{}, fmt.Errorf("body is %d characters (maximum is 65536): %w", n, ErrValidation)
	}
	id := s.id()
	now := s.now()
	c := Comment{ID: id, IssueNumber: issue, Author: u, Body: body, CreatedAt: now, UpdatedAt: now, URL: fmt.Sprintf("https://github.com/%s/issues/%d#issuecomment-%d", s.repo, issue, id), AppID: app}
	s.comments[id] = &c
	s.order = append(s.order, id)
	is.updated = now
	return c, nil
}

// EditAs edits a comment as someone else (tampering tests).
func (s *Sandbox) EditAs(editor string, id int64, body string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.comments[id]
	if !ok {
		return ErrNotFound
	}
	c.Body = body
	c.UpdatedAt = s.now()
	return nil
}

// DeleteComment removes a comment.
func (s *Sandbox) DeleteComment(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.comments, id)
}

// LabelIssue adds a label as a person (the trigger label).
func (s *Sandbox) LabelIssue(actor string, issue int, label string) {
	s.mu.Lock()
	is := s.issues[issue]
	if is != nil {
		label = s.repoLabelLocked(label).Name
		if !containsFold(is.labels, label) {
			is.labels = append(is.labels, label)
			is.updated = s.now()
		}
	}
	s.mu.Unlock()
	s.notify(Change{Kind: "label+", Issue: issue, Label: label, Actor: actor, At: s.now()})
}

// UnlabelIssue removes a label as a person.
func (s *Sandbox) UnlabelIssue(actor string, issue int, label string) {
	s.mu.Lock()
	if is := s.issues[issue]; is != nil && containsFold(is.labels, label) {
		is.labels = removeFold(is.labels, label)
		is.updated = s.now()
	}
	s.mu.Unlock()
	s.notify(Change{Kind: "label-", Issue: issue, Label: label, Actor: actor, At: s.now()})
}

// SetFile stores a file at the default branch.
func (s *Sandbox) SetFile(path string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = append([]byte(nil), data...)
}

// AddReview submits a review on a PR.
func (s *Sandbox) AddReview(pr int, reviewer, stateName, body string) Review {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.id()
	r := Review{ID: id, PR: pr, Reviewer: s.userLocked(reviewer), State: stateName, Body: body, SubmittedAt: s.now(), URL: fmt.Sprintf("https://github.com/%s/pull/%d#pullrequestreview-%d", s.repo, pr, id)}
	if p := s.pulls[pr]; p != nil {
		r.CommitSHA = p.HeadSHA
	}
	s.reviews[pr] = append(s.reviews[pr], r)
	return r
}

// SetChecks replaces the checks of a commit.
func (s *Sandbox) SetChecks(sha string, cs ...Check) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checks[sha] = cs
}

// CompleteRun finishes a workflow run with a conclusion.
func (s *Sandbox) CompleteRun(id int64, conclusion string) (WorkflowRun, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.runs {
		if s.runs[i].ID == id {
			s.runs[i].Status, s.runs[i].Conclusion = "completed", conclusion
			return s.runs[i], true
		}
	}
	return WorkflowRun{}, false
}

// FailNext makes the next calls of a kind fail with the given errors.
func (s *Sandbox) FailNext(kind string, errs ...error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[kind] = append(s.fail[kind], errs...)
}

// Calls returns the number of calls by kind.
func (s *Sandbox) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.calls))
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

// TotalCalls is the number of calls of every kind.
func (s *Sandbox) TotalCalls() int {
	n := 0
	for _, v := range s.Calls() {
		n += v
	}
	return n
}

// Comments returns the live comments of an issue, oldest first.
func (s *Sandbox) Comments(issue int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commentsLocked(issue)
}

func (s *Sandbox) commentsLocked(issue int) []Comment {
	var out []Comment
	for _, id := range s.order {
		if c, ok := s.comments[id]; ok && c.IssueNumber == issue {
			cc := *c
			cc.Reactions = map[string]int{}
			for _, r := range s.reacts[id] {
				cc.Reactions[r]++
			}
			out = append(out, cc)
		}
	}
	return out
}

// Reactions returns the reactions on a comment.
func (s *Sandbox) Reactions(id int64) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reacts[id]...)
}

// Runs returns the workflow runs.
func (s *Sandbox) Runs() []WorkflowRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]WorkflowRun(nil), s.runs...)
}

// Snapshot returns an issue as a webhook payload would carry it, without
// counting an API call.
func (s *Sandbox) Snapshot(n int) (Issue, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, ok := s.issues[n]
	if !ok {
		return Issue{}, false
	}
	out := is.Issue
	out.Labels = append([]string(nil), is.labels...)
	return out, true
}

// --- Forge ---

// GetIssue implements Forge.
func (s *Sandbox) GetIssue(ctx context.Context, n int) (Issue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("GET issue"); err != nil {
		return Issue{}, err
	}
	is, ok := s.issues[n]
	if !ok {
		return Issue{}, fmt.Errorf("issue %d: %w", n, ErrNotFound)
	}
	out := is.Issue
	out.Labels = append([]string(nil), is.labels...)
	return out, nil
}

// ListOpenIssues implements Forge.
func (s *Sandbox) ListOpenIssues(ctx context.Context, label string) ([]Issue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("GET issues"); err != nil {
		return nil, err
	}
	var out []Issue
	for _, is := range s.issues {
		if !is.IsPR && is.State == "open" && containsFold(is.labels, label) {
			o := is.Issue
			o.Labels = append([]string(nil), is.labels...)
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

// ListComments implements Forge.
func (s *Sandbox) ListComments(ctx context.Context, n int) ([]Comment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("GET comments"); err != nil {
		return nil, err
	}
	if _, ok := s.issues[n]; !ok {
		return nil, fmt.Errorf("issue %d: %w", n, ErrNotFound)
	}
	return s.commentsLocked(n), nil
}

// GetComment implements Forge.
func (s *Sandbox) GetComment(ctx context.Context, id int64) (Comment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("GET comment"); err != nil {
		return Comment{}, err
	}
	c, ok := s.comments[id]
	if !ok {
		return Comment{}, fmt.Errorf("comment %d: %w", id, ErrNotFound)
	}
	return *c, nil
}

// CreateComment implements Forge (as the sandbox's identity).
func (s *Sandbox) CreateComment(ctx context.Context, n int, body string) (Comment, error) {
	s.mu.Lock()
	if err := s.call("POST comment"); err != nil {
		s.mu.Unlock()
		return Comment{}, err
	}
	c, err := s.commentLocked(s.Identity, n, body, s.AppID)
	s.mu.Unlock()
	if err == nil {
		s.notify(Change{Kind: "comment", Issue: n, Comment: &c, Actor: s.Identity.Login, At: c.CreatedAt})
	}
	return c, err
}

// DeleteIssueComment implements Forge (as the sandbox's identity).
func (s *Sandbox) DeleteIssueComment(ctx context.Context, id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("DELETE comment"); err != nil {
		return err
	}
	c, ok := s.comments[id]
	if !ok {
		return nil
	}
	if !strings.EqualFold(c.Author.Login, s.Identity.Login) {
		return fmt.Errorf("comment %d belongs to %s: %w", id, c.Author.Login, ErrForbidden)
	}
	delete(s.comments, id)
	return nil
}

// EditComment implements Forge (as the sandbox's identity).
func (s *Sandbox) EditComment(ctx context.Context, id int64, body string) (Comment, error) {
	s.mu.Lock()
	if err := s.call("PATCH comment"); err != nil {
		s.mu.Unlock()
		return Comment{}, err
	}
	c, ok := s.comments[id]
	if !ok {
		s.mu.Unlock()
		return Comment{}, fmt.Errorf("comment %d: %w", id, ErrNotFound)
	}
	if !strings.EqualFold(c.Author.Login, s.Identity.Login) {
		s.mu.Unlock()
		return Comment{}, fmt.Errorf("comment %d belongs to %s: %w", id, c.Author.Login, ErrForbidden)
	}
	if n := len([]rune(body)); n > 65536 {
		s.mu.Unlock()
		return Comment{}, fmt.Errorf("body is %d characters (maximum is 65536): %w", n, ErrValidation)
	}
	c.Body = body
	c.UpdatedAt = s.now()
	out := *c
	s.mu.Unlock()
	s.notify(Change{Kind: "edit", Issue: out.IssueNumber, Comment: &out, Actor: s.Identity.Login, At: out.UpdatedAt})
	return out, nil
}

// React implements Forge.
func (s *Sandbox) React(ctx context.Context, id int64, content string) error {
	s.mu.Lock()
	if err := s.call("POST reaction"); err != nil {
		s.mu.Unlock()
		return err
	}
	c, ok := s.comments[id]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("comment %d: %w", id, ErrNotFound)
	}
	switch content {
	case "+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes":
	default:
		s.mu.Unlock()
		return fmt.Errorf("reaction %q: %w", content, ErrValidation)
	}
	if contains(s.reacts[id], content) {
		s.mu.Unlock()
		return nil
	}
	s.reacts[id] = append(s.reacts[id], content)
	issue := c.IssueNumber
	s.mu.Unlock()
	s.notify(Change{Kind: "react", Issue: issue, Comment: c, Content: content, Actor: s.Identity.Login, At: s.now()})
	return nil
}

// AddLabels implements Forge; a missing repository label is created grey,
// as GitHub does, and then painted with the given colour ("PATCH label").
func (s *Sandbox) AddLabels(ctx context.Context, n int, labels []Label) error {
	s.mu.Lock()
	if err := s.call("POST labels"); err != nil {
		s.mu.Unlock()
		return err
	}
	is, ok := s.issues[n]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("issue %d: %w", n, ErrNotFound)
	}
	var added []string
	for _, l := range labels {
		if len([]rune(l.Name)) > 50 || l.Name == "" {
			s.mu.Unlock()
			return fmt.Errorf("label %q: %w", l.Name, ErrValidation)
		}
	}
	var paint []Label
	for _, l := range labels {
		if _, ok := s.labels[strings.ToLower(l.Name)]; !ok && l.Color != "" && l.Color != LabelAutoColor {
			paint = append(paint, l)
		}
		name := s.repoLabelLocked(l.Name).Name
		if !containsFold(is.labels, name) {
			is.labels = append(is.labels, name)
			is.updated = s.now()
			added = append(added, name)
		}
	}
	for _, l := range paint {
		if err := s.call("PATCH label"); err != nil {
			s.mu.Unlock()
			return err
		}
		s.labels[strings.ToLower(l.Name)] = l
	}
	s.mu.Unlock()
	for _, l := range added {
		s.notify(Change{Kind: "label+", Issue: n, Label: l, Actor: s.Identity.Login, At: s.now()})
	}
	return nil
}

// RemoveLabel implements Forge. GitHub answers 404 for a label the issue
// does not carry; like the adapter, the sandbox reports that as success.
func (s *Sandbox) RemoveLabel(ctx context.Context, n int, label string) error {
	s.mu.Lock()
	if err := s.call("DELETE label"); err != nil {
		s.mu.Unlock()
		return err
	}
	is, ok := s.issues[n]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("issue %d: %w", n, ErrNotFound)
	}
	if !containsFold(is.labels, label) {
		s.mu.Unlock()
		return nil
	}
	is.labels = removeFold(is.labels, label)
	is.updated = s.now()
	s.mu.Unlock()
	s.notify(Change{Kind: "label-", Issue: n, Label: label, Actor: s.Identity.Login, At: s.now()})
	return nil
}

// RepoLabels returns the repository's labels, sorted by name.
func (s *Sandbox) RepoLabels() []Label {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Label, 0, len(s.labels))
	for _, l := range s.labels {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// RepoLabel returns a repository label definition.
func (s *Sandbox) RepoLabel(name string) (Label, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.labels[strings.ToLower(name)]
	return l, ok
}

// Permission implements Forge.
func (s *Sandbox) Permission(ctx context.Context, login string) (access.Level, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("GET permission"); err != nil {
		return "", err
	}
	if p, ok := s.perms[strings.ToLower(login)]; ok {
		return p, nil
	}
	return access.None, nil
}

// GetPull implements Forge.
func (s *Sandbox) GetPull(ctx context.Context, n int) (Pull, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("GET pull"); err != nil {
		return Pull{}, err
	}
	p, ok := s.pulls[n]
	if !ok {
		return Pull{}, fmt.Errorf("pull %d: %w", n, ErrNotFound)
	}
	return *p, nil
}

// ListReviews implements Forge.
func (s *Sandbox) ListReviews(ctx context.Context, pr int) ([]Review, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("GET reviews"); err != nil {
		return nil, err
	}
	return append([]Review(nil), s.reviews[pr]...), nil
}

// ListChecks implements Forge.
func (s *Sandbox) ListChecks(ctx context.Context, sha string) ([]Check, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("GET checks"); err != nil {
		return nil, err
	}
	return append(append([]Check(nil), s.checks[sha]...), s.createdChecksLocked(sha)...), nil
}

// ReadFile implements Forge.
func (s *Sandbox) ReadFile(ctx context.Context, path string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("GET contents"); err != nil {
		return nil, false, err
	}
	d, ok := s.files[path]
	return append([]byte(nil), d...), ok, nil
}

// ListDir lists the names directly under a directory ("" = root).
func (s *Sandbox) ListDir(ctx context.Context, dir string) ([]string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("GET contents"); err != nil {
		return nil, false, err
	}
	prefix := strings.Trim(dir, "/")
	if prefix != "" {
		prefix += "/"
	}
	seen := map[string]bool{}
	var out []string
	for p := range s.files {
		if !strings.HasPrefix(p, prefix) {
			continue
		}
		name := strings.SplitN(strings.TrimPrefix(p, prefix), "/", 2)[0]
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, len(out) > 0 || prefix == "", nil
}

// DispatchWorkflow implements Forge: it creates a queued run titled
// "autopilot <session>" as the documented workflow template does.
func (s *Sandbox) DispatchWorkflow(ctx context.Context, workflow, ref string, inputs map[string]string) (int64, error) {
	s.mu.Lock()
	if err := s.call("POST dispatch"); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	id := s.id()
	r := WorkflowRun{ID: id, Name: workflow, DisplayTitle: "autopilot " + inputs["session"], Status: "queued", Event: "workflow_dispatch", Path: ".github/workflows/" + workflow, URL: fmt.Sprintf("https://github.com/%s/actions/runs/%d", s.repo, id), CreatedAt: s.now(), HeadRepo: s.repo}
	s.runs = append(s.runs, r)
	s.mu.Unlock()
	s.notify(Change{Kind: "dispatch", Content: r.DisplayTitle, Actor: s.Identity.Login, At: r.CreatedAt})
	return id, nil
}

// ListWorkflowRuns implements Forge.
func (s *Sandbox) ListWorkflowRuns(ctx context.Context, workflow string, since time.Time) ([]WorkflowRun, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("GET runs"); err != nil {
		return nil, err
	}
	var out []WorkflowRun
	for i := len(s.runs) - 1; i >= 0; i-- { // newest first, as GitHub lists them
		r := s.runs[i]
		if (r.Name == workflow || strings.HasSuffix(r.Path, "/"+workflow)) && !r.CreatedAt.Before(since) {
			out = append(out, r)
		}
	}
	return out, nil
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// containsFold and removeFold match label names as GitHub does, ignoring case.
func containsFold(xs []string, x string) bool {
	return slices.ContainsFunc(xs, func(v string) bool { return strings.EqualFold(v, x) })
}

func removeFold(xs []string, x string) []string {
	return slices.DeleteFunc(xs, func(v string) bool { return strings.EqualFold(v, x) })
}

// repoLabelLocked returns the repository label of that name in any case,
// creating it grey as GitHub does when an issue is given a label the
// repository lacks. Labels are keyed by their lower-case name.
func (s *Sandbox) repoLabelLocked(name string) Label {
	if l, ok := s.labels[strings.ToLower(name)]; ok {
		return l
	}
	l := Label{Name: name, Color: LabelAutoColor}
	s.labels[strings.ToLower(name)] = l
	return l
}

var _ Forge = (*Sandbox)(nil)
