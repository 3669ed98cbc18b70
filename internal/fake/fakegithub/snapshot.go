package fakegithub

import (
	"maps"
	"slices"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

// Snapshot types: copies of the fake's state for assertions. Mutating them
// changes nothing in the server.

// Issue is an issue or pull request.
type Issue struct {
	Number    int
	Title     string
	Body      string
	State     string
	Author    forge.User
	Labels    []string
	IsPR      bool
	Comments  int // live comments
	CreatedAt time.Time
	UpdatedAt time.Time
	ClosedAt  time.Time
	Pinned    bool // pinned above the repository's issue list
}

// Comment is an issue comment, deleted ones included.
type Comment struct {
	ID        int64
	Repo      string
	Issue     int
	Author    forge.User
	AppID     int64 // performed_via_github_app.id, 0 for none
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
	Deleted   bool
	DeletedAt time.Time
	// Edits is the edit history, oldest first.
	Edits []Edit
}

// Edit is one change of a comment's body.
type Edit struct {
	Editor forge.User
	AppID  int64 // the App the editor acted through, 0 for none
	At     time.Time
	Before string
	After  string
}

// Reaction is a reaction on a comment.
type Reaction struct {
	ID        int64
	User      forge.User
	Content   string
	CreatedAt time.Time
}

// WorkflowRun is a run created by a workflow dispatch.
type WorkflowRun struct {
	ID           int64
	Workflow     string // .github/workflows/<file>
	RunNumber    int
	DisplayTitle string
	Ref          string
	HeadSHA      string
	Inputs       map[string]string
	Actor        string
	Status       string
	Conclusion   string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

func (u *user) snap() forge.User { return forge.User{Login: u.login, ID: u.id, Type: u.typ} }

func (is *issue) snap() Issue {
	out := Issue{Number: is.number, Title: is.title, Body: is.body, State: is.state,
		Author: is.user.snap(), Labels: labelNamesOf(is), IsPR: is.pull != nil,
		CreatedAt: is.created, UpdatedAt: is.updated, ClosedAt: is.closed, Pinned: is.pinned}
	for _, c := range is.comments {
		if !c.deleted {
			out.Comments++
		}
	}
	return out
}

func (c *comment) snap() Comment {
	return Comment{ID: c.id, Repo: c.repo.fullName(), Issue: c.issue, Author: c.user.snap(),
		AppID: c.appID, Body: c.body, CreatedAt: c.created, UpdatedAt: c.updated,
		Deleted: c.deleted, DeletedAt: c.deletedAt, Edits: slices.Clone(c.edits)}
}

func (rn *run) snap() WorkflowRun {
	return WorkflowRun{ID: rn.id, Workflow: rn.wf.file, RunNumber: rn.number, DisplayTitle: rn.title,
		Ref: rn.ref, HeadSHA: rn.sha, Inputs: maps.Clone(rn.inputs), Actor: rn.actor.login,
		Status: rn.status, Conclusion: rn.conclusion, CreatedAt: rn.created, UpdatedAt: rn.updated}
}

// Issue returns the issue (or pull request) n of repo.
func (s *Server) Issue(repo string, n int) (Issue, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, err := s.issueLocked(repo, n)
	if err != nil {
		return Issue{}, false
	}
	return is.snap(), true
}

// Comments returns the live comments of an issue, oldest first.
func (s *Server) Comments(repo string, n int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, err := s.issueLocked(repo, n)
	if err != nil {
		return nil
	}
	var out []Comment
	for _, c := range is.comments {
		if !c.deleted {
			out = append(out, c.snap())
		}
	}
	return out
}

// Comment returns a comment by id, deleted or not.
func (s *Server) Comment(id int64) (Comment, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.comments[id]
	if c == nil {
		return Comment{}, false
	}
	return c.snap(), true
}

// Labels returns the label names on an issue, in the order they were added.
func (s *Server) Labels(repo string, n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, err := s.issueLocked(repo, n)
	if err != nil {
		return nil
	}
	return labelNamesOf(is)
}

// RepoLabels returns the repository's label definitions, in creation order.
func (s *Server) RepoLabels(repo string) []forge.Label {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoLocked(repo)
	if err != nil {
		return nil
	}
	out := make([]forge.Label, len(rp.labels))
	for i, l := range rp.labels {
		out[i] = forge.Label{Name: l.name, Color: l.color, Description: l.description}
	}
	return out
}

// Reactions returns the reactions on a comment, oldest first.
func (s *Server) Reactions(commentID int64) []Reaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.comments[commentID]
	if c == nil {
		return nil
	}
	out := make([]Reaction, len(c.reactions))
	for i, r := range c.reactions {
		out[i] = Reaction{ID: r.id, User: r.user.snap(), Content: r.content, CreatedAt: r.created}
	}
	return out
}

// Runs returns the workflow runs of repo, oldest first.
func (s *Server) Runs(repo string) []WorkflowRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoLocked(repo)
	if err != nil {
		return nil
	}
	out := make([]WorkflowRun, len(rp.runs))
	for i, rn := range rp.runs {
		out[i] = rn.snap()
	}
	return out
}
