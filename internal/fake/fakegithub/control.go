package fakegithub

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
)

// The Go control API: tests seed and change state directly, as GitHub's
// users would through the web UI. Mutations here are not in the request log.

func (s *Server) repoLocked(full string) (*repository, error) {
	rp := s.repos[strings.ToLower(full)]
	if rp == nil {
		return nil, fmt.Errorf("fakegithub: unknown repository %q (call AddRepo)", full)
	}
	return rp, nil
}

// inRepo runs f on a repository under the lock.
func (s *Server) inRepo(full string, f func(*repository) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoLocked(full)
	if err != nil {
		return err
	}
	return f(rp)
}

func (s *Server) issueLocked(full string, n int) (*issue, error) {
	rp, err := s.repoLocked(full)
	if err != nil {
		return nil, err
	}
	is := rp.issues[n]
	if is == nil {
		return nil, fmt.Errorf("fakegithub: %s has no issue #%d", full, n)
	}
	return is, nil
}

// AddRepo creates a public repository "owner/name" with default branch
// main. The owner becomes a User account unless AddUser registered it.
func (s *Server) AddRepo(fullName string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, name, found := strings.Cut(fullName, "/")
	if !found || owner == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("fakegithub: repository %q is not owner/name", fullName)
	}
	if s.repos[strings.ToLower(fullName)] != nil {
		return fmt.Errorf("fakegithub: repository %q exists", fullName)
	}
	s.user(owner, "") // a personal account unless AddUser registered it first
	s.repos[strings.ToLower(fullName)] = &repository{
		id: s.newID(), owner: owner, name: name, defaultBranch: "main",
		issues: map[int]*issue{}, perms: map[string]access.Level{}, assoc: map[string]string{},
		files: map[string][]byte{}, checks: map[string][]*checkRun{}, statuses: map[string][]*status{},
	}
	return nil
}

// SetRepo changes a repository's visibility and default branch ("" keeps it).
func (s *Server) SetRepo(fullName string, private bool, defaultBranch string) error {
	return s.inRepo(fullName, func(rp *repository) error {
		rp.private = private
		if defaultBranch != "" {
			rp.defaultBranch = defaultBranch
		}
		return nil
	})
}

func (s *Server) newIssue(rp *repository, author, title, body string, labels []string) (*issue, error) {
	now := s.now()
	rp.lastNumber++
	is := &issue{id: s.newID(), number: rp.lastNumber, title: title, body: body, state: "open",
		user: s.user(author, ""), created: now, updated: now}
	if rep, bad := s.setLabels(rp, is, labels, ""); bad {
		rp.lastNumber--
		return nil, fmt.Errorf("fakegithub: invalid labels %q: %v", labels, rep.body)
	}
	rp.issues[is.number] = is
	return is, nil
}

// CreateIssue opens an issue by author and returns its number. Missing
// repository labels are created like GitHub does.
func (s *Server) CreateIssue(repo, author, title, body string, labels []string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoLocked(repo)
	if err != nil {
		return 0, err
	}
	is, err := s.newIssue(rp, author, title, body, labels)
	if err != nil {
		return 0, err
	}
	return is.number, nil
}

// CreatePull opens a pull request from headRef at headSHA into the default
// branch and returns its number (shared with issues, as on GitHub).
func (s *Server) CreatePull(repo, author, title, body, headRef, headSHA string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoLocked(repo)
	if err != nil {
		return 0, err
	}
	is, err := s.newIssue(rp, author, title, body, nil)
	if err != nil {
		return 0, err
	}
	is.pull = &pullInfo{id: s.newID(), headRef: headRef, headSHA: headSHA, baseRef: rp.defaultBranch}
	return is.number, nil
}

// CreateForkPull opens a pull request into repo from headRef at headSHA of
// the fork fork ("owner/name", created on first use, "fork": true), as
// someone without access to repo would, and returns its number.
func (s *Server) CreateForkPull(repo, fork, author, title, body, headRef, headSHA string) (int, error) {
	s.mu.Lock()
	fr := s.repos[strings.ToLower(fork)]
	s.mu.Unlock()
	if fr == nil {
		if err := s.AddRepo(fork); err != nil {
			return 0, err
		}
	}
	n, err := s.CreatePull(repo, author, title, body, headRef, headSHA)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fr = s.repos[strings.ToLower(fork)]
	fr.fork = true
	is, _ := s.issueLocked(repo, n)
	is.pull.headRepo = fr
	return n, nil
}

