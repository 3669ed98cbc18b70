// Package forgetest is the contract every forge.Forge must keep: one suite
// run against forge.Sandbox and against the go-github adapter on the fake
// GitHub, so the sandbox the core tests run on answers as GitHub does.
// Where the two differ, GitHub's documented behaviour decides.
//
// It is test support: only tests import it.
package forgetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// Repo is one repository on the forge under test, with the controls a test
// needs to seed it as people would through GitHub's web UI. Every control
// is required.
type Repo struct {
	// Forge acts as Bot.
	Forge forge.Forge
	Bot   string
	// AppID is the App the forge acts through (its check runs carry it).
	AppID int64
	// Now and Advance read and move the clock the forge reads.
	Now     func() time.Time
	Advance func(time.Duration)
	// AddUser registers a person with a repository role.
	AddUser func(login string, p access.Level)
	// Issue and Pull open an issue or a pull request (head at sha) as author.
	Issue func(author, title, body string) int
	Pull  func(author, title, body, sha string) int
	// Comment posts as a person.
	Comment func(author string, issue int, body string) int64
	// Review submits a review of a pull request's head.
	Review func(pr int, reviewer, state, body string)
	// Check adds a completed check run on sha.
	Check func(sha, name, conclusion string)
	// File stores a file at the default branch.
	File func(path string, data []byte)
	// Workflow declares a workflow file whose run-name is
	// "autopilot ${{ inputs.session }}".
	Workflow func(file string)
	// CompleteRun finishes a workflow run.
	CompleteRun func(id int64, conclusion string)
	// RepoLabel reads a repository label.
	RepoLabel func(name string) (forge.Label, bool)
}

// Run runs the contract; newRepo returns a fresh repository per subtest.
func Run(t *testing.T, newRepo func(t *testing.T) Repo) {
	for _, c := range []struct {
		name string
		f    func(*testing.T, Repo)
	}{
		{"comments", comments},
		{"comment limits and errors", commentErrors},
		{"reactions", reactions},
		{"thread reader", threadReader},
		{"recent reader", recentReader},
		{"labels", labels},
		{"open issues by label", openIssues},
		{"permission", permission},
		{"pulls reviews and checks", pulls},
		{"files", files},
		{"dispatch and runs", runs},
		{"check runs", checkRuns},
		{"sub-issue API", subIssues},
	} {
		t.Run(c.name, func(t *testing.T) { c.f(t, newRepo(t)) })
	}
}

var ctx = context.Background()

// must and must3 stop the test on an error: must(call())(t).
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func must3[A, B any](a A, b B, err error) func(*testing.T) (A, B) {
	return func(t *testing.T) (A, B) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
}

func comments(t *testing.T, r Repo) {
	n := r.Issue("alice", "Build it", "please")
	human := r.Comment("alice", n, "first")
	r.Advance(time.Second)
	mine := must(r.Forge.CreateComment(ctx, n, "state"))(t)
	if mine.ID == 0 || mine.IssueNumber != n || !strings.EqualFold(mine.Author.Login, r.Bot) || !mine.Author.IsBot() ||
		mine.Body != "state" || mine.CreatedAt.IsZero() || mine.URL == "" {
		t.Errorf("created comment = %+v", mine)
	}
	list := must(r.Forge.ListComments(ctx, n))(t)
	if len(list) != 2 || list[0].ID != human || list[1].ID != mine.ID || list[0].Author.Login != "alice" || list[0].Author.IsBot() {
		t.Fatalf("ListComments = %+v, want alice's then the bot's", list)
	}
	if got := must(r.Forge.GetComment(ctx, human))(t); got.Body != "first" || got.IssueNumber != n {
		t.Errorf("GetComment = %+v", got)
	}
	r.Advance(time.Minute)
	ed := must(r.Forge.EditComment(ctx, mine.ID, "state v2"))(t)
	if ed.Body != "state v2" || !ed.UpdatedAt.After(mine.CreatedAt) || !ed.CreatedAt.Equal(mine.CreatedAt) {
		t.Errorf("edited = %+v (created %v)", ed, mine.CreatedAt)
	}
	if got := must(r.Forge.GetComment(ctx, mine.ID))(t); got.Body != "state v2" {
		t.Errorf("after edit GetComment body = %q", got.Body)
	}
	if err := r.Forge.DeleteIssueComment(ctx, mine.ID); err != nil {
		t.Fatal(err)
	}
	if err := r.Forge.DeleteIssueComment(ctx, mine.ID); err != nil {
		t.Errorf("deleting a comment already gone: %v, want nil", err)
	}
	if _, err := r.Forge.GetComment(ctx, mine.ID); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("GetComment of a deleted comment: %v, want ErrNotFound", err)
	}
	if list := must(r.Forge.ListComments(ctx, n))(t); len(list) != 1 || list[0].ID != human {
		t.Errorf("after delete ListComments = %+v", list)
	}
}

