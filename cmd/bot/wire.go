package main

import (
	"context"
	"fmt"
	"io"

	"github.com/autopilot-dev/autopilot/internal/action"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// newTracker builds the Jira tracker from the action inputs.
func newTracker(in action.Inputs) (tracker.Tracker, error) {
	return nil, fmt.Errorf("jira: adapter not wired yet")
}

// runServe starts the GitHub App webhook server.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fmt.Fprintln(stderr, "serve: not wired yet")
	return 2
}
