package tracker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/idem"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// Sandbox operation names, for Calls and FailNext.
const (
	OpCheckAuth = "check-auth"
	OpFind      = "find"
	OpCreate    = "create"
	OpStatuses  = "statuses"
	OpClose     = "close"
)

// SandboxOptions configures a Sandbox.
type SandboxOptions struct {
	Project   string           // issue key prefix; default "PROJ"
	BaseURL   string           // for browse URLs; default "https://sandbox.atlassian.net"
	Now       func() time.Time // clock; default time.Now
	SearchLag time.Duration    // how long a new issue stays invisible to FindByIdemKeys
}

// SandboxIssue is an issue held by a Sandbox.
type SandboxIssue struct {
	Key         string
	Kind        state.TaskKind
	Title       string
	Description string
	EpicKey     string
	Points      float64
	Labels      []string
	Status      string
	Done        bool
	Created     time.Time
}

// SandboxCall records one call made to a Sandbox.
type SandboxCall struct {
	Op    string
	At    time.Time
	Items int // keys or items in the call
	Err   error
}

// Sandbox is an in-memory Tracker (and Closer) that behaves like Jira where
// autopilot can tell: keys PROJ-1, PROJ-2, … in create order, idempotency
// labels, statuses with a done category, a workflow that can always reach
// "Done", eventually consistent search (SearchLag), credentials that can be
// revoked, injected faults and creates whose response is lost.
// It is safe for concurrent use.
type Sandbox struct {
	mu      sync.Mutex
	opts    SandboxOptions
	authOK  bool
	issues  []SandboxIssue
	faults  map[string][]error
	loseRes int
	calls   []SandboxCall
}

// NewSandbox returns an empty sandbox with working credentials.
func NewSandbox(opts SandboxOptions) *Sandbox {
	if opts.Project == "" {
		opts.Project = "PROJ"
	}
	if opts.BaseURL == "" {
		opts.BaseURL = "https://sandbox.atlassian.net"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Sandbox{opts: opts, authOK: true, faults: map[string][]error{}}
}

// SetAuth makes the credentials work (true) or fail with 401 (false).
func (s *Sandbox) SetAuth(ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authOK = ok
}

// SetSearchLag changes the search lag for every issue, old and new.
func (s *Sandbox) SetSearchLag(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.SearchLag = d
}

// FailNext makes the next calls of op return errs, one per call, before doing
// anything.
func (s *Sandbox) FailNext(op string, errs ...error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[op] = append(s.faults[op], errs...)
}

// LoseNextCreates makes the next n CreateBulk calls create their issues and
// then report a *TransientError, as when a response is lost on the way back.
func (s *Sandbox) LoseNextCreates(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loseRes += n
}

// Transition moves an issue to a status; "Done", "Closed" and "Resolved"
// count as done.
func (s *Sandbox) Transition(key, status string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.issues {
		if s.issues[i].Key == key {
			s.issues[i].Status = status
			s.issues[i].Done = doneStatus(status)
			return nil
		}
	}
	return fmt.Errorf("sandbox: no issue %s", key)
}

func doneStatus(status string) bool {
	switch strings.ToLower(status) {
	case "done", "closed", "resolved":
		return true
	}
	return false
}

// Issues returns a copy of every issue, in creation order.
func (s *Sandbox) Issues() []SandboxIssue {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SandboxIssue, len(s.issues))
	for i, is := range s.issues {
		out[i] = is
		out[i].Labels = slices.Clone(is.Labels)
	}
	return out
}

// Calls returns a copy of the call log.
func (s *Sandbox) Calls() []SandboxCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// begin logs a call and returns the injected fault or auth error, if any.
// It must be called with s.mu held.
func (s *Sandbox) begin(op string, n int) error {
	var err error
	if q := s.faults[op]; len(q) > 0 {
		err, s.faults[op] = q[0], q[1:]
	} else if !s.authOK {
		err = &AuthError{Status: 401, Message: "Client must be authenticated to access this resource."}
	}
	s.calls = append(s.calls, SandboxCall{Op: op, At: s.opts.Now(), Items: n, Err: err})
	return err
}

func (s *Sandbox) issueView(is SandboxIssue) Issue {
	out := Issue{Key: is.Key, Status: is.Status, Done: is.Done, URL: s.opts.BaseURL + "/browse/" + is.Key}
	for _, l := range is.Labels {
		if strings.HasPrefix(l, idem.Prefix) {
			out.IdemKey = l
		}
	}
	return out
}

// CheckAuth implements Tracker.
func (s *Sandbox) CheckAuth(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.begin(OpCheckAuth, 0)
}

