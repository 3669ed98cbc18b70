package fakegithub

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Sub-issues, issue dependencies, issue creation and the secondary limit on
// content creation, as GitHub's REST docs describe them: a parent holds at
// most 100 sub-issues, a child has one parent (422 otherwise), the POST
// takes the child's numeric id ("sub_issue_id"), dependencies take the
// blocking issue's id ("issue_id"). With SetContentLimits, content-creating
// requests (issue creates, sub-issue links, dependencies) beyond the
// per-minute or per-hour budget of a token are answered 403 with
// retry-after, and a request sent inside that window is counted as a
// violation (InsideWindow) and refused again.

const (
	docSubIssues = "https://docs.github.com/rest/issues/sub-issues"
	docDeps      = "https://docs.github.com/rest/issues/issue-dependencies"
	maxSubIssues = 100
)

type subState struct {
	parent    map[*issue]*issue
	children  map[*issue][]*issue
	blockedBy map[*issue][]*issue
	// content limits: zero means unlimited.
	perMinute, perHour int
	creates            map[string][]time.Time // token login → content creates
	window             map[string]time.Time   // token login → end of retry-after window
	hits               int
	noDeps             bool
	windows            []limitWindow
}

type limitWindow struct {
	login    string
	from, to time.Time
}

func (s *Server) subs() *subState {
	if s.sub == nil {
		s.sub = &subState{parent: map[*issue]*issue{}, children: map[*issue][]*issue{},
			blockedBy: map[*issue][]*issue{}, creates: map[string][]time.Time{}, window: map[string]time.Time{}}
	}
	return s.sub
}

func subIssueRoutes() []route {
	const rp = "/repos/{owner}/{repo}"
	table := []struct {
		method, pattern string
		h               handlerFunc
	}{
		{"POST", rp + "/issues", (*Server).createIssueREST},
		{"GET", rp + "/issues/{number}/sub_issues", (*Server).listSubIssues},
		{"POST", rp + "/issues/{number}/sub_issues", (*Server).addSubIssue},
		{"GET", rp + "/issues/{number}/parent", (*Server).getParent},
		{"GET", rp + "/issues/{number}/dependencies/blocked_by", (*Server).listBlockedBy},
		{"POST", rp + "/issues/{number}/dependencies/blocked_by", (*Server).addBlockedBy},
	}
	out := make([]route, len(table))
	for i, t := range table {
		out[i] = route{method: t.method, segs: splitPath(t.pattern), h: t.h}
	}
	return out
}

// SetContentLimits turns on the secondary limit on content creation:
// perMinute and perHour requests per token (0: no limit).
func (s *Server) SetContentLimits(perMinute, perHour int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.subs()
	st.perMinute, st.perHour = perMinute, perHour
}

// SetNoDependencies makes the dependency endpoints answer 404, like a host
// without issue dependencies.
func (s *Server) SetNoDependencies(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs().noDeps = on
}

// ContentLimitStats reports the secondary-limit answers given (hits) and the
// requests of any kind that the same token sent inside an announced
// retry-after window (inside), from the request log.
func (s *Server) ContentLimitStats() (hits, inside int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.subs()
	for _, w := range st.windows {
		for _, e := range s.log {
			if e.Login == w.login && e.Time.After(w.from) && e.Time.Before(w.to) {
				inside++
			}
		}
	}
	return st.hits, inside
}

// SubIssues returns the numbers of an issue's sub-issues, in order.
func (s *Server) SubIssues(repo string, n int) ([]int, error) {
	return s.linkedNumbers(repo, n, func(st *subState) map[*issue][]*issue { return st.children })
}

// BlockedBy returns the numbers of the issues issue n is blocked by.
func (s *Server) BlockedBy(repo string, n int) ([]int, error) {
	return s.linkedNumbers(repo, n, func(st *subState) map[*issue][]*issue { return st.blockedBy })
}

// linkedNumbers returns the numbers of the issues that links (sub-issues or
// blockers) hold for issue n, in order.
func (s *Server) linkedNumbers(repo string, n int, links func(*subState) map[*issue][]*issue) ([]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is, err := s.issueLocked(repo, n)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, k := range links(s.subs())[is] {
		out = append(out, k.number)
	}
	return out, nil
}

// IssueBodies returns every issue's body by number (pull requests left out).
func (s *Server) IssueBodies(repo string) (map[int]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoLocked(repo)
	if err != nil {
		return nil, err
	}
	out := map[int]string{}
	for n, is := range rp.issues {
		if is.pull == nil {
			out[n] = is.body
		}
	}
	return out, nil
}

// contentLimited applies the secondary limit to one content-creating
// request; a zero reply means it may go on (and was counted).
func (s *Server) contentLimited(c *call) (reply, bool) {
	st := s.subs()
	who := c.tok.id.Login
	now := s.clock()
	if end, ok := st.window[who]; ok && now.Before(end) {
		return s.secondaryReply(end.Sub(now)), true
	}
	var recent []time.Time
	minute := 0
	for _, t := range st.creates[who] {
		if now.Sub(t) < time.Hour {
			recent = append(recent, t)
			if now.Sub(t) < time.Minute {
				minute++
			}
		}
	}
	st.creates[who] = recent
	var wait time.Duration
	if st.perMinute > 0 && minute >= st.perMinute {
		wait = time.Minute
	}
	if st.perHour > 0 && len(recent) >= st.perHour {
		wait = recent[0].Add(time.Hour).Sub(now)
	}
	if wait > 0 {
		wait = wait.Round(time.Second) + time.Second
		st.window[who] = now.Add(wait)
		st.windows = append(st.windows, limitWindow{login: who, from: now, to: now.Add(wait)})
		st.hits++
		return s.secondaryReply(wait), true
	}
	st.creates[who] = append(recent, now)
	return reply{}, false
}

