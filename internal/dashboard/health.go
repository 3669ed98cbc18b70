package dashboard

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// Health reads the service's health from what the server already
// measures: its Prometheus registry (this replica's counters, and the
// shared Redis queue's gauges) and the recent error log lines. What the
// server does not measure is shown as "not measured", never guessed.
type Health struct {
	// Metrics is the server's registry (nil: nothing measured).
	Metrics prometheus.Gatherer
	// Errors keeps the recent error log lines (nil: not kept).
	Errors *ErrorLog
	// Waiting, when set, lists the installations whose background work
	// (the sweep) waits for the API budget (internal/budget's Waiting).
	Waiting func() []BudgetWait

	mu      sync.Mutex
	samples []sample // deliveries counter over time, for the rate
}

type sample struct {
	at         time.Time
	deliveries float64
}

// rateWindow is how far back the deliveries rate looks; minRateSpan is
// the shortest span it is computed over.
const (
	rateWindow  = 5 * time.Minute
	minRateSpan = 30 * time.Second
)

// HealthView is the health page's data.
type HealthView struct {
	Lines      []HealthLine
	Budgets    []Budget
	Errors     []LoggedError
	ErrorsKept bool
	// Shared: the queue figures are Redis's, shared by the replicas.
	Shared bool
}

// HealthLine is one figure; an empty Value is "not measured".
type HealthLine struct {
	Name, Value, Note string
}

// Budget is an installation's REST API budget as last seen.
type Budget struct {
	Installation string
	// Remaining is "4321 of 5000" (or "4321" when the limit is not known).
	Remaining string
	// Reset is when the budget refills, UTC ("" when not known).
	Reset string
	// Waiting says why and how long background work waits ("": it does not).
	Waiting string
}

// BudgetWait is an installation's background work held back by its budget.
type BudgetWait struct {
	Installation int64
	Until        time.Time
	// Why is the long reason (the health page's); Reason the short one
	// the issues show, in its Words ("interactive reserve", "budget
	// spent", "GitHub's Retry-After"; Why when empty).
	Why    string
	Reason state.HoldReason
}

// Text is what an issue of the installation shows: "⏳ sync waits for
// GitHub budget until 09:40 UTC (interactive reserve)".
func (w BudgetWait) Text() string {
	return fmt.Sprintf("⏳ sync waits for GitHub budget until %s (%s)", w.UntilUTC(), w.Words())
}

// Words is the short reason, else the long one.
func (w BudgetWait) Words() string {
	if w.Reason == "" {
		return w.Why
	}
	return w.Reason.Words()
}

// UntilUTC is Until for people, "16:40 UTC".
func (w BudgetWait) UntilUTC() string { return w.Until.UTC().Format("15:04") + " UTC" }

// budgets reads the REST (core) rate-limit gauges, one Budget per
// installation; other resources (GraphQL, search) have budgets of their
// own and are left to /metrics.
func budgets(fams map[string]*dto.MetricFamily) []Budget {
	core := func(name string) map[string]float64 {
		out := map[string]float64{}
		for _, m := range fams[name].GetMetric() {
			if r := label(m, "resource"); r == "" || r == "core" {
				out[label(m, "installation")] = value(m)
			}
		}
		return out
	}
	limits, resets := core("autopilot_github_rate_limit"), core("autopilot_github_rate_limit_reset_timestamp_seconds")
	var out []Budget
	for inst, left := range core("autopilot_github_rate_limit_remaining") {
		b := Budget{Installation: inst, Remaining: strconv.FormatInt(int64(left), 10)}
		if limit, ok := limits[inst]; ok {
			b.Remaining += " of " + strconv.FormatInt(int64(limit), 10)
		}
		if at, ok := resets[inst]; ok {
			b.Reset = time.Unix(int64(at), 0).UTC().Format("2006-01-02 15:04 UTC")
		}
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b Budget) int { return compareNumeric(a.Installation, b.Installation) })
	return out
}

