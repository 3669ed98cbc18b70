package reliability

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/appmode"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/server/appauth"
	"github.com/autopilot-dev/autopilot/internal/server/job"
	"github.com/autopilot-dev/autopilot/internal/server/metrics"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
	"github.com/autopilot-dev/autopilot/internal/wiring"
)

// Cases 28–31 (issue 15: issues that live for months): beyond RELIABILITY.md
// §6's 27, numbered on in the same style; docs/reliability.md lists them.

// commentListings counts a run's billed listings of issue n's comments:
// REST pages and GraphQL pages.
func (w *World) commentListings(run, n int) int {
	k := 0
	for _, c := range w.runCalls(run) {
		if !c.Costs() {
			continue
		}
		if c.Method == http.MethodGet && c.Path == fmt.Sprintf("/repos/%s/issues/%d/comments", Repo, n) {
			k++
		}
		var q struct {
			Variables struct {
				Number int `json:"number"`
			} `json:"variables"`
		}
		if c.GraphQL() && json.Unmarshal([]byte(c.Body), &q) == nil && q.Variables.Number == n {
			k++
		}
	}
	return k
}

// billed counts a run's calls that count against GitHub's budget.
func (w *World) billed(run int) int {
	k := 0
	for _, c := range w.runCalls(run) {
		if c.Service == ServiceGitHub && c.Costs() {
			k++
		}
	}
	return k
}

// chatter adds k discussion comments a minute apart, straight into the
// fake (their deliveries are lost): a thread that grew over days.
func (w *World) chatter(n, k int) {
	for i := range k {
		w.Clock.Advance(time.Minute)
		w.Say(n, []string{Devin, Reader, Casey}[i%3], fmt.Sprintf("remark %d: had a look, seems fine.", i))
	}
}

// case28: a thread that collected 1,200 comments (seeded chatter whose
// deliveries were lost). One catch-up run reads them; from then on a
// chatter comment and a gate answer cost what they cost on a short thread:
// no run lists the thread again, I1 holds (the ledger folds its oldest
// entries), and I6's per-event budget holds.
func case28(t *testing.T) {
	w, n := started(t, Options{})
	w.toGate(n)
	short := w.post(n, Devin, "Looks fine on a short thread.")
	shortRun := w.Runs()[len(w.Runs())-1].ID
	w.chatter(n, 1200)
	w.Clock.Advance(time.Minute)
	w.MustSweep() // catches up on the 1,200 comments once
	w.Clock.Advance(time.Minute)
	chat, answer := w.chatterThenAnswer(t, n, "at 1,200 comments")
	s := w.mustState(n)
	t.Logf("billed calls: chatter %d on a short thread, %d at 1,200 comments; answer %d", w.billed(shortRun), w.billed(chat), w.billed(answer))
	if l := w.commentListings(chat, n); l > 2 {
		t.Errorf("a chatter comment at 1,200 comments listed the thread %d times (GraphQL: one page; REST: first page + since)", l)
	}
	if s.LedgerFloor == 0 || len(s.Ledger) > 400 {
		t.Errorf("ledger of %d entries, floor %d: the oldest entries were not folded", len(s.Ledger), s.LedgerFloor)
	}
	// An old comment edited into an answer comes back through since and
	// is recognised as handled (folded), never applied.
	old := w.GH.Comments(Repo, n)[5]
	edited, err := w.GH.EditComment(old.ID, old.Author.Login, "B")
	must(t, err)
	w.MustRun(w.CommentDelivery(edited, "edited", old.Author.Login))
	w.MustSweep()
	if s := w.mustState(n); len(s.Decisions) != 1 {
		t.Errorf("an old comment edited into an answer was applied: %s", decisions(s))
	}
	_ = short
	check(t, w, CheckOptions{Issue: n, Budget: -1})
}

