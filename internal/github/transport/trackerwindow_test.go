package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

// TestTrackerWindowIsTheTrackers: a secondary limit answered to a tracker
// request (Op.NoWait) is returned at once and holds the later tracker
// requests only; the flow's own requests (here the state comment's PATCH)
// go on. A limit answered to a flow request holds every request.
func TestTrackerWindowIsTheTrackers(t *testing.T) {
	var sent []string
	limitNext := map[string]bool{"POST sub-issue": true}
	tr := New(Config{
		Next: rtFunc(func(r *http.Request) (*http.Response, error) {
			kind := opFrom(r).Kind
			sent = append(sent, kind)
			if limitNext[kind] {
				delete(limitNext, kind)
				h := http.Header{}
				h.Set("Retry-After", "120")
				return &http.Response{StatusCode: 403, Header: h, Body: io.NopCloser(bytes.NewReader(secondaryLimitBody)), Request: r}, nil
			}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader([]byte(`{}`))), Request: r}, nil
		}),
		Now:   func() time.Time { return epoch },
		Sleep: func(context.Context, time.Duration) error { return nil },
		Rand:  func() float64 { return 0 }, Log: slog.New(slog.DiscardHandler),
		MaxWait: time.Minute, MaxRetries: 3, Timeout: time.Second,
	})
	do := func(o Op, method string) error {
		req, _ := http.NewRequestWithContext(WithOp(context.Background(), o), method, "https://api.github.com/repos/o/r/issues/1", nil)
		resp, err := tr.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	var rl *forge.RateLimitError
	if err := do(Op{Kind: "POST sub-issue", NoWait: true}, http.MethodPost); !errors.As(err, &rl) || !rl.Until.Equal(epoch.Add(120*time.Second)) {
		t.Fatalf("limited link: %v, want a rate limit until +120 s", err)
	}
	if err := do(Op{Kind: "POST issue", NoWait: true}, http.MethodPost); !errors.As(err, &rl) {
		t.Errorf("tracker create inside the window: %v, want a rate limit", err)
	}
	if err := do(Op{Kind: "PATCH comment"}, http.MethodPatch); err != nil {
		t.Errorf("state write inside the tracker's window: %v, want it sent", err)
	}
	want := []string{"POST sub-issue", "PATCH comment"}
	if len(sent) != len(want) || sent[0] != want[0] || sent[1] != want[1] {
		t.Errorf("sent %v, want %v", sent, want)
	}

	limitNext["PATCH comment"] = true
	if err := do(Op{Kind: "PATCH comment", NoRetry: true}, http.MethodPatch); !errors.As(err, &rl) {
		t.Errorf("limited flow request: %v, want a rate limit (window 120 s > MaxWait)", err)
	}
	if err := do(Op{Kind: "GET comments"}, http.MethodGet); !errors.As(err, &rl) {
		t.Errorf("flow read inside the shared window: %v, want a rate limit", err)
	}
}
