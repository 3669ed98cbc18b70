package github

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

func TestGetPullMapsFields(t *testing.T) {
	tests := []struct {
		name       string
		edit       func(m map[string]any)
		wantMerged bool
	}{
		{"open", func(map[string]any) {}, false},
		{"merged", func(m map[string]any) { m["state"], m["merged"] = "closed", true }, true},
		{"list shape without merged flag", func(m map[string]any) { delete(m, "merged") }, true},
	}
	// A fork that was deleted: head.repo is null, HeadRepo is "" (never
	// this repository).
	e := newEnv(t, "", nil)
	e.handle("GET /repos/octocat/Hello-World/pulls/1347", status(200, patchJSON(t, fixture(t, "pull.json"), func(m map[string]any) { m["head"].(map[string]any)["repo"] = nil })))
	if pr, err := e.client.GetPull(context.Background(), 1347); err != nil || pr.HeadRepo != "" {
		t.Errorf("deleted fork: head repo %q, err %v", pr.HeadRepo, err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "", nil)
			e.handle("GET /repos/octocat/Hello-World/pulls/1347", status(200, patchJSON(t, fixture(t, "pull.json"), tt.edit)))
			pr, err := e.client.GetPull(context.Background(), 1347)
			if err != nil {
				t.Fatal(err)
			}
			if pr.Number != 1347 || pr.Title != "Amazing new feature" || pr.HeadSHA != "6dcb09b5b57875f334f61aebed695e2e4193db5e" ||
				pr.URL != "https://github.com/octocat/Hello-World/pull/1347" || pr.Author.Login != "octocat" || pr.Merged != tt.wantMerged ||
				pr.HeadRepo != "octocat/Hello-World" {
				t.Errorf("pull = %+v (want merged %v)", pr, tt.wantMerged)
			}
		})
	}
}

func TestListReviewsMapsFields(t *testing.T) {
	e := newEnv(t, "", nil)
	e.handle("GET /repos/octocat/Hello-World/pulls/12/reviews", status(200, fixture(t, "reviews.json")))
	got, err := e.client.ListReviews(context.Background(), 12)
	if err != nil {
		t.Fatal(err)
	}
	want := []forge.Review{{
		ID: 80, PR: 12, Reviewer: forge.User{Login: "octocat", ID: 1, Type: "User"}, State: "APPROVED",
		Body: "Here is the body for the review.", SubmittedAt: time.Date(2019, 11, 17, 17, 43, 43, 0, time.UTC),
		URL: "https://github.com/octocat/Hello-World/pull/12#pullrequestreview-80", CommitSHA: "ecdd80bb57125d7ba9641ffaa4d7d2c19d3f3091",
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reviews =\n%+v\nwant\n%+v", got, want)
	}
	if q := e.requests()[0].Query; !strings.Contains(q, "per_page=100") {
		t.Errorf("query %q lacks per_page=100", q)
	}
}

func TestListChecksMergesCheckRunsAndStatuses(t *testing.T) {
	e := newEnv(t, "", nil)
	const sha = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	e.handle("GET /repos/octocat/Hello-World/commits/"+sha+"/check-runs", status(200, fixture(t, "check-runs.json")))
	statuses := patchJSON(t, fixture(t, "combined-status.json"), func(m map[string]any) {
		list := m["statuses"].([]any)
		list[1].(map[string]any)["state"] = "pending"
		failed := map[string]any{"context": "lint", "state": "error", "target_url": "https://ci.example.com/3"}
		m["statuses"] = append(list, failed)
	})
	e.handle("GET /repos/octocat/Hello-World/commits/"+sha+"/status", status(200, statuses))
	got, err := e.client.ListChecks(context.Background(), sha)
	if err != nil {
		t.Fatal(err)
	}
	want := []forge.Check{
		{ID: 4, Name: "mighty_readme", Status: "completed", Conclusion: "neutral", URL: "https://github.com/github/hello-world/runs/4", AppID: 1},
		{ID: 1, Name: "continuous-integration/jenkins", Status: "completed", Conclusion: "success", URL: "https://ci.example.com/1000/output"},
		{ID: 2, Name: "security/brakeman", Status: "in_progress", URL: "https://ci.example.com/2000/output"},
		{Name: "lint", Status: "completed", Conclusion: "failure", URL: "https://ci.example.com/3"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("checks =\n%+v\nwant\n%+v", got, want)
	}
}
