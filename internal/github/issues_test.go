package github

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

func TestGetIssueMapsFields(t *testing.T) {
	e := newEnv(t, "", nil)
	plain := patchJSON(t, fixture(t, "issue.json"), func(m map[string]any) { delete(m, "pull_request") })
	e.handle("GET /repos/octocat/Hello-World/issues/1347", status(200, plain))
	e.handle("GET /repos/octocat/Hello-World/issues/1348", status(200, fixture(t, "issue.json")))
	is, err := e.client.GetIssue(context.Background(), 1347)
	if err != nil {
		t.Fatal(err)
	}
	want := forge.Issue{
		Number: 1347, Title: "Found a bug", Body: "I'm having a problem with this.", State: "open",
		Labels: []string{"bug"}, Author: forge.User{Login: "octocat", ID: 1, Type: "User"},
		URL: "https://github.com/octocat/Hello-World/issues/1347", CreatedAt: time.Date(2011, 4, 22, 13, 33, 48, 0, time.UTC),
	}
	if !reflect.DeepEqual(is, want) {
		t.Errorf("issue =\n%+v\nwant\n%+v", is, want)
	}
	pr, err := e.client.GetIssue(context.Background(), 1348)
	if err != nil || !pr.IsPR {
		t.Errorf("issue with pull_request: IsPR = %v, err %v", pr.IsPR, err)
	}
}

func TestGetIssueNotFound(t *testing.T) {
	e := newEnv(t, "", nil)
	e.handle("GET /repos/octocat/Hello-World/issues/9", status(404, notFoundBody))
	if _, err := e.client.GetIssue(context.Background(), 9); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
}

func TestAddLabelsSendsNames(t *testing.T) {
	e := newEnv(t, "", nil)
	var body []string
	e.handle("POST /repos/octocat/Hello-World/issues/1347/labels", func(w http.ResponseWriter, r *http.Request) {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("body: %v", err)
		}
		reply(w, 200, fixture(t, "labels.json"))
	})
	ctx := context.Background()
	if err := e.client.AddLabels(ctx, 1347, nil); err != nil || len(e.requests()) != 0 {
		t.Fatalf("no labels: err %v, %d requests; want a no-op", err, len(e.requests()))
	}
	if err := e.client.AddLabels(ctx, 1347, []forge.Label{{Name: "autopilot"}, {Name: "autopilot/status:in-progress"}}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"autopilot", "autopilot/status:in-progress"}; !reflect.DeepEqual(body, want) {
		t.Errorf("body = %v, want %v", body, want)
	}
}

func TestRemoveLabel(t *testing.T) {
	tests := []struct {
		name    string
		code    int
		body    []byte
		wantErr error
	}{
		{"removed", 200, []byte("[]"), nil},
		{"already absent (404) is success", 404, []byte(`{"message":"Label does not exist","documentation_url":"https://docs.github.com/rest/issues/labels#remove-a-label-from-an-issue"}`), nil},
		{"forbidden", 403, forbiddenBody, forge.ErrForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "", nil)
			var got string
			e.handle("DELETE /repos/octocat/Hello-World/issues/1347/labels/{name}", func(w http.ResponseWriter, r *http.Request) {
				got = r.PathValue("name")
				reply(w, tt.code, tt.body)
			})
			err := e.client.RemoveLabel(context.Background(), 1347, "autopilot/step:plan")
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got != "autopilot/step:plan" {
				t.Errorf("label on the wire = %q", got)
			}
			if p := e.requests()[0].Path; p != "/repos/octocat/Hello-World/issues/1347/labels/autopilot%2Fstep:plan" {
				t.Errorf("path = %q, want the label escaped as one segment", p)
			}
		})
	}
}

// TestAddLabelsPaintsOnlyLabelsGitHubCreated: GitHub creates a missing
// label grey as it adds it; that label, and only that one, gets its colour
// and description with one PATCH. An existing label is never changed.
func TestAddLabelsPaintsOnlyLabelsGitHubCreated(t *testing.T) {
	e := newEnv(t, "", func(o *Options) { o.MinMutationGap = -1 })
	// The labels the issue carries after the add: "bug" existed, the
	// autopilot label was just created (ededed, no description), and a grey
	// label the repository already had keeps its description.
	e.handle("POST /repos/octocat/Hello-World/issues/1347/labels", status(200, []byte(`[
  {"id": 208045946, "node_id": "MDU6TGFiZWwyMDgwNDU5NDY=", "url": "https://api.github.com/repos/octocat/Hello-World/labels/bug", "name": "bug", "description": "Something isn't working", "color": "f29513", "default": true},
  {"id": 208045950, "node_id": "MDU6TGFiZWwyMDgwNDU5NTA=", "url": "https://api.github.com/repos/octocat/Hello-World/labels/autopilot%2Fstatus:done", "name": "autopilot/status:done", "description": null, "color": "ededed", "default": false},
  {"id": 208045951, "node_id": "MDU6TGFiZWwyMDgwNDU5NTE=", "url": "https://api.github.com/repos/octocat/Hello-World/labels/grey", "name": "grey", "description": "on purpose", "color": "ededed", "default": false}
]`)))
	var painted []map[string]string
	var paths []string
	e.handle("PATCH /repos/octocat/Hello-World/labels/{name}", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]string
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			t.Errorf("body: %v", err)
		}
		painted = append(painted, in)
		paths = append(paths, r.URL.EscapedPath())
		reply(w, 200, fixture(t, "label.json"))
	})
	err := e.client.AddLabels(context.Background(), 1347, []forge.Label{
		{Name: "bug", Color: "d73a4a", Description: "exists already"},
		{Name: "autopilot/status:done", Color: "#0e8a16", Description: "autopilot: the run is complete"},
		{Name: "grey", Color: "5319e7", Description: "exists already, grey"},
	})
	if err != nil {
		t.Fatalf("AddLabels: %v", err)
	}
	want := []map[string]string{{"color": "0e8a16", "description": "autopilot: the run is complete"}}
	if !reflect.DeepEqual(painted, want) {
		t.Errorf("painted = %v, want %v", painted, want)
	}
	if len(paths) != 1 || paths[0] != "/repos/octocat/Hello-World/labels/autopilot%2Fstatus:done" {
		t.Errorf("PATCH paths = %v, want the label escaped as one segment", paths)
	}
}

func TestAddLabelsReportsAPaintRefusal(t *testing.T) {
	e := newEnv(t, "", func(o *Options) { o.MinMutationGap = -1 })
	e.handle("POST /repos/octocat/Hello-World/issues/1347/labels", status(200, []byte(`[{"id": 1, "node_id": "MDU6TGFiZWwx", "url": "https://api.github.com/repos/octocat/Hello-World/labels/x", "name": "x", "description": null, "color": "ededed", "default": false}]`)))
	e.handle("PATCH /repos/octocat/Hello-World/labels/{name}", status(422, fixture(t, "error-422-label.json")))
	err := e.client.AddLabels(context.Background(), 1347, []forge.Label{{Name: "x", Color: "nothex"}})
	if !errors.Is(err, forge.ErrValidation) {
		t.Errorf("err = %v, want ErrValidation", err)
	}
}
