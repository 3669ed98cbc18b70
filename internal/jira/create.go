package jira

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	gojira "github.com/andygrunwald/go-jira"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// AutopilotLabel is put on every issue autopilot creates, beside its
// idempotency label, so people can find them all.
const AutopilotLabel = "autopilot"

type issueUpdate struct {
	Fields map[string]any `json:"fields"`
}

type bulkResponse struct {
	Issues []struct {
		ID   string `json:"id"`
		Key  string `json:"key"`
		Self string `json:"self"`
	} `json:"issues"`
	Errors []struct {
		Status        int `json:"status"`
		ElementErrors struct {
			ErrorMessages []string          `json:"errorMessages"`
			Errors        map[string]string `json:"errors"`
		} `json:"elementErrors"`
		FailedElementNumber int `json:"failedElementNumber"`
	} `json:"errors"`
}

// fields maps an item to REST v2 create fields: plain-text description,
// Cloud epic link through "parent", Data Center through the Epic Link custom
// field, Epic Name for epics when configured, story points when configured.
func (c *Client) fields(it tracker.Item, cloud bool) map[string]any {
	typ := c.cfg.IssueTypeTask
	if it.Kind == state.KindEpic {
		typ = c.cfg.IssueTypeEpic
	}
	f := map[string]any{
		"project":   map[string]string{"key": c.cfg.Project},
		"summary":   it.Title,
		"issuetype": map[string]string{"name": typ},
		"labels":    []string{AutopilotLabel, it.IdemKey},
	}
	if it.Description != "" {
		f["description"] = it.Description
	}
	if it.Kind == state.KindEpic && c.cfg.EpicNameField != "" {
		f[c.cfg.EpicNameField] = it.Title
	}
	if it.EpicKey != "" && it.Kind != state.KindEpic {
		switch {
		case cloud:
			f["parent"] = map[string]string{"key": it.EpicKey}
		case c.cfg.EpicLinkField != "":
			f[c.cfg.EpicLinkField] = it.EpicKey
		}
	}
	if it.Points > 0 && c.cfg.PointsField != "" {
		f[c.cfg.PointsField] = it.Points
	}
	return f
}

// CreateBulk implements tracker.Tracker with one POST /rest/api/2/issue/bulk
// sent through go-jira's raw NewRequest/Do (go-jira does not wrap it).
// Partial failures come back as 201 (or 400 when nothing was created) with
// per-element errors; those become per-item results.
func (c *Client) CreateBulk(ctx context.Context, items []tracker.Item) ([]tracker.CreateResult, error) {
	if len(items) == 0 {
		return nil, nil
	}
	if len(items) > tasksync.MaxBulk {
		return nil, fmt.Errorf("jira bulk create: %d items, at most %d per request", len(items), tasksync.MaxBulk)
	}
	cloud, err := c.IsCloud(ctx)
	if err != nil {
		return nil, err
	}
	updates := make([]issueUpdate, len(items))
	for i, it := range items {
		updates[i] = issueUpdate{Fields: c.fields(it, cloud)}
	}
	req, err := c.jc.NewRequestWithContext(ctx, http.MethodPost, "rest/api/2/issue/bulk", map[string]any{"issueUpdates": updates})
	if err != nil {
		return nil, fmt.Errorf("jira bulk create: %w", err)
	}
	var out bulkResponse
	resp, err := c.jc.Do(req, &out)
	if err != nil {
		if resp == nil || resp.Response == nil || resp.StatusCode != http.StatusBadRequest {
			return nil, c.classify("bulk create", resp, jiraError(resp, err))
		}
		if err := c.readBadRequest(resp, err, &out); err != nil {
			return nil, err
		}
	}
	return c.results(items, out), nil
}

// readBadRequest reads a 400: either the bulk shape (nothing created, errors
// per element) or a plain error collection for the whole request.
func (c *Client) readBadRequest(resp *gojira.Response, httpErr error, out *bulkResponse) error {
	raw, rerr := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	resp.Body.Close()
	if rerr != nil {
		return &tracker.TransientError{Status: resp.StatusCode, Err: fmt.Errorf("bulk create: read answer: %w", rerr)}
	}
	if json.Unmarshal(raw, out) == nil && len(out.Errors) > 0 {
		return nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	return c.classify("bulk create", resp, gojira.NewJiraError(resp, httpErr))
}

// results matches Jira's answer to the items. Created issues are listed in
// request order, skipping failed elements; when the counts do not add up the
// created items are left out (their outcome is unknown to the caller, who
// looks them up by idempotency key).
func (c *Client) results(items []tracker.Item, out bulkResponse) []tracker.CreateResult {
	failed := map[int]error{}
	for _, e := range out.Errors {
		if e.FailedElementNumber < 0 || e.FailedElementNumber >= len(items) {
			continue
		}
		var err error
		switch e.Status {
		case http.StatusUnauthorized, http.StatusForbidden:
			err = &tracker.AuthError{Status: e.Status, Message: fmt.Sprint(e.ElementErrors.ErrorMessages)}
		default:
			err = c.validationFrom(e.ElementErrors.ErrorMessages, e.ElementErrors.Errors)
		}
		failed[e.FailedElementNumber] = err
	}
	var res []tracker.CreateResult
	var okIdx []int
	for i, it := range items {
		if err, bad := failed[i]; bad {
			res = append(res, tracker.CreateResult{IdemKey: it.IdemKey, Err: err})
			continue
		}
		okIdx = append(okIdx, i)
	}
	if len(okIdx) != len(out.Issues) {
		return res
	}
	for n, i := range okIdx {
		key := out.Issues[n].Key
		res = append(res, tracker.CreateResult{
			IdemKey: items[i].IdemKey,
			Issue:   tracker.Issue{Key: key, IdemKey: items[i].IdemKey, Status: "", URL: c.browseURL(key)},
		})
	}
	return res
}
