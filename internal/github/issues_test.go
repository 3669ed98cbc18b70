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
	if err := e.client.AddLabels(ctx, 1347, []string{"autopilot", "autopilot/status:in-progress"}); err != nil {
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

func TestEnsureLabelsCreatesOnlyMissingOnesOnce(t *testing.T) {
	e := newEnv(t, "", func(o *Options) { o.MinMutationGap = -1 })
	e.handle("GET /repos/octocat/Hello-World/labels", status(200, fixture(t, "labels.json")))
	var created []map[string]string
	e.handle("POST /repos/octocat/Hello-World/labels", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]string
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			t.Errorf("body: %v", err)
		}
		created = append(created, in)
		if in["name"] == "autopilot/status:done" { // created meanwhile by another run
			reply(w, 422, []byte(`{"message":"Validation Failed","errors":[{"resource":"Label","code":"already_exists","field":"name"}],"documentation_url":"https://docs.github.com/rest/issues/labels#create-a-label"}`))
			return
		}
		reply(w, 201, fixture(t, "label.json"))
	})
	want := []forge.Label{
		{Name: "Bug", Color: "d73a4a", Description: "exists already, case differs"},
		{Name: "autopilot", Color: "#0e8a16", Description: "autopilot runs this issue"},
		{Name: "autopilot/status:done", Color: "5319e7", Description: "run finished"},
	}
	ctx := context.Background()
	if err := e.client.EnsureLabels(ctx, want); err != nil {
		t.Fatalf("EnsureLabels: %v", err)
	}
	if err := e.client.EnsureLabels(ctx, want); err != nil {
		t.Fatalf("second EnsureLabels: %v", err)
	}
	wantCreated := []map[string]string{
		{"name": "autopilot", "color": "0e8a16", "description": "autopilot runs this issue"},
		{"name": "autopilot/status:done", "color": "5319e7", "description": "run finished"},
	}
	if !reflect.DeepEqual(created, wantCreated) {
		t.Errorf("created = %v, want %v", created, wantCreated)
	}
	if n := e.count("GET", "/labels"); n != 1 {
		t.Errorf("labels listed %d times, want once per client", n)
	}
}

func TestEnsureLabelsReportsOtherValidationErrors(t *testing.T) {
	e := newEnv(t, "", nil)
	e.handle("GET /repos/octocat/Hello-World/labels", status(200, []byte("[]")))
	e.handle("POST /repos/octocat/Hello-World/labels", status(422, fixture(t, "error-422-label.json")))
	err := e.client.EnsureLabels(context.Background(), []forge.Label{{Name: "x", Color: "nothex"}})
	if !errors.Is(err, forge.ErrValidation) {
		t.Errorf("err = %v, want ErrValidation", err)
	}
}
