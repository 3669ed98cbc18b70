package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// scrape returns the /metrics text m serves.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics = %d", rec.Code)
	}
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

// hasLines fails t for each of lines that body lacks as a whole line.
func hasLines(t *testing.T, body string, lines ...string) {
	t.Helper()
	for _, want := range lines {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func response(status int, conditional bool, headers ...string) *http.Response {
	req := httptest.NewRequest(http.MethodGet, "/repos/o/r/issues/1", nil)
	if conditional {
		req.Header.Set("If-None-Match", `"abc"`)
	}
	h := http.Header{}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Set(headers[i], headers[i+1])
	}
	return &http.Response{StatusCode: status, Header: h, Request: req}
}

// TestAPIRequestsAreCountedByStatusClassAndCacheHits: every response is
// counted once under its status class (no answer: "error"); a 304 to a
// conditional request is a cache hit; the rate headers land per
// installation and resource (REST's "core" when GitHub names none), so a
// GraphQL answer never overwrites the REST budget.
func TestAPIRequestsAreCountedByStatusClassAndCacheHits(t *testing.T) {
	m := New()
	m.ObserveResponse(42, response(200, false, "X-Ratelimit-Remaining", "4990", "X-Ratelimit-Limit", "5000",
		"X-Ratelimit-Reset", "1795874400"))
	m.ObserveResponse(42, response(200, false, "X-Ratelimit-Remaining", "4200", "X-Ratelimit-Limit", "5000",
		"X-Ratelimit-Resource", "graphql"))
	m.ObserveResponse(42, response(304, true, "X-Ratelimit-Remaining", "4989", "X-Ratelimit-Resource", "core"))
	m.ObserveResponse(7, response(304, false))
	m.ObserveResponse(7, response(404, false))
	m.ObserveResponse(7, response(502, false))
	m.ObserveResponse(7, nil)
	m.ObserveAPI(201, false)
	body := scrape(t, m)
	hasLines(t, body,
		`autopilot_github_requests_total{status="2xx"} 3`,
		`autopilot_github_requests_total{status="3xx"} 2`,
		`autopilot_github_requests_total{status="4xx"} 1`,
		`autopilot_github_requests_total{status="5xx"} 1`,
		`autopilot_github_requests_total{status="error"} 1`,
		`autopilot_github_requests_cached_total 1`,
		`autopilot_github_api_calls_total{installation="42"} 3`,
		`autopilot_github_api_calls_total{installation="7"} 4`,
		`autopilot_github_rate_limit_remaining{installation="42",resource="core"} 4989`,
		`autopilot_github_rate_limit_remaining{installation="42",resource="graphql"} 4200`,
		`autopilot_github_rate_limit{installation="42",resource="core"} 5000`,
		`autopilot_github_rate_limit_reset_timestamp_seconds{installation="42",resource="core"} 1.7958744e+09`,
	)
}

// TestJobsAreTimedByOutcomeAndTheirQueueWait: a job's duration carries
// its outcome, and the time it waited in the queue is its own histogram.
func TestJobsAreTimedByOutcomeAndTheirQueueWait(t *testing.T) {
	m := New()
	m.JobStarted(3 * time.Second)
	m.JobDone("issue_comment", "ok", 200*time.Millisecond)
	m.JobStarted(0)
	m.JobDone("issue_comment", "error", time.Second)
	body := scrape(t, m)
	hasLines(t, body,
		`autopilot_job_duration_seconds_count{event="issue_comment",outcome="ok"} 1`,
		`autopilot_job_duration_seconds_count{event="issue_comment",outcome="error"} 1`,
		`autopilot_queue_wait_seconds_bucket{le="5"} 2`,
		`autopilot_queue_wait_seconds_bucket{le="1"} 1`,
		`autopilot_queue_wait_seconds_count 2`,
		`autopilot_jobs_in_flight 0`,
	)
}

// TestDecisionsWaitingAreCountedByAgeBucket: the open issues' figures are
// read at scrape time: decisions by age bucket (every bucket present, 0
// when empty), the oldest one's age, and the tracker backlog; a failing
// read leaves the three out rather than reporting zeros.
func TestDecisionsWaitingAreCountedByAgeBucket(t *testing.T) {
	m := New()
	body := scrape(t, m)
	if strings.Contains(body, "autopilot_decisions_waiting") {
		t.Errorf("decisions reported with no reader set:\n%s", body)
	}
	h := time.Hour
	m.SetOpenIssues(func(context.Context) (OpenIssues, error) {
		return OpenIssues{DecisionAges: []time.Duration{time.Minute, 2 * h, 5 * h, 30 * h, 4 * 24 * h, 9 * 24 * h, 10 * 24 * h}, TrackerTasks: 4}, nil
	})
	body = scrape(t, m)
	hasLines(t, body,
		`autopilot_decisions_waiting{age="under_1h"} 1`,
		`autopilot_decisions_waiting{age="1h_to_1d"} 2`,
		`autopilot_decisions_waiting{age="1d_to_3d"} 1`,
		`autopilot_decisions_waiting{age="3d_to_7d"} 1`,
		`autopilot_decisions_waiting{age="over_7d"} 2`,
		`autopilot_decisions_oldest_wait_seconds 864000`,
		`autopilot_tracker_backlog 4`,
	)
	m.SetOpenIssues(func(context.Context) (OpenIssues, error) { return OpenIssues{}, nil })
	if body = scrape(t, m); !strings.Contains(body, `autopilot_decisions_waiting{age="over_7d"} 0`+"\n") ||
		!strings.Contains(body, "autopilot_decisions_oldest_wait_seconds 0\n") {
		t.Errorf("no decision waiting: /metrics lacks the zero buckets:\n%s", body)
	}
	m.SetOpenIssues(func(context.Context) (OpenIssues, error) { return OpenIssues{}, errors.New("redis down") })
	if body = scrape(t, m); strings.Contains(body, "autopilot_decisions_waiting{") || strings.Contains(body, "autopilot_tracker_backlog ") {
		t.Errorf("a failed read reported figures:\n%s", body)
	}
}

// allowedLabels are the only label names a family may carry: each has a
// small, bounded set of values (installations are bounded by the App's
// installs). Issue numbers, repositories, logins and delivery ids are not.
var allowedLabels = []string{"event", "outcome", "installation", "status", "resource", "age", "le"}

// TestNoFamilyHasAnUnboundedLabel: every series of every family, after
// each setter ran, carries only allowedLabels.
func TestNoFamilyHasAnUnboundedLabel(t *testing.T) {
	m := exercised()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if !slices.Contains(allowedLabels, l.GetName()) {
					t.Errorf("%s has label %q, not one of %v", f.GetName(), l.GetName(), allowedLabels)
				}
			}
		}
	}
}

