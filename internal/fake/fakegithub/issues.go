package fakegithub

import (
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// maxBodyChars is GitHub's limit on issue and comment bodies, in characters.
const maxBodyChars = 65536

const (
	docIssues   = "https://docs.github.com/rest/issues/issues"
	docComments = "https://docs.github.com/rest/issues/comments"
	docReact    = "https://docs.github.com/rest/reactions/reactions#create-reaction-for-an-issue-comment"
)

var reactionContents = []string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}

// issue resolves {number} in c.repo; nil means 404.
func (c *call) issue() *issue {
	n, ok := c.intParam("number")
	if !ok {
		return nil
	}
	return c.repo.issues[int(n)]
}

func tooLong(resource, doc, body string) (reply, bool) {
	if utf8.RuneCountInString(body) <= maxBodyChars {
		return reply{}, false
	}
	return validation(doc, fieldError{"resource": resource, "code": "custom", "field": "body",
		"message": "body is too long (maximum is 65536 characters)"}), true
}

func (s *Server) getIssue(c *call) reply {
	is := c.issue()
	if is == nil {
		return notFound()
	}
	return ok(s.issueJSON(c.repo, is))
}

// listIssues serves GET /repos/{o}/{r}/issues: state, labels, since, sort,
// direction; pull requests are included, as on GitHub.
func (s *Server) listIssues(c *call) reply {
	state := c.query.Get("state")
	if state == "" {
		state = "open"
	}
	var want []string
	for _, l := range strings.Split(c.query.Get("labels"), ",") {
		if l = strings.TrimSpace(l); l != "" {
			want = append(want, l)
		}
	}
	since, _ := time.Parse(time.RFC3339, c.query.Get("since"))
	var list []*issue
	for _, is := range c.repo.issues {
		if (state != "all" && is.state != state) || is.updated.Before(since) || !hasAll(is, want) {
			continue
		}
		list = append(list, is)
	}
	key := func(is *issue) time.Time { return is.created }
	if c.query.Get("sort") == "updated" {
		key = func(is *issue) time.Time { return is.updated }
	}
	asc := c.query.Get("direction") == "asc"
	slices.SortFunc(list, func(a, b *issue) int {
		d := key(a).Compare(key(b))
		if d == 0 {
			d = a.number - b.number
		}
		if asc {
			return d
		}
		return -d
	})
	return paged(s, c, list, func(is *issue) obj { return s.issueJSON(c.repo, is) })
}

func hasAll(is *issue, names []string) bool {
	for _, n := range names {
		if !slices.ContainsFunc(is.labels, func(l *label) bool { return strings.EqualFold(l.name, n) }) {
			return false
		}
	}
	return true
}

func (s *Server) patchIssue(c *call) reply {
	is := c.issue()
	if is == nil {
		return notFound()
	}
	var in struct {
		Title  *string   `json:"title"`
		Body   *string   `json:"body"`
		State  *string   `json:"state"`
		Labels *[]string `json:"labels"`
	}
	if rep, ok := c.decode(&in); !ok {
		return rep
	}
	if in.Body != nil {
		if rep, bad := tooLong("Issue", docIssues+"#update-an-issue", *in.Body); bad {
			return rep
		}
	}
	if in.State != nil && *in.State != "open" && *in.State != "closed" {
		return validation(docIssues+"#update-an-issue",
			fieldError{"resource": "Issue", "code": "invalid", "field": "state", "value": *in.State})
	}
	if in.Labels != nil {
		if rep, bad := s.setLabels(c.repo, is, *in.Labels, docIssues+"#update-an-issue"); bad {
			return rep
		}
	}
	now := s.now()
	if in.Title != nil {
		is.title = *in.Title
	}
	if in.Body != nil {
		is.body = *in.Body
	}
	if in.State != nil && *in.State != is.state {
		is.state = *in.State
		is.closed = time.Time{}
		if is.state == "closed" {
			is.closed = now
		}
	}
	is.updated = now
	return ok(s.issueJSON(c.repo, is))
}

// listComments serves an issue's comments oldest first, filtered by since
// (updated_at at or after it).
func (s *Server) listComments(c *call) reply {
	is := c.issue()
	if is == nil {
		return notFound()
	}
	var since time.Time
	if v := c.query.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return validation(docComments, fieldError{"resource": "IssueComment", "code": "invalid", "field": "since"})
		}
		since = t
	}
	var list []*comment
	for _, cm := range is.comments {
		if !cm.deleted && !cm.updated.Before(since) {
			list = append(list, cm)
		}
	}
	return paged(s, c, list, s.commentJSON)
}