func commentErrors(t *testing.T, r Repo) {
	n := r.Issue("alice", "Build it", "")
	if _, err := r.Forge.CreateComment(ctx, n, strings.Repeat("x", 65537)); !errors.Is(err, forge.ErrValidation) {
		t.Errorf("a 65,537-character body: %v, want ErrValidation", err)
	}
	if _, err := r.Forge.CreateComment(ctx, n, strings.Repeat("é", 65536)); err != nil {
		t.Errorf("a 65,536-character body: %v", err)
	}
	mine := must(r.Forge.CreateComment(ctx, n, "ok"))(t)
	if _, err := r.Forge.EditComment(ctx, mine.ID, strings.Repeat("x", 65537)); !errors.Is(err, forge.ErrValidation) {
		t.Errorf("editing to 65,537 characters: %v, want ErrValidation", err)
	}
	if _, err := r.Forge.ListComments(ctx, 999); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("comments of a missing issue: %v, want ErrNotFound", err)
	}
	if _, err := r.Forge.GetIssue(ctx, 999); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("a missing issue: %v, want ErrNotFound", err)
	}
	if _, err := r.Forge.EditComment(ctx, 987654, "x"); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("editing a missing comment: %v, want ErrNotFound", err)
	}
}

func reactions(t *testing.T, r Repo) {
	n := r.Issue("alice", "Build it", "")
	c := r.Comment("alice", n, "/autopilot status")
	for i := 0; i < 2; i++ { // the second is the same reaction again: no error, no second one
		if err := r.Forge.React(ctx, c, "eyes"); err != nil {
			t.Fatalf("React #%d: %v", i+1, err)
		}
	}
	if err := r.Forge.React(ctx, c, "+1"); err != nil {
		t.Fatal(err)
	}
	if err := r.Forge.React(ctx, c, "thumbs"); !errors.Is(err, forge.ErrValidation) {
		t.Errorf("an unknown reaction: %v, want ErrValidation", err)
	}
	if err := r.Forge.React(ctx, 987654, "eyes"); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("reacting to a missing comment: %v, want ErrNotFound", err)
	}
	list := must(r.Forge.ListComments(ctx, n))(t)
	if len(list) != 1 || list[0].Reactions["eyes"] != 1 || list[0].Reactions["+1"] != 1 || len(list[0].Reactions) != 2 {
		t.Errorf("reactions listed = %v, want eyes and +1 once each", list[0].Reactions)
	}
}

// threadReader checks ListCommentsHead and ListCommentsSince where the
// forge offers them (reconcile falls back to ListComments otherwise).
func threadReader(t *testing.T, r Repo) {
	tr, ok := r.Forge.(forge.ThreadReader)
	if !ok {
		t.Skip("this forge reads whole threads only")
	}
	n := r.Issue("alice", "Build it", "")
	var ids []int64
	for i := 0; i < 102; i++ {
		ids = append(ids, r.Comment("alice", n, "c"))
	}
	head, more := must3(tr.ListCommentsHead(ctx, n))(t)
	if len(head) != 100 || !more || head[0].ID != ids[0] {
		t.Errorf("head: %d comments, more %v", len(head), more)
	}
	r.Advance(time.Hour)
	since := head[0].CreatedAt.Add(time.Hour)
	late := r.Comment("bob", n, "late")
	got := must(tr.ListCommentsSince(ctx, n, since))(t)
	if len(got) != 1 || got[0].ID != late {
		t.Errorf("since: %+v, want only the late comment", got)
	}
}

