package reliability

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
)

// case06: the same delivery twice, then again after a restart that wiped
// the dedupe cache (App); the same event re-run (Action). No new effects:
// the comment-id ledger covers the restart. Measure: I2; FakeGitHub and
// FakeJira POST counts unchanged.
func case06(t *testing.T) {
	for _, mode := range []Mode{ModeApp, ModeAction} {
		t.Run(modeName(mode), func(t *testing.T) {
			w, n := started(t, Options{Mode: mode, Jira: true, SearchLag: 90 * time.Second})
			w.post(n, Devin, "/autopilot done problem")
			w.post(n, Devin, "/autopilot done research")
			w.post(n, Devin, "/autopilot done plan")
			w.Clock.Advance(time.Minute)
			c := w.Say(n, Devin, decompose)
			d := w.CommentDelivery(c, "created")
			sch := NewScheduler(w, 6)
			send := func() {
				if mode == ModeApp {
					w.app.deliver(sch, d)
					w.app.idle(t)
					return
				}
				w.MustRun(d)
			}
			send()
			if got := len(w.Jira.Issues()); got != 2 {
				t.Fatalf("first delivery: Jira holds %d issues, want 2", got)
			}
			gh, jira := w.posts()
			mark := len(w.Calls())
			w.Clock.Advance(time.Minute)
			send() // the same X-GitHub-Delivery again (or the same event re-run)
			if mode == ModeApp {
				if a := w.Acks(); a[len(a)-1].Status != http.StatusOK {
					t.Errorf("duplicate delivery answered %d, want 200", a[len(a)-1].Status)
				}
				w.RestartApp()
				w.Clock.Advance(time.Minute)
				send() // the dedupe cache is gone: processed again
				if a := w.Acks(); a[len(a)-1].Status != http.StatusAccepted {
					t.Errorf("after the restart the delivery was answered %d, want 202", a[len(a)-1].Status)
				}
			}
			if got := len(w.Jira.Issues()); got != 2 {
				t.Errorf("Jira holds %d issues after the redeliveries, want 2", got)
			}
			gh2, jira2 := w.posts()
			var effects []string
			for _, cl := range w.Calls()[mark:] {
				if cl.Mutation() {
					effects = append(effects, cl.Method+" "+cl.Path)
				}
			}
			w.MustSweep()
			check(t, w, CheckOptions{Issue: n})
			if gh2 != gh || jira2 != jira {
				t.Errorf("POSTs went from GitHub %d / Jira %d to %d / %d: the redelivery had effects %v", gh, jira, gh2, jira2, effects)
			}
		})
	}
}

// case07: the same comment through different deliveries: created, then
// edited with the text unchanged, then edited to another answer, and the
// created event re-run. Decisions are keyed by comment id; an edit is at
// most an audit. Measure: I2, I5.
func case07(t *testing.T) {
	w, n := started(t, Options{})
	w.toGate(n)
	a := w.post(n, Maria, "A")
	s := w.mustState(n)
	if outcome(s, a.ID) != Applied {
		t.Fatalf("answer classified %q", outcome(s, a.ID))
	}
	before := w.mutations()
	w.Clock.Advance(time.Minute)
	w.MustRun(w.CommentDelivery(a, "edited")) // unchanged text
	edited, err := w.GH.EditComment(a.ID, Maria, "B")
	must(t, err)
	w.Clock.Advance(time.Minute)
	w.MustRun(w.CommentDelivery(edited, "edited"))
	w.MustRun(w.CommentDelivery(a, "created")) // the Action re-run of the original event
	if got := w.mutations(); got != before {
		t.Errorf("%d mutations after the edits and the re-run, want none", got-before)
	}
	s = w.mustState(n)
	if len(s.Decisions) != 1 || s.Decisions[0].Option != "A" {
		t.Errorf("decisions %s, want the original A only", decisions(s))
	}
	w.MustSweep()
	checkOnly(t, w.CheckEffects(n))
	checkOnly(t, w.CheckMonotonic(n))
	check(t, w, CheckOptions{Issue: n})
}

