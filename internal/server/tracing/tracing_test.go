package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/server/tracing"
	"github.com/autopilot-dev/autopilot/internal/server/tracing/tracingtest"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// recorded is a Tracer whose ended spans the test reads.
func recorded(t *testing.T) (*tracing.Tracer, *tracingtest.Recorder) {
	r := tracingtest.New(t)
	return r.Tracer, r
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestFromEnvIsOffWithoutAnEndpoint: without OTEL_EXPORTER_OTLP_ENDPOINT
// no exporter is built, the Tracer is nil, and a nil Tracer hands out
// no-op spans, carries nothing and leaves a transport as it is.
func TestFromEnvIsOffWithoutAnEndpoint(t *testing.T) {
	for _, e := range []map[string]string{
		{},
		{"OTEL_SERVICE_NAME": "autopilot"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "true"},
	} {
		tr, shutdown, err := tracing.FromEnv(context.Background(), env(e), "test")
		if err != nil || tr != nil {
			t.Fatalf("%v: tracing.FromEnv = %v, %v; want nil, nil", e, tr, err)
		}
		if err := shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var off *tracing.Tracer
	ctx, span := off.Delivery(context.Background())
	if span.IsRecording() || span.SpanContext().IsValid() {
		t.Error("a nil Tracer's delivery span records")
	}
	if c := off.Carry(ctx); c != "" {
		t.Errorf("a nil Tracer carries %q", c)
	}
	if ctx := off.Claimed(ctx, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", time.Now()); trace.SpanContextFromContext(ctx).IsValid() {
		t.Error("a nil Tracer resumed a trace")
	}
	next := http.DefaultTransport
	if got := off.Transport(next, tracing.GitHub); got != next {
		t.Error("a nil Tracer wrapped the transport")
	}
}

// TestFromEnvRefusesWhatItCannotUse: an endpoint that is not an http(s)
// URL, or a protocol other than http/protobuf, is a configuration error
// naming the variable and what to set.
func TestFromEnvRefusesWhatItCannotUse(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://collector"}, "http://"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://"}, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
	}
	for _, tt := range tests {
		_, _, err := tracing.FromEnv(context.Background(), env(tt.env), "test")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want one naming %s", tt.env, err, tt.want)
		}
	}
}

// TestFromEnvExportsOTLPOverHTTP: with an endpoint, spans reach it as
// OTLP/HTTP protobuf at /v1/traces (the standard path appended to
// OTEL_EXPORTER_OTLP_ENDPOINT), with OTEL_SERVICE_NAME as service.name, by
// the time shutdown returns.
func TestFromEnvExportsOTLPOverHTTP(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	var body []byte
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+r.Header.Get("X-Token"))
		body = append(body, b...)
		mu.Unlock()
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-token=s3cret")
	e := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL, "OTEL_SERVICE_NAME": "autopilot-test"}
	tr, shutdown, err := tracing.FromEnv(context.Background(), env(e), "v9")
	if err != nil || tr == nil {
		t.Fatalf("tracing.FromEnv = %v, %v", tr, err)
	}
	_, span := tr.Delivery(context.Background())
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paths) != 1 || paths[0] != "POST /v1/traces application/x-protobuf s3cret" {
		t.Fatalf("collector got %q, want one POST /v1/traces of protobuf with the header", paths)
	}
	for _, want := range []string{"autopilot-test", tracing.SpanDelivery, "v9"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("exported spans lack %q", want)
		}
	}
}

// TestCarriedContextContinuesTheTrace: what Carry puts in a queue entry
// lets another replica (another provider) record the queue wait from the
// enqueue time and run the job in the same trace, under the delivery span.
func TestCarriedContextContinuesTheTrace(t *testing.T) {
	a, srA := recorded(t)
	b, srB := recorded(t)
	ctx, root := a.Delivery(context.Background())
	carried := a.Carry(ctx)
	root.End()
	if !strings.HasPrefix(carried, "00-"+root.SpanContext().TraceID().String()+"-") {
		t.Fatalf("Carry = %q, want a traceparent of trace %s", carried, root.SpanContext().TraceID())
	}
	enqueued := time.Now().Add(-time.Second)
	jctx, job := b.Job(b.Claimed(context.Background(), carried, enqueued), "issues")
	job.End()
	_ = jctx
	wait, run := srB.One(t, tracing.SpanQueueWait), srB.One(t, tracing.SpanJob)
	delivery := srA.One(t, tracing.SpanDelivery)
	for _, s := range []sdktrace.ReadOnlySpan{wait, run} {
		if s.SpanContext().TraceID() != delivery.SpanContext().TraceID() || s.Parent().SpanID() != delivery.SpanContext().SpanID() {
			t.Errorf("%s: trace %s parent %s, want trace %s parent %s", s.Name(), s.SpanContext().TraceID(), s.Parent().SpanID(),
				delivery.SpanContext().TraceID(), delivery.SpanContext().SpanID())
		}
	}
	if !wait.StartTime().Equal(enqueued) || wait.EndTime().Before(enqueued.Add(time.Second)) {
		t.Errorf("queue wait %s..%s, want from the enqueue time %s to the claim", wait.StartTime(), wait.EndTime(), enqueued)
	}
	// A missing or forged carrier starts a trace of the job's own.
	for _, c := range []string{"", "00-zz-yy-01", "garbage"} {
		_, s := b.Job(b.Claimed(context.Background(), c, time.Now()), "issues")
		s.End()
		if sc := s.SpanContext(); !sc.IsValid() || sc.TraceID() == delivery.SpanContext().TraceID() {
			t.Errorf("carrier %q: job span %v, want a new valid trace", c, sc)
		}
	}
}

// TestDeliveryIgnoresAnIncomingTraceparent: a webhook's headers are the
// sender's; a traceparent among them never joins the delivery to a trace
// the sender chose.
func TestDeliveryIgnoresAnIncomingTraceparent(t *testing.T) {
	tr, _ := recorded(t)
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)
	_, span := tr.Delivery(ctx)
	span.End()
	if span.SpanContext().TraceID() == parent.TraceID() {
		t.Error("the delivery joined the incoming trace")
	}
}

// TestOffAllocatesNothing: with traces off (a nil Tracer) the spans of a
// delivery and its job cost no allocation.
func TestOffAllocatesNothing(t *testing.T) {
	var off *tracing.Tracer
	ctx := context.Background()
	n := testing.AllocsPerRun(100, func() {
		c, root := off.Delivery(ctx)
		_, step := off.Step(c, tracing.SpanVerify)
		step.End()
		tracing.Delivered(root, "issues", "labeled", "d", 1, "o/r", 2)
		tracing.Answered(root, 202, "accepted")
		root.End()
		j, job := off.Job(off.Claimed(c, off.Carry(c), time.Time{}), "issues")
		tracing.Finished(job, "ok", nil)
		job.End()
		_ = j
	})
	if n != 0 {
		t.Errorf("%v allocations per delivery with traces off, want 0", n)
	}
}
