package fakejira

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
)

// issueTypes are the issue types of the fake project.
var issueTypes = []string{"Task", "Story", "Bug", "Epic"}

type category struct {
	ID        int
	Key, Name string
	Color     string
}

// categories maps the fake's statuses to Jira's status categories.
var categories = map[string]category{
	"To Do":       {2, "new", "To Do", "blue-gray"},
	"In Progress": {4, "indeterminate", "In Progress", "yellow"},
	"Done":        {3, "done", "Done", "green"},
}

type issueUpdate struct {
	Fields map[string]json.RawMessage `json:"fields"`
}

// create handles POST /rest/api/2/issue.
func (s *Server) create(w http.ResponseWriter, body []byte) {
	var u issueUpdate
	if err := json.Unmarshal(body, &u); err != nil || u.Fields == nil {
		writeErrors(w, http.StatusBadRequest, []string{"Can not deserialize the request body."}, nil)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	is, errs := s.build(u.Fields)
	if len(errs) > 0 {
		writeErrors(w, http.StatusBadRequest, nil, errs)
		return
	}
	writeJSON(w, http.StatusCreated, s.add(is))
}

// createdIssue is the answer to a create.
type createdIssue struct {
	ID   string `json:"id"`
	Key  string `json:"key"`
	Self string `json:"self"`
}

// add stores is with the next id and key; s.mu must be held.
func (s *Server) add(is *Issue) createdIssue {
	is.ID = fmt.Sprint(s.nextID)
	s.nextID++
	is.Key = fmt.Sprintf("%s-%d", s.opts.Project, len(s.issues)+1)
	is.Status = "To Do"
	is.Created = s.opts.Now()
	s.issues = append(s.issues, is)
	return createdIssue{ID: is.ID, Key: is.Key, Self: s.srv.URL + "/rest/api/2/issue/" + is.ID}
}

type bulkError struct {
	Status              int             `json:"status"`
	ElementErrors       errorCollection `json:"elementErrors"`
	FailedElementNumber int             `json:"failedElementNumber"`
}

type errorCollection struct {
	ErrorMessages []string          `json:"errorMessages"`
	Errors        map[string]string `json:"errors"`
}

// bulk handles POST /rest/api/2/issue/bulk: 201 with the created issues and
// per-element errors, or 400 with the same shape when nothing was created.
func (s *Server) bulk(w http.ResponseWriter, body []byte) {
	var req struct {
		IssueUpdates []issueUpdate `json:"issueUpdates"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeErrors(w, http.StatusBadRequest, []string{"Can not deserialize the request body."}, nil)
		return
	}
	if len(req.IssueUpdates) > 50 {
		writeErrors(w, http.StatusBadRequest, []string{fmt.Sprintf("Bulk create supports at most 50 issues; got %d.", len(req.IssueUpdates))}, nil)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	created := []createdIssue{}
	failed := []bulkError{}
	for i, u := range req.IssueUpdates {
		is, errs := s.build(u.Fields)
		if len(errs) > 0 {
			failed = append(failed, bulkError{Status: 400, ElementErrors: errorCollection{ErrorMessages: []string{}, Errors: errs}, FailedElementNumber: i})
			continue
		}
		created = append(created, s.add(is))
	}
	status := http.StatusCreated
	if len(created) == 0 && len(failed) > 0 {
		status = http.StatusBadRequest
	}
	writeJSON(w, status, map[string]any{"issues": created, "errors": failed})
}

// build validates create fields as Jira does and returns the issue or the
// field errors; s.mu must be held.
func (s *Server) build(fields map[string]json.RawMessage) (*Issue, map[string]string) {
	errs := map[string]string{}
	is := &Issue{}
	for name, raw := range fields {
		if msg := s.setField(is, name, raw); msg != "" {
			errs[name] = msg
		}
	}
	s.checkRequired(is, fields, errs)
	return is, errs
}

// setField decodes one create field into is and returns Jira's error for
// it, or "". The custom fields are matched by the ids the server was given.
func (s *Server) setField(is *Issue, name string, raw json.RawMessage) string {
	switch name {
	case "project":
		return s.checkProject(raw)
	case "issuetype":
		return setIssueType(is, raw)
	case "summary":
		return setString(raw, &is.Summary)
	case "description":
		return setString(raw, &is.Description)
	case "labels":
		return setLabels(is, raw)
	case "parent":
		return s.setParent(is, raw)
	case s.opts.PointsField:
		return setPoints(is, raw)
	case s.opts.EpicLinkField:
		return setString(raw, &is.EpicLink)
	case s.opts.EpicNameField:
		return setString(raw, &is.EpicName)
	default:
		return notOnScreen(name)
	}
}

// checkProject accepts the server's project by key or by its id, 10000.
func (s *Server) checkProject(raw json.RawMessage) string {
	var p struct{ Key, ID string }
	if json.Unmarshal(raw, &p) != nil || (p.Key != s.opts.Project && p.ID != "10000") {
		return "valid project is required"
	}
	return ""
}

func setIssueType(is *Issue, raw json.RawMessage) string {
	var t struct{ Name string }
	var msg string
	if json.Unmarshal(raw, &t) != nil || !slices.Contains(issueTypes, t.Name) {
		msg = "valid issue type is required"
	}
	is.Type = t.Name
	return msg
}

func setString(raw json.RawMessage, v *string) string {
	if json.Unmarshal(raw, v) != nil {
		return "Operation value must be a string"
	}
	return ""
}

// setLabels refuses a label with white space in it, as Jira does.
func setLabels(is *Issue, raw json.RawMessage) string {
	var msg string
	if json.Unmarshal(raw, &is.Labels) != nil {
		msg = "Operation value must be an array of strings"
	}
	for _, l := range is.Labels {
		if strings.ContainsAny(l, " \t\r\n") {
			msg = fmt.Sprintf("The label '%s' contains spaces which is invalid.", l)
		}
	}
	return msg
}

// setParent takes a parent on Cloud only; Data Center links an epic
// through the Epic Link field instead.
func (s *Server) setParent(is *Issue, raw json.RawMessage) string {
	var p struct{ Key string }
	var msg string
	if s.opts.Deployment != Cloud {
		msg = notOnScreen("parent")
	} else if json.Unmarshal(raw, &p) != nil {
		msg = "Operation value must be an object"
	}
	is.Parent = p.Key
	return msg
}

func setPoints(is *Issue, raw json.RawMessage) string {
	var f float64
	var msg string
	if json.Unmarshal(raw, &f) != nil {
		msg = "Operation value must be a number."
	}
	is.Points = &f
	return msg
}

func notOnScreen(field string) string {
	return fmt.Sprintf("Field '%s' cannot be set. It is not on the appropriate screen, or unknown.", field)
}

// checkRequired adds the errors Jira reports across fields; s.mu must be held.
func (s *Server) checkRequired(is *Issue, fields map[string]json.RawMessage, errs map[string]string) {
	if _, ok := fields["project"]; !ok {
		errs["project"] = "project is required"
	}
	if _, ok := fields["issuetype"]; !ok {
		errs["issuetype"] = "issue type is required"
	}
	switch {
	case strings.TrimSpace(is.Summary) == "":
		errs["summary"] = "You must specify a summary of the issue."
	case utf8.RuneCountInString(is.Summary) > 255:
		errs["summary"] = "Summary must be less than 255 characters."
	case strings.ContainsAny(is.Summary, "\r\n"):
		errs["summary"] = "The summary is invalid because it contains newline characters."
	}
	if is.Type == "Epic" && s.opts.EpicNameField != "" && s.opts.Deployment == DataCenter && is.EpicName == "" {
		errs[s.opts.EpicNameField] = "Epic Name is required."
	}
	if is.Parent != "" && !s.isEpic(is.Parent) {
		errs["parent"] = fmt.Sprintf("Issue '%s' does not exist or is not an epic.", is.Parent)
	}
	if is.EpicLink != "" && !s.isEpic(is.EpicLink) {
		errs[s.opts.EpicLinkField] = fmt.Sprintf("The issue '%s' is not an epic.", is.EpicLink)
	}
}

// isEpic reports whether key names an existing epic; s.mu must be held.
func (s *Server) isEpic(key string) bool {
	is := s.find(key)
	return is != nil && is.Type == "Epic"
}

// get handles GET /rest/api/2/issue/{idOrKey}.
func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	idOrKey := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/rest/api/2/issue/"), "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.find(idOrKey)
	if is == nil {
		writeErrors(w, http.StatusNotFound, []string{"Issue does not exist or you do not have permission to see it."}, nil)
		return
	}
	writeJSON(w, http.StatusOK, s.render(is, fieldSet(r.URL.Query().Get("fields"), true)))
}

// fieldSet parses a fields parameter; nil means every field.
func fieldSet(param string, allByDefault bool) map[string]bool {
	if param == "" {
		if allByDefault {
			return nil
		}
		return map[string]bool{"id": true}
	}
	set := map[string]bool{}
	for _, f := range strings.Split(param, ",") {
		f = strings.TrimSpace(f)
		if f == "*all" || f == "*navigable" {
			return nil
		}
		set[f] = true
	}
	return set
}

// render is the REST v2 issue bean with the requested fields; s.mu must be held.
func (s *Server) render(is *Issue, want map[string]bool) map[string]any {
	out := map[string]any{"id": is.ID}
	if len(want) == 1 && want["id"] {
		return out
	}
	out["key"] = is.Key
	out["self"] = s.srv.URL + "/rest/api/2/issue/" + is.ID
	out["expand"] = "renderedFields,names,schema,operations,editmeta,changelog,versionedRepresentations"
	cat := categories[is.Status]
	all := map[string]any{
		"summary":     is.Summary,
		"description": is.Description,
		"labels":      nonNil(is.Labels),
		"issuetype":   map[string]any{"name": is.Type, "subtask": false},
		"project":     map[string]any{"key": s.opts.Project, "name": "Project " + s.opts.Project},
		"status": map[string]any{
			"name": is.Status,
			"statusCategory": map[string]any{
				"id": cat.ID, "key": cat.Key, "name": cat.Name, "colorName": cat.Color,
			},
		},
		"created": is.Created.UTC().Format("2006-01-02T15:04:05.000-0700"),
	}
	if is.Parent != "" {
		all["parent"] = map[string]any{"key": is.Parent}
	}
	if s.opts.EpicLinkField != "" && s.opts.Deployment == DataCenter {
		all[s.opts.EpicLinkField] = nilIfEmpty(is.EpicLink)
	}
	if s.opts.EpicNameField != "" {
		all[s.opts.EpicNameField] = nilIfEmpty(is.EpicName)
	}
	if is.Points != nil {
		all[s.opts.PointsField] = *is.Points
	} else {
		all[s.opts.PointsField] = nil
	}
	fields := map[string]any{}
	for k, v := range all {
		if want == nil || want[k] {
			fields[k] = v
		}
	}
	out["fields"] = fields
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