// case08: (a) an answer whose run reads a stale copy of the state (the gate
// not yet visible) is applied once the gate is; (b) an answer created
// before the gate opened is rejected as stale, with one reply. Measure: I1
// and I4 (no pre-gate answer applied).
func case08(t *testing.T) {
	t.Run("delivered_before_gate_visible", func(t *testing.T) {
		w, n := started(t, Options{})
		w.toGate(n)
		_, sc := w.stateComment(n)
		if len(sc.Edits) == 0 {
			t.Fatal("state comment has no edit history")
		}
		previous := sc.Edits[len(sc.Edits)-1].Before // the state before the gate
		a := w.Say(n, Maria, "A")
		staleRuns := map[int]bool{}
		w.OnCall(func(c Call, body []byte) ([]byte, bool) {
			if !(c.Method == "GET" && strings.HasSuffix(c.Path, "/issues/1/comments") || c.GraphQL()) || staleRuns[c.Run] || c.Status != 200 {
				return nil, false
			}
			staleRuns[c.Run] = true // the first read of a run hits a stale replica
			b, ok := editListed(body, func(id int64, m map[string]any) {
				if id == sc.ID {
					m["body"] = previous
				}
			})
			if !ok {
				return nil, false
			}
			return b, false
		})
		w.MustRun(w.CommentDelivery(a, "created"))
		w.OnCall(nil)
		w.MustSweep()
		s := w.mustState(n)
		if len(s.Decisions) != 1 || s.Decisions[0].CommentID != a.ID {
			t.Errorf("decisions %s, want maria's A applied once", decisions(s))
		}
		check(t, w, CheckOptions{Issue: n})
	})
	t.Run("created_before_gate_opened", func(t *testing.T) {
		w, n := started(t, Options{})
		for _, s := range []string{"problem", "research", "plan"} {
			w.post(n, Devin, "/autopilot done "+s)
		}
		w.Clock.Advance(time.Minute)
		dec := w.Say(n, Devin, decompose)
		w.Clock.Advance(2 * time.Second)
		early := w.Say(n, Maria, "A") // before any run opened the gate
		w.Clock.Advance(time.Minute)
		w.MustRun(w.CommentDelivery(dec, "created"))
		w.MustRun(w.CommentDelivery(early, "created"))
		s := w.mustState(n)
		if s.Gate == nil || len(s.Decisions) != 0 {
			t.Errorf("gate %v decisions %s: an answer older than its gate was applied", s.Gate, decisions(s))
		}
		if got := outcome(s, early.ID); got != "rejected:stale" {
			t.Errorf("early answer classified %q, want rejected:stale", got)
		}
		if r := w.replies(n, early.ID); len(r) != 1 {
			t.Errorf("%d replies to the early answer, want 1", len(r))
		}
		w.MustSweep()
		check(t, w, CheckOptions{Issue: n})
	})
}

// case09: stale payload snapshots. An issues.edited delivery is not acted
// on; an event whose payload carries old labels, title and body is reconciled
// from fresh reads. Measure: I3; the re-read before the write is
// conditional (ETag) and answered 304 when unchanged.
func case09(t *testing.T) {
	w, n := started(t, Options{})
	// The thread is read through REST here (GraphQL answers with an error,
	// as it may), whose GETs are conditional; a GraphQL read cannot be.
	gqlDown := make([]fakegithub.Step, 200)
	for i := range gqlDown {
		gqlDown[i] = fakegithub.Step{Status: http.StatusOK, Body: `{"errors":[{"message":"Something went wrong while executing your query."}]}`}
	}
	w.GH.Script("POST", "/graphql", gqlDown...)
	w.Clock.Advance(time.Minute)
	chat := w.Say(n, Reader, "Looks good to me.")
	stale := w.CommentDelivery(chat, "created") // labels: step problem
	before := len(w.Calls())
	edited := w.LabelDelivery(n, "labeled", "autopilot", Maria)
	edited.Event, edited.Payload = "issues", []byte(strings.Replace(string(edited.Payload), `"action":"labeled"`, `"action":"edited"`, 1))
	w.MustRun(edited)
	if got := len(w.Calls()) - before; got != 0 {
		t.Errorf("issues.edited made %d API calls, want 0", got)
	}
	w.post(n, Devin, "/autopilot done problem")
	w.post(n, Devin, "/autopilot done research")
	w.MustRun(stale) // old snapshot: labels say problem, the state says plan
	s := w.mustState(n)
	if s.Slug != "plan" {
		t.Errorf("state at %s after the stale delivery, want plan", s.Slug)
	}
	conditional := 0
	for _, c := range w.Calls() {
		if c.Status == http.StatusNotModified {
			conditional++
		}
	}
	if conditional == 0 {
		t.Error("no conditional GET answered 304: the re-read before a write does not use ETags")
	}
	w.MustSweep()
	check(t, w, CheckOptions{Issue: n, Unpersisted: func(id int64) bool { return id == chat.ID }})
}

// case10: every delivery is lost for 10 minutes while two answers are
// posted; the periodic reconcile recovers both. Measure: I1 covers both
// ids; an alert metric exists for deliveries unrecoverable after 3 days.
func case10(t *testing.T) {
	t.Run("sweep_recovers", func(t *testing.T) {
		w, n := started(t, Options{})
		w.toGate(n)
		sch := NewScheduler(w, 10)
		a := w.Say(n, Maria, "A")
		sch.Send(w.CommentDelivery(a, "created"), Fault{Drop: true})
		w.Clock.Advance(4 * time.Minute)
		b := w.Say(n, Devin, "B")
		sch.Send(w.CommentDelivery(b, "created"), Fault{Drop: true})
		w.Clock.Advance(6 * time.Minute)
		sch.Drain()
		if len(w.Runs()) == 0 {
			t.Fatal("no runs at all")
		}
		w.MustSweep() // the periodic reconcile
		s := w.mustState(n)
		if outcome(s, a.ID) != Applied || outcome(s, b.ID) != Decided {
			t.Errorf("outcomes A=%q B=%q, want applied and already-decided", outcome(s, a.ID), outcome(s, b.ID))
		}
		w.MustSweep()
		check(t, w, CheckOptions{Issue: n})
	})
	t.Run("unrecoverable_age_alert_metric", func(t *testing.T) {
		w := NewWorld(t, Options{Mode: ModeApp})
		w.StartApp(AppOptions{})
		resp, err := http.Get(strings.TrimSuffix(w.app.url, "/api/github/webhooks") + "/metrics")
		must(t, err)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		re := regexp.MustCompile(`(?m)^# HELP (\S*(redeliver|undelivered|unrecoverable|missed)\S*)`)
		if !re.Match(body) {
			t.Errorf("no metric about unrecoverable deliveries among:\n%s", helpLines(body))
		}
	})
}

func helpLines(b []byte) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "# HELP") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
