package action_test

import (
	"fmt"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// The trust table's "linked by a person with answer_permission" rule: a PR
// by someone without that permission counts as evidence once such a person
// wrote its link to the issue (a pull_request delivery they sent shows it),
// until anyone without the permission edits it.

const readerSHA = "5eed5eed5eed5eed5eed5eed5eed5eed5eed5eed"

// readerPR opens a PR on a branch of this repository by reader (read
// permission), whose description does not link the issue yet, with the
// commit status ci/test in state on its head.
func (r *execRig) readerPR(status string) (int, string) {
	r.t.Helper()
	if err := r.gh.AddStatus(repo, readerSHA, "ci/test", status); err != nil {
		r.t.Fatal(err)
	}
	body := "A faster CSV export."
	pr, err := r.gh.CreatePull(repo, "reader", "CSV export", body, "reader-csv", readerSHA)
	if err != nil {
		r.t.Fatal(err)
	}
	r.event("reader's PR", "pull_request", r.pullPayload("pull_request.opened.json", pr, "reader", repo, readerSHA, body))
	return pr, body
}

// editBody changes the description of reader's PR pr from from to body as
// editor, and delivers the pull_request.edited GitHub sends for it.
func (r *execRig) editBody(pr int, editor, from, body string) result {
	r.t.Helper()
	if err := r.gh.SetBody(repo, pr, body); err != nil {
		r.t.Fatal(err)
	}
	payload := ghtest.Mutate(r.t, r.pullPayload("pull_request.edited.json", pr, "reader", repo, readerSHA, body), map[string]any{
		"sender.login": editor, "changes.body.from": from,
	})
	return r.event(editor+" edits the description of #"+fmt.Sprint(pr), "pull_request", payload)
}

// wantQAOn checks that QA finished on the checks of PR pr's head.
func (r *execRig) wantQAOn(what string, pr int) {
	r.t.Helper()
	s := r.wantAt(what, "done", state.RunDone)
	if ho := s.Review.Handoffs["qa"]; ho.PR != pr || ho.HeadSHA != readerSHA {
		r.t.Errorf("%s: qa handoff = %+v, want PR #%d at %s", what, ho, pr, readerSHA)
	}
}

// vouchedBy is who the state says linked PR pr ("" when nobody vouches).
func (r *execRig) vouchedBy(pr int) string {
	for _, v := range r.now().LinkVouches {
		if v.PR == pr {
			return v.By
		}
	}
	return ""
}

// A reader's PR whose link to the issue a maintainer wrote is evidence.
func TestTrustReaderPRLinkedByAMaintainerIsEvidence(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg)
	r.toQA()
	pr, body := r.readerPR("success")
	r.sweep()
	r.wantAt("before the link", "qa", state.RunInProgress)
	r.editBody(pr, "maria", body, body+fmt.Sprintf("\n\nFixes #%d", r.n))
	r.wantQAOn("after maria linked the reader's PR", pr)
	if by := r.vouchedBy(pr); by != "maria" {
		t.Errorf("#%d linked by %q, want maria", pr, by)
	}
}

// The reader then removes the link and puts the very same text back: the
// description is the one maria wrote, but nothing shows that the reader
// did not change it in between, so the PR is no evidence until a
// maintainer edits it again.
func TestTrustReaderEditAfterAMaintainersLinkDropsIt(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg)
	r.toQA()
	pr, body := r.readerPR("pending")
	linked := body + fmt.Sprintf("\n\nFixes #%d", r.n)
	r.editBody(pr, "maria", body, linked)
	r.wantAt("linked while checks are pending", "qa", state.RunInProgress)
	if by := r.vouchedBy(pr); by != "maria" {
		t.Fatalf("maria's link was not recorded: linked by %q", by)
	}
	r.editBody(pr, "reader", linked, body)
	r.editBody(pr, "reader", body, linked)
	if by := r.vouchedBy(pr); by != "" {
		t.Errorf("after the reader's edit #%d is still linked by %q", pr, by)
	}
	if err := r.gh.AddStatus(repo, readerSHA, "ci/test", "success"); err != nil {
		t.Fatal(err)
	}
	r.sweep()
	r.wantAt("green after the reader's edit", "qa", state.RunInProgress)
	// maria edits it again: it counts.
	r.editBody(pr, "maria", linked, linked+"\n\nReviewed the description.")
	r.wantQAOn("after maria edited it again", pr)
}

// With answer_permission write, a triage user's link vouches for nothing.
func TestTrustReaderPRLinkedByATriageUserIsNotEvidence(t *testing.T) {
	r := newExecRig(t, reviewLoopCfg)
	r.gh.AddUser("tess", "User")
	if err := r.gh.SetPermission(repo, "tess", access.Triage); err != nil {
		t.Fatal(err)
	}
	r.toQA()
	pr, body := r.readerPR("success")
	linked := body + fmt.Sprintf("\n\nFixes #%d", r.n)
	r.editBody(pr, "tess", body, linked)
	r.sweep()
	r.wantAt("after tess linked the reader's PR", "qa", state.RunInProgress)
	if by := r.vouchedBy(pr); by != "" {
		t.Errorf("#%d linked by %q, want nobody", pr, by)
	}
	r.editBody(pr, "maria", linked, linked+"\n\nLooks right.")
	r.wantQAOn("after maria edited it", pr)
}
