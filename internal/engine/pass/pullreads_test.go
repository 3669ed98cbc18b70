package pass_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/evidence"
	"github.com/autopilot-dev/autopilot/internal/engine/pass"
)

// The PR reads a pass asks for itself: a review's PR as it is now (its
// head) and the reviewer's permission before the review applies; a PR
// linked or reviewed is read for its check unless an evidence read
// (QCheckPR) covers it.

func review(pr int, reviewer string) events.Review {
	return events.Review{ID: 77, PR: pr, PRAuthor: "devin", Reviewer: reviewer, State: "APPROVED", CommitSHA: head, URL: prURL + "#r77"}
}

// TestReviewAsksReviewerPermissionThenItsPRHead: the review is held until
// its reviewer's permission and its PR's head are read, one round each;
// its PR is then read once for the check or as evidence, never both.
func TestReviewAsksReviewerPermissionThenItsPRHead(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\nroles: {architect: [alice], critic: [\"@carol\", dave]}\n")
	w.toCodeReview()
	n := pass.New(w.set, w.st, pass.Options{Issue: issue})
	step(t, n, review(40, "alice"), w.clock)
	rd := ready(t, n, w.clock)
	if len(rd.Queries) != 1 || rd.Queries[0].Kind != events.QPerms || !reflect.DeepEqual(rd.Queries[0].Logins, []string{"alice"}) {
		t.Fatalf("first Ready asks %+v, want alice's permission", rd.Queries)
	}
	step(t, n, events.PermsRead{Perms: map[string]evidence.PermRead{"alice": {Perm: access.Write}}}, w.clock)
	rd = ready(t, n, w.clock)
	if len(rd.Queries) != 1 || rd.Queries[0].Kind != events.QPullHead || rd.Queries[0].PR != 40 {
		t.Fatalf("second Ready asks %+v, want the head of #40", rd.Queries)
	}
	step(t, n, events.PullHeadRead{PR: 40, Pull: pr()}, w.clock)
	rd = ready(t, n, w.clock)
	var prReads []events.QueryKind
	for _, q := range rd.Queries {
		if q.PR == 40 {
			prReads = append(prReads, q.Kind)
		}
	}
	if len(prReads) != 1 || (prReads[0] != events.QPullSeen && prReads[0] != events.QCheckPR) {
		t.Errorf("after the review: PR reads %v, want one (for the check or as evidence)", prReads)
	}
}

// TestLinkedPRAsksItsReadForTheCheck: a PR linked by a run that reads no
// evidence of it is read for its check (QPullSeen), once; the answer
// records its head.
func TestLinkedPRAsksItsReadForTheCheck(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\n")
	w.start("greenfield")
	n := pass.New(w.set, w.st, pass.Options{Issue: issue})
	step(t, n, events.PRLinked{PR: 40, URL: prURL}, w.clock)
	rd := ready(t, n, w.clock)
	if len(rd.Queries) != 1 || rd.Queries[0].Kind != events.QPullSeen || rd.Queries[0].PR != 40 {
		t.Fatalf("asked %+v, want QPullSeen of #40", rd.Queries)
	}
	step(t, n, events.PullSeenRead{PR: 40, Pull: pr()}, w.clock)
	if got := n.State().PRChecks; len(got) == 0 {
		t.Errorf("the PR's head is not recorded: %+v", got)
	}
	if rd := ready(t, n, w.clock); len(rd.Queries) != 0 {
		t.Errorf("asked again: %+v", rd.Queries)
	}
	// A PR that is gone is skipped; no read asked for the issue itself.
	n = pass.New(w.set, w.st, pass.Options{Issue: issue})
	step(t, n, events.PRLinked{PR: issue}, w.clock)
	if rd := ready(t, n, w.clock); len(rd.Queries) != 0 {
		t.Errorf("the issue itself asked %+v", rd.Queries)
	}
}

// TestPRReadFailureEndsThePass: a review's PR that cannot be read (not a
// 404) ends the pass with the forge's error; one that is gone leaves the
// review as delivered.
func TestPRReadFailureEndsThePass(t *testing.T) {
	w := newWorld(t, "jira: {enabled: false}\nroles: {architect: [alice], critic: [\"@carol\", dave]}\n")
	w.toCodeReview()
	boom := errors.New("502 bad gateway")
	n := pass.New(w.set, w.st, pass.Options{Issue: issue})
	rv := review(40, "alice")
	rv.Perm = access.Write
	step(t, n, rv, w.clock)
	ready(t, n, w.clock)
	err := n.Step(events.PullHeadRead{PR: 40, Fail: events.ReadTransient, Err: boom}, w.clock)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "#40") {
		t.Errorf("Step(failed read) = %v, want the forge's error naming the PR", err)
	}
	n = pass.New(w.set, w.st, pass.Options{Issue: issue})
	step(t, n, rv, w.clock)
	ready(t, n, w.clock)
	step(t, n, events.PullHeadRead{PR: 40, Fail: events.ReadNotFound}, w.clock)
	if rd := ready(t, n, w.clock); len(rd.Queries) != 0 && rd.Queries[0].Kind == events.QPullSeen {
		t.Errorf("a PR that is gone is read again: %+v", rd.Queries)
	}
}