// exercised returns metrics after every setter ran once.
func exercised() *Metrics {
	m := New()
	m.ObserveResponse(1, response(200, false, "X-Ratelimit-Remaining", "1", "X-Ratelimit-Limit", "2", "X-Ratelimit-Reset", "3"))
	m.ObserveResponse(1, response(304, true))
	m.SetJiraOutbox(1)
	m.Delivery("issues", "accepted", time.Millisecond)
	m.JobStarted(time.Second)
	m.JobDone("issues", "ok", time.Second)
	m.SweepDone(1, time.Unix(1, 0))
	m.SetStoreUp(true)
	m.RedeliveryPass("ok")
	m.Redelivery().Requested.Inc()
	m.QueueClaimed()
	m.QueueAcked(1)
	m.QueueHandedBack()
	m.QueueLost(1)
	m.QueueForeign()
	m.SetLocalQueue(1)
	m.SetQueueStats(func(context.Context) (QueueStats, error) { return QueueStats{Length: 2, Pending: 1}, nil })
	m.SetOpenIssues(func(context.Context) (OpenIssues, error) {
		return OpenIssues{DecisionAges: []time.Duration{time.Hour}, TrackerTasks: 1}, nil
	})
	return m
}

// TestEveryFamilyIsInTheDocsTable: docs/app.md's metrics table names every
// family the server registers, and nothing it does not (the one family
// appmode registers on the same registry is named here).
func TestEveryFamilyIsInTheDocsTable(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/app.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(autopilot_[a-z0-9_]+)` \\|")
	var documented []string
	for _, g := range row.FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, g[1])
	}
	registered := append(New().Families(), "autopilot_installation_token_remints_total")
	for _, f := range registered {
		if !slices.Contains(documented, f) {
			t.Errorf("%s is registered but has no row in docs/app.md's metrics table", f)
		}
	}
	for _, d := range documented {
		if !slices.Contains(registered, d) {
			t.Errorf("docs/app.md's metrics table has %s, which nothing registers", d)
		}
	}
}

// TestFamiliesListsWhatIsServed: Families names every family a scrape of
// exercised metrics shows, so tests built on it (docs, alert rules) see
// what Prometheus sees.
func TestFamiliesListsWhatIsServed(t *testing.T) {
	m := exercised()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var served []string
	for _, f := range fams {
		served = append(served, f.GetName())
	}
	slices.Sort(served)
	if got := m.Families(); !slices.Equal(got, served) {
		t.Errorf("Families() = %v\nserved       %v", got, served)
	}
}
