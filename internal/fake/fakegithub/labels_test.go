package fakegithub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v60/github"
)

func labelNamesOfGH(ls []*github.Label) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.GetName())
	}
	return out
}

func TestIssueLabelsAddReplaceRemove(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	must(t, e.s.AddLabel(testRepo, "bug", "d73a4a", "Something isn't working"))
	n := e.issue("labels", "bug")
	gh := e.client(humanTok)

	added, resp, err := gh.Issues.AddLabelsToIssue(ctx, "octo", "repo", n, []string{"Foo", "autopilot/running", "BUG"})
	wantStatus(t, resp, err, http.StatusOK)
	if got := labelNamesOfGH(added); !slices.Equal(got, []string{"bug", "Foo", "autopilot/running"}) {
		t.Fatalf("after add: %v (existing labels match case-insensitively, no duplicates)", got)
	}
	for _, l := range added {
		if l.GetName() == "Foo" && (l.GetColor() != "ededed" || l.GetDefault() || l.Description != nil) {
			t.Fatalf("auto-created label %+v, want colour ededed, default false, description null", l)
		}
		if l.GetName() == "bug" && l.GetColor() != "d73a4a" {
			t.Fatalf("existing label changed: %+v", l)
		}
	}
	repoLabels := e.s.RepoLabels(testRepo)
	if len(repoLabels) != 3 {
		t.Fatalf("repo labels %+v, want bug plus two auto-created", repoLabels)
	}

	// Names with a slash are path-escaped by go-github and must still match.
	resp, err = gh.Issues.RemoveLabelForIssue(ctx, "octo", "repo", n, "autopilot/running")
	wantStatus(t, resp, err, http.StatusOK)
	resp, err = gh.Issues.RemoveLabelForIssue(ctx, "octo", "repo", n, "autopilot/running")
	wantStatus(t, resp, err, http.StatusNotFound)
	var ge *github.ErrorResponse
	if !errors.As(err, &ge) || ge.Message != "Label does not exist" {
		t.Fatalf("remove absent label: %v, want GitHub's 'Label does not exist'", err)
	}

	replaced, resp, err := gh.Issues.ReplaceLabelsForIssue(ctx, "octo", "repo", n, []string{"autopilot:done"})
	wantStatus(t, resp, err, http.StatusOK)
	if got := labelNamesOfGH(replaced); !slices.Equal(got, []string{"autopilot:done"}) {
		t.Fatalf("after replace: %v", got)
	}
	if got := e.s.Labels(testRepo, n); !slices.Equal(got, []string{"autopilot:done"}) {
		t.Fatalf("snapshot after replace: %v", got)
	}

	// The wrapped body form {"labels": [...]} with objects works too.
	var wrapped []map[string]any
	e.doJSON("POST", fmt.Sprintf("/repos/octo/repo/issues/%d/labels", n), humanTok, `{"labels":[{"name":"x"},"y"]}`, &wrapped)
	if got := e.s.Labels(testRepo, n); !slices.Equal(got, []string{"autopilot:done", "x", "y"}) {
		t.Fatalf("after wrapped add: %v", got)
	}
}

func TestLabelNameLongerThan50Is422WithGitHubBody(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	n := e.issue("long")
	gh := e.client(humanTok)
	long := strings.Repeat("x", 51)
	tests := []struct {
		name  string
		call  func() (*github.Response, error)
		check func(t *testing.T, er *github.ErrorResponse)
	}{
		{"add to issue", func() (*github.Response, error) {
			_, r, err := gh.Issues.AddLabelsToIssue(ctx, "octo", "repo", n, []string{"ok", long})
			return r, err
		}, func(t *testing.T, er *github.ErrorResponse) {
			if len(er.Errors) != 1 || er.Errors[0].Code != "invalid" || er.Errors[0].Field != "name" || er.Errors[0].Resource != "Label" {
				t.Fatalf("errors %+v, want Label name invalid", er.Errors)
			}
		}},
		{"create label", func() (*github.Response, error) {
			_, r, err := gh.Issues.CreateLabel(ctx, "octo", "repo", &github.Label{Name: &long})
			return r, err
		}, func(t *testing.T, er *github.ErrorResponse) {
			if len(er.Errors) != 1 || er.Errors[0].Code != "custom" || !strings.Contains(er.Errors[0].Message, "maximum is 50 characters") {
				t.Fatalf("errors %+v, want custom 'name is too long'", er.Errors)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := tt.call()
			wantStatus(t, resp, err, http.StatusUnprocessableEntity)
			var er *github.ErrorResponse
			if !errors.As(err, &er) || er.Message != "Validation Failed" {
				t.Fatalf("err %v, want Validation Failed", err)
			}
			tt.check(t, er)
		})
	}
	if got := e.s.Labels(testRepo, n); len(got) != 0 {
		t.Fatalf("a rejected add still labelled the issue: %v", got)
	}
	if got := e.s.RepoLabels(testRepo); len(got) != 0 {
		t.Fatalf("a rejected add still created labels: %+v", got)
	}
	fifty := strings.Repeat("é", 50)
	_, resp, err := gh.Issues.AddLabelsToIssue(ctx, "octo", "repo", n, []string{fifty})
	wantStatus(t, resp, err, http.StatusOK)
}

func TestRepoLabelsCreateUpdateAndConflicts(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	gh := e.client(humanTok)
	n := e.issue("repo labels")

	l, resp, err := gh.Issues.CreateLabel(ctx, "octo", "repo", &github.Label{Name: github.String("step:plan"), Color: github.String("663399")})
	wantStatus(t, resp, err, http.StatusCreated)
	if l.GetColor() != "663399" || l.GetDefault() {
		t.Fatalf("created %+v", l)
	}
	_, resp, err = gh.Issues.CreateLabel(ctx, "octo", "repo", &github.Label{Name: github.String("STEP:plan")})
	wantStatus(t, resp, err, http.StatusUnprocessableEntity)
	_, resp, err = gh.Issues.CreateLabel(ctx, "octo", "repo", &github.Label{Name: github.String("c"), Color: github.String("invalid")})
	wantStatus(t, resp, err, http.StatusUnprocessableEntity)

	_, _, err = gh.Issues.AddLabelsToIssue(ctx, "octo", "repo", n, []string{"step:plan"})
	must(t, err)
	l, resp, err = gh.Issues.EditLabel(ctx, "octo", "repo", "step:plan", &github.Label{Name: github.String("step:build"), Color: github.String("BADA55")})
	wantStatus(t, resp, err, http.StatusOK)
	if l.GetName() != "step:build" || l.GetColor() != "BADA55" {
		t.Fatalf("edited %+v", l)
	}
	if got := e.s.Labels(testRepo, n); !slices.Equal(got, []string{"step:build"}) {
		t.Fatalf("rename not reflected on the issue: %v", got)
	}
	_, resp, err = gh.Issues.GetLabel(ctx, "octo", "repo", "step:plan")
	wantStatus(t, resp, err, http.StatusNotFound)
	got, resp, err := gh.Issues.GetLabel(ctx, "octo", "repo", "STEP:BUILD")
	wantStatus(t, resp, err, http.StatusOK)
	if got.GetName() != "step:build" {
		t.Fatalf("case-insensitive get returned %+v", got)
	}
	all, resp, err := gh.Issues.ListLabels(ctx, "octo", "repo", nil)
	wantStatus(t, resp, err, http.StatusOK)
	if len(all) != 1 {
		t.Fatalf("list labels %v", labelNamesOfGH(all))
	}
}