// case36: an issue labelled after it had 250 comments, so the state
// comment posted at the start is not on the thread's first page. No event
// after the start reads the whole thread (each lists at most two pages,
// GraphQL's first one in practice), a chatter comment costs ≤ 3 billed
// calls and a gate answer ≤ 6, as on a short thread.
func case36(t *testing.T) {
	w := NewWorld(t, Options{})
	n := w.NewIssue("Add CSV export", "Users want to export reports as CSV.")
	w.chatter(n, 250)
	w.Clock.Advance(time.Minute)
	w.Label(n, "autopilot")
	w.MustRun(w.LabelDelivery(n, "labeled", "autopilot", Maria))
	from := len(w.Runs())
	w.toGate(n)
	chat, answer := w.chatterThenAnswer(t, n, "on an issue labelled late")
	for _, r := range w.Runs()[from:] {
		if l := w.commentListings(r.ID, n); l > 2 {
			t.Errorf("run %d listed #%d's comments %d times: it read the whole thread of %d comments", r.ID, n, l, len(w.GH.Comments(Repo, n)))
		}
	}
	t.Logf("billed calls on an issue labelled after 250 comments: chatter %d, answer %d", w.billed(chat), w.billed(answer))
	check(t, w, CheckOptions{Issue: n})
}

// bigDecompose is a decompose report declaring k tasks with descriptions of
// size characters each: made-up words that compress like varied prose
// (about 2:1), not like repeated text.
func bigDecompose(k, size int) string {
	rnd := rand.New(rand.NewPCG(15, uint64(size)))
	var b strings.Builder
	b.WriteString("/autopilot done decomposed\n\n```autopilot-tasks\n")
	for i := range k {
		var d strings.Builder
		for d.Len() < size {
			for range 3 + rnd.IntN(7) {
				d.WriteByte(byte('a' + rnd.IntN(26)))
			}
			d.WriteByte(' ')
		}
		fmt.Fprintf(&b, "- title: Task number %d of the CSV export\n  description: %s\n", i+1, strings.TrimSpace(d.String()[:size]))
	}
	b.WriteString("```\n")
	return b.String()
}

// case29: the state size limit. A 180-task declaration of about 63,000
// characters (in GitHub's limit, over what the state comment can hold) is
// refused with a reply saying how many fit; nothing is recorded and the
// issue keeps working. The largest declaration that fits is accepted, and at
// that size every command still works: status, help, stop, resume, an
// answer, label removal, the sweep. I7 holds throughout.
func case29(t *testing.T) {
	w, n := started(t, Options{})
	for _, s := range []string{"problem", "research"} {
		w.post(n, Devin, "/autopilot done "+s+" finished")
	}
	w.post(n, Devin, epics)
	big := bigDecompose(180, 300)
	if l := textsafe.Len(big); l > 65536 || l < 60000 {
		t.Fatalf("the declaration is %d characters, want 60,000–65,536", l)
	}
	c := w.post(n, Devin, big)
	s := w.mustState(n)
	if o := outcome(s, c.ID); o != "rejected:state-full" || len(s.Tasks) != 1 {
		t.Fatalf("a declaration too large for the state: outcome %q, %d tasks recorded", o, len(s.Tasks))
	}
	rs := w.replies(n, c.ID)
	if len(rs) != 1 || !strings.Contains(rs[0].Body, "fit") {
		t.Fatalf("the refusal reply is missing or does not say what fits: %v", rs)
	}
	var fit int
	if _, err := fmt.Sscanf(rs[0].Body[strings.Index(rs[0].Body, "the first ")+len("the first "):], "%d", &fit); err != nil || fit < 1 || fit >= 180 {
		t.Fatalf("reply does not name how many fit (%v): %s", err, rs[0].Body)
	}
	t.Logf("of 180 tasks of 300 characters, %d fit", fit)
	w.Clock.Advance(time.Minute)
	ok := w.post(n, Devin, bigDecompose(fit, 300))
	s = w.mustState(n)
	if outcome(s, ok.ID) != Applied || len(s.Tasks) != fit+1 {
		t.Fatalf("the largest declaration that fits was not recorded: %q, %d tasks", outcome(s, ok.ID), len(s.Tasks))
	}
	_, sc := w.stateComment(n)
	t.Logf("state comment at the limit: %d characters, %d tasks", textsafe.Len(sc.Body), len(s.Tasks))
	// Every command at the limit.
	for _, cmd := range []string{"/autopilot status", "/autopilot help", "/autopilot stop", "/autopilot resume", "A"} {
		w.Clock.Advance(time.Minute)
		c := w.post(n, Maria, cmd)
		if o := outcome(w.mustState(n), c.ID); o != Applied {
			t.Errorf("%q at the size limit: outcome %q, want applied", cmd, o)
		}
	}
	w.chatter(n, 30)
	w.MustSweep()
	w.Clock.Advance(time.Minute)
	w.Unlabel(n, "autopilot")
	w.MustRun(w.LabelDelivery(n, "unlabeled", "autopilot", Maria))
	w.MustSweep()
	if s := w.mustState(n); s.Run != state.RunStopped {
		t.Errorf("label removal at the size limit: run %s, want stopped", s.Run)
	}
	checkOnly(t, w.CheckBounds(n))
	checkOnly(t, w.CheckLedger(n, nil, nil))
}

