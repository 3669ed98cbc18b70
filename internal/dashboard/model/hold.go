package model

import (
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// Hold is an issue whose sweep pass the installation's GitHub budget cut:
// its background sync waits until Until. App mode remembers it (in the
// Store, shared by the replicas) so that the issue's next pass, whichever
// replica runs it, records it in the issue's state with a write it makes
// anyway.
type Hold struct {
	Installation int64            `json:"installation"`
	Repo         string           `json:"repo"`
	Issue        int              `json:"issue"`
	Until        time.Time        `json:"until"`
	Reason       state.HoldReason `json:"reason"`
}

// Key is the hold's issue key in a store (Key).
func (h Hold) Key() string { return Key(h.Repo, h.Issue) }
