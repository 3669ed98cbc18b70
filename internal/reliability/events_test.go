package reliability

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
)

// Delivery is one event as GitHub sends it: to the App's webhook, or as the
// event file of an Actions run.
type Delivery struct {
	// ID is X-GitHub-Delivery; a redelivery (or an Actions re-run) keeps it.
	ID      string
	Event   string
	Payload []byte
	// What says what the delivery is about, for logs and failures.
	What string
}

func (d Delivery) String() string { return d.ID + " " + d.Event + " (" + d.What + ")" }

// deliveryID returns a fresh delivery id.
func (w *World) deliveryID() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.nextDelivery++
	return fmt.Sprintf("%08x-72d5-11f0-8a3b-%012x", w.nextDelivery, w.nextDelivery)
}

// vendored caches the vendored examples (read-only once loaded).
var vendored sync.Map // file -> []byte

// payload loads a vendored example moved to the world's repository, with
// the installation set in App mode.
func (w *World) payload(file string, set map[string]any) []byte {
	w.tb.Helper()
	p, ok := vendored.Load(file)
	if !ok {
		p, _ = vendored.LoadOrStore(file, ghtest.Payload(w.tb, file))
	}
	owner, name, _ := strings.Cut(Repo, "/")
	set["repository.full_name"], set["repository.name"], set["repository.owner.login"] = Repo, name, owner
	if w.opts.Mode == ModeApp {
		set["installation"] = map[string]any{"id": Installation, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNzc="}
	}
	return ghtest.Mutate(w.tb, p.([]byte), set)
}

func (w *World) user(login string) map[string]any {
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	return map[string]any{"login": login, "id": w.GH.AddUser(login, typ), "type": typ}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// issueFields is an issue's payload snapshot as the fake holds it now.
func (w *World) issueFields(n int) map[string]any {
	is, ok := w.GH.Issue(Repo, n)
	if !ok {
		w.tb.Fatalf("no issue #%d", n)
	}
	m := map[string]any{
		"issue.number": n, "issue.title": is.Title, "issue.body": is.Body, "issue.state": is.State,
		"issue.labels": ghtest.Labels(is.Labels...), "issue.user": w.user(is.Author.Login),
		"issue.html_url": fmt.Sprintf("https://github.com/%s/issues/%d", Repo, n),
	}
	if is.IsPR {
		m["issue.pull_request"] = map[string]any{
			"url":      fmt.Sprintf("https://api.github.com/repos/%s/pulls/%d", Repo, n),
			"html_url": fmt.Sprintf("https://github.com/%s/pull/%d", Repo, n),
		}
	} else {
		m["issue.pull_request"] = ghtest.Delete
	}
	return m
}

// LabelDelivery is issues.labeled or issues.unlabeled for label on issue n,
// sent by who, with the issue's labels as they are now.
func (w *World) LabelDelivery(n int, action, label, who string) Delivery {
	set := w.issueFields(n)
	set["label.name"] = label
	set["sender"] = w.user(who)
	return Delivery{ID: w.deliveryID(), Event: "issues", Payload: w.payload("issues."+action+".json", set),
		What: fmt.Sprintf("#%d %s %s by %s", n, action, label, who)}
}

// CommentDelivery is issue_comment.<action> for comment c (as it is now on
// the fake), sent by who (the author unless given).
func (w *World) CommentDelivery(c fakegithub.Comment, action string, sender ...string) Delivery {
	set := w.issueFields(c.Issue)
	who := c.Author.Login
	if len(sender) > 0 {
		who = sender[0]
	}
	var app any
	if c.AppID != 0 {
		app = map[string]any{"id": c.AppID}
	}
	set["comment"] = map[string]any{
		"id": c.ID, "body": c.Body, "user": map[string]any{"login": c.Author.Login, "id": c.Author.ID, "type": c.Author.Type},
		"created_at": stamp(c.CreatedAt), "updated_at": stamp(c.UpdatedAt),
		"html_url":                 fmt.Sprintf("https://github.com/%s/issues/%d#issuecomment-%d", Repo, c.Issue, c.ID),
		"url":                      fmt.Sprintf("https://api.github.com/repos/%s/issues/comments/%d", Repo, c.ID),
		"issue_url":                fmt.Sprintf("https://api.github.com/repos/%s/issues/%d", Repo, c.Issue),
		"author_association":       w.association(c.Author.Login),
		"performed_via_github_app": app,
	}
	set["sender"] = w.user(who)
	file := "issue_comment.created.json"
	if action == "edited" {
		file = "issue_comment.edited.json"
	}
	return Delivery{ID: w.deliveryID(), Event: "issue_comment", Payload: w.payload(file, set),
		What: fmt.Sprintf("#%d comment %d %s by %s: %.30q", c.Issue, c.ID, action, c.Author.Login, c.Body)}
}

// PullDelivery is pull_request.<action> for PR pr as it is now.
func (w *World) PullDelivery(pr int, action, headSHA string) Delivery {
	is, ok := w.GH.Issue(Repo, pr)
	if !ok || !is.IsPR {
		w.tb.Fatalf("no pull request #%d", pr)
	}
	set := map[string]any{
		"number": pr, "pull_request.number": pr, "pull_request.title": is.Title, "pull_request.body": is.Body,
		"pull_request.user": w.user(is.Author.Login), "pull_request.state": is.State, "pull_request.head.sha": headSHA,
		"pull_request.html_url": fmt.Sprintf("https://github.com/%s/pull/%d", Repo, pr),
		"sender":                w.user(is.Author.Login),
	}
	return Delivery{ID: w.deliveryID(), Event: "pull_request", Payload: w.payload("pull_request."+action+".json", set),
		What: fmt.Sprintf("PR #%d %s", pr, action)}
}

// ReviewDelivery is pull_request_review.submitted for a review on pr.
func (w *World) ReviewDelivery(pr int, id int64, who, reviewState, body, headSHA string, at time.Time) Delivery {
	is, ok := w.GH.Issue(Repo, pr)
	if !ok || !is.IsPR {
		w.tb.Fatalf("no pull request #%d", pr)
	}
	set := map[string]any{
		"review.id": id, "review.user": w.user(who), "review.state": strings.ToLower(reviewState), "review.body": body,
		"review.submitted_at": stamp(at), "review.commit_id": headSHA,
		"review.html_url":       fmt.Sprintf("https://github.com/%s/pull/%d#pullrequestreview-%d", Repo, pr, id),
		"pull_request.number":   pr,
		"pull_request.title":    is.Title,
		"pull_request.body":     is.Body,
		"pull_request.user":     w.user(is.Author.Login),
		"pull_request.head.sha": headSHA,
		"pull_request.html_url": fmt.Sprintf("https://github.com/%s/pull/%d", Repo, pr),
		"sender":                w.user(who),
	}
	return Delivery{ID: w.deliveryID(), Event: "pull_request_review", Payload: w.payload("pull_request_review.submitted.approved.json", set),
		What: fmt.Sprintf("PR #%d review %d %s by %s", pr, id, reviewState, who)}
}

// SweepDelivery is the scheduled sweep (Action mode's cron).
func (w *World) SweepDelivery() Delivery {
	return Delivery{ID: w.deliveryID(), Event: "schedule", Payload: w.payload("schedule.json", map[string]any{}), What: "sweep"}
}
