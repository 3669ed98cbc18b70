// Package metrics is the App server's Prometheus metrics, on a private
// registry, with a setter for each thing the server counts.
package metrics

import (
	"context"
	"net/http"
	"slices"
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
	queueWait  prometheus.Histogram
	inFlight   prometheus.Gauge
	jobs       *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	apiCalls   *prometheus.CounterVec
	apiStatus  *prometheus.CounterVec
	apiCached  prometheus.Counter
	rateLeft   *prometheus.GaugeVec
	rateLimit  *prometheus.GaugeVec
	rateReset  *prometheus.GaugeVec
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

	open *openIssuesCollector

	families []string
}

// New builds the metrics and their registry.
func New() *Metrics {
	b := &builder{}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		deliveries: b.counterVec("autopilot_webhook_deliveries_total",
			"Webhook deliveries received, by event and outcome.", "event", "outcome"),
		ack: b.histogram("autopilot_webhook_ack_seconds",
			"Time from request start to the webhook answer.",
			[]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}),
		queue: newQueueCollector(b),
		queueWait: b.histogram("autopilot_queue_wait_seconds",
			"Time a job waited from its delivery's acceptance (with Redis: its queue entry's append) to its start: the queue's lag.",
			[]float64{.01, .05, .1, .5, 1, 5, 15, 30, 60, 300, 900}),
		inFlight: b.gauge("autopilot_jobs_in_flight",
			"Jobs running now."),
		jobs: b.counterVec("autopilot_jobs_total",
			"Jobs finished, by event (or \"sweep\") and outcome (ok, error, dropped, panic).", "event", "outcome"),
		latency: b.histogramVec("autopilot_job_duration_seconds",
			"Processing time of a job, lock wait included, by event and outcome.",
			[]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}, "event", "outcome"),
		apiCalls: b.counterVec("autopilot_github_api_calls_total",
			"GitHub API requests, by installation (0: the App itself).", "installation"),
		apiStatus: b.counterVec("autopilot_github_requests_total",
			"GitHub API requests, by status class (2xx, 3xx, 4xx, 5xx; error: no answer).", "status"),
		apiCached: b.counter("autopilot_github_requests_cached_total",
			"GitHub API requests answered 304 Not Modified to a conditional request (served from the cache, free of rate budget)."),
		rateLeft: b.gaugeVec("autopilot_github_rate_limit_remaining",
			"Last x-ratelimit-remaining seen, by installation and rate-limit resource (core, graphql, ...).", "installation", "resource"),
		rateLimit: b.gaugeVec("autopilot_github_rate_limit",
			"Last x-ratelimit-limit seen, by installation and rate-limit resource.", "installation", "resource"),
		rateReset: b.gaugeVec("autopilot_github_rate_limit_reset_timestamp_seconds",
			"Last x-ratelimit-reset seen (Unix time the budget refills), by installation and rate-limit resource.", "installation", "resource"),
		outbox: b.gauge("autopilot_jira_outbox_size",
			"Jira writes waiting in outboxes."),
		lastSweep: b.gaugeVec("autopilot_last_sweep_timestamp_seconds",
			"Unix time of the last successful sweep, by installation; alert when older than a few intervals.", "installation"),
		storeUp: b.gauge("autopilot_store_up",
			"1 when the shared store (Redis) answers, 0 when not; 1 without one."),
		redeliveries: b.counter("autopilot_redeliveries_requested_total",
			"Webhook redeliveries the redelivery job asked GitHub for (deliveries that failed, redelivered within GitHub's 3-day window)."),
		unrecoverable: b.counter("autopilot_deliveries_unrecoverable_total",
			"Failed webhook deliveries left unrecoverable: not delivered, even by redelivery, within GitHub's 3-day window; only the sweep catches their issues up. Alert on any increase."),
		undeliveredAge: b.gauge("autopilot_undelivered_oldest_age_seconds",
			"Age of the oldest failed webhook delivery not yet delivered by redelivery (0: none); it becomes unrecoverable at 259200 (3 days), so alert well before."),
		redeliveryPasses: b.counterVec("autopilot_redelivery_passes_total",
			"Passes of the webhook redelivery job run by this replica, by outcome (ok, error).", "outcome"),
		queueClaims: b.counter("autopilot_queue_claims_total",
			"Redis queue entries this replica claimed after another left them pending longer than QUEUE_CLAIM_IDLE (it died)."),
		queueAcked: b.counter("autopilot_queue_acked_total",
			"Redis queue entries this replica acknowledged (their job finished)."),
		queueHandedBack: b.counter("autopilot_queue_handed_back_total",
			"Redis queue entries this replica gave back to the other replicas at shutdown, not run here."),
		queueForeign: b.counter("autopilot_queue_foreign_total",
			"Redis queue entries of another App this replica read (two Apps on one REDIS_PREFIX): neither run nor acknowledged, left to their App. Alert on any increase."),
		queueLost: b.counter("autopilot_queue_lost_total",
			"Redis queue entries gone before they were acknowledged (deleted or trimmed from the stream, unreadable, or the consumer group lost with Redis's data); the sweep catches their issues up. Alert on any increase."),
		open: newOpenIssuesCollector(b),
	}
	m.storeUp.Set(1)
	m.redeliveryPasses.WithLabelValues("ok")
	m.redeliveryPasses.WithLabelValues("error")
	for _, class := range statusClasses {
		m.apiStatus.WithLabelValues(class)
	}
	m.reg.MustRegister(b.collectors...)
	m.families = b.names
	slices.Sort(m.families)
	return m
}

