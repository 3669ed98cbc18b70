package checkview

import "fmt"

// ActionsAppID is GitHub Actions' App id: GITHUB_TOKEN's check runs carry
// it.
const ActionsAppID = 15368

// MergeQueue is a merge queue's request for checks, with the queued PR as
// read.
type MergeQueue struct {
	// Name is the configured check name.
	Name string
	// App is the App whose check runs count (0: GitHub Actions, which
	// creates the Action's).
	App       int64
	PR        int
	PRURL     string
	PRHead    string
	QueueHead string
}

// SeenCheck is a check run as listed on a commit.
type SeenCheck struct {
	ID         int64
	Name       string
	AppID      int64
	Status     string
	Conclusion string
}

// QueueCheck is the check run the bot writes on a merge queue's commit.
type QueueCheck struct {
	Name, HeadSHA, ExternalID, Status, Conclusion, Title, Summary, DetailsURL string
}

// Check is what the queue's commit shows, given the check runs on the
// queued PR's head: the conclusion of the newest one named q.Name by
// q.App (success only when that is success), so a required check does not
// stall the queue.
func (q MergeQueue) Check(seen []SeenCheck) QueueCheck {
	app := q.App
	if app == 0 {
		app = ActionsAppID
	}
	var last *SeenCheck
	for i, c := range seen {
		if c.Name == q.Name && c.AppID == app && (last == nil || c.ID > last.ID) {
			last = &seen[i]
		}
	}
	head := short(q.PRHead)
	out := QueueCheck{Name: q.Name, HeadSHA: q.QueueHead, ExternalID: QueueExternalID(q.PR), Status: CheckCompleted, Conclusion: CheckFailure,
		Title: fmt.Sprintf("PR #%d: no %s check on its head %s", q.PR, q.Name, head), DetailsURL: q.PRURL}
	switch {
	case last == nil:
	case last.Status == CheckCompleted && last.Conclusion == CheckSuccess:
		out.Conclusion = CheckSuccess
		out.Title = fmt.Sprintf("PR #%d passed its merge gate on %s", q.PR, head)
	default:
		st := last.Status
		if last.Conclusion != "" {
			st = last.Conclusion
		}
		out.Title = fmt.Sprintf("PR #%d: the %s check on its head %s is %s", q.PR, q.Name, head, st)
	}
	out.Summary = out.Title + ".\n\nThe merge queue's commit carries the conclusion of the newest `" + q.Name + "` check on the queued PR's head (" + q.PRURL + ")."
	return out
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
