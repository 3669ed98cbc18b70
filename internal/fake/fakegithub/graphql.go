package fakegithub

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The GraphQL endpoint (POST /graphql; GHES: /api/graphql) answers two
// documents, recognised by their operation names: the thread read the
// adapter sends and the pinIssue mutation (pins.go). Anything else gets GitHub's error shape (HTTP 200, an "errors"
// array), so a client that sends a document the fake does not model fails
// loudly rather than reading an invented answer.

// RecentCommentsOp is the operation name of the one query served.
const RecentCommentsOp = "AutopilotRecentComments"

// maxGraphQLPage is GitHub's bound on first/last of a connection.
const maxGraphQLPage = 100

// graphqlReactions maps REST reaction contents to GraphQL's ReactionContent.
var graphqlReactions = map[string]string{
	"+1": "THUMBS_UP", "-1": "THUMBS_DOWN", "laugh": "LAUGH", "hooray": "HOORAY",
	"confused": "CONFUSED", "heart": "HEART", "rocket": "ROCKET", "eyes": "EYES",
}

func gqlErrors(data any, errs ...obj) reply {
	body := obj{"errors": errs}
	if data != nil {
		body["data"] = data
	}
	return reply{status: http.StatusOK, body: body}
}

// graphql serves POST /graphql.
func (s *Server) graphql(c *call) reply {
	var in struct {
		Query         string         `json:"query"`
		OperationName string         `json:"operationName"`
		Variables     map[string]any `json:"variables"`
	}
	if err := json.Unmarshal(c.body, &in); err != nil || in.Query == "" {
		return errorReply(http.StatusBadRequest, "Problems parsing JSON", "https://docs.github.com/graphql")
	}
	if in.OperationName == PinIssueOp && strings.Contains(in.Query, "mutation "+PinIssueOp+"(") {
		c.cost = 1
		return s.pinIssue(c, in.Variables)
	}
	if in.OperationName != RecentCommentsOp || !strings.Contains(in.Query, "query "+RecentCommentsOp+"(") {
		return gqlErrors(nil, obj{"message": "the fake GitHub serves only the " + RecentCommentsOp + " query and the " + PinIssueOp + " mutation",
			"locations": []obj{{"line": 1, "column": 1}}})
	}
	// GitHub's cost: the requests the connections need (labels(first: 100)
	// and comments(last: N), one each) over 100, at least 1.
	c.cost = 1
	return s.recentComments(c, in.Query, in.Variables)
}

// gqlRateLimit answers the rateLimit field: the query's cost and the
// budget as it stands once the query is charged.
func (s *Server) gqlRateLimit(c *call) obj {
	b := s.window(c.tok)
	used := b.gqlUsed + c.cost
	return obj{"cost": c.cost, "limit": b.limit, "used": used, "remaining": max(b.limit-used, 0),
		"resetAt": b.reset.UTC().Format(time.RFC3339)}
}

// recentComments answers repository(owner,name){issue(number){number
// title body state url createdAt author labels comments(last, before,
// orderBy UPDATED_AT ASC)}}: the issue and the page of comments just
// before the cursor (the newest when there is none), least recently
// updated first, with pageInfo.
func (s *Server) recentComments(c *call, query string, v map[string]any) reply {
	last, _ := v["last"].(float64)
	if last < 1 || last > maxGraphQLPage {
		return gqlErrors(nil, obj{"message": fmt.Sprintf("Requesting %v records on the `comments` connection exceeds the `last` limit of 100 records.", last),
			"path": []string{"repository", "issue", "comments"}})
	}
	rp, is, rep, found := s.gqlIssue(c, v)
	if !found {
		return rep
	}
	list := byUpdate(is)
	before, _ := v["before"].(string)
	hi, good := pageEnd(list, before)
	if !good {
		return gqlErrors(nil, obj{"message": "`$before` does not appear to be a valid cursor.",
			"path": []string{"repository", "issue", "comments"}})
	}
	comments, ids := s.commentPage(list, max(hi-int(last), 0), hi)
	data := obj{"repository": obj{"issue": s.issueNode(rp, is, comments)}}
	if strings.Contains(query, "rateLimit") {
		data["rateLimit"] = s.gqlRateLimit(c)
	}
	rep = ok(obj{"data": data})
	rep.listed = strings.Join(ids, ",")
	return rep
}

