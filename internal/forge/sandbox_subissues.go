package forge

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// The sandbox's sub-issues and issue dependencies, with GitHub's rules: a
// child has one parent, a parent at most 100 children, the link takes the
// child's numeric id. Issue ids are the number plus sbIssueIDBase.

const sbIssueIDBase = 7_000_000

type sbSubs struct {
	parent    map[int]int
	children  map[int][]int
	blockedBy map[int][]int
}

func (s *Sandbox) subsLocked() *sbSubs {
	if s.sub == nil {
		s.sub = &sbSubs{parent: map[int]int{}, children: map[int][]int{}, blockedBy: map[int][]int{}}
	}
	return s.sub
}

// SubIssueTracker implements tracker.SubIssueForge.
func (s *Sandbox) SubIssueTracker() tracker.SubIssueAPI { return sandboxSubIssues{s} }

// SubIssueNumbers returns the numbers of an issue's sub-issues, in order.
func (s *Sandbox) SubIssueNumbers(n int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.subsLocked().children[n])
}

// CloseIssue closes an issue, as a person would (control API).
func (s *Sandbox) CloseIssue(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is, ok := s.issues[n]; ok {
		is.State, is.updated = "closed", s.now()
	}
}

type sandboxSubIssues struct{ s *Sandbox }

func (a sandboxSubIssues) ghIssueLocked(n int) tracker.GHIssue {
	is := a.s.issues[n]
	return tracker.GHIssue{ID: int64(sbIssueIDBase + n), Number: n, Title: is.Title, Body: is.Body,
		Closed: is.State == "closed", URL: is.URL, Labels: slices.Clone(is.labels),
		Author: is.Author.Login, AuthorIsBot: is.Author.IsBot()}
}

func sbErr(err error) error {
	if err == nil {
		return nil
	}
	return &tracker.TransientError{Err: err}
}

func (a sandboxSubIssues) CreateIssue(ctx context.Context, title, body string, labels []string) (tracker.GHIssue, error) {
	s := a.s
	s.mu.Lock()
	if err := s.call("POST issue"); err != nil {
		s.mu.Unlock()
		return tracker.GHIssue{}, sbErr(err)
	}
	n := len(s.issues) + len(s.pulls) + 1
	is := &sbIssue{Issue: Issue{Number: n, Title: title, Body: body, State: "open", Author: s.Identity,
		URL: s.url("issues", int64(n)), CreatedAt: s.now()}, labels: slices.Clone(labels)}
	s.issues[n] = is
	for _, l := range labels {
		if _, ok := s.labels[strings.ToLower(l)]; !ok {
			s.labels[strings.ToLower(l)] = Label{Name: l, Color: LabelAutoColor}
		}
	}
	out := a.ghIssueLocked(n)
	s.mu.Unlock()
	s.notify(Change{Kind: "issue", Issue: n, Content: title, Actor: s.Identity.Login, At: s.now()})
	return out, nil
}

func (a sandboxSubIssues) SubIssues(ctx context.Context, parent int) ([]tracker.GHIssue, error) {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("GET sub-issues"); err != nil {
		return nil, sbErr(err)
	}
	var out []tracker.GHIssue
	for _, k := range s.subsLocked().children[parent] {
		out = append(out, a.ghIssueLocked(k))
	}
	return out, nil
}

func (a sandboxSubIssues) number(id int64) (int, bool) {
	n := int(id - sbIssueIDBase)
	_, ok := a.s.issues[n]
	return n, ok
}

func (a sandboxSubIssues) AddSubIssue(ctx context.Context, parent int, childID int64) error {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("POST sub-issue"); err != nil {
		return sbErr(err)
	}
	st := s.subsLocked()
	child, ok := a.number(childID)
	switch {
	case !ok || s.issues[parent] == nil:
		return &tracker.ValidationError{Field: "sub_issue_id", Message: fmt.Sprintf("no issue with id %d", childID)}
	case st.parent[child] != 0:
		return &tracker.ValidationError{Field: "sub_issue_id", Message: "the issue already has a parent"}
	case len(st.children[parent]) >= tracker.MaxSubIssues:
		return &tracker.ValidationError{Field: "sub_issue_id", Message: "parent cannot have more than 100 sub-issues"}
	}
	st.parent[child] = parent
	st.children[parent] = append(st.children[parent], child)
	return nil
}

func (a sandboxSubIssues) AddBlockedBy(ctx context.Context, n int, blockerID int64) error {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("POST dependency"); err != nil {
		return sbErr(err)
	}
	b, ok := a.number(blockerID)
	if !ok || s.issues[n] == nil {
		return &tracker.ValidationError{Field: "issue_id", Message: fmt.Sprintf("no issue with id %d", blockerID)}
	}
	st := s.subsLocked()
	st.blockedBy[n] = append(st.blockedBy[n], b)
	return nil
}

func (a sandboxSubIssues) BlockedBy(ctx context.Context, n int) ([]tracker.GHIssue, error) {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("GET dependencies"); err != nil {
		return nil, sbErr(err)
	}
	var out []tracker.GHIssue
	for _, b := range s.subsLocked().blockedBy[n] {
		out = append(out, a.ghIssueLocked(b))
	}
	return out, nil
}

func (a sandboxSubIssues) ListLabeled(ctx context.Context, label string, since time.Time) ([]tracker.GHIssue, error) {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("GET issues"); err != nil {
		return nil, sbErr(err)
	}
	var nums []int
	for n, is := range s.issues {
		// The issues API lists pull requests too; the adapter leaves them
		// out, and so does the sandbox. since is updated_at, as on GitHub.
		if !is.IsPR && containsFold(is.labels, label) && !is.updatedAt().Before(since) {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	var out []tracker.GHIssue
	for _, n := range nums {
		out = append(out, a.ghIssueLocked(n))
	}
	return out, nil
}

func (a sandboxSubIssues) ReadIssue(ctx context.Context, n int) (tracker.GHIssue, error) {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("GET issue"); err != nil {
		return tracker.GHIssue{}, sbErr(err)
	}
	if s.issues[n] == nil {
		return tracker.GHIssue{}, &tracker.GoneError{Gone: state.IssueNotFound, Status: 404, Message: fmt.Sprintf("no issue #%d", n)}
	}
	return a.ghIssueLocked(n), nil
}

func (a sandboxSubIssues) CloseIssue(ctx context.Context, n int) error {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("PATCH issue"); err != nil {
		return sbErr(err)
	}
	if is := s.issues[n]; is != nil {
		is.State, is.updated = "closed", s.now()
	}
	return nil
}
