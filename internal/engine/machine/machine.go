// Package machine is the walk of autopilot's workflow: how a run moves
// through its flow. It starts, enters, completes, skips, fails, retries,
// escalates, stops and resumes steps, opens the gates (Choose blocks) and
// applies their answers, and checks the kill-switches at iteration
// boundaries. It is pure like the engine that embeds it (package engine):
// no I/O, no clock, no randomness.
//
// The split: package engine reads the inputs — events, comments, commands,
// PR evidence — decides whether they count, and calls the walk's exported
// moves; this package never looks at an input's author, permission or
// trust. A rule about who or what may move a run belongs in engine; a rule
// about where a run goes next belongs here.
package machine

import (
	"fmt"
	"strconv"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/outbox"
	"github.com/autopilot-dev/autopilot/internal/flow"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/marker"
)

// M is one Apply call's walk: the run's state and flow, the clock, and
// the effects and queries it has produced so far. The engine embeds it and
// feeds it the inputs.
type M struct {
	// Set is the environment (config, answer permission, Jira, repository).
	Set Settings
	// S is the working copy of the state (nil until Start creates one).
	S *state.State
	// F is the run's flow, nil while none is selected.
	F *flow.Flow
	// Now is the event's time; the walk reads no clock.
	Now time.Time
	// Effs are the writes produced so far, in order.
	Effs []state.Effect
	// Qs are the queries the walk needs answered before it can go on.
	Qs []events.Query
	// Changed marks a state change that must be written.
	Changed bool
	// Decision is the option letter an answer applied (Result.Decision).
	Decision string
	// announced is the step a just-answered gate already announced.
	announced string
	// lastFailure is the last retry-log reason of the step just completed
	// or skipped (the log is cleared then), for the failed-wave notice.
	lastFailure string
}

// New starts a walk on a copy of s (nil when the issue has no run yet),
// with the flow s names; s itself is never mutated.
func New(set Settings, s *state.State, now time.Time) (*M, error) {
	m := &M{Set: set, Now: now.UTC()}
	if s == nil {
		return m, nil
	}
	m.S = outbox.Clone(s)
	if m.S.Flow != "" {
		f, ok := set.Config.All[m.S.Flow]
		if !ok {
			return nil, fmt.Errorf("state names unknown flow %q (have %v)", m.S.Flow, set.Config.All.Names())
		}
		m.F = f
	}
	return m, nil
}

// By names who did something, when known (" by @x"; "" for the sweep).
func By(actor string) string {
	if actor == "" {
		return ""
	}
	return " by @" + actor
}

// Emit appends a write to the effects, in order.
func (m *M) Emit(e state.Effect) { m.Effs = append(m.Effs, e) }

// Ask records a query the caller answers with an event.
func (m *M) Ask(q events.Query) { m.Qs = append(m.Qs, q) }

// nextMarker returns a fresh marker id for a bot comment.
func (m *M) nextMarker(kind string) string {
	m.S.Seq++
	m.Changed = true
	return marker.Build(kind, fmt.Sprintf("%d-%d", m.S.Issue, m.S.Seq))
}

// Post emits a new bot comment with a unique marker.
func (m *M) Post(kind, text string) {
	marker := m.nextMarker(kind)
	m.Emit(state.Effect{Kind: state.EffComment, Marker: marker, Body: marker + "\n" + text})
}

// ReplyTo posts a reply to a comment; its marker is keyed by the comment id,
// so a reply is idempotent across runs without a state write.
func (m *M) ReplyTo(id int64, text string) {
	mk := marker.Build(marker.Reply, strconv.FormatInt(id, 10))
	m.Emit(state.Effect{Kind: state.EffComment, Marker: mk, Body: mk + "\n" + text})
}

// React adds a reaction to a comment (none for id 0: a click has no comment).
func (m *M) React(id int64, content string) {
	if id != 0 {
		m.Emit(state.Effect{Kind: state.EffReact, Target: id, Reaction: content})
	}
}

// execStart is the start of an execution at GitHub's one-second
// resolution, so evidence GitHub stamps in the same second still counts.
func (m *M) execStart() time.Time { return m.Now.Truncate(time.Second) }

// Settings is what the engine needs to know about its environment.
type Settings struct {
	Config *config.Config
	// AnswerPermission is the minimum permission to answer a gate or run a command.
	AnswerPermission access.Level
	// TrackerConfigured is true when the issue has a tracker (Jira credentials
	// were supplied, or GitHub sub-issues are in use).
	TrackerConfigured bool
	// SubIssues is true when the forge can create GitHub sub-issues, so the
	// Jira authentication gate offers them instead.
	SubIssues bool
	Repo      string
	// TriggerLabel is the label that starts a run (notices name it).
	TriggerLabel string
	// BudgetLow: the API rate budget is nearly spent; the next iteration
	// boundary stops the run with resource-overload.
	BudgetLow bool
}

// Note posts a one-off notice keyed so it is never repeated.
func (m *M) Note(key, text string) {
	if m.Owed("note:" + key) {
		m.Post("reply", text)
	}
}

// Owed records a reply key and reports whether it was new.
func (m *M) Owed(key string) bool {
	for _, k := range m.S.Replies {
		if k == key {
			return false
		}
	}
	m.S.Replies = append(m.S.Replies, key)
	m.Changed = true
	return true
}
