// Package tracingtest records the spans a tracing.Tracer ends, for tests:
// the OpenTelemetry SDK's in-memory SpanRecorder behind a Tracer, and the
// look-ups the trace tests share. It is imported by tests only.
package tracingtest

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/autopilot-dev/autopilot/internal/server/tracing"
)

// Recorder is a Tracer (a replica's) whose ended spans the test reads.
type Recorder struct {
	*tracetest.SpanRecorder
	Tracer *tracing.Tracer
}

// New is a Recorder whose provider is shut down when the test ends.
func New(tb testing.TB) *Recorder {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	tb.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return &Recorder{SpanRecorder: sr, Tracer: tracing.New(tp)}
}

// Named returns the ended spans called name, in the order they ended.
func (r *Recorder) Named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range r.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// Attrs is a span's attributes, each value as a string.
func Attrs(s sdktrace.ReadOnlySpan) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// One returns the one ended span called name; it fails the test unless
// there is exactly one, naming the spans that ended.
func (r *Recorder) One(tb testing.TB, name string) sdktrace.ReadOnlySpan {
	tb.Helper()
	found := r.Named(name)
	if len(found) != 1 {
		var names []string
		for _, s := range r.Ended() {
			names = append(names, s.Name())
		}
		tb.Fatalf("%d spans named %q, want 1; ended: %q", len(found), name, names)
	}
	return found[0]
}
