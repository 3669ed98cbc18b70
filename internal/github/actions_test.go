package github

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

const dispatchPath = "/repos/octocat/Hello-World/actions/workflows/agent.yml/dispatches"

func TestDispatchWorkflow(t *testing.T) {
	legacy := []byte(`{"message":"Invalid request.\n\n\"return_run_details\" is not a permitted key.","documentation_url":"https://docs.github.com/enterprise-server@3.14/rest/actions/workflows#create-a-workflow-dispatch-event","status":"422"}`)
	badInputs := []byte(`{"message":"Unexpected inputs provided: [\"bogus\"]","documentation_url":"https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event","status":"422"}`)
	tests := []struct {
		name        string
		steps       []http.HandlerFunc
		wantID      int64
		wantErr     error
		wantDetails []bool // return_run_details per request sent
	}{
		{"200 with run details", []http.HandlerFunc{status(200, fixture(t, "dispatch-response.json"))}, 1, nil, []bool{true}},
		{"204 without run details", []http.HandlerFunc{status(204, nil)}, 0, nil, []bool{true}},
		{"older GHES rejects the parameter (422)", []http.HandlerFunc{status(422, legacy), status(204, nil)}, 0, nil, []bool{true, false}},
		{"older GHES rejects the parameter (400)", []http.HandlerFunc{status(400, legacy), status(204, nil)}, 0, nil, []bool{true, false}},
		{"other 422 is not re-sent", []http.HandlerFunc{status(422, badInputs)}, 0, forge.ErrValidation, []bool{true}},
		{"5xx is not retried blindly", []http.HandlerFunc{status(502, serverErrorBody)}, 0, &forge.TransientError{}, []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "", nil)
			e.handle("POST "+dispatchPath, script(tt.steps...))
			inputs := map[string]string{"issue": "1347", "step": "plan", "session": "s-1"}
			id, err := e.client.DispatchWorkflow(context.Background(), "agent.yml", "main", inputs)
			switch want := tt.wantErr.(type) {
			case nil:
				if err != nil {
					t.Fatalf("err = %v", err)
				}
			case *forge.TransientError:
				if !errors.As(err, &want) {
					t.Fatalf("err = %v, want TransientError", err)
				}
			default:
				if !errors.Is(err, want) {
					t.Fatalf("err = %v, want %v", err, want)
				}
			}
			if id != tt.wantID {
				t.Errorf("run id = %d, want %d", id, tt.wantID)
			}
			var details []bool
			for _, r := range e.requests() {
				var body struct {
					Ref              string            `json:"ref"`
					Inputs           map[string]string `json:"inputs"`
					ReturnRunDetails *bool             `json:"return_run_details"`
				}
				if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
					t.Fatalf("body %q: %v", r.Body, err)
				}
				if body.Ref != "main" || !reflect.DeepEqual(body.Inputs, inputs) {
					t.Errorf("body = %+v", body)
				}
				details = append(details, body.ReturnRunDetails != nil && *body.ReturnRunDetails)
			}
			if !reflect.DeepEqual(details, tt.wantDetails) {
				t.Errorf("return_run_details per request = %v, want %v", details, tt.wantDetails)
			}
		})
	}
}

func TestListWorkflowRunsFiltersByCreation(t *testing.T) {
	e := newEnv(t, "", nil)
	e.handle("GET /repos/octocat/Hello-World/actions/workflows/build.yml/runs", status(200, fixture(t, "workflow-runs.json")))
	since := time.Date(2020, 1, 22, 19, 0, 0, 0, time.FixedZone("CET", 3600))
	runs, err := e.client.ListWorkflowRuns(context.Background(), "build.yml", since)
	if err != nil {
		t.Fatal(err)
	}
	want := []forge.WorkflowRun{{
		ID: 30433642, Name: "Build", DisplayTitle: "Update README.md", Status: "queued", Event: "push",
		HeadSHA: "acb5820ced9479c074f688cc328bf03f341a511d", Path: ".github/workflows/build.yml",
		URL: "https://github.com/octo-org/octo-repo/actions/runs/30433642", CreatedAt: time.Date(2020, 1, 22, 19, 33, 8, 0, time.UTC), HeadRepo: "octo-org/octo-repo",
	}}
	if !reflect.DeepEqual(runs, want) {
		t.Errorf("runs =\n%+v\nwant\n%+v", runs, want)
	}
	q, _ := url.ParseQuery(e.requests()[0].Query)
	if q.Get("created") != ">=2020-01-22T18:00:00Z" || q.Get("per_page") != "100" {
		t.Errorf("query = %v", q)
	}
}
