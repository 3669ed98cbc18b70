package fakegithub

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestLabelIssueAsAPersonIsVisibleToClientsAndNotLogged: the control API
// labels like the web UI does: the API then reports the label, the
// repository label is created with GitHub's default colour, updated_at
// moves, and nothing appears in the request log.
func TestLabelIssueAsAPersonIsVisibleToClientsAndNotLogged(t *testing.T) {
	e := newEnv(t)
	n := e.issue("labels by hand")
	before, _ := e.s.Issue(testRepo, n)
	e.clock.Advance(time.Minute)
	must(t, e.s.LabelIssue(testRepo, n, "autopilot"))
	must(t, e.s.LabelIssue(testRepo, n, "AUTOPILOT")) // already there: no change
	if got := e.s.Labels(testRepo, n); !slices.Equal(got, []string{"autopilot"}) {
		t.Fatalf("labels %v, want [autopilot]", got)
	}
	after, _ := e.s.Issue(testRepo, n)
	if !after.UpdatedAt.After(before.UpdatedAt) {
		t.Fatalf("updated_at %v did not move past %v", after.UpdatedAt, before.UpdatedAt)
	}
	if ls := e.s.RepoLabels(testRepo); len(ls) != 1 || ls[0].Color != "ededed" {
		t.Fatalf("repository labels %+v, want one auto-created ededed label", ls)
	}
	if len(e.s.Requests()) != 0 {
		t.Fatalf("control API calls were logged: %+v", e.s.Requests())
	}
	got, resp, err := e.client(humanTok).Issues.ListLabelsByIssue(context.Background(), "octo", "repo", n, nil)
	wantStatus(t, resp, err, http.StatusOK)
	if len(got) != 1 || got[0].GetName() != "autopilot" {
		t.Fatalf("API sees %v", labelNamesOfGH(got))
	}
}

func TestUnlabelIssueRemovesOnlyThatLabelAndRefusesAnAbsentOne(t *testing.T) {
	e := newEnv(t)
	n := e.issue("unlabel by hand", "bug", "autopilot")
	must(t, e.s.UnlabelIssue(testRepo, n, "Autopilot"))
	if got := e.s.Labels(testRepo, n); !slices.Equal(got, []string{"bug"}) {
		t.Fatalf("labels %v, want [bug]", got)
	}
	if err := e.s.UnlabelIssue(testRepo, n, "autopilot"); err == nil {
		t.Fatal("removing an absent label succeeded")
	}
	if err := e.s.LabelIssue(testRepo, n, ""); err == nil {
		t.Fatal("an empty label name was accepted")
	}
	if err := e.s.LabelIssue(testRepo, 999, "x"); err == nil {
		t.Fatal("labelling a missing issue succeeded")
	}
}
