package jira

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	gojira "github.com/andygrunwald/go-jira"

	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// classify turns a go-jira failure into a tracker error. err must already
// have passed through gojira.NewJiraError when a response body was read
// (go-jira's service methods do that; raw Do callers call jiraError).
func (c *Client) classify(op string, resp *gojira.Response, err error) error {
	if resp == nil || resp.Response == nil {
		// No answer: network error, timeout or cancelled context. The
		// request may or may not have reached Jira.
		return &tracker.TransientError{Err: fmt.Errorf("%s: %w", op, err)}
	}
	status := resp.StatusCode
	var je *gojira.Error
	errors.As(err, &je)
	switch {
	case status >= 200 && status < 300:
		// The answer could not be read: for a create, the outcome is unknown.
		return &tracker.TransientError{Status: status, Err: fmt.Errorf("%s: unreadable answer: %w", op, err)}
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return &tracker.AuthError{Status: status, Message: firstMessage(je, resp)}
	case status == http.StatusTooManyRequests:
		return &tracker.RateLimitError{RetryAfter: c.retryAfter(resp.Header), Reason: resp.Header.Get("RateLimit-Reason")}
	case status >= 500:
		return &tracker.TransientError{Status: status, RetryAfter: c.retryAfter(resp.Header), Err: fmt.Errorf("%s: %s", op, firstMessage(je, resp))}
	case status == http.StatusBadRequest:
		return c.validation(je, resp)
	}
	return fmt.Errorf("jira %s: HTTP %d: %s", op, status, firstMessage(je, resp))
}

// jiraError reads an error answer's errorMessages/errors via go-jira.
func jiraError(resp *gojira.Response, err error) error {
	if resp == nil || resp.Response == nil || resp.StatusCode < 300 {
		return err
	}
	return gojira.NewJiraError(resp, err)
}

func firstMessage(je *gojira.Error, resp *gojira.Response) string {
	if je != nil {
		if len(je.ErrorMessages) > 0 {
			return je.ErrorMessages[0]
		}
		for _, k := range sortedKeys(je.Errors) {
			return k + ": " + je.Errors[k]
		}
	}
	return resp.Status
}

// validation builds a ValidationError naming the first field Jira named
// (fields sorted for a stable message), with our names for custom fields.
func (c *Client) validation(je *gojira.Error, resp *gojira.Response) *tracker.ValidationError {
	if je == nil {
		return &tracker.ValidationError{Message: resp.Status}
	}
	return c.validationFrom(je.ErrorMessages, je.Errors)
}

func (c *Client) validationFrom(messages []string, fields map[string]string) *tracker.ValidationError {
	keys := sortedKeys(fields)
	if len(keys) == 0 {
		msg := strings.Join(messages, "; ")
		if msg == "" {
			msg = "request rejected without a reason"
		}
		return &tracker.ValidationError{Message: msg}
	}
	ve := &tracker.ValidationError{Field: c.fieldName(keys[0]), Message: fields[keys[0]]}
	if len(keys) > 1 {
		others := make([]string, len(keys)-1)
		for i, k := range keys[1:] {
			others[i] = c.fieldName(k)
		}
		ve.Message += fmt.Sprintf(" (also: %s)", strings.Join(others, ", "))
	}
	return ve
}

// fieldName says which configured field a custom field id is.
func (c *Client) fieldName(id string) string {
	switch id {
	case "":
		return id
	case c.cfg.PointsField:
		return id + " (story points)"
	case c.cfg.EpicLinkField:
		return id + " (epic link)"
	case c.cfg.EpicNameField:
		return id + " (epic name)"
	}
	return id
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// retryAfter reads Retry-After (seconds or HTTP date), falling back to
// X-RateLimit-Reset (an ISO 8601 time); 0 when neither says.
func (c *Client) retryAfter(h http.Header) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
			return time.Duration(secs) * time.Second
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(c.cfg.Now()), 0)
		}
	}
	if v := strings.TrimSpace(h.Get("X-RateLimit-Reset")); v != "" {
		for _, layout := range []string{time.RFC3339, "2006-01-02T15:04Z07:00", "2006-01-02T15:04:05.000Z0700"} {
			if t, err := time.Parse(layout, v); err == nil {
				return max(t.Sub(c.cfg.Now()), 0)
			}
		}
	}
	return 0
}
