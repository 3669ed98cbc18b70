package jira

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	gojira "github.com/andygrunwald/go-jira"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

var _ tracker.Closer = (*Client)(nil)

// transition is one entry of GET /rest/api/2/issue/{key}/transitions.
// IsAvailable is Cloud's flag (absent on Data Center, which lists only
// available transitions).
type transition struct {
	ID          string        `json:"id"`
	Name        string        `json:"name"`
	To          gojira.Status `json:"to"`
	IsAvailable *bool         `json:"isAvailable"`
}

// CloseIssue implements tracker.Closer in up to three requests: the issue's
// status (GET /rest/api/2/issue/{key}?fields=status; nothing more when it is
// already in the done category), the transitions its workflow offers (GET
// …/transitions) and the first one leading to a done-category status (POST
// …/transitions {"transition":{"id":…}}, answered 204). Repeating it is
// safe: a transition whose answer was lost is seen as done by the next call.
func (c *Client) CloseIssue(ctx context.Context, key string) error {
	path := "rest/api/2/issue/" + url.PathEscape(key)
	var is gojira.Issue
	if err := c.getJSON(ctx, "read status of "+key, path+"?fields=status", &is); err != nil {
		return err
	}
	status := ""
	if is.Fields != nil && is.Fields.Status != nil {
		status = is.Fields.Status.Name
		if is.Fields.Status.StatusCategory.Key == gojira.StatusCategoryComplete {
			return nil
		}
	}
	var list struct {
		Transitions []transition `json:"transitions"`
	}
	if err := c.getJSON(ctx, "list transitions of "+key, path+"/transitions", &list); err != nil {
		return err
	}
	t, ok := doneTransition(list.Transitions)
	if !ok {
		return &tracker.ValidationError{Field: "transition", Message: fmt.Sprintf(
			"issue %s (status %q) offers no transition to a status in the done category; offered: %s",
			key, status, describe(list.Transitions))}
	}
	body := map[string]any{"transition": map[string]string{"id": t.ID}}
	req, err := c.jc.NewRequestWithContext(ctx, http.MethodPost, path+"/transitions", body)
	if err != nil {
		return fmt.Errorf("jira transition %s: %w", key, err)
	}
	resp, err := c.jc.Do(req, nil)
	if err != nil {
		return c.classify(fmt.Sprintf("transition %s to %s", key, t.To.Name), resp, jiraError(resp, err))
	}
	resp.Body.Close()
	return nil
}

// getJSON sends one GET and decodes its answer, classifying failures.
func (c *Client) getJSON(ctx context.Context, op, path string, v any) error {
	req, err := c.jc.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		return fmt.Errorf("jira %s: %w", op, err)
	}
	resp, err := c.jc.Do(req, v)
	if err != nil {
		return c.classify(op, resp, jiraError(resp, err))
	}
	return nil
}

// doneTransition is the transition that closes the issue
// (tasksync.DoneTransition).
func doneTransition(ts []transition) (transition, bool) {
	rules := make([]tasksync.Transition, len(ts))
	for i, t := range ts {
		rules[i] = tasksync.Transition{
			ID:          t.ID,
			Unavailable: t.IsAvailable != nil && !*t.IsAvailable,
			ToDone:      t.To.StatusCategory.Key == gojira.StatusCategoryComplete,
		}
	}
	i, ok := tasksync.DoneTransition(rules)
	if !ok {
		return transition{}, false
	}
	return ts[i], true
}

// describe lists transitions for people: `"Start Progress" → In Progress`.
func describe(ts []transition) string {
	if len(ts) == 0 {
		return "none"
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%q → %s (%s)", t.Name, t.To.Name, t.To.StatusCategory.Key)
	}
	return strings.Join(parts, ", ")
}