// case30: a run dies right after its state write (a cancelled run, a crash,
// the rate budget spent). The write announced a 👍 on an accepted answer,
// a 😕 and a reply on a refused one; the next run sends all three, once.
func case30(t *testing.T) {
	w, n := started(t, Options{})
	w.toGate(n)
	w.Clock.Advance(5 * time.Second)
	refused := w.Say(n, Reader, "A")
	w.Clock.Advance(5 * time.Second)
	accepted := w.Say(n, Maria, "A")
	w.runKilledAfterStateWrite(t, w.CommentDelivery(accepted, "created"))
	if s := w.mustState(n); len(s.Decisions) != 1 {
		t.Fatalf("the state write did not record the answer: %s", decisions(s))
	}
	w.Clock.Advance(time.Minute)
	w.MustSweep()
	reacts := func(id int64) []string {
		var out []string
		for _, rc := range w.GH.Reactions(id) {
			out = append(out, rc.Content)
		}
		return out
	}
	if got := reacts(accepted.ID); len(got) != 1 || got[0] != "+1" {
		t.Errorf("the accepted answer has reactions %v, want one 👍", got)
	}
	if got := reacts(refused.ID); len(got) != 1 || got[0] != "confused" {
		t.Errorf("the refused answer has reactions %v, want one 😕", got)
	}
	if rs := w.replies(n, refused.ID); len(rs) != 1 {
		t.Errorf("the refused answer has %d replies, want 1", len(rs))
	}
	check(t, w, CheckOptions{Issue: n})
}

// appModeApp is the real App-mode processor (internal/appmode, with the
// App's JWT and installation tokens from internal/server/appauth) on the
// world's fake GitHub.
func appModeApp(t *testing.T, w *World) (*appmode.App, *metrics.Metrics) {
	t.Helper()
	m := metrics.New()
	key := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(appKey(t))})
	auth, err := appauth.New(appauth.Config{AppID: AppID, PrivateKey: key, BaseURL: w.GH.URL()})
	must(t, err)
	in, err := wiring.LoadInputs(func(string) string { return "" }, "AUTOPILOT_")
	must(t, err)
	in.StateKey = string(w.Key)
	app, err := appmode.New(appmode.Options{Clients: auth, BaseURL: w.GH.URL(), AppID: AppID, BotLogin: AppBot,
		Wiring: wiring.Wiring{Inputs: in, Now: w.Clock.Now, Knobs: wiring.Knobs{MutationGap: -1}}, Metrics: m})
	must(t, err)
	return app, m
}

