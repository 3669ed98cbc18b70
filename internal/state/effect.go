package state

// EffectKind says what an effect does. Its text is an outbox entry's
// "kind" in the state comment.
type EffectKind string

// The effect kinds: EffectKinds describes each.
const (
	EffComment  EffectKind = "comment"
	EffReact    EffectKind = "react"
	EffDispatch EffectKind = "dispatch"
	EffArchive  EffectKind = "archive"
	// EffDeployAnswer answers a deployment protection-rule request;
	// EffDeployReport posts a status report on it (docs/deploy-gate.md).
	EffDeployAnswer EffectKind = "deploy-answer"
	EffDeployReport EffectKind = "deploy-report"
	EffEdit         EffectKind = "edit"
)

// EffectSpec describes one kind of effect.
type EffectSpec struct {
	// Carries names the fields of Effect the kind uses.
	Carries string
	// By says who carries it out, and how it stays idempotent.
	By string
	// Outbox: announced in the state's outbox before it is performed (a
	// crash between the state write and the effect is recovered from it).
	Outbox bool
}

// EffectKinds is the table of effects the engine announces.
var EffectKinds = map[EffectKind]EffectSpec{
	EffComment: {Carries: "Marker, Body", Outbox: true,
		By: "reconcile posts it unless a bot comment starting with Marker exists"},
	EffReact: {Carries: "Target, Reaction",
		By: "reconcile reacts on the comment; not kept in the outbox: the ledger names the reaction each comment is owed"},
	EffDispatch: {Carries: "Marker (the session token), Workflow, Ref, Inputs", Outbox: true,
		By: "reconcile sends workflow_dispatch; a retried one first adopts a run whose title carries the token"},
	EffArchive: {Carries: "Marker (the decisions it holds), Body (not stored: rendered again from the decisions, which stay until it is seen)", Outbox: true,
		By: "reconcile posts it as a comment unless a bot comment starting with Marker exists"},
	EffDeployAnswer: {Carries: "Marker (DeployMarker), RunID, Environment, Answer, Body (the comment)", Outbox: true,
		By: "reconcile posts the run's protection-rule callback until the request is recorded Sent; a 422 (decided already) counts as sent"},
	EffDeployReport: {Carries: "RunID, Environment, Body (at most 1024 characters)",
		By: "reconcile posts a status report on the run's request; not kept in the outbox: sent once, when the question opens"},
	EffEdit: {Carries: "Marker, Body",
		By: "reconcile edits the bot comment starting with Marker when its text differs (one write); nothing when it is the same or not on the thread. Not kept in the outbox: the engine announces it when what the comment shows changed (a Choose's quorum line), and again on any later pass that reads the comment and finds it showing something else (an edit lost to a crash)"},
}

// Effect is a write the engine announces. Comments and dispatches are kept
// in the state's outbox until they are seen done. The JSON names are the
// outbox format (docs/state-format.md).
type Effect struct {
	Kind EffectKind `json:"kind"`
	// Marker is a comment's hidden first line or a dispatch's session token.
	Marker string `json:"marker,omitempty"`
	Body   string `json:"body,omitempty"`
	// Target is the comment a reaction goes on; Reaction is its content
	// ("+1", "confused").
	Target   int64  `json:"comment_id,omitempty"`
	Reaction string `json:"content,omitempty"`
	// Workflow, Ref and Inputs are a dispatch's request.
	Workflow string            `json:"workflow,omitempty"`
	Ref      string            `json:"ref,omitempty"`
	Inputs   map[string]string `json:"inputs,omitempty"`
	// RunID, Environment and Answer are a deploy answer's or report's
	// request (Answer: approved or rejected; empty for a report).
	RunID       int64  `json:"run_id,omitempty"`
	Environment string `json:"environment,omitempty"`
	Answer      string `json:"answer,omitempty"`
	// Retry: a dispatch carried over from the outbox; an earlier send may
	// have started a run whose answer was lost (never stored).
	Retry bool `json:"-"`
	// Owed: a reaction the stored ledger names and the thread does not
	// show (never stored).
	Owed bool `json:"-"`
}