// View gathers the figures now. A nil Health measures nothing.
func (h *Health) View(now time.Time) HealthView {
	var v HealthView
	var fams map[string]*dto.MetricFamily
	if h != nil && h.Metrics != nil {
		if got, err := h.Metrics.Gather(); err == nil || len(got) > 0 {
			fams = map[string]*dto.MetricFamily{}
			for _, f := range got {
				fams[f.GetName()] = f
			}
		}
	}
	num := func(name string) (float64, bool) {
		f := fams[name]
		if f == nil {
			return 0, false
		}
		total := 0.0
		for _, m := range f.GetMetric() {
			total += value(m)
		}
		return total, true
	}
	line := func(name, metric, note string, format func(float64) string) {
		l := HealthLine{Name: name, Note: note}
		if x, ok := num(metric); ok {
			l.Value = format(x)
		}
		v.Lines = append(v.Lines, l)
	}
	integer := func(x float64) string { return strconv.FormatInt(int64(x), 10) }
	line("queue length", "autopilot_queue_depth", "deliveries accepted and not yet started", integer)
	if _, ok := num("autopilot_queue_stream_length"); ok {
		v.Shared = true
	}
	line("oldest pending", "autopilot_queue_oldest_pending_age_seconds", "age of the oldest queue entry read and not acknowledged (Redis queue only)",
		func(x float64) string { return Age(time.Duration(x * float64(time.Second))) })
	line("claims", "autopilot_queue_claims_total", "entries taken over from a replica that stopped", integer)
	line("hand-backs", "autopilot_queue_handed_back_total", "entries given back at shutdown", integer)
	line("jobs running", "autopilot_jobs_in_flight", "", integer)
	rate := HealthLine{Name: "deliveries per minute", Note: "over the last minutes seen by this page"}
	if total, ok := num("autopilot_webhook_deliveries_total"); ok {
		rate.Value = h.rate(now, total)
		if rate.Value == "" {
			rate.Note = fmt.Sprintf("%d since start; the rate needs two looks %s apart", int64(total), minRateSpan)
		}
	}
	v.Lines = append(v.Lines, rate)
	if f := fams["autopilot_jobs_total"]; f != nil {
		failed := 0.0
		for _, m := range f.GetMetric() {
			if label(m, "outcome") == "error" || label(m, "outcome") == "panic" {
				failed += value(m)
			}
		}
		v.Lines = append(v.Lines, HealthLine{Name: "failed jobs", Value: integer(failed), Note: "since this replica started"})
	} else {
		v.Lines = append(v.Lines, HealthLine{Name: "failed jobs"})
	}
	v.Budgets = budgets(fams)
	if h != nil && h.Waiting != nil {
		v.Budgets = withWaits(v.Budgets, h.Waiting(), now)
	}
	slices.SortFunc(v.Budgets, func(a, b Budget) int { return compareNumeric(a.Installation, b.Installation) })
	if h != nil && h.Errors != nil {
		v.ErrorsKept = true
		v.Errors = h.Errors.Recent()
	}
	return v
}

// rate records the deliveries counter and returns the rate per minute
// over the samples of the last rateWindow ("" until they span minRateSpan).
func (h *Health) rate(now time.Time, total float64) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.samples = append(h.samples, sample{at: now, deliveries: total})
	h.samples = slices.DeleteFunc(h.samples, func(s sample) bool { return now.Sub(s.at) > rateWindow })
	first := h.samples[0]
	span := now.Sub(first.at)
	if span < minRateSpan || total < first.deliveries {
		return ""
	}
	return strconv.FormatFloat((total-first.deliveries)/span.Minutes(), 'f', 1, 64)
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func compareNumeric(a, b string) int {
	x, _ := strconv.ParseInt(a, 10, 64)
	y, _ := strconv.ParseInt(b, 10, 64)
	return int(min(max(x-y, -1), 1))
}

// ErrorLog keeps the newest error and warning lines that carry an error,
// for the health page. Wrap the server's log handler with Handler.
type ErrorLog struct {
	mu   sync.Mutex
	max  int
	errs []LoggedError
}

// LoggedError is one kept log line.
type LoggedError struct {
	At     time.Time
	Msg    string
	Detail string
}

// NewErrorLog keeps the newest n lines.
func NewErrorLog(n int) *ErrorLog { return &ErrorLog{max: n} }

// Recent returns the kept lines, newest first.
func (l *ErrorLog) Recent() []LoggedError {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Clone(l.errs)
	slices.Reverse(out)
	return out
}

func (l *ErrorLog) add(e LoggedError) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, e)
	if len(l.errs) > l.max {
		l.errs = l.errs[len(l.errs)-l.max:]
	}
}

// Handler wraps h: records at Error, and Warn records with an "err"
// attribute, are kept as well as passed on.
func (l *ErrorLog) Handler(h slog.Handler) slog.Handler { return &errorHandler{next: h, log: l} }

type errorHandler struct {
	next  slog.Handler
	log   *ErrorLog
	attrs []slog.Attr
}

func (e *errorHandler) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= slog.LevelWarn || e.next.Enabled(ctx, lv)
}

func (e *errorHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		var errText, detail string
		add := func(a slog.Attr) {
			if a.Key == "err" {
				errText = a.Value.String()
			} else if a.Key == "repo" || a.Key == "issue" || a.Key == "event" || a.Key == "installation" {
				detail += a.Key + "=" + a.Value.String() + " "
			}
		}
		for _, a := range e.attrs {
			add(a)
		}
		r.Attrs(func(a slog.Attr) bool { add(a); return true })
		if r.Level >= slog.LevelError || errText != "" {
			e.log.add(LoggedError{At: r.Time, Msg: r.Message, Detail: detail + errText})
		}
	}
	if !e.next.Enabled(ctx, r.Level) {
		return nil
	}
	return e.next.Handle(ctx, r)
}

func (e *errorHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &errorHandler{next: e.next.WithAttrs(as), log: e.log, attrs: append(slices.Clone(e.attrs), as...)}
}

func (e *errorHandler) WithGroup(name string) slog.Handler {
	return &errorHandler{next: e.next.WithGroup(name), log: e.log, attrs: e.attrs}
}

// withWaits adds each wait to its installation's row (a new row when the
// installation has no gauge yet).
func withWaits(rows []Budget, waits []BudgetWait, now time.Time) []Budget {
	for _, w := range waits {
		id := strconv.FormatInt(w.Installation, 10)
		text := fmt.Sprintf("background work waits %s: %s", w.Until.Sub(now).Round(time.Second), w.Why)
		i := slices.IndexFunc(rows, func(b Budget) bool { return b.Installation == id })
		if i < 0 {
			rows = append(rows, Budget{Installation: id, Remaining: "—"})
			i = len(rows) - 1
		}
		rows[i].Waiting = text
	}
	return rows
}
