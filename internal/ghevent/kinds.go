package ghevent

import (
	"slices"
	"strings"
)

// Routing says how the App serialises the jobs an event starts.
type Routing int

const (
	// NotQueued: the event starts no job. The installation events are only
	// noted; schedule and workflow_dispatch reach the Action alone.
	NotQueued Routing = iota
	// ByIssue: the job leases the issue or PR the event names and the
	// issues a PR links to (see IssueKey), or runs per repository when it
	// names none.
	ByIssue
	// ByRepo: the event names no issue (a workflow run, a merge queue
	// entry); its jobs run one at a time per repository and lease nothing.
	ByRepo
)

// Concern says which issues a handled event concerns.
type Concern int

const (
	// ConcernsOwnHandler: package route has a handler of its own for the
	// kind (the events whose routing needs more than the table: trigger
	// labels, sweeps, sessions of workflow runs, check buttons).
	ConcernsOwnHandler Concern = iota
	// ConcernsIssue: the issue the event names (Event.Issue), when
	// autopilot manages it.
	ConcernsIssue
	// ConcernsLinked: the managed issues the event's pull request links to
	// (Event.LinkedIssues).
	ConcernsLinked
)

// Kind is one GitHub event autopilot reads: the actions it acts on, how its
// jobs are routed, the shape of its payload, and which issues it concerns.
// The kinds table below is the only list of events: Decode's Handled
// filter, the App's intake (Routed), the job keys (RoutingOf), the
// projections of DecodeFast and the App manifest in docs/app.md (a test
// pins it) are read from it; route dispatches by it.
//
// A new event is one row: its name, actions and routing, a payload type
// whose fill decodes what it carries into Event.Carries (the engine event
// it becomes), and Concerns; the engine adds a handler for that event.
// Route and reconcile need no edit.
type Kind struct {
	Name string
	// Actions are the actions autopilot acts on; any other decodes with
	// Handled=false.
	Actions []string
	// Sweep: every action is handled, and means "reconcile every open
	// autopilot issue" (schedule, workflow_dispatch).
	Sweep bool
	// App: the App's webhook intake decodes it; every other event is
	// answered unparsed.
	App     bool
	Routing Routing
	// OwnWrites: handled even when the App's own bot sent it, because the
	// bot causes it on purpose (sweeps, and the workflow runs it dispatched:
	// the job matches such a run to its issue by the session token, as for
	// anyone's run).
	// Every other event from the bot is its own write and starts no work,
	// so autopilot never loops on itself.
	OwnWrites bool
	// Noted: the App logs the event and tells its installation hook; it
	// starts no job (the installation events).
	Noted bool
	// Concerns says which issues the event concerns; a kind other than
	// ConcernsOwnHandler reaches each of them as the engine event its
	// payload decoded into Event.Carries.
	Concerns Concern
	// payload returns an empty payload of the event's wire shape.
	payload func() eventPayload
}

func bare() eventPayload { return &envelope{} }

// kinds lists the events of PRODUCT.md §4.
var kinds = [...]Kind{
	{Name: "issues", Actions: []string{"labeled", "unlabeled", "closed", "reopened"}, App: true, Routing: ByIssue,
		payload: func() eventPayload { return &issuesPayload{} }},
	{Name: "issue_comment", Actions: []string{"created", "edited"}, App: true, Routing: ByIssue,
		payload: func() eventPayload { return &commentPayload{} }},
	{Name: "pull_request", Actions: []string{"opened", "edited", "closed", "reopened", "synchronize"}, App: true, Routing: ByIssue,
		payload: func() eventPayload { return &pullPayload{} }},
	{Name: "pull_request_review", Actions: []string{"submitted"}, App: true, Routing: ByIssue,
		payload: func() eventPayload { return &reviewPayload{} }},
	{Name: "workflow_run", Actions: []string{"completed"}, App: true, Routing: ByRepo, OwnWrites: true,
		payload: func() eventPayload { return &runPayload{} }},
	{Name: "check_run", Actions: []string{"requested_action"}, App: true, Routing: ByIssue,
		payload: func() eventPayload { return &checkRunPayload{} }},
	{Name: "merge_group", Actions: []string{"checks_requested"}, App: true, Routing: ByRepo,
		payload: func() eventPayload { return &mergeGroupPayload{} }},
	// OwnWrites: the deploy run autopilot dispatched is the App's own, and
	// GitHub names its dispatcher as the sender.
	{Name: "deployment_protection_rule", Actions: []string{"requested"}, App: true, Routing: ByIssue, OwnWrites: true,
		payload: func() eventPayload { return &deploymentRulePayload{} }},
	{Name: "schedule", Sweep: true, OwnWrites: true, payload: bare},
	{Name: "workflow_dispatch", Sweep: true, OwnWrites: true, payload: bare},
	{Name: "installation", App: true, Noted: true, payload: bare},
	{Name: "installation_repositories", App: true, Noted: true, payload: bare},
}

// Kinds returns a copy of the kinds table.
func Kinds() []Kind { return slices.Clone(kinds[:]) }

// KindOf returns the row of the event called name, and false for an event
// outside the table.
func KindOf(name string) (Kind, bool) {
	for _, k := range kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// Handles reports whether the kind acts on action.
func (k Kind) Handles(action string) bool {
	return k.Sweep || slices.Contains(k.Actions, action)
}

// handles reports whether autopilot acts on the event and action
// (PRODUCT.md §4).
func handles(name, action string) bool {
	k, ok := KindOf(name)
	return ok && k.Handles(action)
}

// Routed reports whether the App's intake decodes the event (the events
// autopilot acts on and the installation events it notes).
func Routed(name string) bool {
	k, ok := KindOf(name)
	return ok && k.App
}

// Noted reports an event the App only notes (see Kind.Noted).
func Noted(name string) bool {
	k, ok := KindOf(name)
	return ok && k.Noted
}

// FromSelf reports an event the App's own bot (botLogin) sent that its
// kind does not mark OwnWrites: autopilot's own write, which starts no
// work. An empty botLogin ignores nobody.
func FromSelf(ev *Event, botLogin string) bool {
	if botLogin == "" || !strings.EqualFold(ev.Sender.Login, botLogin) {
		return false
	}
	k, _ := KindOf(ev.Name)
	return !k.OwnWrites
}

// RoutingOf says how the App serialises the jobs of the event called name.
func RoutingOf(name string) Routing {
	k, _ := KindOf(name)
	return k.Routing
}

// payloadFor returns an empty payload of the shape of event name. Events
// autopilot has no members to read from decode as the bare envelope.
func payloadFor(name string) eventPayload {
	if k, ok := KindOf(name); ok {
		return k.payload()
	}
	return bare()
}

func sweeps(name string) bool {
	k, _ := KindOf(name)
	return k.Sweep
}

// payloads returns an empty payload of every kind's shape.
func payloads() []eventPayload {
	out := make([]eventPayload, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k.payload())
	}
	return out
}
