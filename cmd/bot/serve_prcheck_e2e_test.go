package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
	"github.com/autopilot-dev/autopilot/internal/state"
)

const prHead = "1111111111111111111111111111111111111111"

// toGateWithPR opens a PR by the writer linking issue n, then drives n to
// the session-boundary gate; it returns the PR and the check run offering
// the gate's options.
func toGateWithPR(t *testing.T, g *apptest.GitHub, n int, send func(i int, d apptest.Delivery)) (int, fakegithub.CheckRun) {
	t.Helper()
	send(0, g.Labeled(apptest.Repo, n, apptest.Maintainer, "autopilot"))
	waitStep(t, g, n, "problem")
	pr, d := g.OpenPR(apptest.Repo, n, apptest.Writer, prHead)
	send(0, d)
	waitFor(t, "the PR check in progress", func() bool {
		c, ok := g.LatestCheck(apptest.Repo, prHead, "autopilot")
		return ok && c.Status == "in_progress"
	})
	for i, s := range []string{"problem", "research", "plan"} {
		send(i+1, g.Say(apptest.Repo, n, apptest.Writer, "/autopilot done "+s+" finished"))
		waitStep(t, g, n, map[string]string{"problem": "research", "research": "plan", "plan": "decompose"}[s])
	}
	send(4, g.Say(apptest.Repo, n, apptest.Writer, "/autopilot done decomposed\n\n```autopilot-tasks\n- title: Writer\n```"))
	var c fakegithub.CheckRun
	waitFor(t, "the check offering the gate", func() bool {
		var ok bool
		c, ok = g.LatestCheck(apptest.Repo, prHead, "autopilot")
		return ok && c.Conclusion == "action_required" && len(c.Actions) > 0
	})
	st := g.State(apptest.Repo, n)
	if st.Gate == nil || st.Gate.Kind != "session-boundary" {
		t.Fatalf("gate = %+v, want the session boundary", st.Gate)
	}
	return pr, c
}

// button returns the identifier of option letter on check c.
func button(t *testing.T, c fakegithub.CheckRun, letter string) string {
	t.Helper()
	for _, a := range c.Actions {
		if strings.HasSuffix(a.Identifier, "."+letter) {
			return a.Identifier
		}
	}
	t.Fatalf("check %d offers no button for %s: %+v", c.ID, letter, c.Actions)
	return ""
}

// refusals counts the App's explanations of refused clicks by who.
func refusals(g *apptest.GitHub, n int, who string) int {
	return g.BotComments(apptest.Repo, n, "@\u200b"+who+", thanks — only people with at least **write** permission on this repository can answer autopilot's questions, so your click")
}