// PushPull moves a pull request's head to sha, as a push to its branch
// does (reviews keep the commit they were given on).
func (s *Server) PushPull(repo string, n int, sha string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, err := s.issueLocked(repo, n)
	if err != nil || is.pull == nil {
		return fmt.Errorf("fakegithub: %s has no pull request #%d", repo, n)
	}
	is.pull.headSHA = sha
	is.updated = s.now()
	return nil
}

// SetBody replaces an issue's or pull request's description, as its
// author (or anyone with write access) does in the web UI.
func (s *Server) SetBody(repo string, n int, body string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, err := s.issueLocked(repo, n)
	if err != nil {
		return err
	}
	is.body = body
	is.updated = s.now()
	return nil
}

// DismissReview dismisses review id of pull request pr: its state becomes
// DISMISSED, as PUT .../reviews/{id}/dismissals does.
func (s *Server) DismissReview(repo string, pr int, id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, err := s.issueLocked(repo, pr)
	if err != nil || is.pull == nil {
		return fmt.Errorf("fakegithub: %s has no pull request #%d", repo, pr)
	}
	for _, r := range is.pull.reviews {
		if r.id == id {
			r.state = "DISMISSED"
			return nil
		}
	}
	return fmt.Errorf("fakegithub: pull request #%d has no review %d", pr, id)
}

// SetIssueState opens or closes an issue or pull request; merged applies
// to pull requests being closed.
func (s *Server) SetIssueState(repo string, n int, state string, merged bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, err := s.issueLocked(repo, n)
	if err != nil {
		return err
	}
	if state != "open" && state != "closed" {
		return fmt.Errorf("fakegithub: state %q is not open or closed", state)
	}
	now := s.now()
	is.state, is.updated, is.closed = state, now, time.Time{}
	if state == "closed" {
		is.closed = now
		if merged && is.pull != nil {
			is.pull.merged, is.pull.mergedAt = true, now
		}
	}
	return nil
}

// AddComment posts a comment as login (created as a User when unknown). A
// "<slug>[bot]" login of a registered App, or github-actions[bot], posts
// through its App, so the comment carries performed_via_github_app.
func (s *Server) AddComment(repo string, n int, login, body string) (Comment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, err := s.issueLocked(repo, n)
	if err != nil {
		return Comment{}, err
	}
	u := s.user(login, "")
	return s.addComment(s.repos[strings.ToLower(repo)], is, u, u.appID, body).snap(), nil
}

// EditComment changes a comment's body as editor (anyone: GitHub lets
// users with write access edit other people's comments).
func (s *Server) EditComment(id int64, editor, body string) (Comment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.comments[id]
	if c == nil || c.deleted {
		return Comment{}, fmt.Errorf("fakegithub: no comment %d", id)
	}
	u := s.user(editor, "")
	s.edit(c, u, u.appID, body)
	return c.snap(), nil
}

// DeleteComment deletes a comment.
func (s *Server) DeleteComment(id int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.comments[id]
	if c == nil || c.deleted {
		return fmt.Errorf("fakegithub: no comment %d", id)
	}
	s.remove(c)
	return nil
}

// SetPermission gives login a role on repo (creating the user if needed).
// The collaborator API reports maintain as write and triage as read, with
// the role in role_name.
func (s *Server) SetPermission(repo, login string, perm access.Level) error {
	return s.inRepo(repo, func(rp *repository) error {
		if _, err := access.Parse(string(perm)); err != nil {
			return fmt.Errorf("fakegithub: %w", err)
		}
		s.user(login, "")
		rp.perms[strings.ToLower(login)] = perm
		return nil
	})
}

// SetAssociation overrides author_association for login on repo (e.g.
// "MEMBER" or "CONTRIBUTOR"); "" restores the computed value.
func (s *Server) SetAssociation(repo, login, assoc string) error {
	return s.inRepo(repo, func(rp *repository) error {
		rp.assoc[strings.ToLower(login)] = assoc
		return nil
	})
}

// AddLabel defines a repository label.
func (s *Server) AddLabel(repo, name, color, description string) error {
	return s.inRepo(repo, func(rp *repository) error {
		in := labelInput{Name: &name, Color: &color, Description: &description}
		if rep, bad := in.check(""); bad || rp.label(name) != nil {
			return fmt.Errorf("fakegithub: label %q exists or is invalid: %v", name, rep.body)
		}
		l := s.newLabel(rp, name)
		l.color, l.description = strings.TrimPrefix(color, "#"), description
		return nil
	})
}

// SetFile stores a file on the default branch; nil content deletes it.
func (s *Server) SetFile(repo, path string, content []byte) error {
	return s.inRepo(repo, func(rp *repository) error {
		path = strings.Trim(path, "/")
		if content == nil {
			delete(rp.files, path)
			return nil
		}
		rp.files[path] = slices.Clone(content)
		return nil
	})
}

