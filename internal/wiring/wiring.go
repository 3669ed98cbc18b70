// Package wiring builds what both entry points run from what they read: the
// Action (internal/action) and the App (internal/appmode, behind `bot
// serve`) load their inputs and knobs here and get their GitHub adapter and
// reconcile options from one builder, so the two modes cannot drift apart.
// What differs between them is data on a Wiring (the bot identity, the App
// id), not a second copy of the code.
//
// It decides nothing about a run and makes no request.
package wiring

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/forge"
	gh "github.com/autopilot-dev/autopilot/internal/github"
	"github.com/autopilot-dev/autopilot/internal/jira"
	"github.com/autopilot-dev/autopilot/internal/reconcile"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// BudgetFloor is the x-ratelimit-remaining below which reconcile skips
// optional reads and an App sweep stops early (an installation or a
// workflow token has 1,000 to 15,000 an hour).
const BudgetFloor = 50

// TrackerFunc builds the Jira tracker from the inputs (credentials) and a
// repository's jira: settings.
type TrackerFunc func(Inputs, config.Jira) (tracker.Tracker, error)

// Wiring is what a mode read from its environment.
type Wiring struct {
	Inputs Inputs
	Knobs  Knobs
	// BotLogin is the only author whose state comments are trusted: the
	// bot_login input in the Action, "<slug>[bot]" from GET /app in the App.
	BotLogin string
	// AppID is the App's id (0 in the Action): a trusted comment must carry
	// it, and only the App receives clicks on the PR check's buttons.
	AppID int64
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// NewTracker builds the tracker; nil means JiraTracker.
	NewTracker TrackerFunc
}

// Load reads the inputs (see LoadInputs for prefix) and the knobs.
func Load(getenv func(string) string, prefix string) (Wiring, error) {
	in, err := LoadInputs(getenv, prefix)
	if err != nil {
		return Wiring{}, err
	}
	k, err := LoadKnobs(getenv)
	if err != nil {
		return Wiring{}, err
	}
	return Wiring{Inputs: in, Knobs: k, BotLogin: in.BotLogin}, nil
}

// ForApp returns w with the App's identity, which replaces the bot_login
// input.
func (w Wiring) ForApp(appID int64, bot string) Wiring {
	w.AppID, w.BotLogin, w.Inputs.BotLogin = appID, bot, bot
	return w
}

func (w Wiring) now() func() time.Time {
	if w.Now == nil {
		return time.Now
	}
	return w.Now
}

// GitHub returns the adapter options of one repository; the caller adds
// how it authenticates (Token or HTTPClient), BaseURL, Logger and, in the
// App, the installation's shared Pacer.
func (w Wiring) GitHub(repo string) gh.Options {
	return gh.Options{
		Repo: repo, BotLogin: w.BotLogin, AppID: w.AppID, Now: w.now(),
		MinMutationGap: w.Knobs.MutationGap, DryRun: w.Inputs.DryRun, MembersToken: w.Inputs.MembersToken,
	}
}

// Reconcile returns the reconcile options of one repository. f is the forge
// reconcile works on (the App wraps the adapter); client is the adapter
// whose rate budget gates optional reads; print receives dry-run output.
func (w Wiring) Reconcile(f forge.Forge, client *gh.Client, log *slog.Logger, print func(string)) reconcile.Options {
	in := w.Inputs
	return reconcile.Options{
		Forge: f, TrackerFor: w.trackerFor(), ConfigPath: in.ConfigPath, AnswerPermission: in.AnswerPermission,
		TriggerLabel: in.TriggerLabel, BotLogin: w.BotLogin, AppID: w.AppID, StateKey: []byte(in.StateKey),
		Now: w.now(), Logger: log, DryRun: in.DryRun, ClaimSettle: w.Knobs.ClaimSettle, Print: print,
		BudgetLow: func() bool { return BudgetLow(client) },
		// GitHub sends clicks on a check run's buttons to the App that
		// created it only.
		CheckButtons: w.AppID != 0,
	}
}

// trackerFor is nil unless Jira credentials were given.
func (w Wiring) trackerFor() func(config.Jira) (tracker.Tracker, error) {
	if !w.Inputs.JiraEnabled() {
		return nil
	}
	in, build := w.Inputs, w.NewTracker
	if build == nil {
		build = JiraTracker
	}
	return func(j config.Jira) (tracker.Tracker, error) { return build(in, j) }
}

// BudgetLow reports that a rate budget last seen on c (REST's or
// GraphQL's) is nearly spent; false before any response (and for a nil
// client).
func BudgetLow(c *gh.Client) bool {
	if c == nil {
		return false
	}
	return c.Stats().Low(BudgetFloor)
}

// JiraTracker builds the go-jira tracker from the inputs (credentials) and
// the repository's jira: settings (field ids, issue types).
func JiraTracker(in Inputs, j config.Jira) (tracker.Tracker, error) {
	return JiraTrackerOver(nil)(in, j)
}

// JiraTrackerOver is JiraTracker sending its requests through hc (its
// transport, timeout and redirect policy; nil: the adapter's defaults):
// App mode passes one whose transport traces each call.
func JiraTrackerOver(hc *http.Client) TrackerFunc {
	return func(in Inputs, j config.Jira) (tracker.Tracker, error) {
		project := in.JiraProject
		if project == "" {
			project = j.Project // the input wins; the repository config may name it instead
		}
		c, err := jira.New(jira.Config{
			URL: in.JiraURL, User: in.JiraUser, Token: in.JiraToken, Project: project,
			Deployment: j.Deployment, EpicLinkField: j.EpicLinkField, EpicNameField: j.EpicNameField,
			PointsField: j.PointsField, IssueTypeTask: j.TaskType, IssueTypeEpic: j.EpicType, HTTPClient: hc,
		})
		if err != nil {
			return nil, fmt.Errorf("jira: %w", err)
		}
		return c, nil
	}
}
