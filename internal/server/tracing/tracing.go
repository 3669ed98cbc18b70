// Package tracing is the App server's OpenTelemetry traces: one trace per
// delivery, from the webhook intake (signature check, dedupe, enqueue)
// through the queue wait to the job, with each GitHub and tracker call a
// client span under the job. The trace context crosses the queue as a W3C
// traceparent string kept in the queued job (in process and in the Redis
// stream entry), so the replica that claims a delivery continues its trace.
//
// Traces are off unless OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set: FromEnv then returns a nil
// *Tracer, and every method of a nil Tracer is a no-op that allocates
// nothing (Transport returns the transport it was given).
//
// It must never be imported by the pure engine (internal/arch checks it),
// read a trace context from a webhook's headers (the sender's, not ours),
// or put a raw URL, a token or a payload text in a span: calls are named
// by their route template.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// The spans of a delivery's trace, by name. A GitHub or tracker call's
// span is named "<METHOD> <route template>".
const (
	SpanDelivery  = "delivery"       // the webhook request, root of the trace
	SpanVerify    = "intake.verify"  // body read, signature and headers checked
	SpanDedupe    = "intake.dedupe"  // in process: delivery id recorded, job queued
	SpanEnqueue   = "intake.enqueue" // Redis: id recorded and entry appended, one step
	SpanQueueWait = "queue.wait"     // from the enqueue to the claim by a worker
	SpanJob       = "job"            // the job: the pass or passes the delivery asks for
	SpanSweep     = "sweep"          // a timer sweep of one installation (its own trace)
)

// instrumentation is the tracer's name: this package.
const instrumentation = "github.com/autopilot-dev/autopilot/internal/server/tracing"

// Tracer starts the spans of deliveries and jobs. A nil *Tracer is off.
type Tracer struct {
	t    trace.Tracer
	prop propagation.TraceContext
}

// New is a Tracer on tp (nil: off). Tests pass an SDK provider with an
// in-memory recorder; FromEnv builds the exporting one.
func New(tp trace.TracerProvider) *Tracer {
	if tp == nil {
		return nil
	}
	return &Tracer{t: tp.Tracer(instrumentation)}
}

// noopSpan is what a nil Tracer hands out.
var noopSpan trace.Span = noop.Span{} // one interface value: returning it allocates nothing

// The environment FromEnv reads itself; the exporter reads the other
// OTEL_EXPORTER_OTLP_* variables (headers, timeout, compression,
// certificates), the SDK OTEL_TRACES_SAMPLER(_ARG), and the resource
// OTEL_RESOURCE_ATTRIBUTES.
const (
	envEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	envDisabled       = "OTEL_SDK_DISABLED"
	envServiceName    = "OTEL_SERVICE_NAME"
)

// FromEnv builds the Tracer `bot serve` uses: nil (off, no exporter built)
// unless OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// is set and OTEL_SDK_DISABLED is not "true"; otherwise an OTLP/HTTP
// (protobuf) exporter behind a batching processor, on the resource
// service.name "autopilot" (OTEL_SERVICE_NAME overrides) with version.
// shutdown flushes what is batched; call it once serving stopped. An
// endpoint that is not an http(s) URL, or a protocol other than
// http/protobuf, is an error naming the variable.
func FromEnv(ctx context.Context, getenv func(string) string, version string) (tr *Tracer, shutdown func(context.Context) error, err error) {
	off := func(context.Context) error { return nil }
	if strings.EqualFold(strings.TrimSpace(getenv(envDisabled)), "true") {
		return nil, off, nil
	}
	var opts []otlptracehttp.Option
	switch base, traces := strings.TrimSpace(getenv(envEndpoint)), strings.TrimSpace(getenv(envTracesEndpoint)); {
	case traces != "":
		if err := checkEndpoint(envTracesEndpoint, traces); err != nil {
			return nil, off, err
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(traces))
	case base != "":
		if err := checkEndpoint(envEndpoint, base); err != nil {
			return nil, off, err
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimRight(base, "/")+"/v1/traces"))
	default:
		return nil, off, nil
	}
	for _, k := range []string{envTracesProtocol, envProtocol} {
		if p := strings.TrimSpace(getenv(k)); p != "" && p != "http/protobuf" {
			return nil, off, fmt.Errorf("%s=%q: autopilot exports traces as OTLP over HTTP only; set it to http/protobuf "+
				"(the collector's port 4318) or unset it", k, p)
		}
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, off, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	detect := []resource.Option{
		resource.WithAttributes(attribute.String("service.name", "autopilot"), attribute.String("service.version", version)),
		resource.WithFromEnv(), resource.WithTelemetrySDK(),
	}
	if name := strings.TrimSpace(getenv(envServiceName)); name != "" {
		detect = append(detect, resource.WithAttributes(attribute.String("service.name", name)))
	}
	res, err := resource.New(ctx, detect...)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, off, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return New(tp), tp.Shutdown, nil
}

