package fakejira

import (
	"strings"
	"testing"
	"time"
)

// offeredTargets lists "id→status/category" for each transition a GET
// transitions answer offers.
func offeredTargets(t *testing.T, a answer) []string {
	t.Helper()
	list, ok := a.body["transitions"].([]any)
	if !ok {
		t.Fatalf("no transitions array: %s", a.raw)
	}
	var out []string
	for _, x := range list {
		tr := x.(map[string]any)
		to := tr["to"].(map[string]any)
		cat := to["statusCategory"].(map[string]any)
		out = append(out, tr["id"].(string)+"→"+to["name"].(string)+"/"+cat["key"].(string))
	}
	return out
}

func TestTransitionsOfferedFollowTheWorkflow(t *testing.T) {
	tests := []struct {
		name     string
		workflow []Transition
		status   string
		want     string
	}{
		{"default from To Do", nil, "To Do", "11→To Do/new,21→In Progress/indeterminate,31→Done/done"},
		{"default from Done lists the global Done too", nil, "Done", "11→To Do/new,21→In Progress/indeterminate,31→Done/done"},
		{"linear from To Do has no done transition", LinearWorkflow(), "To Do", "4→In Progress/indeterminate"},
		{"linear from In Progress", LinearWorkflow(), "In Progress", "301→To Do/new,5→Done/done"},
		{"linear from Done", LinearWorkflow(), "Done", "3→To Do/new"},
		{"empty workflow", []Transition{}, "To Do", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newFake(t, Options{Workflow: tc.workflow})
			call(t, s, "POST", "/rest/api/2/issue", authBasic, fields("one", "Task", nil))
			if err := s.Transition("PROJ-1", tc.status); err != nil {
				t.Fatal(err)
			}
			a := call(t, s, "GET", "/rest/api/2/issue/PROJ-1/transitions", authBasic, nil)
			if a.status != 200 {
				t.Fatalf("status %d: %s", a.status, a.raw)
			}
			if got := strings.Join(offeredTargets(t, a), ","); got != tc.want {
				t.Fatalf("offered %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDoTransitionMovesTheIssueOrAnswersLikeJira(t *testing.T) {
	tests := []struct {
		name       string
		workflow   []Transition
		path       string
		body       any
		wantStatus int
		wantIssue  string // status of PROJ-1 afterwards
		wantMsg    string
	}{
		{"done from To Do", nil, "/rest/api/2/issue/PROJ-1/transitions", map[string]any{"transition": map[string]any{"id": "31"}}, 204, "Done", ""},
		{"by id", nil, "/rest/api/2/issue/10000/transitions", map[string]any{"transition": map[string]any{"id": "21"}}, 204, "In Progress", ""},
		{"unknown transition", nil, "/rest/api/2/issue/PROJ-1/transitions", map[string]any{"transition": map[string]any{"id": "99"}}, 400, "To Do", "Transition id '99' is not valid for this issue."},
		{"not offered from the status", LinearWorkflow(), "/rest/api/2/issue/PROJ-1/transitions", map[string]any{"transition": map[string]any{"id": "5"}}, 400, "To Do", "Transition id '5' is not valid"},
		{"missing transition", nil, "/rest/api/2/issue/PROJ-1/transitions", map[string]any{"fields": map[string]any{}}, 400, "To Do", "Missing 'transition' identifier"},
		{"missing issue", nil, "/rest/api/2/issue/PROJ-9/transitions", map[string]any{"transition": map[string]any{"id": "31"}}, 404, "To Do", "Issue does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newFake(t, Options{Workflow: tc.workflow})
			call(t, s, "POST", "/rest/api/2/issue", authBasic, fields("one", "Task", nil))
			a := call(t, s, "POST", tc.path, authBasic, tc.body)
			if a.status != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", a.status, tc.wantStatus, a.raw)
			}
			if tc.wantStatus == 204 && a.raw != "" {
				t.Errorf("204 with a body: %q", a.raw)
			}
			if tc.wantMsg != "" && !strings.Contains(a.raw, tc.wantMsg) {
				t.Errorf("answer %s, want %q", a.raw, tc.wantMsg)
			}
			if got := s.Issues()[0].Status; got != tc.wantIssue {
				t.Errorf("PROJ-1 is %q, want %q", got, tc.wantIssue)
			}
		})
	}
}

func TestTransitionEndpointsNeedAuthAndTakeFaults(t *testing.T) {
	s, c := newFake(t, Options{})
	call(t, s, "POST", "/rest/api/2/issue", authBasic, fields("one", "Task", nil))
	done := map[string]any{"transition": map[string]any{"id": "31"}}

	if a := call(t, s, "GET", "/rest/api/2/issue/PROJ-1/transitions", authWrong, nil); a.status != 401 {
		t.Fatalf("GET with a wrong token: %d", a.status)
	}
	if a := call(t, s, "POST", "/rest/api/2/issue/PROJ-1/transitions", authNone, done); a.status != 401 || s.Issues()[0].Status != "To Do" {
		t.Fatalf("POST without credentials: %d, issue %s", a.status, s.Issues()[0].Status)
	}

	s.Script(EndpointDoTransition, RateLimited(30*time.Second, "jira-per-issue-on-write"))
	a := call(t, s, "POST", "/rest/api/2/issue/PROJ-1/transitions", authBasic, done)
	if a.status != 429 || a.header.Get("Retry-After") != "30" || s.Issues()[0].Status != "To Do" {
		t.Fatalf("scripted 429: %d %v, issue %s", a.status, a.header, s.Issues()[0].Status)
	}
	s.Outage(c.Now().Add(time.Minute), Fault{Status: 503}, EndpointTransitions)
	if a := call(t, s, "GET", "/rest/api/2/issue/PROJ-1/transitions", authBasic, nil); a.status != 503 {
		t.Fatalf("during the outage: %d", a.status)
	}
	c.Advance(time.Minute)
	if a := call(t, s, "GET", "/rest/api/2/issue/PROJ-1/transitions", authBasic, nil); a.status != 200 {
		t.Fatalf("after the outage: %d", a.status)
	}
	s.Script(EndpointDoTransition, Fault{Status: 502, Commit: true})
	if a := call(t, s, "POST", "/rest/api/2/issue/PROJ-1/transitions", authBasic, done); a.status != 502 || s.Issues()[0].Status != "Done" {
		t.Fatalf("committed then lost: %d, issue %s", a.status, s.Issues()[0].Status)
	}

	var eps []string
	for _, q := range s.Requests()[1:] {
		eps = append(eps, q.Endpoint)
	}
	want := "transitions,doTransition,doTransition,transitions,transitions,doTransition"
	if got := strings.Join(eps, ","); got != want {
		t.Fatalf("logged endpoints %s, want %s", got, want)
	}
}

func TestSetWorkflowRefusesUnknownStatuses(t *testing.T) {
	s, _ := newFake(t, Options{})
	if err := s.SetWorkflow([]Transition{{ID: "7", Name: "Close", To: "Closed"}}); err == nil {
		t.Fatal("a transition to an unknown status was accepted")
	}
	if err := s.SetWorkflow(LinearWorkflow()); err != nil {
		t.Fatal(err)
	}
	call(t, s, "POST", "/rest/api/2/issue", authBasic, fields("one", "Task", nil))
	a := call(t, s, "GET", "/rest/api/2/issue/PROJ-1/transitions?expand=transitions.fields", authBasic, nil)
	if got := strings.Join(offeredTargets(t, a), ","); got != "4→In Progress/indeterminate" {
		t.Fatalf("offered %s after SetWorkflow", got)
	}
	if _, ok := a.body["transitions"].([]any)[0].(map[string]any)["fields"]; !ok {
		t.Errorf("expand=transitions.fields gave no fields: %s", a.raw)
	}
}
