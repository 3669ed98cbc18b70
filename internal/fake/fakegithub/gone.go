package fakegithub

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Deleted and transferred issues, as GitHub answers for them: every request
// under /repos/{o}/{r}/issues/{n} of a deleted issue gets 410 Gone ("This
// issue was deleted"); one of an issue transferred to another repository
// gets 301 Moved Permanently, whose Location (and body "url") is the issue's
// address by repository id, /repositories/{id}/issues/{n}, which a client
// following redirects reads like any issue the token can see. Both leave
// every list (issues, sub-issues, dependencies) of their old repository.

// movedIssue is where a transferred issue went.
type movedIssue struct {
	repo   *repository
	number int
}

const docRedirects = "https://docs.github.com/rest/using-the-rest-api/troubleshooting-the-rest-api#http-redirects"

// DeleteIssue deletes issue n the way a repository admin does in the web UI.
func (s *Server) DeleteIssue(repo string, n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoLocked(repo)
	if err != nil {
		return err
	}
	is := rp.issues[n]
	if is == nil {
		return fmt.Errorf("fakegithub: %s#%d not found", repo, n)
	}
	s.unlinkIssue(is)
	delete(rp.issues, n)
	if rp.gone == nil {
		rp.gone = map[int]*movedIssue{}
	}
	rp.gone[n] = nil
	return nil
}

// TransferIssue moves issue n to repository to (which must exist), as
// "Transfer issue" does, and returns its number there.
func (s *Server) TransferIssue(repo string, n int, to string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoLocked(repo)
	if err != nil {
		return 0, err
	}
	dst, err := s.repoLocked(to)
	if err != nil {
		return 0, err
	}
	is := rp.issues[n]
	if is == nil || is.pull != nil {
		return 0, fmt.Errorf("fakegithub: %s#%d is not an issue", repo, n)
	}
	s.unlinkIssue(is)
	delete(rp.issues, n)
	dst.lastNumber++
	is.number = dst.lastNumber
	is.labels = nil // labels of the old repository do not travel
	dst.issues[is.number] = is
	if rp.gone == nil {
		rp.gone = map[int]*movedIssue{}
	}
	rp.gone[n] = &movedIssue{repo: dst, number: is.number}
	return is.number, nil
}

// unlinkIssue drops is from every sub-issue and dependency relation.
// Called with s.mu held.
func (s *Server) unlinkIssue(is *issue) {
	st := s.subs()
	drop := func(list []*issue) []*issue {
		out := list[:0:0]
		for _, k := range list {
			if k != is {
				out = append(out, k)
			}
		}
		return out
	}
	if p := st.parent[is]; p != nil {
		st.children[p] = drop(st.children[p])
	}
	delete(st.parent, is)
	for _, k := range st.children[is] {
		delete(st.parent, k)
	}
	delete(st.children, is)
	delete(st.blockedBy, is)
	for k, list := range st.blockedBy {
		st.blockedBy[k] = drop(list)
	}
}

// goneIssue answers a request under /repos/{o}/{r}/issues/{number} for a
// deleted (410) or transferred (301) issue; a zero reply means "go on".
func (s *Server) goneIssue(c *call) reply {
	if c.repo == nil || c.repo.gone == nil {
		return reply{}
	}
	n, ok := c.intParam("number")
	if !ok || !strings.Contains(c.r.URL.Path, "/issues/") {
		return reply{}
	}
	mv, gone := c.repo.gone[int(n)]
	switch {
	case !gone:
		return reply{}
	case mv == nil:
		return errorReply(http.StatusGone, "This issue was deleted", docIssues+"#get-an-issue")
	}
	loc := s.api("/repositories/%d/issues/%d", mv.repo.id, mv.number)
	rep := reply{status: http.StatusMovedPermanently, body: map[string]any{
		"message": "Moved Permanently", "url": loc, "documentation_url": docRedirects}}
	rep.set("Location", loc)
	return rep
}

// getIssueByRepoID serves GET /repositories/{id}/issues/{number}, where a
// transferred issue's redirect points.
func (s *Server) getIssueByRepoID(c *call) reply {
	id, _ := strconv.ParseInt(c.params["id"], 10, 64)
	for _, rp := range s.repos {
		if rp.id != id || !c.tok.id.canSee(rp.fullName()) {
			continue
		}
		c.repo = rp
		if rep := s.goneIssue(c); rep.status != 0 {
			return rep
		}
		if is := c.issue(); is != nil {
			return ok(s.issueJSON(rp, is))
		}
	}
	return notFound()
}
