package server

import "github.com/autopilot-dev/autopilot/internal/server/metrics"

// Metrics are the server's Prometheus metrics (package metrics). The alias
// and NewMetrics spare the callers that build a Server an import of
// metrics.
type Metrics = metrics.Metrics

// NewMetrics builds the metrics and their registry.
func NewMetrics() *Metrics { return metrics.New() }