// recentReader: the issue and its comments, most recently updated first,
// 100 a page, one request each; reading on reaches the whole thread.
func recentReader(t *testing.T, r Repo) {
	rr, ok := r.Forge.(forge.RecentReader)
	if !ok {
		t.Skip("this forge does not read threads most recently updated first")
	}
	n := r.Issue("alice", "Build it", "")
	var ids []int64
	for i := 0; i < 150; i++ {
		r.Advance(time.Second)
		ids = append(ids, r.Comment("alice", n, "c"))
	}
	before := rr.Requests()
	pages := 0
	rec := must(rr.ReadRecent(ctx, n, func(forge.Issue, []forge.Comment) bool { pages++; return false }))(t)
	if rec.All || len(rec.Comments) != 100 || pages != 1 || rec.Issue.Number != n || rec.Issue.Title != "Build it" || rec.Issue.State != "open" {
		t.Errorf("one page: %d comments, all %v, %d pages asked, issue %+v", len(rec.Comments), rec.All, pages, rec.Issue)
	}
	if got := rr.Requests() - before; got != 1 {
		t.Errorf("one page took %d requests", got)
	}
	read := map[int64]bool{}
	for _, c := range rec.Comments {
		read[c.ID] = true
	}
	if !read[ids[149]] || !read[ids[50]] || read[ids[49]] {
		t.Errorf("the page is not the 100 most recently updated comments")
	}
	rec = must(rr.ReadRecent(ctx, n, func(forge.Issue, []forge.Comment) bool { return true }))(t)
	if !rec.All || len(rec.Comments) != 150 {
		t.Errorf("reading on: %d comments, all %v, want the 150", len(rec.Comments), rec.All)
	}
}

func labels(t *testing.T, r Repo) {
	n := r.Issue("alice", "Build it", "")
	step := forge.Label{Name: "autopilot/step:plan", Color: "0e8a16", Description: "the plan step"}
	if err := r.Forge.AddLabels(ctx, n, []forge.Label{step}); err != nil {
		t.Fatal(err)
	}
	if l, ok := r.RepoLabel(step.Name); !ok || !strings.EqualFold(l.Color, step.Color) || l.Description != step.Description {
		t.Errorf("a label new to the repository = %+v (%v), want colour and description set", l, ok)
	}
	// Adding again, or with another colour, changes nothing.
	if err := r.Forge.AddLabels(ctx, n, []forge.Label{{Name: step.Name, Color: "b60205", Description: "other"}}); err != nil {
		t.Fatal(err)
	}
	if l, _ := r.RepoLabel(step.Name); !strings.EqualFold(l.Color, step.Color) || l.Description != step.Description {
		t.Errorf("an existing label was repainted: %+v", l)
	}
	is := must(r.Forge.GetIssue(ctx, n))(t)
	if !slices.Equal(is.Labels, []string{step.Name}) {
		t.Errorf("labels = %v, want it once", is.Labels)
	}
	// A label whose name differs only in case is the same label.
	if err := r.Forge.AddLabels(ctx, n, []forge.Label{{Name: "Autopilot/Step:Plan"}}); err != nil {
		t.Fatal(err)
	}
	if is := must(r.Forge.GetIssue(ctx, n))(t); !slices.Equal(is.Labels, []string{step.Name}) {
		t.Errorf("after adding it in another case: labels = %v", is.Labels)
	}
	if err := r.Forge.AddLabels(ctx, n, []forge.Label{{Name: strings.Repeat("x", 51)}}); !errors.Is(err, forge.ErrValidation) {
		t.Errorf("a 51-character label: %v, want ErrValidation", err)
	}
	if err := r.Forge.RemoveLabel(ctx, n, step.Name); err != nil {
		t.Fatal(err)
	}
	if is := must(r.Forge.GetIssue(ctx, n))(t); len(is.Labels) != 0 {
		t.Errorf("after remove: labels = %v", is.Labels)
	}
	if err := r.Forge.RemoveLabel(ctx, n, step.Name); err != nil {
		t.Errorf("removing a label the issue does not carry: %v, want nil", err)
	}
	if _, ok := r.RepoLabel(step.Name); !ok {
		t.Error("removing a label from an issue deleted it from the repository")
	}
}

