// Package metrics is the App server's Prometheus metrics, on a private
// registry, with a setter for each thing the server counts.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/autopilot-dev/autopilot/internal/server/redelivery"
)

// scrapeTimeout bounds the Redis round trip made while /metrics is scraped.
const scrapeTimeout = 2 * time.Second

// Metrics are the server's Prometheus metrics on a private registry (nothing
// is registered globally). The setters are safe for concurrent use; the lead
// calls the API and Jira ones from the reconcile side.
type Metrics struct {
	reg *prometheus.Registry

	deliveries *prometheus.CounterVec
	ack        prometheus.Histogram
	queue      *queueCollector
	inFlight   prometheus.Gauge
	jobs       *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	apiCalls   *prometheus.CounterVec
	rateLeft   *prometheus.GaugeVec
	outbox     prometheus.Gauge
	lastSweep  *prometheus.GaugeVec
	storeUp    prometheus.Gauge

	redeliveries     prometheus.Counter
	unrecoverable    prometheus.Counter
	undeliveredAge   prometheus.Gauge
	redeliveryPasses *prometheus.CounterVec

	queueClaims     prometheus.Counter
	queueAcked      prometheus.Counter
	queueHandedBack prometheus.Counter
	queueLost       prometheus.Counter
	queueForeign    prometheus.Counter
}

// New builds the metrics and their registry.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		deliveries: counterVec("autopilot_webhook_deliveries_total",
			"Webhook deliveries received, by event and outcome.", "event", "outcome"),
		ack: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "autopilot_webhook_ack_seconds",
			Help:    "Time from request start to the webhook answer.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
		queue: newQueueCollector(),
		inFlight: gauge("autopilot_jobs_in_flight",
			"Jobs running now."),
		jobs: counterVec("autopilot_jobs_total",
			"Jobs finished, by event (or \"sweep\") and outcome (ok, error, dropped, panic).", "event", "outcome"),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "autopilot_job_duration_seconds",
			Help:    "Processing time of a job, lock wait included.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"event"}),
		apiCalls: counterVec("autopilot_github_api_calls_total",
			"GitHub API requests, by installation (0: the App itself).", "installation"),
		rateLeft: gaugeVec("autopilot_github_rate_limit_remaining",
			"Last x-ratelimit-remaining seen, by installation.", "installation"),
		outbox: gauge("autopilot_jira_outbox_size",
			"Jira writes waiting in outboxes."),
		lastSweep: gaugeVec("autopilot_last_sweep_timestamp_seconds",
			"Unix time of the last successful sweep, by installation; alert when older than a few intervals.", "installation"),
		storeUp: gauge("autopilot_store_up",
			"1 when the shared store (Redis) answers, 0 when not; 1 without one."),
		redeliveries: counter("autopilot_redeliveries_requested_total",
			"Webhook redeliveries the redelivery job asked GitHub for (deliveries that failed, redelivered within GitHub's 3-day window)."),
		unrecoverable: counter("autopilot_deliveries_unrecoverable_total",
			"Failed webhook deliveries left unrecoverable: not delivered, even by redelivery, within GitHub's 3-day window; only the sweep catches their issues up. Alert on any increase."),
		undeliveredAge: gauge("autopilot_undelivered_oldest_age_seconds",
			"Age of the oldest failed webhook delivery not yet delivered by redelivery (0: none); it becomes unrecoverable at 259200 (3 days), so alert well before."),
		redeliveryPasses: counterVec("autopilot_redelivery_passes_total",
			"Passes of the webhook redelivery job run by this replica, by outcome (ok, error).", "outcome"),
		queueClaims: counter("autopilot_queue_claims_total",
			"Redis queue entries this replica claimed after another left them pending longer than QUEUE_CLAIM_IDLE (it died)."),
		queueAcked: counter("autopilot_queue_acked_total",
			"Redis queue entries this replica acknowledged (their job finished)."),
		queueHandedBack: counter("autopilot_queue_handed_back_total",
			"Redis queue entries this replica gave back to the other replicas at shutdown, not run here."),
		queueForeign: counter("autopilot_queue_foreign_total",
			"Redis queue entries of another App this replica read (two Apps on one REDIS_PREFIX): neither run nor acknowledged, left to their App. Alert on any increase."),
		queueLost: counter("autopilot_queue_lost_total",
			"Redis queue entries gone before they were acknowledged (deleted or trimmed from the stream, unreadable, or the consumer group lost with Redis's data); the sweep catches their issues up. Alert on any increase."),
	}
	m.storeUp.Set(1)
	m.redeliveryPasses.WithLabelValues("ok")
	m.redeliveryPasses.WithLabelValues("error")
	m.reg.MustRegister(m.deliveries, m.ack, m.queue, m.inFlight, m.jobs, m.latency,
		m.apiCalls, m.rateLeft, m.outbox, m.lastSweep, m.storeUp,
		m.redeliveries, m.unrecoverable, m.undeliveredAge, m.redeliveryPasses,
		m.queueClaims, m.queueAcked, m.queueHandedBack, m.queueLost, m.queueForeign)
	return m
}

func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

func gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
}

// Registry is the private registry, for callers adding their own collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

func instLabel(installation int64) string { return strconv.FormatInt(installation, 10) }

// ObserveAPICall counts one GitHub API request made for installation.
func (m *Metrics) ObserveAPICall(installation int64) {
	m.apiCalls.WithLabelValues(instLabel(installation)).Inc()
}

// SetRateLimitRemaining records the installation's remaining rate budget.
func (m *Metrics) SetRateLimitRemaining(installation int64, remaining int) {
	m.rateLeft.WithLabelValues(instLabel(installation)).Set(float64(remaining))
}

