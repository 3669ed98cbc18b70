package fakegithub

import (
	"fmt"
	"net/http"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const (
	docDispatch = "https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event"
	// DefaultRunName is the run-name of workflows not configured with SetWorkflow.
	DefaultRunName = "autopilot ${{ inputs.session }}"
)

var runNameExpr = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// expandRunName evaluates the run-name expressions GitHub allows there that
// matter here: inputs.X, github.event.inputs.X, github.actor, github.ref_name
// and github.event_name. Anything else renders empty.
func expandRunName(pattern string, inputs map[string]string, actor, ref string) string {
	return runNameExpr.ReplaceAllStringFunc(pattern, func(m string) string {
		expr := runNameExpr.FindStringSubmatch(m)[1]
		for _, p := range []string{"inputs.", "github.event.inputs."} {
			if k, ok := strings.CutPrefix(expr, p); ok {
				return inputs[k]
			}
		}
		return map[string]string{"github.actor": actor, "github.ref_name": ref,
			"github.event_name": "workflow_dispatch"}[expr]
	})
}

// workflow resolves {workflow}: a numeric id, or a file name that is
// created on first use with DefaultRunName.
func (s *Server) workflow(rp *repository, key string, create bool) *workflow {
	for _, wf := range rp.workflows {
		if wf.file == key || path.Base(wf.file) == key || strconv.FormatInt(wf.id, 10) == key {
			return wf
		}
	}
	if !create || (!strings.HasSuffix(key, ".yml") && !strings.HasSuffix(key, ".yaml")) {
		return nil
	}
	wf := &workflow{id: s.newID(), file: ".github/workflows/" + path.Base(key), name: key, runName: DefaultRunName}
	rp.workflows = append(rp.workflows, wf)
	return wf
}

// refSHA is the head of a branch: a pull request's head SHA, or a stable
// made-up SHA for the default branch.
func refSHA(rp *repository, ref string) (string, bool) {
	if ref == rp.defaultBranch {
		return blobSHA([]byte("ref:" + rp.fullName() + ":" + ref)), true
	}
	for _, is := range rp.issues {
		if is.pull != nil && is.pull.headRef == ref {
			return is.pull.headSHA, true
		}
	}
	return "", false
}

// dispatch serves POST .../actions/workflows/{id}/dispatches: 204, or 200
// with the run's id and URLs when return_run_details is true.
func (s *Server) dispatch(c *call) reply {
	var in struct {
		Ref     string         `json:"ref"`
		Inputs  map[string]any `json:"inputs"`
		Details *bool          `json:"return_run_details"`
	}
	if rep, good := c.decode(&in); !good {
		return rep
	}
	invalid := func(msg string) reply {
		return errorReply(http.StatusUnprocessableEntity, "Invalid request.\n\n"+msg, docDispatch)
	}
	switch {
	case s.legacyDispatch && in.Details != nil:
		return invalid(`"return_run_details" is not a permitted key.`)
	case in.Ref == "":
		return invalid(`"ref" wasn't supplied.`)
	case len(in.Inputs) > 25:
		return invalid("inputs has too many properties (maximum is 25).")
	}
	wf := s.workflow(c.repo, c.params["workflow"], true)
	if wf == nil {
		return notFound()
	}
	sha, found := refSHA(c.repo, in.Ref)
	if !found {
		return invalid("No ref found for: " + in.Ref)
	}
	inputs := map[string]string{}
	for k, v := range in.Inputs {
		inputs[k] = fmt.Sprint(v)
	}
	now := s.now()
	wf.runs++
	rn := &run{id: s.newID(), repo: c.repo, wf: wf, number: wf.runs, ref: in.Ref, sha: sha,
		inputs: inputs, actor: c.who, status: "queued", created: now, updated: now}
	rn.title = wf.name
	if wf.runName != "" {
		rn.title = expandRunName(wf.runName, inputs, c.who.login, in.Ref)
	}
	c.repo.runs = append(c.repo.runs, rn)
	s.runs[rn.id] = rn
	if in.Details == nil || !*in.Details {
		return noContent()
	}
	return ok(obj{"workflow_run_id": rn.id,
		"run_url":  s.api("/repos/%s/actions/runs/%d", c.repo.fullName(), rn.id),
		"html_url": fmt.Sprintf("%s/%s/actions/runs/%d", s.webURL, c.repo.fullName(), rn.id)})
}

// event is what triggered the run.
func (rn *run) eventName() string {
	if rn.event == "" {
		return "workflow_dispatch"
	}
	return rn.event
}

func (s *Server) runJSON(rn *run) obj {
	rp := rn.repo
	u := s.api("/repos/%s/actions/runs/%d", rp.fullName(), rn.id)
	head := rp
	if rn.headRepo != nil {
		head = rn.headRepo
	}
	return obj{
		"id": rn.id, "name": rn.wf.name, "node_id": nodeID("WorkflowRun", rn.id),
		"head_branch": rn.ref, "head_sha": rn.sha, "path": rn.wf.file, "display_title": rn.title,
		"run_number": rn.number, "run_attempt": 1, "event": rn.eventName(),
		"status": rn.status, "conclusion": orNull(rn.conclusion), "workflow_id": rn.wf.id,
		"url": u, "html_url": fmt.Sprintf("%s/%s/actions/runs/%d", s.webURL, rp.fullName(), rn.id),
		"created_at": stamp(rn.created), "updated_at": stamp(rn.updated), "run_started_at": stamp(rn.created),
		"actor": s.userJSON(rn.actor), "triggering_actor": s.userJSON(rn.actor), "pull_requests": []obj{},
		"jobs_url": u + "/jobs", "logs_url": u + "/logs", "cancel_url": u + "/cancel", "rerun_url": u + "/rerun",
		"workflow_url": s.api("/repos/%s/actions/workflows/%d", rp.fullName(), rn.wf.id),
		"repository":   s.repoJSON(rp), "head_repository": s.repoJSON(head),
	}
}

// listRuns serves a workflow's runs, newest first, filtered by status (or
// conclusion), event, branch and created (">=T", ">T", "<=T", "<T", "A..B").
func (s *Server) listRuns(c *call) reply {
	wf := s.workflow(c.repo, c.params["workflow"], false)
	if wf == nil {
		return notFound()
	}
	inRange, good := createdFilter(c.query.Get("created"))
	if !good {
		return validation(docRoot, fieldError{"resource": "WorkflowRun", "code": "invalid", "field": "created"})
	}
	q := c.query
	var items []obj
	for i := len(c.repo.runs) - 1; i >= 0; i-- {
		rn := c.repo.runs[i]
		switch {
		case rn.wf != wf, !inRange(rn.created),
			q.Get("status") != "" && q.Get("status") != rn.status && q.Get("status") != rn.conclusion,
			q.Get("event") != "" && q.Get("event") != rn.eventName(),
			q.Get("branch") != "" && q.Get("branch") != rn.ref:
			continue
		}
		items = append(items, s.runJSON(rn))
	}
	lo, hi, link := s.pageBounds(c, len(items))
	rep := ok(obj{"total_count": len(items), "workflow_runs": append([]obj{}, items[lo:hi]...)})
	if link != "" {
		rep.set("Link", link)
	}
	return rep
}

func createdFilter(v string) (func(time.Time) bool, bool) {
	if v == "" {
		return func(time.Time) bool { return true }, true
	}
	parse := func(x string) (time.Time, bool) {
		for _, layout := range []string{time.RFC3339, "2006-01-02"} {
			if t, err := time.Parse(layout, x); err == nil {
				return t, true
			}
		}
		return time.Time{}, false
	}
	if a, b, found := strings.Cut(v, ".."); found {
		lo, ok1 := parse(a)
		hi, ok2 := parse(b)
		return func(t time.Time) bool { return !t.Before(lo) && !t.After(hi) }, ok1 && ok2
	}
	for _, op := range []string{">=", "<=", ">", "<"} {
		if rest, found := strings.CutPrefix(v, op); found {
			at, good := parse(rest)
			return func(t time.Time) bool {
				return map[string]bool{">=": !t.Before(at), "<=": !t.After(at), ">": t.After(at), "<": t.Before(at)}[op]
			}, good
		}
	}
	day, good := parse(v)
	return func(t time.Time) bool { return !t.Before(day) && t.Before(day.Add(24*time.Hour)) }, good
}

func (s *Server) getRun(c *call) reply {
	id, _ := c.intParam("run")
	rn := s.runs[id]
	if rn == nil || rn.repo != c.repo {
		return notFound()
	}
	return ok(s.runJSON(rn))
}