func openIssues(t *testing.T, r Repo) {
	a := r.Issue("alice", "one", "")
	b := r.Issue("alice", "two", "")
	r.Issue("alice", "unlabelled", "")
	pr := r.Pull("bob", "a pull", "", "abc1234")
	for _, n := range []int{a, b, pr} {
		if err := r.Forge.AddLabels(ctx, n, []forge.Label{{Name: "autopilot"}}); err != nil {
			t.Fatal(err)
		}
	}
	got := must(r.Forge.ListOpenIssues(ctx, "autopilot"))(t)
	var nums []int
	for _, is := range got {
		nums = append(nums, is.Number)
		if is.IsPR || !is.HasLabel("autopilot") || is.State != "open" || is.Author.Login != "alice" {
			t.Errorf("listed %+v", is)
		}
	}
	slices.Sort(nums)
	if !slices.Equal(nums, []int{a, b}) {
		t.Errorf("ListOpenIssues = %v, want issues %d and %d (not the PR)", nums, a, b)
	}
}

func permission(t *testing.T, r Repo) {
	for login, p := range map[string]access.Level{"ada": access.Admin, "mia": access.Maintain, "wes": access.Write, "tia": access.Triage, "rae": access.Read} {
		r.AddUser(login, p)
		if got := must(r.Forge.Permission(ctx, login))(t); got != p {
			t.Errorf("Permission(%s) = %q, want %q", login, got, p)
		}
	}
	if got := must(r.Forge.Permission(ctx, "nobody-at-all"))(t); got != access.None {
		t.Errorf("Permission of no account = %q, want none", got)
	}
}

func pulls(t *testing.T, r Repo) {
	const sha = "1111111111111111111111111111111111111111"
	n := r.Pull("bob", "Add it", "Fixes #1", sha)
	p := must(r.Forge.GetPull(ctx, n))(t)
	if p.Number != n || p.Title != "Add it" || p.Body != "Fixes #1" || p.State != "open" || p.Merged ||
		p.Author.Login != "bob" || p.HeadSHA != sha || p.URL == "" || !strings.EqualFold(p.HeadRepo, r.Forge.Repo()) {
		t.Errorf("GetPull = %+v", p)
	}
	if _, err := r.Forge.GetPull(ctx, 999); !errors.Is(err, forge.ErrNotFound) {
		t.Errorf("a missing pull: %v, want ErrNotFound", err)
	}
	is := must(r.Forge.GetIssue(ctx, n))(t)
	if !is.IsPR {
		t.Errorf("GetIssue of a pull = %+v, want IsPR", is)
	}
	r.Review(n, "carol", "CHANGES_REQUESTED", "not yet")
	r.Advance(time.Minute)
	r.Review(n, "dave", "APPROVED", "")
	rs := must(r.Forge.ListReviews(ctx, n))(t)
	if len(rs) != 2 || rs[0].Reviewer.Login != "carol" || rs[0].State != "CHANGES_REQUESTED" || rs[0].Body != "not yet" ||
		rs[1].State != "APPROVED" || rs[1].CommitSHA != sha || rs[1].PR != n || !rs[1].SubmittedAt.After(rs[0].SubmittedAt) || rs[0].ID == 0 {
		t.Errorf("ListReviews = %+v", rs)
	}
	r.Check(sha, "test", "success")
	r.Check(sha, "lint", "failure")
	cs := must(r.Forge.ListChecks(ctx, sha))(t)
	got := map[string]string{}
	for _, c := range cs {
		if c.Status != "completed" {
			t.Errorf("check %+v", c)
		}
		got[c.Name] = c.Conclusion
	}
	if len(cs) != 2 || got["test"] != "success" || got["lint"] != "failure" {
		t.Errorf("ListChecks = %+v", cs)
	}
	if cs := must(r.Forge.ListChecks(ctx, "2222222222222222222222222222222222222222"))(t); len(cs) != 0 {
		t.Errorf("checks of another commit = %+v", cs)
	}
}

