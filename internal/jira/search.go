package jira

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	gojira "github.com/andygrunwald/go-jira"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/idem"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// jqlChunk bounds the values in one "in (...)" list.
const jqlChunk = 50

// maxSearchPages stops a runaway paging loop.
const maxSearchPages = 100

var searchFields = []string{"labels", "status"}

// quote makes a JQL string literal.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func inList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = quote(v)
	}
	return "(" + strings.Join(q, ", ") + ")"
}

// search runs a JQL query to the end: Cloud's /rest/api/2/search/jql with
// nextPageToken paging, Data Center's /rest/api/2/search with startAt. A 410
// from the old endpoint or a 404 from the new one flips the flavour once.
func (c *Client) search(ctx context.Context, jql string) ([]gojira.Issue, error) {
	cloud, err := c.IsCloud(ctx)
	if err != nil {
		return nil, err
	}
	issues, status, err := c.searchAs(ctx, cloud, jql)
	if (cloud && status == http.StatusNotFound) || (!cloud && status == http.StatusGone) {
		c.setCloud(!cloud)
		issues, _, err = c.searchAs(ctx, !cloud, jql)
	}
	return issues, err
}

func (c *Client) searchAs(ctx context.Context, cloud bool, jql string) ([]gojira.Issue, int, error) {
	var all []gojira.Issue
	token, startAt := "", 0
	for page := 0; page < maxSearchPages; page++ {
		var (
			issues []gojira.Issue
			resp   *gojira.Response
			err    error
		)
		if cloud {
			issues, resp, err = c.jc.Issue.SearchV2JQLWithContext(ctx, jql, &gojira.SearchOptionsV2{
				NextPageToken: token, MaxResults: searchPage, Fields: searchFields,
			})
		} else {
			issues, resp, err = c.jc.Issue.SearchWithContext(ctx, jql, &gojira.SearchOptions{
				StartAt: startAt, MaxResults: searchPage, Fields: searchFields,
			})
		}
		if err != nil {
			status := 0
			if resp != nil && resp.Response != nil {
				status = resp.StatusCode
			}
			return nil, status, c.classify("search", resp, err)
		}
		all = append(all, issues...)
		if cloud {
			if resp.IsLast || resp.NextPageToken == "" {
				return all, resp.StatusCode, nil
			}
			token = resp.NextPageToken
			continue
		}
		startAt += len(issues)
		if len(issues) == 0 || startAt >= resp.Total {
			return all, resp.StatusCode, nil
		}
	}
	return nil, 0, fmt.Errorf("jira search: more than %d pages for %q", maxSearchPages, jql)
}

// issueOf converts a found issue. Fields may be nil when Jira sent ids only.
func (c *Client) issueOf(is gojira.Issue) tracker.Issue {
	out := tracker.Issue{Key: is.Key, URL: c.browseURL(is.Key)}
	if is.Fields == nil {
		return out
	}
	for _, l := range is.Fields.Labels {
		if strings.HasPrefix(l, idem.Prefix) {
			out.IdemKey = l
		}
	}
	if st := is.Fields.Status; st != nil {
		out.Status = st.Name
		out.Done = st.StatusCategory.Key == gojira.StatusCategoryComplete
	}
	return out
}

// FindByIdemKeys implements tracker.Tracker: a label search in the project,
// 50 labels per query. When a label is on several issues the one created
// first is adopted (tasksync.FirstCreated).
func (c *Client) FindByIdemKeys(ctx context.Context, keys []string) (map[string]tracker.Issue, error) {
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	out := map[string]tracker.Issue{}
	for start := 0; start < len(keys); start += jqlChunk {
		chunk := keys[start:min(start+jqlChunk, len(keys))]
		jql := fmt.Sprintf("project = %s AND labels in %s ORDER BY key ASC", quote(c.cfg.Project), inList(chunk))
		found, err := c.search(ctx, jql)
		if err != nil {
			return nil, err
		}
		for _, is := range found {
			if is.Fields == nil {
				continue
			}
			for _, l := range is.Fields.Labels {
				if !want[l] {
					continue
				}
				if prev, dup := out[l]; dup && tasksync.FirstCreated(prev.Key, is.Key) == prev.Key {
					continue
				}
				ti := c.issueOf(is)
				ti.IdemKey = l
				out[l] = ti
			}
		}
	}
	return out, nil
}

// Statuses implements tracker.Tracker with "key in (...)" searches. Jira
// rejects the whole query when one key no longer exists (deleted or moved);
// then each key of that chunk is read on its own and missing ones skipped.
func (c *Client) Statuses(ctx context.Context, jiraKeys []string) (map[string]tracker.Issue, error) {
	out := map[string]tracker.Issue{}
	for start := 0; start < len(jiraKeys); start += jqlChunk {
		chunk := jiraKeys[start:min(start+jqlChunk, len(jiraKeys))]
		found, err := c.search(ctx, "key in "+inList(chunk))
		var ve *tracker.ValidationError
		if errors.As(err, &ve) {
			found, err = c.getEach(ctx, chunk)
		}
		if err != nil {
			return nil, err
		}
		for _, is := range found {
			out[is.Key] = c.issueOf(is)
		}
	}
	return out, nil
}

// getEach reads issues one by one, skipping those Jira does not have.
func (c *Client) getEach(ctx context.Context, keys []string) ([]gojira.Issue, error) {
	var out []gojira.Issue
	for _, k := range keys {
		req, err := c.jc.NewRequestWithContext(ctx, http.MethodGet, "rest/api/2/issue/"+url.PathEscape(k)+"?fields=labels,status", nil)
		if err != nil {
			return nil, fmt.Errorf("jira get %s: %w", k, err)
		}
		var is gojira.Issue
		resp, err := c.jc.Do(req, &is)
		if err != nil {
			if resp != nil && resp.Response != nil && resp.StatusCode == http.StatusNotFound {
				_ = jiraError(resp, err) // drains and closes the body
				continue
			}
			return nil, c.classify("get "+k, resp, jiraError(resp, err))
		}
		out = append(out, is)
	}
	return out, nil
}
