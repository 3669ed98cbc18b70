package reliability

import (
	"context"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
)

// case20: people without write access answer a gate (association NONE or
// CONTRIBUTOR; permission none or read). Not applied; at most one polite
// refusal per user per gate. Measure: I1 rejected:unauthorized, I4.
func case20(t *testing.T) {
	w, n := started(t, Options{})
	w.toGate(n)
	w.SetAssociation(Reader, "CONTRIBUTOR")
	var ids []int64
	for _, said := range []struct{ who, body string }{{Stranger, "A"}, {Stranger, "A"}, {Stranger, "/autopilot choose B"}, {Reader, "A"}, {Reader, "B"}} {
		ids = append(ids, w.post(n, said.who, said.body).ID)
	}
	w.post(n, Maria, "B") // the real answer, so every classification is stored
	s := w.mustState(n)
	for _, id := range ids {
		if got := outcome(s, id); got != Unauthorized {
			t.Errorf("comment %d classified %q, want %s", id, got, Unauthorized)
		}
	}
	total := 0
	for _, id := range ids {
		total += len(w.replies(n, id))
	}
	if total != 2 {
		t.Errorf("%d refusal replies in all, want one per user (2)", total)
	}
	for who, first := range map[string]int64{Stranger: ids[0], Reader: ids[3]} {
		if len(w.replies(n, first)) != 1 {
			t.Errorf("%s's first refused answer got %d replies, want 1", who, len(w.replies(n, first)))
		}
	}
	if len(s.Decisions) != 1 || s.Decisions[0].By != Maria {
		t.Errorf("decisions %s, want maria's only", decisions(s))
	}
	w.MustSweep()
	check(t, w, CheckOptions{Issue: n})
}

// case21: author_association disagrees with real access. (a) a private
// org member shown as CONTRIBUTOR with the write role is accepted; (b) a
// triage user (permission read, role triage) shown as OWNER is refused;
// (c) the permission API fails: fail closed, defer, retry later.
// Measure: I4; decisions follow the permission table.
func case21(t *testing.T) {
	t.Run("contributor_with_write", func(t *testing.T) {
		w, n := started(t, Options{})
		w.toGate(n)
		w.GH.AddUser(Casey, "User")
		w.SetPermission(Casey, access.Write)
		w.SetAssociation(Casey, "CONTRIBUTOR")
		a := w.post(n, Casey, "A")
		if s := w.mustState(n); outcome(s, a.ID) != Applied || len(s.Decisions) != 1 {
			t.Errorf("casey's answer %q, decisions %s: want applied", outcome(s, a.ID), decisions(s))
		}
		check(t, w, CheckOptions{Issue: n})
	})
	t.Run("triage_shown_as_owner", func(t *testing.T) {
		w, n := started(t, Options{})
		w.toGate(n)
		w.SetAssociation(Tess, "OWNER")
		a := w.post(n, Tess, "A")
		w.post(n, Devin, "B")
		s := w.mustState(n)
		if outcome(s, a.ID) != Unauthorized || len(s.Decisions) != 1 || s.Decisions[0].By != Devin {
			t.Errorf("tess %q, decisions %s: want tess refused and devin's B applied", outcome(s, a.ID), decisions(s))
		}
		check(t, w, CheckOptions{Issue: n})
	})
	t.Run("permission_api_fails", func(t *testing.T) {
		w, n := started(t, Options{})
		w.toGate(n)
		w.GH.Script("GET", "/repos/*/*/collaborators/*/permission", fakegithub.Fail(502), fakegithub.Fail(502), fakegithub.Fail(502), fakegithub.Fail(502))
		w.Clock.Advance(time.Minute)
		a := w.Say(n, Maria, "A")
		w.ActionRun(context.Background(), w.CommentDelivery(a, "created"))
		s := w.mustState(n)
		if got := outcome(s, a.ID); got != "" || len(s.Decisions) != 0 {
			t.Errorf("answer %q with decisions %s while the permission lookup failed: want deferred (fail closed)", got, decisions(s))
		}
		w.Clock.Advance(10 * time.Minute)
		w.MustSweep() // retried later
		s = w.mustState(n)
		if outcome(s, a.ID) != Applied || len(s.Decisions) != 1 {
			t.Errorf("after the retry: %q, decisions %s", outcome(s, a.ID), decisions(s))
		}
		check(t, w, CheckOptions{Issue: n})
	})
}

// case22: the bot's own comments (whose text has "/autopilot skip" and
// "reply A"), a human quoting "> A", and another bot saying "A" are never
// decisions, and the bot's comments re-triggering the workflow (PAT or App
// token) cause no loop. Measure: I1 not-a-command; at most K bot comments
// per issue per 10 minutes; zero self-triggered transitions.
func case22(t *testing.T) {
	const K = 10
	w, n := started(t, Options{})
	w.toGate(n)
	v0 := w.mustState(n).Version
	mut0 := w.mutations()
	// Every bot comment so far comes back as an event, as with a PAT.
	for _, c := range w.BotComments(n) {
		w.MustRun(w.CommentDelivery(c, "created"))
	}
	if w.mustState(n).Version != v0 || w.mutations() != mut0 {
		t.Errorf("the bot's own comments caused writes: version %d→%d, %d mutations", v0, w.mustState(n).Version, w.mutations()-mut0)
	}
	quote := w.post(n, Devin, "> A\nIs A the fresh session? I think so.")
	other := w.post(n, LintBot, "A")
	otherCmd := w.post(n, LintBot, "/autopilot skip")
	w.post(n, Maria, "B") // stores the classifications
	s := w.mustState(n)
	for _, id := range []int64{quote.ID, other.ID, otherCmd.ID} {
		if got := outcome(s, id); got != NotACommand {
			t.Errorf("comment %d classified %q, want %s", id, got, NotACommand)
		}
	}
	if len(s.Decisions) != 1 || s.Decisions[0].By != Maria {
		t.Errorf("decisions %s, want maria's B only", decisions(s))
	}
	// Loop breaker: bot comments per 10-minute window.
	bots := w.BotComments(n)
	for i := range bots {
		inWindow := 0
		for _, c := range bots {
			if !c.CreatedAt.Before(bots[i].CreatedAt) && c.CreatedAt.Sub(bots[i].CreatedAt) < 10*time.Minute {
				inWindow++
			}
		}
		if inWindow > K {
			t.Errorf("%d bot comments within 10 minutes of %s, want at most %d", inWindow, bots[i].CreatedAt.Format(time.TimeOnly), K)
		}
	}
	check(t, w, CheckOptions{Issue: n})
}