// builder makes the collectors of New and keeps their family names, so
// Families needs no second list that could drift.
type builder struct {
	collectors []prometheus.Collector
	names      []string
}

func (b *builder) add(c prometheus.Collector, names ...string) {
	b.collectors = append(b.collectors, c)
	b.names = append(b.names, names...)
}

func (b *builder) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	b.add(c, name)
	return c
}

func (b *builder) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	b.add(c, name)
	return c
}

func (b *builder) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	b.add(g, name)
	return g
}

func (b *builder) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	b.add(g, name)
	return g
}

func (b *builder) histogram(name, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	b.add(h, name)
	return h
}

func (b *builder) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	b.add(h, name)
	return h
}

// desc makes a Desc of a collector's own and records its family name.
func (b *builder) desc(name, help string, labels ...string) *prometheus.Desc {
	b.names = append(b.names, name)
	return prometheus.NewDesc(name, help, labels, nil)
}

// Families returns the name of every family New registers, sorted (a
// histogram's series add _bucket, _sum and _count to its name). Tests use
// it to hold the docs and the alert rules to what is served.
func (m *Metrics) Families() []string { return slices.Clone(m.families) }

// Registry is the private registry, for callers adding their own collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
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

// JobStarted counts a job in flight until JobDone, and how long it
// waited in the queue before it started.
func (m *Metrics) JobStarted(waited time.Duration) {
	m.queueWait.Observe(max(0, waited).Seconds())
	m.inFlight.Inc()
}

// JobDone counts a finished job of event (or "sweep") with its outcome and
// duration. It is counted before in-flight drops, so "nothing in flight"
// implies every finished job is counted.
func (m *Metrics) JobDone(event, outcome string, took time.Duration) {
	m.jobs.WithLabelValues(event, outcome).Inc()
	m.latency.WithLabelValues(event, outcome).Observe(took.Seconds())
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

func newQueueCollector(b *builder) *queueCollector {
	c := &queueCollector{
		depth: b.desc("autopilot_queue_depth",
			"Jobs accepted and not yet started (with Redis: waiting here, plus queue entries no replica has read yet)."),
		length: b.desc("autopilot_queue_stream_length",
			"Deliveries in the Redis work queue not yet acknowledged (QUEUE_MAX bounds it)."),
		pending: b.desc("autopilot_queue_pending",
			"Redis work queue entries read by a replica and not yet acknowledged."),
		oldest: b.desc("autopilot_queue_oldest_pending_age_seconds",
			"Age of the oldest pending Redis work queue entry since it was queued (0: none)."),
	}
	b.add(c)
	return c
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