func files(t *testing.T, r Repo) {
	r.File(".github/autopilot.yml", []byte("default_flow: greenfield\n"))
	d, found := must3(r.Forge.ReadFile(ctx, ".github/autopilot.yml"))(t)
	if !found || string(d) != "default_flow: greenfield\n" {
		t.Errorf("ReadFile = %q, %v", d, found)
	}
	d, found = must3(r.Forge.ReadFile(ctx, "missing.yml"))(t)
	if found || len(d) != 0 {
		t.Errorf("a missing file = %q, found %v", d, found)
	}
}

func runs(t *testing.T, r Repo) {
	const wf = "autopilot-exec.yml"
	r.Workflow(wf)
	start := must(r.Forge.ListWorkflowRuns(ctx, wf, time.Time{}))(t)
	if len(start) != 0 {
		t.Fatalf("runs before any dispatch: %+v", start)
	}
	first := must(r.Forge.DispatchWorkflow(ctx, wf, "main", map[string]string{"session": "s-1"}))(t)
	r.Advance(time.Minute)
	cut := time.Time{}
	second := must(r.Forge.DispatchWorkflow(ctx, wf, "main", map[string]string{"session": "s-2"}))(t)
	if first == 0 || second == 0 || first == second {
		t.Fatalf("run ids %d, %d", first, second)
	}
	all := must(r.Forge.ListWorkflowRuns(ctx, wf, cut))(t)
	if len(all) != 2 || all[0].ID != second || all[1].ID != first {
		t.Fatalf("ListWorkflowRuns = %+v, want both, newest first", all)
	}
	for _, run := range all {
		if run.Status != "queued" || run.Event != "workflow_dispatch" || run.Path != ".github/workflows/"+wf ||
			!strings.HasPrefix(run.DisplayTitle, "autopilot s-") || run.URL == "" || run.CreatedAt.IsZero() ||
			!strings.EqualFold(run.HeadRepo, r.Forge.Repo()) {
			t.Errorf("run %+v", run)
		}
	}
	if all[0].DisplayTitle != "autopilot s-2" {
		t.Errorf("newest run's title %q", all[0].DisplayTitle)
	}
	r.CompleteRun(first, "failure")
	since := must(r.Forge.ListWorkflowRuns(ctx, wf, all[0].CreatedAt))(t)
	if len(since) != 1 || since[0].ID != second {
		t.Errorf("runs since the second = %+v", since)
	}
	all = must(r.Forge.ListWorkflowRuns(ctx, wf, time.Time{}))(t)
	if all[1].Status != "completed" || all[1].Conclusion != "failure" {
		t.Errorf("completed run = %+v", all[1])
	}
}

func checkRuns(t *testing.T, r Repo) {
	w, ok := r.Forge.(forge.CheckWriter)
	if !ok {
		t.Skip("this forge writes no check runs")
	}
	const sha = "3333333333333333333333333333333333333333"
	r.Pull("bob", "Add it", "", sha)
	id := must(w.CreateCheckRun(ctx, forge.CheckRunOut{Name: "autopilot", HeadSHA: sha, Status: "completed", Conclusion: "failure",
		Title: "waiting", Summary: "answer the gate", Actions: []forge.CheckRunAction{{Label: "Approve", Description: "approve the plan", Identifier: "approve"}}}))(t)
	if id == 0 {
		t.Fatal("no check run id")
	}
	cs := must(r.Forge.ListChecks(ctx, sha))(t)
	if len(cs) != 1 || cs[0].ID != id || cs[0].Name != "autopilot" || cs[0].Status != "completed" || cs[0].Conclusion != "failure" ||
		cs[0].AppID != r.AppID {
		t.Errorf("ListChecks after CreateCheckRun = %+v", cs)
	}
}