// FindByIdemKeys implements Tracker; issues younger than the search lag are
// not found. When several issues carry a key, the oldest wins.
func (s *Sandbox) FindByIdemKeys(ctx context.Context, keys []string) (map[string]Issue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(OpFind, len(keys)); err != nil {
		return nil, err
	}
	now := s.opts.Now()
	out := map[string]Issue{}
	for _, is := range s.issues {
		if now.Sub(is.Created) < s.opts.SearchLag {
			continue
		}
		for _, l := range is.Labels {
			if _, seen := out[l]; !seen && slices.Contains(keys, l) {
				out[l] = s.issueView(is)
			}
		}
	}
	return out, nil
}

// CreateBulk implements Tracker, validating each item as Jira would.
func (s *Sandbox) CreateBulk(ctx context.Context, items []Item) ([]CreateResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(OpCreate, len(items)); err != nil {
		return nil, err
	}
	if len(items) > tasksync.MaxBulk {
		return nil, &ValidationError{Message: fmt.Sprintf("at most %d issues per bulk create, got %d", tasksync.MaxBulk, len(items))}
	}
	out := make([]CreateResult, 0, len(items))
	for _, it := range items {
		if err := s.validate(it); err != nil {
			out = append(out, CreateResult{IdemKey: it.IdemKey, Err: err})
			continue
		}
		is := SandboxIssue{
			Key:         fmt.Sprintf("%s-%d", s.opts.Project, len(s.issues)+1),
			Kind:        it.Kind,
			Title:       it.Title,
			Description: it.Description,
			EpicKey:     it.EpicKey,
			Points:      it.Points,
			Labels:      []string{"autopilot", it.IdemKey},
			Status:      "To Do",
			Created:     s.opts.Now(),
		}
		s.issues = append(s.issues, is)
		out = append(out, CreateResult{IdemKey: it.IdemKey, Issue: s.issueView(is)})
	}
	if s.loseRes > 0 {
		s.loseRes--
		s.calls[len(s.calls)-1].Err = errLostResponse
		return nil, &TransientError{Err: errLostResponse}
	}
	return out, nil
}

var errLostResponse = errors.New("sandbox: connection reset after the create was committed")

func (s *Sandbox) validate(it Item) error {
	switch n := utf8.RuneCountInString(it.Title); {
	case strings.TrimSpace(it.Title) == "":
		return &ValidationError{Field: "summary", Message: "You must specify a summary of the issue."}
	case n > 255:
		return &ValidationError{Field: "summary", Message: "Summary must be less than 255 characters."}
	case strings.ContainsAny(it.Title, "\r\n"):
		return &ValidationError{Field: "summary", Message: "Field 'summary' cannot contain line breaks."}
	case strings.ContainsAny(it.IdemKey, " \t\r\n"):
		return &ValidationError{Field: "labels", Message: fmt.Sprintf("The label '%s' contains spaces which is invalid.", it.IdemKey)}
	case it.Points < 0:
		return &ValidationError{Field: "story points", Message: "Story points cannot be negative."}
	}
	if it.EpicKey != "" && it.Kind != state.KindEpic {
		for _, is := range s.issues {
			if is.Key == it.EpicKey && is.Kind == state.KindEpic {
				return nil
			}
		}
		return &ValidationError{Field: "parent", Message: fmt.Sprintf("Issue '%s' is not an epic in this project.", it.EpicKey)}
	}
	return nil
}

// Statuses implements Tracker; keys it does not hold are absent.
func (s *Sandbox) Statuses(ctx context.Context, jiraKeys []string) (map[string]Issue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(OpStatuses, len(jiraKeys)); err != nil {
		return nil, err
	}
	out := map[string]Issue{}
	for _, is := range s.issues {
		if slices.Contains(jiraKeys, is.Key) {
			out[is.Key] = s.issueView(is)
		}
	}
	return out, nil
}

var _ Closer = (*Sandbox)(nil)

// CloseIssue implements Closer: the issue moves to "Done" unless it is
// already in a done status; an unknown key is a *ValidationError, as Jira's
// 404 would leave nothing to do but tell a person.
func (s *Sandbox) CloseIssue(ctx context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(OpClose, 1); err != nil {
		return err
	}
	for i := range s.issues {
		is := &s.issues[i]
		if is.Key != key {
			continue
		}
		if !is.Done {
			is.Status, is.Done = "Done", true
		}
		return nil
	}
	return &ValidationError{Message: fmt.Sprintf("issue %s does not exist or you do not have permission to see it", key)}
}
