package forge

import (
	"context"
	"fmt"
	"sort"
)

// RecentSandbox is a Sandbox that also reads threads as the GitHub
// adapter's GraphQL query does (RecentReader): the issue and its comments
// most recently updated first, 100 a page, each page one "POST graphql"
// call. A plain Sandbox does not, so the tests built on it keep reading
// through the REST-shaped calls; Recent opts in.
type RecentSandbox struct{ *Sandbox }

// Recent returns s reading threads most recently updated first.
func (s *Sandbox) Recent() RecentSandbox { return RecentSandbox{s} }

// recentPage is the GraphQL page size the adapter asks for.
const recentPage = 100

// ReadRecent implements RecentReader.
func (s RecentSandbox) ReadRecent(ctx context.Context, n int, more func(Issue, []Comment) bool) (Recent, error) {
	var out Recent
	var before *Comment // the cursor: the first comment of the page read last
	for {
		page, is, earlier, err := s.recentPage(n, before)
		if err != nil {
			return Recent{}, err
		}
		out.Issue = is
		out.Comments = append(out.Comments, page...)
		if !earlier || len(page) == 0 {
			out.All = true
			return out, nil
		}
		if !more(is, page) {
			return out, nil
		}
		before = &page[0]
	}
}

// recentPage is one call: the issue and the page of comments just before
// the cursor in updated-time order (the newest without one), and whether
// earlier ones remain.
func (s RecentSandbox) recentPage(n int, before *Comment) ([]Comment, Issue, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("POST graphql"); err != nil {
		return nil, Issue{}, false, err
	}
	is, ok := s.issues[n]
	if !ok || is.IsPR {
		return nil, Issue{}, false, fmt.Errorf("issue %d: %w", n, ErrNotFound)
	}
	iss := is.Issue
	iss.Labels = append([]string(nil), is.labels...)
	less := func(a, b Comment) bool {
		if !a.UpdatedAt.Equal(b.UpdatedAt) {
			return a.UpdatedAt.Before(b.UpdatedAt)
		}
		return a.ID < b.ID
	}
	var cs []Comment
	for _, c := range s.commentsLocked(n) {
		if before == nil || less(c, *before) {
			cs = append(cs, c)
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return less(cs[i], cs[j]) })
	lo := max(len(cs)-recentPage, 0)
	return cs[lo:], iss, lo > 0, nil
}

// Requests implements RecentReader: every call so far.
func (s RecentSandbox) Requests() int64 { return int64(s.TotalCalls()) }

var _ RecentReader = RecentSandbox{}