func (s *Server) createComment(c *call) reply {
	is := c.issue()
	if is == nil {
		return notFound()
	}
	body, rep, good := c.commentBody(docComments + "#create-an-issue-comment")
	if !good {
		return rep
	}
	cm := s.addComment(c.repo, is, c.who, c.tok.id.AppID, body)
	rep = created(s.commentJSON(cm))
	rep.set("Location", s.api("/repos/%s/issues/comments/%d", c.repo.fullName(), cm.id))
	return rep
}

// commentBody decodes and validates {"body": ...} of a comment create or
// edit: required, non-empty, at most 65,536 characters.
func (c *call) commentBody(doc string) (string, reply, bool) {
	var in struct {
		Body *string `json:"body"`
	}
	if rep, good := c.decode(&in); !good {
		return "", rep, false
	}
	if in.Body == nil || *in.Body == "" {
		return "", validation(doc, fieldError{"resource": "IssueComment", "code": "missing_field", "field": "body"}), false
	}
	if rep, bad := tooLong("IssueComment", doc, *in.Body); bad {
		return "", rep, false
	}
	return *in.Body, reply{}, true
}

// comment resolves {id} to a live comment of c.repo; nil means 404.
func (s *Server) comment(c *call) *comment {
	id, ok := c.intParam("id")
	if !ok {
		return nil
	}
	cm := s.comments[id]
	if cm == nil || cm.deleted || cm.repo != c.repo {
		return nil
	}
	return cm
}

func (s *Server) getComment(c *call) reply {
	cm := s.comment(c)
	if cm == nil {
		return notFound()
	}
	return ok(s.commentJSON(cm))
}

func (s *Server) editComment(c *call) reply {
	cm := s.comment(c)
	if cm == nil {
		return notFound()
	}
	body, rep, good := c.commentBody(docComments + "#update-an-issue-comment")
	if !good {
		return rep
	}
	s.edit(cm, c.who, c.tok.id.AppID, body)
	return ok(s.commentJSON(cm))
}

func (s *Server) deleteComment(c *call) reply {
	cm := s.comment(c)
	if cm == nil {
		return notFound()
	}
	s.remove(cm)
	return noContent()
}

// react serves POST .../comments/{id}/reactions: 201 for a new reaction,
// 200 with the existing one when this user already reacted so.
func (s *Server) react(c *call) reply {
	cm := s.comment(c)
	if cm == nil {
		return notFound()
	}
	var in struct {
		Content string `json:"content"`
	}
	if rep, ok := c.decode(&in); !ok {
		return rep
	}
	if !slices.Contains(reactionContents, in.Content) {
		return validation(docReact, fieldError{"resource": "Reaction", "code": "invalid", "field": "content"})
	}
	for _, r := range cm.reactions {
		if r.user == c.who && r.content == in.Content {
			return ok(s.reactionJSON(r))
		}
	}
	r := &reaction{id: s.newID(), user: c.who, content: in.Content, created: s.now()}
	cm.reactions = append(cm.reactions, r)
	return reply{status: http.StatusCreated, body: s.reactionJSON(r)}
}

// addComment, edit and remove are the mutations shared by HTTP and the Go
// control API. Called with s.mu held.

func (s *Server) addComment(rp *repository, is *issue, u *user, appID int64, body string) *comment {
	now := s.now()
	cm := &comment{id: s.newID(), repo: rp, issue: is.number, user: u, appID: appID,
		body: body, created: now, updated: now}
	is.comments = append(is.comments, cm)
	is.updated = now
	s.comments[cm.id] = cm
	return cm
}

// edit replaces a comment's body; an unchanged body is not an edit.
func (s *Server) edit(cm *comment, editor *user, appID int64, body string) {
	if body == cm.body {
		return
	}
	now := s.now()
	cm.edits = append(cm.edits, Edit{Editor: editor.snap(), AppID: appID, At: now, Before: cm.body, After: body})
	cm.body = body
	cm.updated = now
}

func (s *Server) remove(cm *comment) {
	cm.deleted = true
	cm.deletedAt = s.now()
	cm.reactions = nil
}
