package state

import (
	"fmt"
	"strings"
	"time"
)

// DeployRequest is a deployment protection-rule request autopilot answers
// for the issue (App mode, docs/deploy-gate.md): a workflow run's job
// waiting on an environment. It is kept so a redelivered request, a second
// replica or a later pass finds the answer already given and never
// answers twice.
type DeployRequest struct {
	RunID       int64  `json:"run_id"`
	Environment string `json:"environment"`
	SHA         string `json:"sha"`
	// Gate is the kind of the deploy question opened for it (empty: none).
	Gate GateKind `json:"gate,omitempty"`
	// Answer is the answer decided: DeployApproved or DeployRejected
	// (empty: not decided yet); Comment is the callback's comment.
	Answer  string `json:"answer,omitempty"`
	Comment string `json:"comment,omitempty"`
	// Sent: GitHub took the answer (204, or 422: decided already).
	Sent bool `json:"sent,omitempty"`
	// At is when the request was first seen.
	At time.Time `json:"at"`
	// Reviewed counts the entries of the run's review history (reviewers
	// on the environment page) already recorded as decisions: a re-read
	// records only what is new.
	Reviewed int `json:"reviewed,omitempty"`
}

// The answers of a deployment protection rule (its callback's state).
const (
	DeployApproved = "approved"
	DeployRejected = "rejected"
)

// MaxDeploys bounds State.Deploys; the oldest answered requests go first.
const MaxDeploys = 20

// DeployMarker is the marker of the answer effect of a request: the run
// and the environment (GitHub's environment names ignore case).
func DeployMarker(run int64, env string) string {
	return fmt.Sprintf("deploy-%d-%s", run, strings.ToLower(env))
}

// Deploy returns the recorded request of run and env, nil when none.
func (s *State) Deploy(run int64, env string) *DeployRequest {
	for i := range s.Deploys {
		if d := &s.Deploys[i]; d.RunID == run && strings.EqualFold(d.Environment, env) {
			return d
		}
	}
	return nil
}

// DeployByMarker returns the recorded request whose answer effect has
// marker, nil when none.
func (s *State) DeployByMarker(marker string) *DeployRequest {
	for i := range s.Deploys {
		if d := &s.Deploys[i]; DeployMarker(d.RunID, d.Environment) == marker {
			return d
		}
	}
	return nil
}
