// Package dashissue decides the Action's dashboard issue (config
// dashboard: true): the one "autopilot dashboard" issue per repository,
// listing the open autopilot issues with the per-issue table of the App's
// dashboard (rows built by internal/dashboard/model), and what a sweep
// writes to keep it so: create (and pin) it when none of ours is open, edit it only
// when its text changed, close the newer of two a race created.
//
// It is pure: it reads no clock and does no I/O. The Action lists, creates,
// edits and closes; this package says which.
package dashissue

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/dashboard/model"
	"github.com/autopilot-dev/autopilot/internal/state/marker"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// Title and Label of the dashboard issue. The label is how a sweep lists
// the candidates (GitHub's issue search is indexed late, a listing by
// label is not); the marker and the author decide which one is ours.
const (
	Title = "autopilot dashboard"
	Label = "autopilot-dashboard"
)

// Marker is the hidden first line of the dashboard issue's body.
var Marker = marker.Build("dashboard")

// Candidate is an open issue carrying Label, as listed.
type Candidate struct {
	Number      int
	Body        string
	Author      string
	AuthorIsBot bool
	// AppID is the App that wrote it, where GitHub says (0 otherwise).
	AppID int64
}

// Bot is who the dashboard issues of this repository are written by.
type Bot struct {
	Login string
	// AppID, when non-zero, must match a candidate's too.
	AppID int64
}

// ours reports whether c is a dashboard issue this bot wrote: a bot
// account with our login (and App), its body starting with the marker.
// Anyone can write the marker, or put the label on an issue of theirs.
func (b Bot) ours(c Candidate) bool {
	if !c.AuthorIsBot || !strings.EqualFold(c.Author, b.Login) || b.Login == "" {
		return false
	}
	if b.AppID != 0 && c.AppID != b.AppID {
		return false
	}
	first, _, _ := strings.Cut(c.Body, "\n")
	return strings.TrimSpace(first) == Marker
}

// Plan is what a sweep writes to the dashboard: at most one of Create and
// Edit, and the duplicates to close.
type Plan struct {
	// Create: no dashboard of ours is open; open one with the body.
	Create bool
	// Pin: pin the created dashboard above the issue list, once. Only
	// with Create: a later sweep never pins, so a pin a person removed or
	// GitHub refused (3 pins per repository, write access) is not asked
	// again on every sweep.
	Pin bool
	// Edit is the dashboard to give the new body (0: none, or unchanged).
	Edit int
	// Keep is the dashboard that stays (0 when Create).
	Keep int
	// Close are newer dashboards of ours, left by two sweeps that created
	// one at the same time.
	Close []int
}

// Decide plans the writes that make the open dashboard of ours show body:
// the oldest of ours is kept, edited only when its body differs; the
// others of ours are closed; candidates that are not ours are left alone.
func Decide(cands []Candidate, bot Bot, body string) Plan {
	var mine []Candidate
	for _, c := range cands {
		if bot.ours(c) {
			mine = append(mine, c)
		}
	}
	if len(mine) == 0 {
		return Plan{Create: true, Pin: true}
	}
	slices.SortFunc(mine, func(a, b Candidate) int { return a.Number - b.Number })
	p := Plan{Keep: mine[0].Number}
	if strings.TrimRight(mine[0].Body, "\n") != strings.TrimRight(body, "\n") {
		p.Edit = mine[0].Number
	}
	for _, c := range mine[1:] {
		p.Close = append(p.Close, c.Number)
	}
	return p
}

// AfterCreate says whether the dashboard this sweep just created (created)
// must close itself: listed again, an older dashboard of ours is open (a
// concurrent sweep created it first).
func AfterCreate(cands []Candidate, bot Bot, created int) bool {
	for _, c := range cands {
		if c.Number < created && bot.ours(c) {
			return true
		}
	}
	return false
}

// Render is the dashboard issue's body: the marker, a table with one row
// per open autopilot issue (by repository and number), and a line saying
// how it is kept. Every text from an issue is escaped for a table cell:
// titles, logins and step names cannot add markup, mentions or markers.
// Times are the runs' recorded times, never the clock's, so an unchanged
// set of rows renders the same text.
func Render(rows []model.Row) string {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b model.Row) int {
		if c := strings.Compare(strings.ToLower(a.Repo), strings.ToLower(b.Repo)); c != 0 {
			return c
		}
		return a.Issue - b.Issue
	})
	var b strings.Builder
	b.WriteString(Marker + "\n")
	b.WriteString("## autopilot dashboard\n\n")
	if len(rows) == 0 {
		b.WriteString("No open autopilot issue.\n")
	} else {
		b.WriteString("| Issue | Flow | Step | Status | Waits for | From whom | Since | Stopped / failed | Tracker |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range rows {
			b.WriteString(line(r))
		}
	}
	b.WriteString("\n_Kept by autopilot's scheduled sweep (`dashboard: true` in .github/autopilot.yml): edited only when a row changes. Edits here are overwritten._\n")
	return b.String()
}

func line(r model.Row) string {
	cell := textsafe.Cell
	step := r.StepName
	if step == "" {
		step = r.Step
	}
	waits, from, since := "", "", ""
	if w := r.Wait; w != nil {
		waits = string(w.Kind) + ": " + cell(w.What)
		if w.Link != "" {
			waits = fmt.Sprintf("%s: [%s](%s)", w.Kind, cell(w.What), w.Link)
		}
		var who []string
		for _, f := range w.From {
			who = append(who, "@"+f)
		}
		if w.Who != "" {
			who = append(who, w.Who)
		}
		from = cell(strings.Join(who, "; "))
		if !w.Since.IsZero() {
			since = w.Since.UTC().Format(time.DateTime[:16]) + " UTC"
		}
	}
	tracker := ""
	if n := len(r.TrackerWaiting); n > 0 {
		tracker = fmt.Sprintf("%d waiting", n)
	}
	if r.TrackerNote != "" {
		tracker = strings.TrimSpace(tracker + " " + r.TrackerNote)
	}
	return fmt.Sprintf("| [#%d](%s) %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
		r.Issue, r.URL, cell(r.Title), cell(r.Flow), cell(step), cell(string(r.Status)), waits, from, since,
		cell(r.Stopped+r.Failed), cell(tracker))
}