// case31: App mode, the installation token is revoked while the server
// holds it (an admin revoked it; GitHub rotated it). The next job's first
// request gets 401: the token is minted again once and the job succeeds;
// /metrics counts the re-mint. Refused again, the job fails after that one
// retry (no retry storm) and the sweep takes the issue up.
func case31(t *testing.T) {
	w := NewWorld(t, Options{Mode: ModeApp})
	app, m := appModeApp(t, w)
	process := func(d Delivery) error {
		ev, err := ghevent.Decode(d.Event, d.Payload)
		must(t, err)
		return app.Process(context.Background(), job.Job{Delivery: d.ID, Event: ev, Received: w.Clock.Now()})
	}
	n := w.NewIssue("Add CSV export", "Users want CSV.")
	w.Label(n, "autopilot")
	must(t, process(w.LabelDelivery(n, "labeled", "autopilot", Maria)))
	if w.GH.RevokeInstallationTokens(Installation) == 0 {
		t.Fatal("no installation token to revoke")
	}
	w.Clock.Advance(time.Minute)
	c := w.Say(n, Devin, "/autopilot done problem")
	if err := process(w.CommentDelivery(c, "created")); err != nil {
		t.Fatalf("the job after a revoked token failed: %v", err)
	}
	if s := w.mustState(n); s.Slug != "research" {
		t.Errorf("after a revoked token: step %s, want research", s.Slug)
	}
	metric := func() string {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		for _, l := range strings.Split(rec.Body.String(), "\n") {
			if strings.HasPrefix(l, "autopilot_installation_token_remints_total ") {
				return l
			}
		}
		return ""
	}
	if got := metric(); got != "autopilot_installation_token_remints_total 1" {
		t.Errorf("metric %q, want the re-mint counted once", got)
	}
	// Refused twice: one re-mint, then the job fails.
	w.GH.Script("POST", "/graphql", fakegithub.Step{Status: http.StatusUnauthorized}, fakegithub.Step{Status: http.StatusUnauthorized}) // the thread read
	from := len(w.GH.Requests())
	w.Clock.Advance(time.Minute)
	c = w.Say(n, Devin, "/autopilot done research")
	if err := process(w.CommentDelivery(c, "created")); err == nil {
		t.Fatal("a job whose token stays refused succeeded")
	}
	refused := 0
	for _, q := range w.GH.Requests()[from:] {
		if q.Status == http.StatusUnauthorized {
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("%d refused requests, want 2 (the job and its one retry)", refused)
	}
	if got := metric(); got != "autopilot_installation_token_remints_total 2" {
		t.Errorf("metric %q, want 2", got)
	}
	// The sweep (or the next event) catches up.
	must(t, process(w.SweepDelivery()))
	if s := w.mustState(n); s.Slug != "plan" {
		t.Errorf("after the sweep: step %s, want plan", s.Slug)
	}
}

// case32: overlapping runs outside one concurrency group, and a pass that
// posts nothing. Run A classifies a plain comment; its state PATCH is slow
// (a busy GitHub, the mutation pacer). Meanwhile run B loads after an answer
// appeared, applies it and writes; then A's PATCH lands on top and hides the
// answer. A reads back because its write came slowly after its re-read, and
// applies the answer at once, not at the next event.
func case32(t *testing.T) {
	w, n := started(t, Options{})
	w.toGate(n)
	w.Clock.Advance(time.Minute)
	chat := w.Say(n, Devin, "Looks fine to me.")
	var aRun int
	var answer fakegithub.Comment
	w.BeforeCall(func(c Call) {
		if c.Method != http.MethodPatch || aRun != 0 {
			return
		}
		aRun = c.Run
		done := make(chan struct{})
		go func() {
			defer close(done)
			answer = w.Say(n, Maria, "A")
			w.ActionRun(context.Background(), w.CommentDelivery(answer, "created"))
		}()
		<-done
		w.Clock.Advance(2 * time.Second) // A's PATCH was slow
	})
	r := w.ActionRun(context.Background(), w.CommentDelivery(chat, "created"))
	w.BeforeCall(nil)
	if r.Err != nil {
		t.Fatalf("run A: %v", r.Err)
	}
	if aRun == 0 || answer.ID == 0 {
		t.Fatal("run A wrote no state: the overlap never happened")
	}
	s := w.mustState(n)
	if len(s.Decisions) != 1 || s.Decisions[0].CommentID != answer.ID {
		t.Fatalf("after both runs the answer is hidden: decisions %s, ledger outcome of the answer %q", decisions(s), outcome(s, answer.ID))
	}
	if o := outcome(s, chat.ID); o != NotACommand {
		t.Errorf("the plain comment is %q, want not-a-command", o)
	}
	w.MustSweep()
	check(t, w, CheckOptions{Issue: n, Budget: -1})
}

// chatterThenAnswer posts a chatter comment, then (a minute later) the
// gate's answer "A", each run by its own event; it fails t unless the
// answer was applied, or either run went over PRODUCT §13's budget
// (chatter ≤ 3 billed calls, an answer ≤ 6), and returns the two runs.
func (w *World) chatterThenAnswer(t *testing.T, n int, where string) (chat, answer int) {
	t.Helper()
	w.post(n, Devin, "Looks fine to me.")
	chat = w.Runs()[len(w.Runs())-1].ID
	w.Clock.Advance(time.Minute)
	ans := w.post(n, Maria, "A")
	answer = w.Runs()[len(w.Runs())-1].ID
	if s := w.mustState(n); len(s.Decisions) != 1 || s.Decisions[0].CommentID != ans.ID {
		t.Fatalf("the answer %s was not applied: decisions %s", where, decisions(s))
	}
	if b := w.billed(chat); b > 3 {
		t.Errorf("a chatter comment %s cost %d billed calls, want ≤ 3", where, b)
	}
	if b := w.billed(answer); b > 6 {
		t.Errorf("a gate answer %s cost %d billed calls, want ≤ 6", where, b)
	}
	return chat, answer
}
