package fakejira

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// clause is one "field = value" or "field in (values)" condition.
type clause struct {
	field  string
	values []string
}

// query is the subset of JQL the fake understands: clauses joined by AND
// and an optional ORDER BY key|created [ASC|DESC].
type query struct {
	clauses []clause
	desc    bool
}

var jqlFields = map[string]string{
	"project": "project", "labels": "labels", "label": "labels",
	"key": "key", "issuekey": "key", "id": "key",
	"issuetype": "issuetype", "type": "issuetype", "status": "status",
}

// parseJQL parses the fake's JQL subset.
func parseJQL(jql string) (query, error) {
	toks, err := tokenize(jql)
	if err != nil {
		return query{}, err
	}
	p := &jqlParser{toks: toks}
	var q query
	for p.more() && !p.at("order") {
		if len(q.clauses) > 0 && !p.word("and") {
			return query{}, jiraMsg("Error in the JQL Query: Expecting either 'OR' or 'AND' but got '%s'.", p.toks[p.i].text)
		}
		c, err := p.clause()
		if err != nil {
			return query{}, err
		}
		q.clauses = append(q.clauses, c)
	}
	if p.word("order") {
		if q.desc, err = p.orderBy(); err != nil {
			return query{}, err
		}
	}
	if p.more() {
		return query{}, jiraMsg("Error in the JQL Query: unexpected '%s'.", p.toks[p.i].text)
	}
	return q, nil
}

// jqlParser walks the tokens of one query; i is the next unread token.
type jqlParser struct {
	toks []token
	i    int
}

func (p *jqlParser) more() bool { return p.i < len(p.toks) }

// at reports whether the next token is the keyword w (unquoted, any case).
func (p *jqlParser) at(w string) bool {
	return p.more() && !p.toks[p.i].quoted && strings.EqualFold(p.toks[p.i].text, w)
}

// word consumes the keyword w if it comes next.
func (p *jqlParser) word(w string) bool {
	if p.at(w) {
		p.i++
		return true
	}
	return false
}

func (p *jqlParser) next() (token, error) {
	if !p.more() {
		return token{}, jiraMsg("Error in the JQL Query: Expecting more input at the end of the query.")
	}
	p.i++
	return p.toks[p.i-1], nil
}

// clause parses "field = value" or "field in (values)".
func (p *jqlParser) clause() (clause, error) {
	f, err := p.next()
	if err != nil {
		return clause{}, err
	}
	field, ok := jqlFields[strings.ToLower(f.text)]
	if !ok {
		return clause{}, jiraMsg("Field '%s' does not exist or you do not have permission to view it.", f.text)
	}
	c := clause{field: field}
	switch {
	case p.word("="):
		v, err := p.next()
		if err != nil {
			return clause{}, err
		}
		c.values = []string{v.text}
	case p.word("in"):
		if c.values, err = p.list(); err != nil {
			return clause{}, err
		}
	default:
		return clause{}, jiraMsg("Error in the JQL Query: Expecting operator after '%s'.", f.text)
	}
	return c, nil
}

// list parses the "(a, b, ...)" after "in".
func (p *jqlParser) list() ([]string, error) {
	if !p.word("(") {
		return nil, jiraMsg("Error in the JQL Query: Expecting '(' after 'in'.")
	}
	var values []string
	for {
		v, err := p.next()
		if err != nil {
			return nil, err
		}
		values = append(values, v.text)
		if p.word(")") {
			return values, nil
		}
		if !p.word(",") {
			return nil, jiraMsg("Error in the JQL Query: Expecting ',' or ')'.")
		}
	}
}

// orderBy parses what follows "order": "by" and a key, then ASC or DESC;
// it reports whether the order is descending. The key is not checked:
// issues are kept in creation order, which is also key order.
func (p *jqlParser) orderBy() (desc bool, err error) {
	if !p.word("by") {
		return false, jiraMsg("Error in the JQL Query: Expecting 'by' after 'order'.")
	}
	if _, err := p.next(); err != nil {
		return false, err
	}
	desc = p.word("desc")
	p.word("asc")
	return desc, nil
}

// jiraMessage is an error worded as Jira words it (capitalised, with a full
// stop), answered verbatim in errorMessages.
type jiraMessage string

func (m jiraMessage) Error() string { return string(m) }

func jiraMsg(format string, args ...any) error {
	return jiraMessage(fmt.Sprintf(format, args...))
}

type token struct {
	text   string
	quoted bool
}

func tokenize(s string) ([]token, error) {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.IndexByte("(),=", c) >= 0:
			out = append(out, token{text: string(c)})
			i++
		case c == '"' || c == '\'':
			var b strings.Builder
			j := i + 1
			for ; j < len(s) && s[j] != c; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, jiraMsg("Error in the JQL Query: The quoted string has not been completed.")
			}
			out = append(out, token{text: b.String(), quoted: true})
			i = j + 1
		default:
			j := i
			for j < len(s) && strings.IndexByte(" \t\r\n(),=\"'", s[j]) < 0 {
				j++
			}
			out = append(out, token{text: s[i:j]})
			i = j
		}
	}
	return out, nil
}

