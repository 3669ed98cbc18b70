package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/autopilot-dev/autopilot/internal/server/tracing"
)

// BenchmarkIntakeHandler measures the webhook handler alone (signature,
// decode, dedupe, queue; no network, no worker) for one labeled-issue
// delivery: with traces off (a nil Tracer: what `bot serve` runs without
// OTEL_EXPORTER_OTLP_ENDPOINT) and on (the SDK with a batching processor
// to an exporter that drops the spans).
func BenchmarkIntakeHandler(b *testing.B) {
	d := issueDelivery(b, "", 7)
	sign := Sign([]byte(testSecret), d.body)
	run := func(b *testing.B, tr *tracing.Tracer) {
		cfg := testConfig()
		cfg.QueueSize = b.N + 1
		s, err := New(cfg, Deps{Processor: newRecorder(), Logger: slog.New(slog.DiscardHandler), Tracer: tr})
		if err != nil {
			b.Fatal(err)
		}
		h := s.Handler()
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			req := httptest.NewRequest(http.MethodPost, cfg.WebhookPath, bytes.NewReader(d.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-GitHub-Event", d.event)
			req.Header.Set("X-GitHub-Delivery", "bench-"+strconv.Itoa(i))
			req.Header.Set("X-Hub-Signature-256", sign)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusAccepted {
				b.Fatalf("delivery %d: %d %s", i, w.Code, w.Body)
			}
		}
	}
	b.Run("traces=off", func(b *testing.B) { run(b, nil) })
	b.Run("traces=on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		run(b, tracing.New(tp))
	})
}