// gqlIssue resolves the query's repository and issue, or answers
// NOT_FOUND for the first that is missing or that the token cannot see.
// A pull request is not an Issue to GraphQL.
func (s *Server) gqlIssue(c *call, v map[string]any) (*repository, *issue, reply, bool) {
	owner, _ := v["owner"].(string)
	name, _ := v["name"].(string)
	num, _ := v["number"].(float64)
	full := owner + "/" + name
	rp := s.repos[strings.ToLower(full)]
	if rp == nil || !c.tok.id.canSee(full) {
		return nil, nil, gqlErrors(obj{"repository": nil}, obj{"type": "NOT_FOUND", "path": []string{"repository"},
			"message": fmt.Sprintf("Could not resolve to a Repository with the name '%s'.", full)}), false
	}
	is := rp.issues[int(num)]
	if is == nil || is.pull != nil {
		return nil, nil, gqlErrors(obj{"repository": obj{"issue": nil}}, obj{"type": "NOT_FOUND", "path": []string{"repository", "issue"},
			"message": fmt.Sprintf("Could not resolve to an Issue with the number of %d.", int(num))}), false
	}
	return rp, is, reply{}, true
}

// byUpdate lists the issue's comments that are not deleted in the
// connection's order: least recently updated first, ties by id.
func byUpdate(is *issue) []*comment {
	var list []*comment
	for _, cm := range is.comments {
		if !cm.deleted {
			list = append(list, cm)
		}
	}
	slices.SortStableFunc(list, func(a, b *comment) int {
		if d := a.updated.Compare(b.updated); d != 0 {
			return d
		}
		return int(a.id - b.id)
	})
	return list
}

// pageEnd is where a page ending just before the cursor ends in list: all
// of it without a cursor. It reports false for a cursor it cannot read.
func pageEnd(list []*comment, before string) (int, bool) {
	if before == "" {
		return len(list), true
	}
	at, id, good := parseCursor(before)
	if !good {
		return 0, false
	}
	hi := 0
	for i, cm := range list {
		if cm.updated.Before(at) || cm.updated.Equal(at) && cm.id < id {
			hi = i + 1
		}
	}
	return hi, true
}

// commentPage renders list[lo:hi] as the comments connection, with its
// pageInfo, and the ids it lists.
func (s *Server) commentPage(list []*comment, lo, hi int) (obj, []string) {
	nodes := make([]obj, 0, hi-lo)
	ids := make([]string, 0, hi-lo)
	for _, cm := range list[lo:hi] {
		nodes = append(nodes, s.commentNode(cm))
		ids = append(ids, strconv.FormatInt(cm.id, 10))
	}
	var start any
	if hi > lo {
		start = cursor(list[lo])
	}
	page := obj{"hasPreviousPage": lo > 0, "hasNextPage": hi < len(list), "startCursor": start}
	return obj{"pageInfo": page, "nodes": nodes}, ids
}

// issueNode renders the issue as the query selects it, with its comments.
func (s *Server) issueNode(rp *repository, is *issue, comments obj) obj {
	labels := make([]obj, 0, len(is.labels))
	for _, l := range is.labels {
		labels = append(labels, obj{"name": l.name})
	}
	return obj{
		"number": is.number, "title": is.title, "body": is.body, "state": strings.ToUpper(is.state),
		"url": s.issueHTML(rp, is), "createdAt": stamp(is.created), "author": actorNode(is.user),
		"labels":   obj{"nodes": labels},
		"comments": comments,
	}
}

// commentNode renders an IssueComment as the query selects it. GraphQL
// names a GitHub App's account without the "[bot]" REST appends.
func (s *Server) commentNode(cm *comment) obj {
	author := actorNode(cm.user)
	counts := map[string]int{}
	for _, r := range cm.reactions {
		counts[r.content]++
	}
	var groups []obj
	for _, k := range reactionContents {
		groups = append(groups, obj{"content": graphqlReactions[k], "reactors": obj{"totalCount": counts[k]}})
	}
	rp := cm.repo
	return obj{
		"fullDatabaseId": strconv.FormatInt(cm.id, 10), "body": cm.body, "author": author,
		"createdAt": stamp(cm.created), "updatedAt": stamp(cm.updated),
		"url":            fmt.Sprintf("%s#issuecomment-%d", s.issueHTML(rp, rp.issues[cm.issue]), cm.id),
		"reactionGroups": groups,
	}
}

// actorNode renders an author as author{__typename login}: a GitHub App's
// account without "[bot]", a deleted one as null.
func actorNode(u *user) any {
	if u == nil {
		return nil
	}
	return obj{"__typename": u.typ, "login": strings.TrimSuffix(u.login, "[bot]")}
}

// cursor is an opaque position in the UPDATED_AT order.
func cursor(cm *comment) string {
	return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "cursor:v2:%d:%d", cm.updated.Unix(), cm.id))
}

func parseCursor(s string) (time.Time, int64, bool) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, 0, false
	}
	rest, ok := strings.CutPrefix(string(raw), "cursor:v2:")
	if !ok {
		return time.Time{}, 0, false
	}
	secs, id, ok := strings.Cut(rest, ":")
	if !ok {
		return time.Time{}, 0, false
	}
	sec, err1 := strconv.ParseInt(secs, 10, 64)
	n, err2 := strconv.ParseInt(id, 10, 64)
	if err1 != nil || err2 != nil {
		return time.Time{}, 0, false
	}
	return time.Unix(sec, 0).UTC(), n, true
}
