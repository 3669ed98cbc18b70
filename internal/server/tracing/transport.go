package tracing

import (
	"fmt"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of a call's span.
const (
	keyMethod   = "http.request.method"
	keyTemplate = "url.template"
	keyServer   = "server.address"
	keyAPI      = "autopilot.api"
	keyRetry    = "http.retry_after"
)

// rateHeaders are GitHub's x-ratelimit-* answer headers and their span
// attributes (numbers as ints, the resource as a string).
var rateHeaders = []struct {
	header, key string
	number      bool
}{
	{"X-RateLimit-Limit", "github.ratelimit.limit", true},
	{"X-RateLimit-Remaining", "github.ratelimit.remaining", true},
	{"X-RateLimit-Used", "github.ratelimit.used", true},
	{"X-RateLimit-Reset", "github.ratelimit.reset", true},
	{"X-RateLimit-Resource", "github.ratelimit.resource", false},
}

// Transport wraps next so that each request sent through it is a client
// span under the span of its context: named "<METHOD> <route template>",
// with the method, template, host, the status answered and GitHub's rate
// headers (and Retry-After) as attributes; a 4xx or 5xx, or no answer, is
// an error. Put it where each attempt is sent (under the GitHub adapter's
// retrying transport, which strips the rate headers it reads), so a retry
// is a span of its own. A nil Tracer returns next itself.
func (t *Tracer) Transport(next http.RoundTripper, api API) http.RoundTripper {
	if t == nil {
		return next
	}
	if next == nil {
		next = http.DefaultTransport
	}
	return &transport{t: t, next: next, api: api}
}

type transport struct {
	t    *Tracer
	next http.RoundTripper
	api  API
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	route := Route(tr.api, req.URL.Path)
	ctx, span := tr.t.t.Start(req.Context(), req.Method+" "+route, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String(keyMethod, req.Method), attribute.String(keyTemplate, route),
			attribute.String(keyServer, req.URL.Hostname()), attribute.String(keyAPI, string(tr.api))))
	defer span.End()
	resp, err := tr.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		span.SetAttributes(attribute.String(keyErrorType, fmt.Sprintf("%T", err)))
		span.SetStatus(codes.Error, err.Error())
		return resp, err
	}
	span.SetAttributes(attribute.Int(keyStatus, resp.StatusCode))
	for _, h := range rateHeaders {
		v := resp.Header.Get(h.header)
		if v == "" {
			continue
		}
		if !h.number {
			span.SetAttributes(attribute.String(h.key, v))
		} else if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			span.SetAttributes(attribute.Int64(h.key, n))
		}
	}
	if v := resp.Header.Get("Retry-After"); v != "" {
		span.SetAttributes(attribute.String(keyRetry, v))
	}
	if resp.StatusCode >= 400 {
		code := strconv.Itoa(resp.StatusCode)
		span.SetAttributes(attribute.String(keyErrorType, code))
		span.SetStatus(codes.Error, code)
	}
	return resp, nil
}
