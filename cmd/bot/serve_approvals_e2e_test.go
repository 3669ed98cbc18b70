package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// approvalsE2EConfig puts an approver policy with a reminder and an
// expiry on the meta-repo config review's approval gate.
const approvalsE2EConfig = `default_flow: meta-repo
jira:
  enabled: false
approvals:
  approval:
    users: [maria]
    min: 1
    remind_after: 24h
    expire_after: 96h
    on_expire: stop
`

// TestServeTwoReplicasSweepOneReminder: two `bot serve` processes on one
// Redis sweep on their timers; the test moves their clock (the test-only
// AUTOPILOT_TEST_CLOCK_FILE both read) past the reminder's deadline, lets
// each replica sweep at least twice, and finds exactly one reminder
// comment; then past the expiry, likewise exactly one expiry comment and
// the run stopped.
func TestServeTwoReplicasSweepOneReminder(t *testing.T) {
	g := apptest.New(t)
	if err := g.SetFile(apptest.Repo, ".github/autopilot.yml", []byte(approvalsE2EConfig)); err != nil {
		t.Fatal(err)
	}
	clock := filepath.Join(t.TempDir(), "clock")
	setClock := func(d time.Duration) {
		t.Helper()
		if err := os.WriteFile(clock, []byte(d.String()+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	setClock(0)
	prefix := fmt.Sprintf("autopilot-e2e-remind-%d:", time.Now().UnixNano())
	// Replicas sharing a Redis claim each sweep interval once between them
	// (by the interval's number); with intervals of 1s and 2s their numbers
	// never meet, so both sweep on their own timers, at times at the same
	// moment: only the engine's ballot keeps the reminder to one.
	env := func(sweep string) map[string]string {
		e := baseEnv(t, g)
		redisEnv(t, e, prefix)
		e["GITHUB_API_URL"] = g.SweepURL
		e["SWEEP_INTERVAL"] = sweep
		e["AUTOPILOT_TEST_CLOCK_FILE"] = clock
		return e
	}
	a := startReplica(t, "a", env("1s"))
	b := startReplica(t, "b", env("2s"))

	n, err := g.CreateIssue(apptest.Repo, apptest.Writer, "Review the config", "Opened by the writer.", nil)
	if err != nil {
		t.Fatal(err)
	}
	a.mustAccept(g.Labeled(apptest.Repo, n, apptest.Maintainer, "autopilot"))
	waitFor(t, "the run's state", func() bool { return g.State(apptest.Repo, n) != nil })
	b.mustAccept(g.Say(apptest.Repo, n, apptest.Maintainer, "/autopilot done config drafted"))
	waitFor(t, "the approval gate", func() bool {
		s := g.State(apptest.Repo, n)
		return s != nil && s.Gate != nil && s.Gate.Kind.IsApproval()
	})

	// sweptTwiceEach waits until each replica has run two sweeps that
	// started after now (a sweep's timestamp is set when it ends).
	sweptTwiceEach := func(what string) {
		t.Helper()
		series := fmt.Sprintf(`autopilot_last_sweep_timestamp_seconds{installation="%d"}`, apptest.Installation)
		for _, r := range []*replica{a, b} {
			from := float64(time.Now().Unix())
			seen := 0
			last := r.metric(series)
			waitFor(t, r.name+" sweeping twice "+what, func() bool {
				if v := r.metric(series); v != last && v > from {
					seen, last = seen+1, v
				}
				return seen >= 2
			})
		}
	}

	sweptTwiceEach("before the deadline")
	if k := g.BotComments(apptest.Repo, n, "⏰ Reminder"); k != 0 {
		t.Fatalf("%d reminders before the deadline", k)
	}
	setClock(25 * time.Hour)
	sweptTwiceEach("after the reminder's deadline")
	if k := g.BotComments(apptest.Repo, n, "⏰ Reminder"); k != 1 {
		t.Fatalf("%d reminders after the two replicas swept past the deadline, want 1:\n%s", k, botBodiesOf(g, n))
	}
	if s := g.State(apptest.Repo, n); s.Gate == nil || s.Gate.Ballot == nil || s.Gate.Ballot.Reminded.IsZero() {
		t.Fatalf("the ballot does not record the reminder: %+v", s.Gate)
	}

	setClock(97 * time.Hour)
	sweptTwiceEach("after the expiry")
	if k := g.BotComments(apptest.Repo, n, "⌛ Expired"); k != 1 {
		t.Fatalf("%d expiry comments, want 1:\n%s", k, botBodiesOf(g, n))
	}
	if k := g.BotComments(apptest.Repo, n, "⏰ Reminder"); k != 1 {
		t.Fatalf("%d reminders after the expiry, want still 1", k)
	}
	if s := g.State(apptest.Repo, n); s.Run != state.RunStopped {
		t.Fatalf("run %q after the expiry with on_expire: stop, want stopped", s.Run)
	}
	for _, r := range []*replica{a, b} {
		if !strings.Contains(r.logs.String(), "AUTOPILOT_TEST_CLOCK_FILE") {
			t.Errorf("%s did not warn that its clock is the test clock", r.name)
		}
	}
}

func botBodiesOf(g *apptest.GitHub, n int) string {
	var out []string
	for _, c := range g.Comments(apptest.Repo, n) {
		if c.Author.Login == apptest.BotLogin {
			out = append(out, c.Body)
		}
	}
	return strings.Join(out, "\n---\n")
}