// AddCheckRun adds a check run on sha and returns its id. Status is
// queued, in_progress or completed; conclusion is set when completed.
func (s *Server) AddCheckRun(repo, sha, name, status, conclusion string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoLocked(repo)
	if err != nil {
		return 0, err
	}
	now := s.now()
	cr := &checkRun{id: s.newID(), name: name, status: status, conclusion: conclusion, started: now}
	if status == "completed" {
		cr.completed = now
	}
	rp.checks[sha] = append(rp.checks[sha], cr)
	return cr.id, nil
}

// AddStatus adds a commit status (error, failure, pending or success).
func (s *Server) AddStatus(repo, sha, context, state string) error {
	return s.inRepo(repo, func(rp *repository) error {
		rp.statuses[sha] = append(rp.statuses[sha], &status{id: s.newID(), context: context, state: state, created: s.now()})
		return nil
	})
}

// SubmitReview records a review by login on pull request pr with state
// APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED or PENDING.
func (s *Server) SubmitReview(repo string, pr int, login, state, body string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, err := s.issueLocked(repo, pr)
	if err != nil || is.pull == nil {
		return 0, fmt.Errorf("fakegithub: %s has no pull request #%d", repo, pr)
	}
	return s.addReview(is, s.user(login, ""), state, body, "").id, nil
}

// SetWorkflow configures a workflow file: its name and run-name pattern
// (e.g. "autopilot ${{ inputs.session }}"; "" shows the name instead).
func (s *Server) SetWorkflow(repo, file, name, runName string) error {
	return s.inRepo(repo, func(rp *repository) error {
		wf := s.workflow(rp, file, true)
		if wf == nil {
			return fmt.Errorf("fakegithub: workflow %q must be a .yml or .yaml file", file)
		}
		wf.name, wf.runName = name, runName
		return nil
	})
}

// AddForkRun records a run of workflow file (created on first use) that a
// pull_request event from fork ("owner/name", created on first use, "fork":
// true) started: GitHub runs the fork's copy of the workflow, so its
// run-name, and so its display title, is whatever the fork wrote (title).
// It returns the run's id.
func (s *Server) AddForkRun(repo, file, fork, title, headSHA string) (int64, error) {
	s.mu.Lock()
	fr := s.repos[strings.ToLower(fork)]
	s.mu.Unlock()
	if fr == nil {
		if err := s.AddRepo(fork); err != nil {
			return 0, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoLocked(repo)
	if err != nil {
		return 0, err
	}
	fr = s.repos[strings.ToLower(fork)]
	fr.fork = true
	wf := s.workflow(rp, file, true)
	if wf == nil {
		return 0, fmt.Errorf("fakegithub: %q is not a workflow file", file)
	}
	now := s.now()
	wf.runs++
	owner := s.user(fr.owner, "")
	rn := &run{id: s.newID(), repo: rp, wf: wf, number: wf.runs, ref: "patch-1", sha: headSHA, title: title,
		inputs: map[string]string{}, actor: owner, status: "queued", created: now, updated: now, event: "pull_request", headRepo: fr}
	rp.runs = append(rp.runs, rn)
	s.runs[rn.id] = rn
	return rn.id, nil
}

// StartRun marks a run in_progress.
func (s *Server) StartRun(id int64) error { return s.setRun(id, "in_progress", "") }

// CompleteRun marks a run completed with a conclusion (success, failure,
// cancelled, ...).
func (s *Server) CompleteRun(id int64, conclusion string) error {
	return s.setRun(id, "completed", conclusion)
}

func (s *Server) setRun(id int64, status, conclusion string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rn := s.runs[id]
	if rn == nil {
		return fmt.Errorf("fakegithub: no workflow run %d", id)
	}
	rn.status, rn.conclusion, rn.updated = status, conclusion, s.now()
	return nil
}

// React adds login's reaction to a comment (once per user and content, as
// on GitHub).
func (s *Server) React(id int64, login, content string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.comments[id]
	if c == nil || c.deleted {
		return fmt.Errorf("fakegithub: no comment %d", id)
	}
	if !slices.Contains(reactionContents, content) {
		return fmt.Errorf("fakegithub: unknown reaction %q", content)
	}
	u := s.user(login, "")
	for _, r := range c.reactions {
		if r.user == u && r.content == content {
			return nil
		}
	}
	c.reactions = append(c.reactions, &reaction{id: s.newID(), user: u, content: content, created: s.now()})
	return nil
}