// ObserveResponse counts a GitHub API response for installation and records
// its x-ratelimit-remaining header when present. It fits appauth.Observer.
func (m *Metrics) ObserveResponse(installation int64, resp *http.Response) {
	m.ObserveAPICall(installation)
	if resp == nil {
		return
	}
	if v := resp.Header.Get("X-Ratelimit-Remaining"); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			m.SetRateLimitRemaining(installation, n)
		}
	}
}

// SetJiraOutbox records how many Jira writes wait in outboxes.
func (m *Metrics) SetJiraOutbox(n int) { m.outbox.Set(float64(n)) }

// Delivery counts a webhook delivery answered with outcome, and how long
// the answer took.
func (m *Metrics) Delivery(event, outcome string, took time.Duration) {
	m.deliveries.WithLabelValues(event, outcome).Inc()
	m.ack.Observe(took.Seconds())
}

// SetStoreUp records whether the shared store answers.
func (m *Metrics) SetStoreUp(up bool) {
	if up {
		m.storeUp.Set(1)
	} else {
		m.storeUp.Set(0)
	}
}

// JobStarted counts a job in flight until JobDone.
func (m *Metrics) JobStarted() { m.inFlight.Inc() }

// JobDone counts a finished job of event (or "sweep") with its outcome and
// duration. It is counted before in-flight drops, so "nothing in flight"
// implies every finished job is counted.
func (m *Metrics) JobDone(event, outcome string, took time.Duration) {
	m.jobs.WithLabelValues(event, outcome).Inc()
	m.latency.WithLabelValues(event).Observe(took.Seconds())
	m.inFlight.Dec()
}

// SweepDone records when installation's last successful sweep ended.
func (m *Metrics) SweepDone(installation int64, at time.Time) {
	m.lastSweep.WithLabelValues(instLabel(installation)).Set(float64(at.Unix()))
}

// Redelivery is the redelivery job's share of the metrics.
func (m *Metrics) Redelivery() redelivery.Metrics {
	return redelivery.Metrics{Requested: m.redeliveries, Unrecoverable: m.unrecoverable, OldestAge: m.undeliveredAge}
}

// RedeliverySkipped records that another replica runs this interval's
// redelivery pass, and reports the age of the undelivered.
func (m *Metrics) RedeliverySkipped() { m.undeliveredAge.Set(0) }

// RedeliveryPass counts a redelivery pass run here, by outcome (ok, error).
func (m *Metrics) RedeliveryPass(outcome string) {
	m.redeliveryPasses.WithLabelValues(outcome).Inc()
}

// QueueClaimed counts a Redis queue entry claimed from a dead replica.
func (m *Metrics) QueueClaimed() { m.queueClaims.Inc() }

// QueueAcked counts n Redis queue entries acknowledged.
func (m *Metrics) QueueAcked(n int) { m.queueAcked.Add(float64(n)) }

// QueueHandedBack counts a Redis queue entry given back at shutdown.
func (m *Metrics) QueueHandedBack() { m.queueHandedBack.Inc() }

// QueueLost counts n Redis queue entries gone before they were
// acknowledged.
func (m *Metrics) QueueLost(n int) { m.queueLost.Add(float64(n)) }

// QueueForeign counts a Redis queue entry of another App left alone.
func (m *Metrics) QueueForeign() { m.queueForeign.Inc() }

// SetLocalQueue records how many jobs wait in this process.
func (m *Metrics) SetLocalQueue(n int) { m.queue.local.Store(int64(n)) }

// SetQueueStats gives the scrape the Redis queue's reader.
func (m *Metrics) SetQueueStats(stats func(context.Context) (QueueStats, error)) {
	m.queue.stats.Store(&stats)
}

// QueueStats is the Redis work queue's state for /metrics.
type QueueStats struct {
	// Length is the number of entries not yet acknowledged.
	Length int64
	// Pending is how many of them a consumer has read.
	Pending int64
	// OldestPending is the age of the oldest pending entry (since it was
	// appended); 0 when none.
	OldestPending time.Duration
}

// queueCollector reports the queue at scrape time: autopilot_queue_depth
// (local waiting jobs, plus with Redis the stream entries no replica has
// read yet) and, with Redis, the stream's length, pending entries and the
// age of the oldest pending one, read in one round trip.
type queueCollector struct {
	local atomic.Int64
	stats atomic.Pointer[func(context.Context) (QueueStats, error)]

	depth, length, pending, oldest *prometheus.Desc
}

func newQueueCollector() *queueCollector {
	return &queueCollector{
		depth: prometheus.NewDesc("autopilot_queue_depth",
			"Jobs accepted and not yet started (with Redis: waiting here, plus queue entries no replica has read yet).", nil, nil),
		length: prometheus.NewDesc("autopilot_queue_stream_length",
			"Deliveries in the Redis work queue not yet acknowledged (QUEUE_MAX bounds it).", nil, nil),
		pending: prometheus.NewDesc("autopilot_queue_pending",
			"Redis work queue entries read by a replica and not yet acknowledged.", nil, nil),
		oldest: prometheus.NewDesc("autopilot_queue_oldest_pending_age_seconds",
			"Age of the oldest pending Redis work queue entry since it was queued (0: none).", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.depth
	ch <- c.length
	ch <- c.pending
	ch <- c.oldest
}

// Collect implements prometheus.Collector. When Redis does not answer, the
// stream's series are left out and the depth is the local one.
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	depth := float64(c.local.Load())
	if f := c.stats.Load(); f != nil {
		ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
		st, err := (*f)(ctx)
		cancel()
		if err == nil {
			depth += float64(max(0, st.Length-st.Pending))
			ch <- prometheus.MustNewConstMetric(c.length, prometheus.GaugeValue, float64(st.Length))
			ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(st.Pending))
			ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, st.OldestPending.Seconds())
		}
	}
	ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, depth)
}
