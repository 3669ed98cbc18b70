package fakegithub

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// Pinned issues. GitHub pins an issue above a repository's issue list
// through the GraphQL pinIssue mutation (there is no REST endpoint):
// pinIssue(input: {issueId}) returns the issue (id, isPinned). People with
// write access may pin, and a repository holds at most three pinned
// issues. GitHub does not document the refusal's text; the fake answers a
// fourth pin with a GraphQL error (HTTP 200, no data) in its own words,
// naming the limit, so a client must not depend on the wording.

// PinIssueOp is the operation name of the pinIssue mutation the fake serves.
const PinIssueOp = "AutopilotPinIssue"

// MaxPinnedIssues is GitHub's limit of pinned issues per repository.
const MaxPinnedIssues = 3

// PinIssue pins issue n of repo as a person with write access would (the
// control API), under the same limit as the mutation.
func (s *Server) PinIssue(repo string, n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoLocked(repo)
	if err != nil {
		return err
	}
	is := rp.issues[n]
	if is == nil || is.pull != nil {
		return fmt.Errorf("fakegithub: %s has no issue #%d", repo, n)
	}
	if msg := pin(rp, is); msg != "" {
		return fmt.Errorf("fakegithub: %s", msg)
	}
	return nil
}

// pin pins is in rp, or says why not. Called with s.mu held.
func pin(rp *repository, is *issue) string {
	if is.pinned {
		return ""
	}
	count := 0
	for _, o := range rp.issues {
		if o.pinned {
			count++
		}
	}
	if count >= MaxPinnedIssues {
		return fmt.Sprintf("%s already has %d pinned issues, the most a repository can have: unpin one to pin another.", rp.fullName(), MaxPinnedIssues)
	}
	is.pinned = true
	return ""
}

// pinIssue serves mutation AutopilotPinIssue($issueId: ID!) { pinIssue(
// input: {issueId: $issueId}) { issue { id isPinned } } }.
func (s *Server) pinIssue(c *call, v map[string]any) reply {
	id, _ := v["issueId"].(string)
	rp, is := s.issueByNodeID(c, id)
	if is == nil {
		return gqlErrors(obj{"pinIssue": nil}, obj{"type": "NOT_FOUND", "path": []string{"pinIssue"},
			"message": fmt.Sprintf("Could not resolve to a node with the global id of '%s'", id)})
	}
	if msg := pin(rp, is); msg != "" {
		return gqlErrors(obj{"pinIssue": nil}, obj{"type": "UNPROCESSABLE", "path": []string{"pinIssue"}, "message": msg})
	}
	return ok(obj{"data": obj{"pinIssue": obj{"issue": obj{"id": id, "isPinned": true}}}})
}

// issueByNodeID finds the issue (not a pull request) with that node id in
// a repository the token can see. Called with s.mu held.
func (s *Server) issueByNodeID(c *call, id string) (*repository, *issue) {
	raw, err := base64.StdEncoding.DecodeString(id)
	if err != nil {
		return nil, nil
	}
	rest, found := strings.CutPrefix(string(raw), "005:Issue")
	if !found {
		return nil, nil
	}
	dbID, err := strconv.ParseInt(rest, 10, 64)
	if err != nil {
		return nil, nil
	}
	for _, rp := range s.repos {
		if !c.tok.id.canSee(rp.fullName()) {
			continue
		}
		for _, is := range rp.issues {
			if is.id == dbID && is.pull == nil {
				return rp, is
			}
		}
	}
	return nil, nil
}
