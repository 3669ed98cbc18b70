package tasksync

import (
	"fmt"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// The GitHub sub-issue tracker's rules (tracker: github): how fast it may
// send, where a task's issue goes when a parent is full, and whose issues
// it adopts. The tracker (tracker/subissues) asks them and only calls the
// API.

// Pace is a budget of content-creating requests (POST/PATCH) per minute,
// per hour and per run.
type Pace struct{ PerMinute, PerHour, PerRun int }

// GitHubPace keeps under GitHub's secondary limits (about 80 a minute and
// 500 an hour per account, which the flow's own comments share, so a
// margin is kept) and caps one run, so that it spends seconds, not
// minutes, on the tracker (GitHub wants a second between mutations); the
// rest goes in later runs.
var GitHubPace = Pace{PerMinute: 60, PerHour: 400, PerRun: 40}

// Budget returns how many requests may go out at now, given the requests
// earlier runs sent (sent, from the state: Spent) and this run's (spent),
// and, when none may, when the next one may.
func (p Pace) Budget(now time.Time, sent, spent []time.Time) (int, time.Time) {
	var minute, hour int
	var oldestMin, oldestHour time.Time
	for _, set := range [][]time.Time{sent, spent} {
		for _, t := range set {
			if now.Sub(t) < time.Hour {
				hour++
				if oldestHour.IsZero() || t.Before(oldestHour) {
					oldestHour = t
				}
			}
			if now.Sub(t) < time.Minute {
				minute++
				if oldestMin.IsZero() || t.Before(oldestMin) {
					oldestMin = t
				}
			}
		}
	}
	left := min(p.PerMinute-minute, p.PerHour-hour, p.PerRun-len(spent))
	if left > 0 {
		return left, time.Time{}
	}
	if len(spent) >= p.PerRun && minute < p.PerMinute && hour < p.PerHour {
		return 0, now.Add(time.Minute)
	}
	if hour >= p.PerHour {
		return 0, oldestHour.Add(time.Hour)
	}
	return 0, oldestMin.Add(time.Minute)
}

// Room reports whether need requests may go out at now; when not, wait is
// how long until they may (at least a minute when the budget is short but
// not empty): the tracker answers it as its own rate limit, which the
// rules never wait out inside a pass.
func (p Pace) Room(now time.Time, need int, sent, spent []time.Time) (wait time.Duration, ok bool) {
	left, at := p.Budget(now, sent, spent)
	if left >= need {
		return 0, true
	}
	if at.IsZero() || !at.After(now) {
		at = now.Add(time.Minute)
	}
	return at.Sub(now), false
}

// Spent are the requests earlier runs sent for tasks, from their SentAt
// (recorded in the state before every create): a task costs its create,
// its link and one request per dependency.
func Spent(tasks []state.Task) []time.Time {
	var out []time.Time
	for _, t := range tasks {
		if t.SentAt.IsZero() {
			continue
		}
		for i := 0; i < 2+len(t.DependsOn); i++ {
			out = append(out, t.SentAt)
		}
	}
	return out
}

// MaxBatches is how many parents one logical parent's tasks spread over
// (itself and its chained batch parents). Each batch is a level deeper,
// and GitHub nests sub-issues 8 levels: under an epic, batch 6 sits at
// level 7 below the autopilot issue, its tasks at 8.
const MaxBatches = 6

// Placement is where the next child of a parent goes.
type Placement int

const (
	// PlaceHere: under the parent itself.
	PlaceHere Placement = iota
	// PlaceInBatch: under the parent's batch parent (asked again there).
	PlaceInBatch
	// PlaceNewBatch: under a new batch parent, made first.
	PlaceNewBatch
	// PlaceFull: nowhere; the parent and its batch parents are full.
	PlaceFull
)

// Place says where the next child of a parent goes that holds real
// children besides its batch parent (batch: it has one), depth parents
// down its chain (1: the parent itself), under a host that allows limit
// children a parent: the parent while it holds fewer than limit-1, so that
// its batch parent fits as its last child; then the batch parent, created
// when first needed; never deeper than MaxBatches.
func Place(real int, batch bool, depth, limit int) Placement {
	switch {
	case real < limit-1:
		return PlaceHere
	case batch:
		return PlaceInBatch
	case depth >= MaxBatches:
		return PlaceFull
	}
	return PlaceNewBatch
}

// FullMessage says for people that parent p's chain is full (PlaceFull).
func FullMessage(p, limit int) string {
	return fmt.Sprintf("#%d and its batch parents are full (%d tasks): GitHub nests sub-issues 8 levels deep; split the tasks into more epics",
		p, MaxBatches*(limit-1))
}

// Author is who wrote an issue: the login, whether it is a Bot account,
// and the App GitHub says it was performed via (0: none named).
type Author struct {
	Login string
	Bot   bool
	App   int64
}

// Owner is our own bot: its login and, in App mode, its App (0: Action
// mode, the login alone). The zero Owner trusts any bot (tests, the
// sandbox).
type Owner struct {
	Login string
	App   int64
}

// Wrote reports whether our own bot wrote an issue by a: a Bot account
// with our login and, when both name one, our App. Task keys are
// predictable, so any other bot (a workflow's github-actions[bot], another
// App) could plant an issue taken as a task.
func (o Owner) Wrote(a Author) bool {
	if !a.Bot {
		return false
	}
	if o.Login == "" {
		return true
	}
	if !strings.EqualFold(a.Login, o.Login) {
		return false
	}
	return o.App == 0 || a.App == 0 || a.App == o.App
}

// LinkVerdict is what becomes of a task's issue once its link to a parent
// (a sub-issue link) was answered.
type LinkVerdict int

const (
	// LinkStands: linked (or it already was).
	LinkStands LinkVerdict = iota
	// LinkToRoot: its parent (an epic or a batch parent) is gone; it goes
	// under the autopilot issue instead, and the task says so (RootRemark).
	LinkToRoot
	// LinkRefused: refused for good (a 422, or a parent gone with none to
	// take it); the issue stays where it is, the task says so
	// (RefusedLinkRemark) and the link is never sent again.
	LinkRefused
	// LinkUnknown: anything else; the outcome is unknown, and the next
	// lookup finds the issue by its marker and links it.
	LinkUnknown
)

// OnLink decides on a link's answer r (nil: it stood). underRoot: the
// parent was the autopilot issue; adopted: the issue was found unlinked
// at a lookup, so it is adopted where it is rather than moved.
func OnLink(r *Refusal, underRoot, adopted bool) LinkVerdict {
	switch {
	case r == nil:
		return LinkStands
	case r.Class == Gone && !underRoot && !adopted:
		return LinkToRoot
	case r.Class == Rejected || r.Class == Gone:
		return LinkRefused
	}
	return LinkUnknown
}

// RefusedLinkRemark is the task's remark when GitHub refused for good
// (why) to make issue child a sub-issue of parent.
func RefusedLinkRemark(parent, child int, why string) string {
	return fmt.Sprintf("#%d is not a sub-issue of #%d: GitHub refused the link for good (%s); it stays where it is and the link is not sent again", child, parent, why)
}

// RootRemark is the task's remark when its issue went under the autopilot
// issue root because its parent is gone (state.IssueDeleted, …).
func RootRemark(root, parent int, gone string) string {
	return fmt.Sprintf("filed under #%d: its parent #%d is %s", root, parent, gone)
}
