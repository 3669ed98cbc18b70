package dashissue

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
	"github.com/autopilot-dev/autopilot/internal/state"
)

var bot = Bot{Login: "github-actions[bot]"}

func ourDash(n int, body string) Candidate {
	return Candidate{Number: n, Body: body, Author: "github-actions[bot]", AuthorIsBot: true}
}

// TestDecideWritesOnlyWhatChanged: none of ours → create; ours with the
// same text → nothing; different text → one edit of the oldest; two of
// ours → the newer closed; look-alikes by people, other bots or another
// App are never ours.
func TestDecideWritesOnlyWhatChanged(t *testing.T) {
	body := Render(nil)
	forgedByPerson := Candidate{Number: 1, Body: body, Author: "github-actions[bot]", AuthorIsBot: false}
	otherBot := Candidate{Number: 2, Body: body, Author: "renovate[bot]", AuthorIsBot: true}
	noMarker := ourDash(3, "## autopilot dashboard\n")
	markerLater := ourDash(4, "text\n"+Marker)
	cases := []struct {
		name  string
		cands []Candidate
		bot   Bot
		want  Plan
	}{
		{"nothing listed", nil, bot, Plan{Create: true}},
		{"only look-alikes", []Candidate{forgedByPerson, otherBot, noMarker, markerLater}, bot, Plan{Create: true}},
		{"ours unchanged", []Candidate{otherBot, ourDash(7, body)}, bot, Plan{Keep: 7}},
		{"ours unchanged but for a trailing newline", []Candidate{ourDash(7, strings.TrimRight(body, "\n"))}, bot, Plan{Keep: 7}},
		{"ours changed", []Candidate{ourDash(7, Marker+"\nold")}, bot, Plan{Keep: 7, Edit: 7}},
		{"two of ours: the older stays", []Candidate{ourDash(9, body), ourDash(7, body), ourDash(12, body)}, bot, Plan{Keep: 7, Close: []int{9, 12}}},
		{"another App's bot of the same login", []Candidate{{Number: 7, Body: body, Author: "github-actions[bot]", AuthorIsBot: true, AppID: 99}}, Bot{Login: "github-actions[bot]", AppID: 15368}, Plan{Create: true}},
		{"no bot login trusts nothing", []Candidate{ourDash(7, body)}, Bot{}, Plan{Create: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Decide(c.cands, c.bot, body)
			if got.Create != c.want.Create || got.Edit != c.want.Edit || got.Keep != c.want.Keep || !slices.Equal(got.Close, c.want.Close) {
				t.Fatalf("Decide = %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestOnlyACreatedDashboardIsPinned: the pin is asked once, with the
// create; a sweep that keeps, edits or closes dashboards never pins (a pin
// a person undid, or GitHub refused, is not tried again each sweep).
func TestOnlyACreatedDashboardIsPinned(t *testing.T) {
	body := Render(nil)
	if p := Decide(nil, bot, body); !p.Create || !p.Pin {
		t.Errorf("none open: %+v, want created and pinned", p)
	}
	for _, cands := range [][]Candidate{{ourDash(7, body)}, {ourDash(7, Marker+"\nold")}, {ourDash(7, body), ourDash(9, body)}} {
		if p := Decide(cands, bot, body); p.Pin {
			t.Errorf("%d of ours open: %+v asks a pin", len(cands), p)
		}
	}
}

// TestTheNewerOfTwoRacingDashboardsClosesItself: two sweeps created one
// each; listed again, the newer sees the older and closes itself, the
// older does not.
func TestTheNewerOfTwoRacingDashboardsClosesItself(t *testing.T) {
	body := Render(nil)
	both := []Candidate{ourDash(10, body), ourDash(11, body), {Number: 5, Body: body, Author: "maria"}}
	if !AfterCreate(both, bot, 11) {
		t.Error("#11 did not close itself with #10 open")
	}
	if AfterCreate(both, bot, 10) {
		t.Error("#10, the older, closed itself")
	}
	if AfterCreate([]Candidate{{Number: 5, Body: body, Author: "maria"}, ourDash(11, body)}, bot, 11) {
		t.Error("a person's look-alike made ours close itself")
	}
}

// TestRenderIsInertAndStable: hostile titles, step names and logins stay
// in their cells without markup, mentions or markers; the text does not
// depend on the order rows come in or on the clock.
func TestRenderIsInertAndStable(t *testing.T) {
	since := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	rows := []model.Row{
		{Repo: "acme/widgets", Issue: 12, Title: "Fix | @acme/sre <!-- autopilot:state --> <img src=x onerror=alert(1)> [x](javascript:alert(1))", URL: "https://github.com/acme/widgets/issues/12",
			Flow: "greenfield", Step: "plan", StepName: "Plan <b>", Status: state.RunAwaitingDecision,
			Wait: &model.Wait{Kind: model.WaitDecision, What: "DECISION REQUIRED: Plan | approve?", From: []string{"devin"}, Who: "anyone with write access", Since: since}},
		{Repo: "acme/widgets", Issue: 3, Title: "Second", URL: "https://github.com/acme/widgets/issues/3", Flow: "meta-repo", Step: "discover", Status: state.RunStopped, Stopped: "approval-expired"},
	}
	a, b := Render(rows), Render([]model.Row{rows[1], rows[0]})
	if a != b {
		t.Fatalf("the order of rows changed the text:\n%s\n---\n%s", a, b)
	}
	if !strings.HasPrefix(a, Marker+"\n") || strings.Count(a, "<!--") != 1 {
		t.Fatalf("the body must hold exactly our marker, first:\n%s", a)
	}
	for _, bad := range []string{"<img", "<b>", "@acme/sre", "@devin", "](javascript:"} {
		if strings.Contains(a, bad) {
			t.Errorf("%q is live in:\n%s", bad, a)
		}
	}
	for _, l := range strings.Split(a, "\n") {
		if strings.HasPrefix(l, "| [#") && strings.Count(strings.ReplaceAll(l, `\|`, ""), "|") != 10 {
			t.Errorf("a row does not have 9 cells: %s", l)
		}
	}
	if i, j := strings.Index(a, "[#3]"), strings.Index(a, "[#12]"); i < 0 || j < 0 || i > j {
		t.Errorf("rows not by number:\n%s", a)
	}
	if !strings.Contains(a, "2026-03-02 09:00 UTC") {
		t.Errorf("the wait's recorded start is not shown:\n%s", a)
	}
}

// FuzzRender: whatever an issue's title and step say, the body keeps one
// marker (ours, first) and one row per issue, and Decide on our own
// rendering of it asks for no write.
func FuzzRender(f *testing.F) {
	f.Add("Fix | it", "plan", "devin")
	f.Add("<!-- autopilot:dashboard -->\n| x |", "a\nb", "@x")
	f.Fuzz(func(t *testing.T, title, step, login string) {
		rows := []model.Row{{Repo: "acme/widgets", Issue: 1, Title: title, StepName: step, URL: "https://github.com/acme/widgets/issues/1",
			Wait: &model.Wait{Kind: model.WaitDecision, What: title, From: []string{login}}}}
		body := Render(rows)
		if !strings.HasPrefix(body, Marker+"\n") || strings.Count(body, "<!--") != 1 {
			t.Fatalf("markers in:\n%s", body)
		}
		if n := strings.Count(body, "\n| [#"); n != 1 {
			t.Fatalf("%d rows in:\n%s", n, body)
		}
		if p := Decide([]Candidate{ourDash(4, body)}, bot, body); p.Create || p.Edit != 0 || len(p.Close) != 0 {
			t.Fatalf("our own body asks for writes: %+v", p)
		}
	})
}
