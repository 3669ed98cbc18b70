package fakegithub

import (
	"fmt"
	"strings"
)

// What CODEOWNERS needs: the files a pull request changes
// (GET /repos/{owner}/{repo}/pulls/{number}/files, paged, at most 3000
// files as GitHub lists) and the CODEOWNERS file itself, read through the
// contents API (SetFile; GitHub looks in .github/, the root and docs/).

// maxPullFiles is how many files GitHub lists for one pull request.
const maxPullFiles = 3000

// PullFile is one changed file of a pull request.
type PullFile struct {
	Filename string
	// Status: added, removed, modified, renamed, copied, changed, unchanged.
	Status                  string
	Additions, Deletions    int
	PreviousFilename, Patch string
}

// SetPullFiles sets the files pull request n of repo changes.
func (s *Server) SetPullFiles(repo string, n int, files ...PullFile) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, err := s.issueLocked(repo, n)
	if err != nil {
		return err
	}
	if is.pull == nil {
		return fmt.Errorf("fakegithub: %s#%d is not a pull request", repo, n)
	}
	for i, f := range files {
		if f.Status == "" {
			files[i].Status = "modified"
		}
	}
	s.teamsLocked().files[strings.ToLower(fmt.Sprintf("%s#%d", repo, n))] = append([]PullFile(nil), files...)
	return nil
}

// listPullFiles serves GET /repos/{owner}/{repo}/pulls/{number}/files.
func (s *Server) listPullFiles(c *call) reply {
	is := c.pull()
	if is == nil {
		return notFound()
	}
	files := s.teamsLocked().files[strings.ToLower(fmt.Sprintf("%s#%d", c.repo.fullName(), is.number))]
	if len(files) > maxPullFiles {
		files = files[:maxPullFiles]
	}
	return paged(s, c, files, func(f PullFile) obj {
		blob := fmt.Sprintf("%s/%s/blob/%s/%s", s.webURL, c.repo.fullName(), is.pull.headSHA, f.Filename)
		o := obj{
			"sha": blobSHA([]byte(f.Filename + f.Patch)), "filename": f.Filename, "status": f.Status,
			"additions": f.Additions, "deletions": f.Deletions, "changes": f.Additions + f.Deletions,
			"blob_url": blob, "raw_url": strings.Replace(blob, "/blob/", "/raw/", 1),
			"contents_url": s.api("/repos/%s/contents/%s?ref=%s", c.repo.fullName(), f.Filename, is.pull.headSHA),
		}
		if f.Patch != "" {
			o["patch"] = f.Patch
		}
		if f.PreviousFilename != "" {
			o["previous_filename"] = f.PreviousFilename
		}
		return o
	})
}

// commitInfo is who wrote and who committed a commit (SetCommit).
type commitInfo struct{ author, committer string }

// SetCommit records who authored and committed commit sha of repo (for
// GET …/commits/{sha}); committer "web-flow" is GitHub committing a web
// edit.
func (s *Server) SetCommit(repo, sha, author, committer string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.repoLocked(repo); err != nil {
		return err
	}
	ts := s.teamsLocked()
	if ts.commits == nil {
		ts.commits = map[string]commitInfo{}
	}
	ts.commits[strings.ToLower(repo+"@"+sha)] = commitInfo{author: author, committer: committer}
	return nil
}

// getCommit serves GET /repos/{owner}/{repo}/commits/{ref} for a commit
// SetCommit recorded or a pull request's head (422 "No commit found for
// SHA" otherwise, as GitHub).
func (s *Server) getCommit(c *call) reply {
	sha := c.params["ref"]
	ci, found := s.teamsLocked().commits[strings.ToLower(c.repo.fullName()+"@"+sha)]
	if !found {
		// A pull request's head commit exists: its author wrote and
		// committed it unless SetCommit says otherwise.
		for _, is := range c.repo.issues {
			if is.pull != nil && is.pull.headSHA == sha && is.user != nil {
				ci, found = commitInfo{author: is.user.login, committer: is.user.login}, true
				break
			}
		}
	}
	if !found {
		return errorReply(422, "No commit found for SHA: "+sha, "https://docs.github.com/rest/commits/commits#get-a-commit")
	}
	person := func(login string) any {
		if login == "" {
			return nil
		}
		return s.userJSON(s.user(login, ""))
	}
	return ok(obj{
		"sha": sha, "url": s.api("/repos/%s/commits/%s", c.repo.fullName(), sha),
		"html_url":  fmt.Sprintf("%s/%s/commit/%s", s.webURL, c.repo.fullName(), sha),
		"commit":    obj{"message": "commit " + sha, "author": obj{"name": ci.author}, "committer": obj{"name": ci.committer}},
		"author":    person(ci.author),
		"committer": person(ci.committer),
	})
}
