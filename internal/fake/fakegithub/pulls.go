package fakegithub

import (
	"net/http"
	"slices"
)

const docReviews = "https://docs.github.com/rest/pulls/reviews"

func (c *call) pull() *issue {
	is := c.issue()
	if is == nil || is.pull == nil {
		return nil
	}
	return is
}

func (s *Server) pullJSON(rp *repository, is *issue) obj {
	pr := is.pull
	html := s.issueHTML(rp, is)
	side := func(in *repository, ref, sha string) obj {
		return obj{"label": in.owner + ":" + ref, "ref": ref, "sha": sha,
			"user": s.userJSON(s.user(in.owner, "Organization")), "repo": s.repoJSON(in)}
	}
	headRepo := rp
	if pr.headRepo != nil {
		headRepo = pr.headRepo
	}
	return obj{
		"id": pr.id, "node_id": nodeID("PullRequest", pr.id), "number": is.number,
		"url": s.api("/repos/%s/pulls/%d", rp.fullName(), is.number), "html_url": html,
		"diff_url": html + ".diff", "patch_url": html + ".patch",
		"issue_url": s.api("/repos/%s/issues/%d", rp.fullName(), is.number),
		"state":     is.state, "locked": false, "title": is.title, "body": orNull(is.body),
		"user": s.userJSON(is.user), "labels": s.labelsJSON(rp, is.labels),
		"created_at": stamp(is.created), "updated_at": stamp(is.updated),
		"closed_at": stamp(is.closed), "merged_at": stamp(pr.mergedAt), "merged": pr.merged,
		"draft": pr.draft, "head": side(headRepo, pr.headRef, pr.headSHA), "base": side(rp, pr.baseRef, ""),
		"author_association": association(rp, is.user),
	}
}

func (s *Server) getPull(c *call) reply {
	is := c.pull()
	if is == nil {
		return notFound()
	}
	return ok(s.pullJSON(c.repo, is))
}

func (s *Server) reviewJSON(rp *repository, is *issue, r *review) obj {
	html := s.issueHTML(rp, is)
	pu := s.api("/repos/%s/pulls/%d", rp.fullName(), is.number)
	var submitted any
	if r.state != "PENDING" {
		submitted = stamp(r.submitted)
	}
	return obj{
		"id": r.id, "node_id": nodeID("PullRequestReview", r.id), "user": s.userJSON(r.user),
		"body": r.body, "state": r.state, "commit_id": r.commitID, "submitted_at": submitted,
		"html_url": html + "#pullrequestreview-" + itoa(r.id), "pull_request_url": pu,
		"author_association": association(rp, r.user),
		"_links": obj{"html": obj{"href": html + "#pullrequestreview-" + itoa(r.id)},
			"pull_request": obj{"href": pu}},
	}
}

func (s *Server) listReviews(c *call) reply {
	is := c.pull()
	if is == nil {
		return notFound()
	}
	var list []*review
	for _, r := range is.pull.reviews {
		if r.state != "PENDING" || r.user == c.who {
			list = append(list, r)
		}
	}
	return paged(s, c, list, func(r *review) obj { return s.reviewJSON(c.repo, is, r) })
}

var reviewEvents = map[string]string{
	"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED", "": "PENDING",
}

// createReview serves POST .../pulls/{n}/reviews. Like GitHub, authors
// cannot approve or request changes on their own pull request.
func (s *Server) createReview(c *call) reply {
	is := c.pull()
	if is == nil {
		return notFound()
	}
	var in struct {
		Body     string `json:"body"`
		Event    string `json:"event"`
		CommitID string `json:"commit_id"`
	}
	if rep, good := c.decode(&in); !good {
		return rep
	}
	state, known := reviewEvents[in.Event]
	if !known {
		return validation(docReviews, fieldError{"resource": "PullRequestReview", "code": "invalid", "field": "event"})
	}
	if is.user == c.who && (state == "APPROVED" || state == "CHANGES_REQUESTED") {
		verb := map[string]string{"APPROVED": "approve", "CHANGES_REQUESTED": "request changes on"}[state]
		return reply{status: http.StatusUnprocessableEntity, body: obj{"message": "Unprocessable Entity",
			"errors": []string{"Can not " + verb + " your own pull request"}, "documentation_url": docReviews, "status": "422"}}
	}
	if (state == "CHANGES_REQUESTED" || state == "COMMENTED") && in.Body == "" {
		return validation(docReviews, fieldError{"resource": "PullRequestReview", "code": "missing_field", "field": "body"})
	}
	r := s.addReview(is, c.who, state, in.Body, in.CommitID)
	return ok(s.reviewJSON(c.repo, is, r))
}

func (s *Server) addReview(is *issue, u *user, state, body, commit string) *review {
	if commit == "" {
		commit = is.pull.headSHA
	}
	r := &review{id: s.newID(), user: u, state: state, body: body, commitID: commit, submitted: s.now()}
	is.pull.reviews = append(is.pull.reviews, r)
	return r
}

// listCheckRuns serves GET .../commits/{ref}/check-runs (ref is a SHA),
// filtered by check_name, status and app_id, newest first.
func (s *Server) listCheckRuns(c *call) reply {
	var runs []obj
	all := c.repo.checks[c.params["ref"]]
	for i := len(all) - 1; i >= 0; i-- {
		cr := all[i]
		if n := c.query.Get("check_name"); n != "" && n != cr.name {
			continue
		}
		if st := c.query.Get("status"); st != "" && st != cr.status {
			continue
		}
		if id := c.query.Get("app_id"); id != "" && id != itoa(cr.app()) {
			continue
		}
		runs = append(runs, s.checkRunJSON(c.repo, c.params["ref"], cr))
	}
	lo, hi, link := s.pageBounds(c, len(runs))
	rep := ok(obj{"total_count": len(runs), "check_runs": append([]obj{}, runs[lo:hi]...)})
	if link != "" {
		rep.set("Link", link)
	}
	return rep
}

// combinedStatus serves GET .../commits/{ref}/status: the latest status per
// context, and "failure" if any failed or errored, "pending" if any is
// pending or there are none, else "success".
func (s *Server) combinedStatus(c *call) reply {
	sha := c.params["ref"]
	var latest []*status
	all := c.repo.statuses[sha]
	for i := len(all) - 1; i >= 0; i-- {
		if !slices.ContainsFunc(latest, func(st *status) bool { return st.context == all[i].context }) {
			latest = append(latest, all[i])
		}
	}
	state, items := "success", []obj{}
	if len(latest) == 0 {
		state = "pending"
	}
	for _, st := range latest {
		switch {
		case st.state == "failure" || st.state == "error":
			state = "failure"
		case st.state == "pending" && state != "failure":
			state = "pending"
		}
		items = append(items, obj{"id": st.id, "node_id": nodeID("StatusContext", st.id),
			"state": st.state, "context": st.context, "description": nil, "target_url": nil,
			"created_at": stamp(st.created), "updated_at": stamp(st.created),
			"url": s.api("/repos/%s/statuses/%s", c.repo.fullName(), sha)})
	}
	return ok(obj{"state": state, "statuses": items, "sha": sha, "total_count": len(items),
		"repository": s.repoJSON(c.repo), "url": s.api("/repos/%s/commits/%s/status", c.repo.fullName(), sha)})
}
