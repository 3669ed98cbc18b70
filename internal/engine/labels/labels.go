// Package labels holds the rules of autopilot's issue labels: which labels a
// state shows (Labels), which labels are autopilot's to add and remove
// (Managed) and the colour and description each is created with. It is pure:
// the carrier (reconcile/labelsync) makes the issue match.
package labels

import (
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Labels derives the autopilot labels from a state (PRODUCT §5).
func Labels(s *state.State) []string {
	if s == nil {
		return nil
	}
	out := []string{}
	if s.Slug != "" {
		out = append(out, "autopilot/step:"+s.Slug)
	}
	out = append(out, "autopilot/status:"+string(s.Run))
	if s.Flow != "" {
		out = append(out, "autopilot/flow:"+s.Flow)
	}
	if tasksync.PendingCount(s) > 0 {
		out = append(out, "autopilot/jira:pending")
	}
	return out
}

// Managed reports whether a label is one of autopilot's (Labels derives
// them); no other label is ever added or removed.
func Managed(l string) bool {
	return strings.HasPrefix(l, "autopilot/step:") || strings.HasPrefix(l, "autopilot/status:") ||
		strings.HasPrefix(l, "autopilot/flow:") || l == "autopilot/jira:pending"
}

// LabelColor returns the colour and description for an autopilot label.
func LabelColor(name string) (color, desc string) {
	switch {
	case name == "autopilot/status:in-progress":
		return "1d76db", "autopilot: a step is running"
	case name == "autopilot/status:awaiting-decision":
		return "fbca04", "autopilot: waiting for a human decision"
	case name == "autopilot/status:failed":
		return "d93f0b", "autopilot: a step failed after retries"
	case name == "autopilot/status:done":
		return "0e8a16", "autopilot: the run is complete"
	case name == "autopilot/status:stopped":
		return "b60205", "autopilot: the run is stopped"
	case name == "autopilot/jira:pending":
		return "c5def5", "autopilot: tasks waiting for their tracker"
	case len(name) > 15 && name[:15] == "autopilot/step:":
		return "5319e7", fmt.Sprintf("autopilot: current step %s", name[15:])
	case len(name) > 15 && name[:15] == "autopilot/flow:":
		return "bfd4f2", fmt.Sprintf("autopilot: flow %s", name[15:])
	}
	return "ededed", "autopilot"
}
