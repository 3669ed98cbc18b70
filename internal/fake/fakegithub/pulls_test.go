package fakegithub

import (
	"context"
	"net/http"
	"testing"
)

// A fork's pull request names the fork as its head repository (fork: true)
// and the repository itself as its base, as GitHub's pulls API does; a
// branch of the repository names the repository on both sides.
func TestForkPullNamesTheForkAsHead(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	gh := e.client(humanTok)
	own, err := e.s.CreatePull(testRepo, "alice", "own", "Fixes #1", "feature", "aaaaaaa")
	must(t, err)
	fork, err := e.s.CreateForkPull(testRepo, "randy/repo", "randy", "fork", "Fixes #1", "patch-1", "bbbbbbb")
	must(t, err)

	pr, resp, err := gh.PullRequests.Get(ctx, "octo", "repo", fork)
	wantStatus(t, resp, err, http.StatusOK)
	head, base := pr.GetHead(), pr.GetBase()
	if head.GetRepo().GetFullName() != "randy/repo" || !head.GetRepo().GetFork() || head.GetLabel() != "randy:patch-1" || head.GetSHA() != "bbbbbbb" {
		t.Errorf("fork head = %s fork %v label %s sha %s", head.GetRepo().GetFullName(), head.GetRepo().GetFork(), head.GetLabel(), head.GetSHA())
	}
	if base.GetRepo().GetFullName() != testRepo || base.GetRepo().GetFork() || pr.GetUser().GetLogin() != "randy" {
		t.Errorf("fork base = %s fork %v, author %s", base.GetRepo().GetFullName(), base.GetRepo().GetFork(), pr.GetUser().GetLogin())
	}
	pr, resp, err = gh.PullRequests.Get(ctx, "octo", "repo", own)
	wantStatus(t, resp, err, http.StatusOK)
	if pr.GetHead().GetRepo().GetFullName() != testRepo || pr.GetHead().GetRepo().GetFork() {
		t.Errorf("own head repo = %s fork %v", pr.GetHead().GetRepo().GetFullName(), pr.GetHead().GetRepo().GetFork())
	}
	// A second PR from the same fork reuses it.
	if _, err := e.s.CreateForkPull(testRepo, "randy/repo", "randy", "again", "", "patch-2", "ccccccc"); err != nil {
		t.Fatal(err)
	}
}

// A push moves the head; reviews keep the commit they were given on; a
// dismissed review reads DISMISSED; a body edit shows in the API.
func TestPushDismissAndBodyEdit(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	gh := e.client(humanTok)
	n, err := e.s.CreatePull(testRepo, "mallory", "pr", "Fixes #1", "feature", "aaaaaaa")
	must(t, err)
	first, err := e.s.SubmitReview(testRepo, n, "alice", "APPROVED", "")
	must(t, err)
	must(t, e.s.PushPull(testRepo, n, "bbbbbbb"))
	second, err := e.s.SubmitReview(testRepo, n, "alice", "APPROVED", "")
	must(t, err)
	must(t, e.s.DismissReview(testRepo, n, second))
	must(t, e.s.SetBody(testRepo, n, "no link any more"))

	pr, resp, err := gh.PullRequests.Get(ctx, "octo", "repo", n)
	wantStatus(t, resp, err, http.StatusOK)
	if pr.GetHead().GetSHA() != "bbbbbbb" || pr.GetBody() != "no link any more" {
		t.Errorf("head %s body %q", pr.GetHead().GetSHA(), pr.GetBody())
	}
	rs, resp, err := gh.PullRequests.ListReviews(ctx, "octo", "repo", n, nil)
	wantStatus(t, resp, err, http.StatusOK)
	if len(rs) != 2 || rs[0].GetID() != first || rs[0].GetCommitID() != "aaaaaaa" || rs[0].GetState() != "APPROVED" ||
		rs[1].GetCommitID() != "bbbbbbb" || rs[1].GetState() != "DISMISSED" {
		t.Fatalf("reviews %+v", rs)
	}
	if err := e.s.DismissReview(testRepo, n, 1); err == nil {
		t.Error("dismissing a review that does not exist succeeded")
	}
	if err := e.s.PushPull(testRepo, 999, "x"); err == nil {
		t.Error("pushing to a missing PR succeeded")
	}
}
