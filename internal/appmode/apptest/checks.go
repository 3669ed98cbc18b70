package apptest

import (
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
)

// OpenPR opens a PR by author at head sha whose body links issue n, and
// returns its number and the pull_request.opened delivery.
func (g *GitHub) OpenPR(repo string, n int, author, sha string) (int, Delivery) {
	g.tb.Helper()
	body := fmt.Sprintf("Implements the issue.\n\nFixes #%d", n)
	pr, err := g.CreatePull(repo, author, "Implementation", body, "impl", sha)
	g.must(err)
	return pr, g.PullDelivery(repo, pr, author, body, sha, "pull_request.opened.json")
}

// PullDelivery is a pull_request delivery (file names the vendored
// example: opened, synchronize) about PR pr at head sha.
func (g *GitHub) PullDelivery(repo string, pr int, author, body, sha, file string) Delivery {
	g.tb.Helper()
	return Delivery{Event: "pull_request", ID: NewDeliveryID(), Body: g.payload(file, repo, map[string]any{
		"number": pr, "pull_request.number": pr, "pull_request.body": body, "pull_request.head.sha": sha,
		"pull_request.user.login": author, "pull_request.user.type": "User", "pull_request.labels": []any{},
		"pull_request.html_url": fmt.Sprintf("https://github.com/%s/pull/%d", repo, pr),
		"sender.login":          author, "sender.type": "User",
	})}
}

// LatestCheck is the newest check run named name on sha (ok false when
// there is none): the one GitHub shows and branch protection reads.
func (g *GitHub) LatestCheck(repo, sha, name string) (fakegithub.CheckRun, bool) {
	var last fakegithub.CheckRun
	found := false
	for _, c := range g.CheckRuns(repo, sha) {
		if c.Name == name {
			last, found = c, true
		}
	}
	return last, found
}

// Click is the check_run.requested_action delivery of who clicking the
// button identifier on check run c (made by the App).
func (g *GitHub) Click(repo string, pr int, c fakegithub.CheckRun, who, identifier string) Delivery {
	g.tb.Helper()
	return Delivery{Event: "check_run", ID: NewDeliveryID(), Body: g.payload("check_run.requested_action.json", repo, map[string]any{
		"check_run.id": c.ID, "check_run.head_sha": c.HeadSHA, "check_run.external_id": c.ExternalID, "check_run.name": c.Name,
		"check_run.html_url": fmt.Sprintf("https://github.com/%s/runs/%d", repo, c.ID), "check_run.details_url": c.DetailsURL,
		"check_run.status": c.Status, "check_run.conclusion": c.Conclusion, "check_run.app.id": c.AppID,
		"check_run.pull_requests":     []any{map[string]any{"number": pr}},
		"requested_action.identifier": identifier, "sender.login": who, "sender.type": "User",
	})}
}
