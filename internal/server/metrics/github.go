package metrics

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// The GitHub API's share of the metrics: requests per installation, by
// status class and cache hits (go-githubapp's github.requests.2xx … and
// github.requests.cached, under our prefix), and the rate-limit headers per
// installation and resource (its github.rate.limit and github.rate.remaining).

// statusClasses are the values of autopilot_github_requests_total's status
// label; "error" counts requests that got no answer.
var statusClasses = []string{"2xx", "3xx", "4xx", "5xx", "error"}

func instLabel(installation int64) string { return strconv.FormatInt(installation, 10) }

// statusClass is the status label of an HTTP status; 0 (no answer) and
// anything outside 200–599 is "error".
func statusClass(status int) string {
	if status < 200 || status > 599 {
		return "error"
	}
	return statusClasses[status/100-2]
}

// ObserveAPI counts one GitHub API request by its answer's status (0: no
// answer) and whether it was a cache hit (a 304 to a conditional request).
// Call it once per request sent; the transport wrappers of other packages
// (tracing, conditional requests) can call it directly.
func (m *Metrics) ObserveAPI(status int, cached bool) {
	m.apiStatus.WithLabelValues(statusClass(status)).Inc()
	if cached {
		m.apiCached.Inc()
	}
}

// ObserveAPICall counts one GitHub API request made for installation.
func (m *Metrics) ObserveAPICall(installation int64) {
	m.apiCalls.WithLabelValues(instLabel(installation)).Inc()
}

// SetRateLimitRemaining records the installation's remaining REST (core)
// rate budget.
func (m *Metrics) SetRateLimitRemaining(installation int64, remaining int) {
	m.rateLeft.WithLabelValues(instLabel(installation), "core").Set(float64(remaining))
}

// ObserveResponse counts a GitHub API response for installation (nil: the
// request got no answer) and records its x-ratelimit-remaining, -limit and
// -reset headers under its x-ratelimit-resource ("core" when absent). It
// fits appauth.Observer.
func (m *Metrics) ObserveResponse(installation int64, resp *http.Response) {
	m.ObserveAPICall(installation)
	if resp == nil {
		m.ObserveAPI(0, false)
		return
	}
	m.ObserveAPI(resp.StatusCode, conditionalHit(resp))
	resource := resp.Header.Get("X-Ratelimit-Resource")
	if resource == "" {
		resource = "core"
	}
	inst := instLabel(installation)
	// A series is made only when its header came: a gauge at 0 would read
	// as a spent budget.
	set := func(header string, g *prometheus.GaugeVec) {
		if v := resp.Header.Get(header); v != "" {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				g.WithLabelValues(inst, resource).Set(float64(n))
			}
		}
	}
	set("X-Ratelimit-Remaining", m.rateLeft)
	set("X-Ratelimit-Limit", m.rateLimit)
	set("X-Ratelimit-Reset", m.rateReset)
}

// conditionalHit reports a 304 answering a request that carried
// If-None-Match or If-Modified-Since: GitHub served it from what the
// client had, and it costs no rate budget.
func conditionalHit(resp *http.Response) bool {
	if resp.StatusCode != http.StatusNotModified || resp.Request == nil {
		return false
	}
	return resp.Request.Header.Get("If-None-Match") != "" || resp.Request.Header.Get("If-Modified-Since") != ""
}
