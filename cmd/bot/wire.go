package main

import (
	"fmt"

	"github.com/autopilot-dev/autopilot/internal/action"
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/jira"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// newTracker builds the Jira tracker from the inputs (credentials) and the
// repository's jira: settings (field ids, issue types).
func newTracker(in action.Inputs, j config.Jira) (tracker.Tracker, error) {
	project := in.JiraProject
	if project == "" {
		project = j.Project // the input wins; the repository config may name it instead
	}
	c, err := jira.New(jira.Config{
		URL: in.JiraURL, User: in.JiraUser, Token: in.JiraToken, Project: project,
		Deployment: j.Deployment, EpicLinkField: j.EpicLinkField, EpicNameField: j.EpicNameField,
		PointsField: j.PointsField, IssueTypeTask: j.TaskType, IssueTypeEpic: j.EpicType,
	})
	if err != nil {
		return nil, fmt.Errorf("jira: %w", err)
	}
	return c, nil
}
