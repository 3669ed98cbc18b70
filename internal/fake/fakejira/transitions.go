package fakejira

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Transition is one transition of the fake's workflow.
type Transition struct {
	// ID is what a client sends to perform it, e.g. "31".
	ID string
	// Name is the transition's name, e.g. "Done" or "Start Progress".
	Name string
	// To is the status it leads to: "To Do", "In Progress" or "Done".
	To string
	// From lists the statuses it is offered from; empty makes it a global
	// transition offered from every status, its own target included (as
	// Jira lists an "all statuses" transition).
	From []string
}

// DefaultWorkflow is the workflow of a new Jira Cloud project: the
// statuses To Do, In Progress and Done (categories new, indeterminate and
// done), each reachable from every status by a global transition.
func DefaultWorkflow() []Transition {
	return []Transition{
		{ID: "11", Name: "To Do", To: "To Do"},
		{ID: "21", Name: "In Progress", To: "In Progress"},
		{ID: "31", Name: "Done", To: "Done"},
	}
}

// LinearWorkflow is a classic Data Center style workflow that must be
// walked step by step: To Do → In Progress → Done, with Stop Progress and
// Reopen going back. An issue in To Do is offered no transition to Done.
func LinearWorkflow() []Transition {
	return []Transition{
		{ID: "4", Name: "Start Progress", To: "In Progress", From: []string{"To Do"}},
		{ID: "301", Name: "Stop Progress", To: "To Do", From: []string{"In Progress"}},
		{ID: "5", Name: "Resolve Issue", To: "Done", From: []string{"In Progress"}},
		{ID: "3", Name: "Reopen Issue", To: "To Do", From: []string{"Done"}},
	}
}

// statusIDs are the status ids Jira Cloud gives the default statuses.
var statusIDs = map[string]string{"To Do": "10000", "In Progress": "3", "Done": "10001"}

// SetWorkflow replaces the workflow; transitions to unknown statuses are
// refused.
func (s *Server) SetWorkflow(ts []Transition) error {
	for _, t := range ts {
		if _, ok := categories[t.To]; !ok {
			return fmt.Errorf("fakejira: transition %s leads to unknown status %q", t.ID, t.To)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.workflow = slices.Clone(ts)
	return nil
}

// offered lists the transitions available from status; s.mu must be held.
func (s *Server) offered(status string) []Transition {
	var out []Transition
	for _, t := range s.workflow {
		if len(t.From) == 0 || slices.Contains(t.From, status) {
			out = append(out, t)
		}
	}
	return out
}

// transitionKey reads {idOrKey} from /rest/api/2/issue/{idOrKey}/transitions.
func transitionKey(path string) string {
	p := strings.TrimPrefix(path, "/rest/api/2/issue/")
	return strings.TrimSuffix(strings.TrimSuffix(p, "/"), "/transitions")
}

// transitionIssue finds the issue named by a transitions path, answering
// Jira's 404 when there is none; s.mu must be held.
func (s *Server) transitionIssue(w http.ResponseWriter, r *http.Request) *Issue {
	is := s.find(transitionKey(r.URL.Path))
	if is == nil {
		writeErrors(w, http.StatusNotFound, []string{"Issue does not exist or you do not have permission to see it."}, nil)
	}
	return is
}

// statusBean is the REST v2 status object with its category.
func (s *Server) statusBean(status string) map[string]any {
	cat := categories[status]
	return map[string]any{
		"self":        s.srv.URL + "/rest/api/2/status/" + statusIDs[status],
		"description": "",
		"iconUrl":     s.srv.URL + "/",
		"name":        status,
		"id":          statusIDs[status],
		"statusCategory": map[string]any{
			"self": fmt.Sprintf("%s/rest/api/2/statuscategory/%d", s.srv.URL, cat.ID),
			"id":   cat.ID, "key": cat.Key, "colorName": cat.Color, "name": cat.Name,
		},
	}
}

// transitions handles GET /rest/api/2/issue/{idOrKey}/transitions: the
// transitions offered from the issue's status, with their target status
// and its category (and an empty fields map with expand=transitions.fields).
func (s *Server) transitions(w http.ResponseWriter, r *http.Request) {
	withFields := strings.Contains(r.URL.Query().Get("expand"), "transitions.fields")
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.transitionIssue(w, r)
	if is == nil {
		return
	}
	list := []map[string]any{}
	for _, t := range s.offered(is.Status) {
		tr := map[string]any{
			"id": t.ID, "name": t.Name, "to": s.statusBean(t.To),
			"hasScreen": false, "isGlobal": len(t.From) == 0, "isInitial": false,
			"isAvailable": true, "isConditional": false, "isLooped": false,
		}
		if withFields {
			tr["fields"] = map[string]any{}
		}
		list = append(list, tr)
	}
	writeJSON(w, http.StatusOK, map[string]any{"expand": "transitions", "transitions": list})
}

// doTransition handles POST /rest/api/2/issue/{idOrKey}/transitions with
// {"transition":{"id":"…"}}: 204 and the issue moves, or Jira's 400 when the
// transition is missing or not offered from the issue's status.
func (s *Server) doTransition(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Transition *struct {
			ID string `json:"id"`
		} `json:"transition"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeErrors(w, http.StatusBadRequest, []string{"Can not deserialize the request body."}, nil)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.transitionIssue(w, r)
	if is == nil {
		return
	}
	if req.Transition == nil || req.Transition.ID == "" {
		writeErrors(w, http.StatusBadRequest, []string{"Missing 'transition' identifier"}, nil)
		return
	}
	for _, t := range s.offered(is.Status) {
		if t.ID == req.Transition.ID {
			is.Status = t.To
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	writeErrors(w, http.StatusBadRequest, []string{fmt.Sprintf("Transition id '%s' is not valid for this issue.", req.Transition.ID)}, nil)
}