// check validates values Jira checks against the database; s.mu must be held.
func (s *Server) check(q query) error {
	for _, c := range q.clauses {
		for _, v := range c.values {
			switch {
			case c.field == "key" && s.find(v) == nil:
				return jiraMsg("An issue with key '%s' does not exist for field 'key'.", v)
			case c.field == "project" && v != s.opts.Project:
				return jiraMsg("The value '%s' does not exist for the field 'project'.", v)
			}
		}
	}
	return nil
}

func (c clause) match(is *Issue, project string) bool {
	switch c.field {
	case "project":
		return slices.Contains(c.values, project)
	case "labels":
		for _, l := range is.Labels {
			if slices.Contains(c.values, l) {
				return true
			}
		}
		return false
	case "key":
		return slices.Contains(c.values, is.Key) || slices.Contains(c.values, is.ID)
	case "issuetype":
		return slices.ContainsFunc(c.values, func(v string) bool { return strings.EqualFold(v, is.Type) })
	case "status":
		return slices.ContainsFunc(c.values, func(v string) bool { return strings.EqualFold(v, is.Status) })
	}
	return false
}

// search handles both search endpoints: Cloud's /search/jql with token
// paging, and Data Center's /search with startAt/total.
func (s *Server) search(w http.ResponseWriter, r *http.Request, cloud bool) {
	params := r.URL.Query()
	req, err := parseSearch(params, cloud)
	if err != nil {
		writeErrors(w, http.StatusBadRequest, []string{err.Error()}, nil)
		return
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(req.q); err != nil {
		writeErrors(w, http.StatusBadRequest, []string{err.Error()}, nil)
		return
	}
	hits := s.matches(req.q)
	end := min(req.start+req.maxResults, len(hits))
	start := min(req.start, end)
	fields := fieldSet(params.Get("fields"), !cloud)
	issues := make([]map[string]any, 0, end-start)
	for _, is := range hits[start:end] {
		issues = append(issues, s.render(is, fields))
	}
	if !cloud {
		writeJSON(w, http.StatusOK, map[string]any{
			"expand": "names,schema", "startAt": start, "maxResults": req.maxResults, "total": len(hits), "issues": issues,
		})
		return
	}
	resp := map[string]any{"issues": issues, "isLast": end >= len(hits)}
	if end < len(hits) {
		resp["nextPageToken"] = base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(end)))
	}
	writeJSON(w, http.StatusOK, resp)
}

// searchRequest is a search's query and page, before any issue is looked at.
type searchRequest struct {
	q                 query
	start, maxResults int
}

// parseSearch reads a search's parameters, checked in the order Jira
// checks them: a bounded query (Cloud), maxResults, the JQL, the page.
func parseSearch(params url.Values, cloud bool) (searchRequest, error) {
	jql := strings.TrimSpace(params.Get("jql"))
	if cloud && jql == "" {
		return searchRequest{}, jiraMessage("Unbounded JQL queries are not allowed here. Please add a search restriction to your query.")
	}
	req := searchRequest{maxResults: 50}
	if v := params.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return searchRequest{}, jiraMessage("maxResults must be a non-negative integer.")
		}
		req.maxResults = min(n, 1000)
	}
	var err error
	if req.q, err = parseJQL(jql); err != nil {
		return searchRequest{}, err
	}
	if req.start, err = pageStart(params, cloud); err != nil {
		return searchRequest{}, err
	}
	return req, nil
}

// matches lists the issues q finds, in creation order (reversed for DESC).
// An issue younger than SearchLag is not indexed yet. s.mu must be held.
func (s *Server) matches(q query) []*Issue {
	now := s.opts.Now()
	var hits []*Issue
	for _, is := range s.issues {
		if now.Sub(is.Created) < s.opts.SearchLag {
			continue
		}
		if !slices.ContainsFunc(q.clauses, func(c clause) bool { return !c.match(is, s.opts.Project) }) {
			hits = append(hits, is)
		}
	}
	if q.desc {
		slices.Reverse(hits)
	}
	return hits
}

func pageStart(params map[string][]string, cloud bool) (int, error) {
	get := func(k string) string {
		if v := params[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	if !cloud {
		if v := get("startAt"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return 0, jiraMsg("startAt must be a non-negative integer.")
			}
			return n, nil
		}
		return 0, nil
	}
	tok := get("nextPageToken")
	if tok == "" {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if n, ok := strings.CutPrefix(string(raw), "offset:"); err == nil && ok {
		if v, err := strconv.Atoi(n); err == nil && v >= 0 {
			return v, nil
		}
	}
	return 0, jiraMsg("The provided next page token is invalid or expired.")
}