// subIssues checks the sub-issue tracker's API where the forge offers it.
func subIssues(t *testing.T, r Repo) {
	sf, ok := r.Forge.(tracker.SubIssueForge)
	if !ok {
		t.Skip("this forge holds no sub-issues")
	}
	api := sf.SubIssueTracker()
	root := r.Issue("alice", "Build it", "")
	other := r.Issue("alice", "Elsewhere", "")
	const label = "autopilot/task"
	a := must(api.CreateIssue(ctx, "Task A", "do a", []string{label}))(t)
	if a.ID == 0 || a.Number == 0 || a.Title != "Task A" || a.Body != "do a" || a.Closed || a.URL == "" ||
		!slices.Equal(a.Labels, []string{label}) || !strings.EqualFold(a.Author, r.Bot) || !a.AuthorIsBot {
		t.Errorf("created %+v", a)
	}
	b := must(api.CreateIssue(ctx, "Task B", "do b", []string{label}))(t)
	for _, c := range []tracker.GHIssue{a, b} {
		if err := api.AddSubIssue(ctx, root, c.ID); err != nil {
			t.Fatal(err)
		}
	}
	subs := must(api.SubIssues(ctx, root))(t)
	if len(subs) != 2 || subs[0].Number != a.Number || subs[1].Number != b.Number {
		t.Errorf("SubIssues = %+v, want A then B", subs)
	}
	var ve *tracker.ValidationError
	if err := api.AddSubIssue(ctx, other, a.ID); !errors.As(err, &ve) {
		t.Errorf("a second parent: %v, want a *ValidationError", err)
	}
	if err := api.AddBlockedBy(ctx, b.Number, a.ID); err != nil {
		t.Fatal(err)
	}
	if bl := must(api.BlockedBy(ctx, b.Number))(t); len(bl) != 1 || bl[0].Number != a.Number {
		t.Errorf("BlockedBy = %+v, want A", bl)
	}
	// Pull requests carrying the label are not tasks.
	pr := r.Pull("bob", "a pull", "", "4444444444444444444444444444444444444444")
	if err := r.Forge.AddLabels(ctx, pr, []forge.Label{{Name: label}}); err != nil {
		t.Fatal(err)
	}
	if got := numbers(must(api.ListLabeled(ctx, label, time.Time{}))(t)); !slices.Equal(got, []int{a.Number, b.Number}) {
		t.Errorf("ListLabeled = %v, want %d and %d", got, a.Number, b.Number)
	}
	r.Advance(time.Hour)
	cut := r.Now()
	r.Advance(time.Minute)
	c := must(api.CreateIssue(ctx, "Task C", "", []string{label}))(t)
	if got := numbers(must(api.ListLabeled(ctx, label, cut))(t)); !slices.Equal(got, []int{c.Number}) {
		t.Errorf("ListLabeled since the cut = %v, want only %d", got, c.Number)
	}
	if err := api.CloseIssue(ctx, a.Number); err != nil {
		t.Fatal(err)
	}
	if got := must(api.ReadIssue(ctx, a.Number))(t); !got.Closed || got.Title != "Task A" {
		t.Errorf("ReadIssue after close = %+v", got)
	}
	var gone *tracker.GoneError
	if _, err := api.ReadIssue(ctx, 999); !errors.As(err, &gone) || gone.Gone != state.IssueNotFound {
		t.Errorf("reading a missing issue: %v, want a *GoneError (not found)", err)
	}
}

func numbers(is []tracker.GHIssue) []int {
	var out []int
	for _, i := range is {
		out = append(out, i.Number)
	}
	slices.Sort(out)
	return out
}
