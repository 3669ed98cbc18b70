package fakegithub

import (
	"fmt"
	"slices"
	"strings"
)

// LabelIssue adds a label to issue n as a person would in the web UI
// (creating the repository label with GitHub's default colour when it is
// missing). Adding a label the issue already has changes nothing.
func (s *Server) LabelIssue(repo string, n int, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, err := s.issueLocked(repo, n)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(is.labels, func(l *label) bool { return strings.EqualFold(l.name, name) }) {
		return nil
	}
	if rep, bad := s.setLabels(s.repos[strings.ToLower(repo)], is, append(labelNamesOf(is), name), ""); bad {
		return fmt.Errorf("fakegithub: invalid label %q: %v", name, rep.body)
	}
	is.updated = s.now()
	return nil
}

// UnlabelIssue removes a label from issue n as a person would in the web
// UI; it fails when the issue does not carry the label.
func (s *Server) UnlabelIssue(repo string, n int, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, err := s.issueLocked(repo, n)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(is.labels, func(l *label) bool { return strings.EqualFold(l.name, name) })
	if i < 0 {
		return fmt.Errorf("fakegithub: %s#%d has no label %q", repo, n, name)
	}
	is.labels = slices.Delete(slices.Clone(is.labels), i, i+1)
	is.updated = s.now()
	return nil
}
