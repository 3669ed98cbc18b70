package engine

import "github.com/autopilot-dev/autopilot/internal/engine/events"

// The event and query types live in engine/events; callers build them
// through the engine, so the aliases keep those names.
type (
	Event        = events.Event
	PermAsker    = events.PermAsker
	Start        = events.Start
	LabelRemoved = events.LabelRemoved
	Closed       = events.Closed
	Comment      = events.Comment
	Review       = events.Review
	Checks       = events.Checks
	RunCompleted = events.RunCompleted
	Dispatched   = events.Dispatched
	JiraAuth     = events.JiraAuth
	JiraSynced   = events.JiraSynced
	Tick         = events.Tick
	PRLinked     = events.PRLinked
	ConfigRead   = events.ConfigRead
	Refused      = events.Refused
	Recovered    = events.Recovered
	Unmanaged    = events.Unmanaged
	PullSeen     = events.PullSeen
	CheckShown   = events.CheckShown
	Click        = events.Click
	PullRead     = events.PullRead
	Query        = events.Query
	QueryKind    = events.QueryKind
	JiraReason   = events.JiraReason
	Voted        = events.Voted
	ApproversAsk = events.ApproversAsk
)

const (
	QJiraAuth  = events.QJiraAuth
	QJiraSync  = events.QJiraSync
	QCheckPR   = events.QCheckPR
	QPerms     = events.QPerms
	QJiraClose = events.QJiraClose
	QApprovers = events.QApprovers
	JiraAuto   = events.JiraAuto
	JiraAsked  = events.JiraAsked
	JiraRetry  = events.JiraRetry
)