func (s *Server) secondaryReply(wait time.Duration) reply {
	rep := errorReply(http.StatusForbidden, secondaryMsg, secondaryDoc)
	secs := int((wait + time.Second - 1) / time.Second)
	rep.set("Retry-After", strconv.Itoa(max(secs, 1)))
	return rep
}

// createIssueREST serves POST /repos/{o}/{r}/issues.
func (s *Server) createIssueREST(c *call) reply {
	var in struct {
		Title  *string  `json:"title"`
		Body   string   `json:"body"`
		Labels []string `json:"labels"`
	}
	if rep, ok := c.decode(&in); !ok {
		return rep
	}
	if in.Title == nil || strings.TrimSpace(*in.Title) == "" {
		return validation(docIssues+"#create-an-issue", fieldError{"resource": "Issue", "code": "missing_field", "field": "title"})
	}
	if rep, bad := tooLong("Issue", docIssues+"#create-an-issue", in.Body); bad {
		return rep
	}
	if rep, limited := s.contentLimited(c); limited {
		return rep
	}
	is, err := s.newIssue(c.repo, c.who.login, *in.Title, in.Body, in.Labels)
	if err != nil {
		return validation(docIssues+"#create-an-issue", fieldError{"resource": "Label", "code": "invalid", "field": "labels"})
	}
	is.appID = c.tok.id.AppID
	return created(s.issueJSON(c.repo, is))
}

func (s *Server) listSubIssues(c *call) reply {
	is := c.issue()
	if is == nil {
		return notFound()
	}
	return paged(s, c, s.subs().children[is], func(k *issue) obj { return s.issueJSON(c.repo, k) })
}

func (s *Server) getParent(c *call) reply {
	is := c.issue()
	if is == nil {
		return notFound()
	}
	p := s.subs().parent[is]
	if p == nil {
		return notFound()
	}
	return ok(s.issueJSON(c.repo, p))
}

// byID finds an issue of the repository by its numeric id.
func byID(c *call, id int64) *issue {
	for _, is := range c.repo.issues {
		if is.id == id {
			return is
		}
	}
	return nil
}

func (s *Server) addSubIssue(c *call) reply {
	parent := c.issue()
	if parent == nil {
		return notFound()
	}
	var in struct {
		SubIssueID    int64 `json:"sub_issue_id"`
		ReplaceParent bool  `json:"replace_parent"`
	}
	if rep, ok := c.decode(&in); !ok {
		return rep
	}
	doc := docSubIssues + "#add-sub-issue"
	child := byID(c, in.SubIssueID)
	if child == nil || child.pull != nil {
		return validation(doc, fieldError{"resource": "Issue", "code": "invalid", "field": "sub_issue_id",
			"message": fmt.Sprintf("no issue with id %d in this repository", in.SubIssueID)})
	}
	st := s.subs()
	if child == parent {
		return validation(doc, fieldError{"resource": "Issue", "code": "invalid", "field": "sub_issue_id", "message": "an issue cannot be its own sub-issue"})
	}
	if old := st.parent[child]; old != nil && !in.ReplaceParent {
		return validation(doc, fieldError{"resource": "Issue", "code": "invalid", "field": "sub_issue_id", "message": "issue may not contain duplicate sub-issues; it already has a parent"})
	}
	if len(st.children[parent]) >= maxSubIssues {
		return validation(doc, fieldError{"resource": "Issue", "code": "invalid", "field": "sub_issue_id",
			"message": fmt.Sprintf("parent cannot have more than %d sub-issues", maxSubIssues)})
	}
	if rep, limited := s.contentLimited(c); limited {
		return rep
	}
	if old := st.parent[child]; old != nil {
		kids := st.children[old]
		for i, k := range kids {
			if k == child {
				st.children[old] = append(kids[:i:i], kids[i+1:]...)
				break
			}
		}
	}
	st.parent[child] = parent
	st.children[parent] = append(st.children[parent], child)
	parent.updated = s.now()
	return created(s.issueJSON(c.repo, child))
}

func (s *Server) listBlockedBy(c *call) reply {
	is := c.issue()
	if is == nil || s.subs().noDeps {
		return notFound()
	}
	return paged(s, c, s.subs().blockedBy[is], func(k *issue) obj { return s.issueJSON(c.repo, k) })
}

func (s *Server) addBlockedBy(c *call) reply {
	is := c.issue()
	if is == nil || s.subs().noDeps {
		return notFound()
	}
	var in struct {
		IssueID int64 `json:"issue_id"`
	}
	if rep, ok := c.decode(&in); !ok {
		return rep
	}
	doc := docDeps + "#add-a-dependency-an-issue-is-blocked-by"
	blocker := byID(c, in.IssueID)
	if blocker == nil || blocker == is {
		return validation(doc, fieldError{"resource": "Issue", "code": "invalid", "field": "issue_id"})
	}
	st := s.subs()
	for _, b := range st.blockedBy[is] {
		if b == blocker {
			return validation(doc, fieldError{"resource": "Issue", "code": "invalid", "field": "issue_id", "message": "dependency already exists"})
		}
	}
	if rep, limited := s.contentLimited(c); limited {
		return rep
	}
	st.blockedBy[is] = append(st.blockedBy[is], blocker)
	return created(s.issueJSON(c.repo, blocker))
}