// TestServePRCheckButtons runs `bot serve` against the fake GitHub: the
// linked PR's check offers the open gate's options as buttons and links
// the Choose comment; a click by someone without permission is refused and
// explained once; an answer by comment moves the flow on and a new check
// run replaces the buttons; a click on the old button afterwards decides
// nothing; a click on the new gate's button answers it, recorded with who
// clicked; the same delivery again is a duplicate.
func TestServePRCheckButtons(t *testing.T) {
	g := apptest.New(t)
	r := startReplica(t, "serve", baseEnv(t, g))
	n := g.Issue(apptest.Repo, "PR check")
	send := func(_ int, d apptest.Delivery) { r.mustAccept(d) }
	pr, c := toGateWithPR(t, g, n, send)
	st := g.State(apptest.Repo, n)
	if !strings.Contains(c.DetailsURL, "#issuecomment-") || !strings.Contains(c.Summary, c.DetailsURL) {
		t.Errorf("details %q, summary:\n%s\nwant both to link the Choose comment", c.DetailsURL, c.Summary)
	}
	t.Logf("check at the gate (%s/%s), as rendered:\n%s\n%s\nbuttons: %+v", c.Status, c.Conclusion, c.Title, c.Summary, c.Actions)

	// A stranger clicks twice: refused, explained once, nothing decided.
	for i := 0; i < 2; i++ {
		r.mustAccept(g.Click(apptest.Repo, pr, c, apptest.Stranger, button(t, c, "A")))
		r.idle()
	}
	if got := g.State(apptest.Repo, n); got.Gate == nil || len(got.Decisions) != len(st.Decisions) {
		t.Fatalf("a stranger's click decided: gate %+v, decisions %+v", got.Gate, got.Decisions)
	}
	if k := refusals(g, n, apptest.Stranger); k != 1 {
		t.Errorf("%d explanations of the stranger's clicks, want 1", k)
	}

	// The gate is answered by a comment; the flow moves on, and a new
	// check run of the same name on the same head carries the new state.
	r.mustAccept(g.Say(apptest.Repo, n, apptest.Maintainer, "A"))
	waitFor(t, "the gate answered", func() bool { return g.State(apptest.Repo, n).Gate == nil })
	r.idle()
	after, _ := g.LatestCheck(apptest.Repo, prHead, "autopilot")
	if after.ID == c.ID || after.Conclusion == "action_required" || len(after.Actions) != 0 {
		t.Errorf("check after the answer = %+v, want a new run without buttons", after)
	}
	before := g.State(apptest.Repo, n)
	// The old button, clicked now by a maintainer: stale, no decision.
	r.mustAccept(g.Click(apptest.Repo, pr, c, apptest.Maintainer, button(t, c, "B")))
	r.idle()
	if got := g.State(apptest.Repo, n); len(got.Decisions) != len(before.Decisions) || got.Version != before.Version {
		t.Fatalf("a click on an answered gate's button changed the state: decisions %+v", got.Decisions)
	}

	// The next gate's button answers it, recorded with who clicked.
	r.mustAccept(g.Say(apptest.Repo, n, apptest.Writer, "/autopilot fail the tool crashed"))
	var next fakegithub.CheckRun
	for i := 0; i < 4; i++ {
		waitFor(t, "a check after the failure", func() bool {
			var ok bool
			next, ok = g.LatestCheck(apptest.Repo, prHead, "autopilot")
			return ok && next.ID != after.ID
		})
		if next.Conclusion == "action_required" {
			break
		}
		after = next
		r.mustAccept(g.Say(apptest.Repo, n, apptest.Writer, "/autopilot fail the tool crashed"))
	}
	if next.Conclusion != "action_required" {
		t.Fatalf("no gate after repeated failures: check %+v", next)
	}
	gate := g.State(apptest.Repo, n).Gate
	click := g.Click(apptest.Repo, pr, next, apptest.Writer, next.Actions[0].Identifier)
	r.mustAccept(click)
	waitFor(t, "the click applied", func() bool { return g.State(apptest.Repo, n).Gate == nil })
	r.idle()
	got := g.State(apptest.Repo, n)
	d := got.Decisions[len(got.Decisions)-1]
	if d.By != apptest.Writer || d.Gate != gate.ID || !strings.Contains(d.Reason, "PR check") {
		t.Errorf("decision = %+v, want the writer's click on %s", d, gate.ID)
	}
	if code := r.post(click); code != http.StatusOK {
		t.Errorf("the same click delivery again answered %d, want 200 (duplicate)", code)
	}
	if code := r.terminate(); code != 0 {
		t.Errorf("exit %d after SIGTERM", code)
	}
}

// TestServePRCheckClickOnTwoReplicas: the same click reaches two replicas
// sharing one Redis, and re-emitted under new delivery ids reaches both
// again: one decision, once.
func TestServePRCheckClickOnTwoReplicas(t *testing.T) {
	servertest.RedisURL(t)
	g := apptest.New(t)
	var rs []*replica
	prefix := fmt.Sprintf("autopilot-e2e-prcheck-%d:", time.Now().UnixNano())
	for _, name := range []string{"replica-a", "replica-b"} {
		env := baseEnv(t, g)
		redisEnv(t, env, prefix)
		env["LOCK_TTL"] = "5s"
		rs = append(rs, startReplica(t, name, env))
	}
	n := g.Issue(apptest.Repo, "Replicated click")
	pr, c := toGateWithPR(t, g, n, func(_ int, d apptest.Delivery) { acceptedOnce(t, d.Event, toBoth(t, rs, d)) })
	before := len(g.State(apptest.Repo, n).Decisions)
	click := g.Click(apptest.Repo, pr, c, apptest.Maintainer, button(t, c, "A"))
	acceptedOnce(t, "click", toBoth(t, rs, click))
	var wg sync.WaitGroup
	for _, r := range rs {
		d := click
		d.ID = apptest.NewDeliveryID()
		wg.Go(func() {
			if code := r.post(d); code != http.StatusAccepted {
				t.Errorf("%s: re-emitted click answered %d", r.name, code)
			}
		})
	}
	wg.Wait()
	for _, r := range rs {
		r.idle()
	}
	st := g.State(apptest.Repo, n)
	if st.Gate != nil || len(st.Decisions) != before+1 || st.Decisions[before].By != apptest.Maintainer {
		t.Fatalf("gate %+v, decisions %+v; want exactly one decision by the maintainer's click", st.Gate, st.Decisions)
	}
	if st.Run != state.RunInProgress {
		t.Errorf("run %s after the click", st.Run)
	}
	for _, r := range rs {
		if code := r.terminate(); code != 0 {
			t.Errorf("%s: exit %d after SIGTERM", r.name, code)
		}
	}
}
