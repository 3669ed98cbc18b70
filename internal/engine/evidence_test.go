package engine

import (
	"reflect"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/checkview"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/state"
)

func TestPushToALinkedPRReadsItsEvidenceAgain(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "qa")
	res := h.apply(events.PRLinked{PR: 40, URL: prURL})
	want(t, "nothing to write", res.Changed, false)
	wantDeep(t, "linked once", res.State.LinkedPRs, []int{40})
	if e := queriesOf(res.Queries, events.QCheckPR); len(e) != 1 || e[0].PR != 40 {
		t.Errorf("check-pr effects = %+v, want one for #40", e)
	}
}

func TestPushOutsideAnEvidenceStepReadsNothing(t *testing.T) {
	tests := []struct {
		name  string
		setup func(h *harness)
	}{
		{name: "execute needs no evidence", setup: func(h *harness) { reviewLoopTo(t, h, "review-loop", "execute") }},
		{name: "qa waiting for a skip decision", setup: func(h *harness) {
			reviewLoopTo(t, h, "review-loop", "qa")
			h.say("maria", "/autopilot skip docs only")
		}},
		{name: "qa while stopped", setup: func(h *harness) {
			reviewLoopTo(t, h, "review-loop", "qa")
			h.say("maria", "/autopilot stop")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, reviewCfg)
			tc.setup(h)
			res := h.apply(events.PRLinked{PR: 40, URL: prURL})
			want(t, "check-pr effects", len(queriesOf(res.Queries, events.QCheckPR)), 0)
			want(t, "tick check-pr effects", len(queriesOf(h.apply(events.Tick{}).Queries, events.QCheckPR)), 0)
		})
	}
}

func TestChecksStepReadsLinkedPRsWhenItStarts(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "code-review")
	h.apply(events.PRLinked{PR: 41})
	res := h.apply(approval("bob", "devin"))
	want(t, "now qa", res.State.Slug, "qa")
	var prs []int
	for _, e := range queriesOf(res.Queries, events.QCheckPR) {
		prs = append(prs, e.PR)
	}
	wantDeep(t, "checks read at the start of qa", prs, []int{40, 41})
	if !hasBody(res.Effects, "QA", "waiting for every check on the linked PR's head to pass", "returns to Plan") {
		t.Errorf("qa announcement = %q", bodies(res.Effects))
	}
}

func TestCodeReviewAnnouncementAsksForAReview(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "execute")
	res := h.done("implemented in #40")
	want(t, "code-review", res.State.Slug, "code-review")
	if !hasBody(res.Effects, "Code Review", "waiting for an approving review of the linked PR by someone other than its author (at least write permission). A verdict that is not clean returns to Plan.") {
		t.Errorf("code-review announcement = %q", bodies(res.Effects))
	}
	// Reviews count only from the start of the step: no PR read yet.
	want(t, "no check-pr at the start of code-review", len(queriesOf(res.Queries, events.QCheckPR)), 0)
}

func TestReviewStampedInTheSecondTheStepStartedCounts(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "execute")
	h.advance(700 * time.Millisecond) // the step starts mid-second
	h.done("implemented")
	started := h.now()
	want(t, "execution start at GitHub's resolution", h.st.Exec.StartedAt, started.Truncate(time.Second))
	rv := approval("bob", "devin")
	rv.At = started.Truncate(time.Second) // GitHub stamps whole seconds
	res := h.apply(rv)
	want(t, "counted", res.State.Slug, "qa")
	// One second earlier is before the step: an earlier cycle's review.
	h2 := newHarness(t, reviewCfg)
	reviewLoopTo(t, h2, "review-loop", "code-review")
	old := approval("bob", "devin")
	old.At = h2.st.Exec.StartedAt.Add(-time.Second)
	want(t, "earlier review ignored", h2.apply(old).State.Slug, "code-review")
	want(t, "still running", h2.st.Status, state.InProgress)
}

func TestChecksSummary(t *testing.T) {
	pr := struct{ HeadSHA, URL string }{"abc", "https://github.com/acme/widgets/pull/4"}
	c := func(name, status, conclusion string) evidence.CheckRead {
		return evidence.CheckRead{Name: name, Status: status, Conclusion: conclusion}
	}
	tests := []struct {
		name   string
		checks []evidence.CheckRead
		ok     bool
		state  string
		failed []string
	}{
		{"no checks yet", nil, false, "", nil},
		{"all green", []evidence.CheckRead{c("unit", "completed", "success"), c("docs", "completed", "neutral")}, true, "success", nil},
		{"one still running", []evidence.CheckRead{c("unit", "completed", "success"), c("e2e", "queued", "")}, false, "pending", nil},
		{"a failure wins over pending", []evidence.CheckRead{c("e2e", "in_progress", ""), c("lint", "completed", "failure")}, true, "failure", []string{"lint"}},
		{"timed out and cancelled fail", []evidence.CheckRead{c("a", "completed", "timed_out"), c("b", "completed", "cancelled")}, true, "failure", []string{"a", "b"}},
		// The bot's own PR check (whoever wrote a check of that name) is
		// no evidence: in progress it would hold QA forever, green it
		// could be forged.
		{"own check in progress is left out", []evidence.CheckRead{c("unit", "completed", "success"), c("autopilot", "in_progress", "")}, true, "success", nil},
		{"own check alone is no evidence", []evidence.CheckRead{c("autopilot", "completed", "success")}, false, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, ok := checkview.ChecksSummary(4, pr.HeadSHA, pr.URL, tt.checks, "autopilot")
			if ok != tt.ok || ok && (ev.State != tt.state || !reflect.DeepEqual(ev.Failed, tt.failed) || ev.URL != pr.URL+"/checks" || ev.SHA != "abc") {
				t.Errorf("ChecksSummary = %+v, %v", ev, ok)
			}
			if !ok && len(tt.checks) > 0 && ev.State != tt.state {
				t.Errorf("state %q, want %q", ev.State, tt.state)
			}
		})
	}
}

func TestPullReadAsksForTheCountedReviewersOnly(t *testing.T) {
	h := newHarness(t, reviewCfg)
	reviewLoopTo(t, h, "review-loop", "code-review")
	started := h.st.Exec.StartedAt
	read := events.PullRead{Pull: linkedPR("devin"), URL: prURL, Reviews: []evidence.ReviewRead{
		{ID: 1, Reviewer: "old", State: "APPROVED", At: started.Add(-time.Hour), CommitSHA: testHead},
		{ID: 2, Reviewer: "chatty", State: "COMMENTED", At: started.Add(time.Minute), CommitSHA: testHead},
		{ID: 3, Reviewer: "bob", State: "APPROVED", At: started.Add(time.Minute), CommitSHA: testHead, URL: prURL + "#r3"},
	}}
	res := h.apply(read)
	asks := queriesOf(res.Queries, events.QPerms)
	if len(asks) != 1 || !reflect.DeepEqual(asks[0].Logins, []string{"bob"}) || asks[0].Then == nil {
		t.Fatalf("asks = %+v", asks)
	}
	want(t, "nothing applied before the permissions", res.State.Slug, "code-review")
	res = h.apply(asks[0].Then.WithPerms(map[string]evidence.PermRead{"bob": {Perm: "write"}}))
	want(t, "no more asks", len(queriesOf(res.Queries, events.QPerms)), 0)
	want(t, "approved: next step", res.State.Slug, "qa")
}
