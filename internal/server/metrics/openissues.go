package metrics

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// OpenIssues is what the open autopilot issues wait for, read at scrape
// time from the dashboard's read model (shared by the replicas with Redis,
// so every replica reports the same figures).
type OpenIssues struct {
	// DecisionAges holds, per open decision (a Choose block waiting for a
	// person), how long it has waited.
	DecisionAges []time.Duration
	// TrackerTasks counts the tasks not yet in their tracker.
	TrackerTasks int
}

// ageBuckets are the age label's values of autopilot_decisions_waiting:
// each counts the decisions younger than its bound and not younger than
// the previous one's; the last has no bound.
var ageBuckets = []ageBucket{
	{"under_1h", time.Hour},
	{"1h_to_1d", 24 * time.Hour},
	{"1d_to_3d", 3 * 24 * time.Hour},
	{"3d_to_7d", 7 * 24 * time.Hour},
	{"over_7d", 0},
}

type ageBucket struct {
	label string
	below time.Duration // 0: no bound
}

// SetOpenIssues gives the scrape the read model's reader. Without one the
// three families are left out.
func (m *Metrics) SetOpenIssues(read func(context.Context) (OpenIssues, error)) {
	m.open.read.Store(&read)
}

// openIssuesCollector reports the decisions waiting by age bucket, the
// oldest one's age and the tracker backlog, read once per scrape.
type openIssuesCollector struct {
	read atomic.Pointer[func(context.Context) (OpenIssues, error)]

	waiting, oldest, backlog *prometheus.Desc
}

func newOpenIssuesCollector(b *builder) *openIssuesCollector {
	c := &openIssuesCollector{
		waiting: b.desc("autopilot_decisions_waiting",
			"Open decisions (Choose blocks waiting for a person), by age bucket (under_1h, 1h_to_1d, 1d_to_3d, 3d_to_7d, over_7d); the same on every replica.", "age"),
		oldest: b.desc("autopilot_decisions_oldest_wait_seconds",
			"How long the oldest open decision has waited (0: none); the same on every replica."),
		backlog: b.desc("autopilot_tracker_backlog",
			"Tasks of open issues not yet in their tracker (Jira, GitHub sub-issues); the same on every replica."),
	}
	b.add(c)
	return c
}

// Describe implements prometheus.Collector.
func (c *openIssuesCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.waiting
	ch <- c.oldest
	ch <- c.backlog
}

// Collect implements prometheus.Collector. When the read fails, nothing is
// reported: zeros would say "nothing waits".
func (c *openIssuesCollector) Collect(ch chan<- prometheus.Metric) {
	f := c.read.Load()
	if f == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	open, err := (*f)(ctx)
	cancel()
	if err != nil {
		return
	}
	counts := make([]int, len(ageBuckets))
	for _, age := range open.DecisionAges {
		i := slices.IndexFunc(ageBuckets, func(b ageBucket) bool { return b.below == 0 || age < b.below })
		counts[i]++
	}
	for i, b := range ageBuckets {
		ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, float64(counts[i]), b.label)
	}
	oldest := time.Duration(0)
	if len(open.DecisionAges) > 0 {
		oldest = max(0, slices.Max(open.DecisionAges))
	}
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, oldest.Seconds())
	ch <- prometheus.MustNewConstMetric(c.backlog, prometheus.GaugeValue, float64(open.TrackerTasks))
}