// checkEndpoint refuses an endpoint the exporter cannot use.
func checkEndpoint(name, v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s=%q: want the collector's OTLP/HTTP URL, such as http://otel-collector:4318", name, v)
	}
	return nil
}

// Delivery starts a webhook request's span: the root of a new trace,
// whatever span ctx holds (the request's headers are the sender's).
func (t *Tracer) Delivery(ctx context.Context) (context.Context, trace.Span) {
	if t == nil {
		return ctx, noopSpan
	}
	return t.t.Start(ctx, SpanDelivery, trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindServer))
}

// Step starts a span of the intake under the one ctx holds.
func (t *Tracer) Step(ctx context.Context, name string) (context.Context, trace.Span) {
	if t == nil {
		return ctx, noopSpan
	}
	return t.t.Start(ctx, name)
}

// Carry is the trace context of ctx's span as a W3C traceparent, to be
// queued with the job ("" when off or without a span).
func (t *Tracer) Carry(ctx context.Context) string {
	if t == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	t.prop.Inject(ctx, c)
	return c["traceparent"]
}

// Claimed resumes the trace carried with a job a worker just claimed: it
// records the queue wait, from enqueued (clamped to now) to now, under the
// carried span, and returns ctx with that span as the remote parent of the
// job's. A missing or malformed carrier resumes nothing: the job's span
// starts a trace of its own.
func (t *Tracer) Claimed(ctx context.Context, carried string, enqueued time.Time) context.Context {
	if t == nil || carried == "" {
		return ctx
	}
	pctx := t.prop.Extract(ctx, propagation.MapCarrier{"traceparent": carried})
	if !trace.SpanContextFromContext(pctx).IsValid() {
		return ctx
	}
	now := time.Now()
	if enqueued.IsZero() || enqueued.After(now) {
		enqueued = now
	}
	_, wait := t.t.Start(pctx, SpanQueueWait, trace.WithTimestamp(enqueued))
	wait.End(trace.WithTimestamp(now))
	return pctx
}

// Job starts the span of a job for event (a delivery's, under the span
// Claimed resumed) or of a sweep (event "sweep": a trace of its own).
func (t *Tracer) Job(ctx context.Context, event string) (context.Context, trace.Span) {
	if t == nil {
		return ctx, noopSpan
	}
	if event == "sweep" {
		return t.t.Start(ctx, SpanSweep, trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindConsumer))
	}
	return t.t.Start(ctx, SpanJob, trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attribute.String(keyEvent, event)))
}

// Attribute keys of the delivery and job spans.
const (
	keyEvent        = "github.event"
	keyAction       = "github.action"
	keyDelivery     = "github.delivery"
	keyInstallation = "github.installation_id"
	keyRepo         = "github.repository"
	keyIssue        = "github.issue"
	keyOutcome      = "autopilot.outcome"
	keyStatus       = "http.response.status_code"
	keyErrorType    = "error.type"
)

// Delivered names a delivery on its span (or a job's) once its headers
// are verified and its payload decoded; issue 0 is left out.
func Delivered(span trace.Span, event, action, delivery string, installation int64, repo string, issue int) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String(keyEvent, event), attribute.String(keyDelivery, delivery))
	if action != "" {
		span.SetAttributes(attribute.String(keyAction, action))
	}
	if installation != 0 {
		span.SetAttributes(attribute.Int64(keyInstallation, installation))
	}
	if repo != "" {
		span.SetAttributes(attribute.String(keyRepo, repo))
	}
	if issue != 0 {
		span.SetAttributes(attribute.Int(keyIssue, issue))
	}
}

// Swept names the installation a sweep span is for.
func Swept(span trace.Span, installation int64) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Int64(keyInstallation, installation))
	}
}

// Answered records the intake's answer on the delivery span: the status
// code and the outcome ("accepted", "duplicate", ...); a 5xx is an error.
func Answered(span trace.Span, code int, outcome string) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.Int(keyStatus, code), attribute.String(keyOutcome, outcome))
	if code >= 500 {
		span.SetStatus(codes.Error, outcome)
	}
}

// Finished records a job's outcome ("ok", "error", "dropped", "panic",
// "held") on its span, with the error when there is one; a sweep the
// GitHub budget held keeps its wait as an event, not an error status.
func Finished(span trace.Span, outcome string, err error) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String(keyOutcome, outcome))
	if outcome == "held" {
		if err != nil {
			span.RecordError(err)
		}
		return
	}
	if outcome != "ok" {
		msg := outcome
		if err != nil {
			span.RecordError(err)
			msg = err.Error()
		}
		span.SetStatus(codes.Error, msg)
	}
}
