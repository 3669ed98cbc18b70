package jira

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// roundTrip answers requests in memory.
type roundTrip func(*http.Request) *http.Response

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r), nil }

func jsonAnswer(status int, body string) *http.Response {
	return &http.Response{
		StatusCode: status, Status: http.StatusText(status),
		Header: http.Header{"Content-Type": {"application/json;charset=UTF-8"}},
		Body:   io.NopCloser(strings.NewReader(body)),
	}
}

// FuzzCloseIssueTransitionsAnswer feeds arbitrary answers to the
// transitions GET: CloseIssue must not panic, must POST only the id of an
// offered transition to a done-category status (and only when there is
// one), and must otherwise return a tracker error type or a plain error.
func FuzzCloseIssueTransitionsAnswer(f *testing.F) {
	f.Add(200, `{"expand":"transitions","transitions":[{"id":"11","name":"To Do","to":{"name":"To Do","statusCategory":{"key":"new"}}},{"id":"31","name":"Done","to":{"name":"Done","statusCategory":{"key":"done"}}}]}`)
	f.Add(200, `{"transitions":[{"id":"4","name":"Start Progress","to":{"name":"In Progress","statusCategory":{"key":"indeterminate"}}}]}`)
	f.Add(200, `{"transitions":[{"id":"5","isAvailable":false,"to":{"statusCategory":{"key":"done"}}},{"id":"6","to":{"statusCategory":{"key":"done"}}}]}`)
	f.Add(200, `{"transitions":[]}`)
	f.Add(200, `{"transitions":null}`)
	f.Add(200, `not json`)
	f.Add(429, `{"errorMessages":["Rate limit exceeded."],"errors":{}}`)
	f.Add(400, `{"errorMessages":[],"errors":{"transition":"bad"}}`)
	f.Fuzz(func(t *testing.T, status int, body string) {
		if status < 200 || status > 599 {
			return
		}
		var posted []string
		rt := roundTrip(func(r *http.Request) *http.Response {
			switch {
			case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/transitions"):
				return jsonAnswer(status, body)
			case r.Method == http.MethodGet:
				return jsonAnswer(200, `{"id":"10000","key":"PROJ-1","fields":{"status":{"name":"To Do","statusCategory":{"key":"new"}}}}`)
			case r.Method == http.MethodPost:
				var req struct {
					Transition struct {
						ID string `json:"id"`
					} `json:"transition"`
				}
				raw, _ := io.ReadAll(r.Body)
				if err := json.Unmarshal(raw, &req); err != nil {
					t.Errorf("POST body %q: %v", raw, err)
				}
				posted = append(posted, req.Transition.ID)
				return &http.Response{StatusCode: 204, Status: "No Content", Header: http.Header{}, Body: io.NopCloser(strings.NewReader(""))}
			}
			return jsonAnswer(404, `{"errorMessages":["not found"],"errors":{}}`)
		})
		c, err := New(Config{URL: "https://acme.atlassian.net", User: "bot@example.com", Token: "t", Project: "PROJ",
			HTTPClient: &http.Client{Transport: rt}})
		if err != nil {
			t.Fatal(err)
		}
		err = c.CloseIssue(context.Background(), "PROJ-1")

		var offered struct {
			Transitions []transition `json:"transitions"`
		}
		parsed := status/100 == 2 && json.Unmarshal([]byte(body), &offered) == nil
		want, hasDone := doneTransition(offered.Transitions)
		switch {
		case parsed && hasDone:
			if err != nil || len(posted) != 1 || posted[0] != want.ID || want.ID == "" {
				t.Fatalf("offered a done transition %q: posted %v, err %v", want.ID, posted, err)
			}
		case parsed:
			var ve *tracker.ValidationError
			if !errors.As(err, &ve) || len(posted) != 0 || !strings.Contains(ve.Message, "PROJ-1") {
				t.Fatalf("no done transition offered: posted %v, err %v", posted, err)
			}
		default:
			if err == nil || len(posted) != 0 {
				t.Fatalf("answer %d %q: posted %v, err %v", status, body, posted, err)
			}
		}
	})
}
