package reliability

import (
	"fmt"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
)

// People act on the fake GitHub through its control API, as they would in
// the web UI: nothing they do is in the request log, and nothing is
// delivered until a Scheduler (or a test) sends the matching Delivery.

// Say posts a comment on issue (or PR) n as who, now.
func (w *World) Say(n int, who, body string) fakegithub.Comment {
	w.tb.Helper()
	c, err := w.GH.AddComment(Repo, n, who, body)
	must(w.tb, err)
	return c
}

// Label adds a label to issue n.
func (w *World) Label(n int, label string) {
	w.tb.Helper()
	must(w.tb, w.GH.LabelIssue(Repo, n, label))
}

// Unlabel removes a label from issue n.
func (w *World) Unlabel(n int, label string) {
	w.tb.Helper()
	must(w.tb, w.GH.UnlabelIssue(Repo, n, label))
}

// OpenPR opens a pull request by who whose body links issue n
// ("Fixes #n") and returns its number and head SHA.
func (w *World) OpenPR(n int, who string) (int, string) {
	w.tb.Helper()
	sha := fmt.Sprintf("%040x", w.Clock.Now().UnixNano())
	pr, err := w.GH.CreatePull(Repo, who, fmt.Sprintf("Implement #%d", n), fmt.Sprintf("The change.\n\nFixes #%d", n), fmt.Sprintf("feature-%d", n), sha)
	must(w.tb, err)
	return pr, sha
}

// Review submits a review on pr as who and returns its id and time.
func (w *World) Review(pr int, who, reviewState, body string) (int64, time.Time) {
	w.tb.Helper()
	id, err := w.GH.SubmitReview(Repo, pr, who, reviewState, body)
	must(w.tb, err)
	return id, w.Clock.Now().UTC().Truncate(time.Second)
}
