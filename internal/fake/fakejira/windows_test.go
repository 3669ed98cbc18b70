package fakejira

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRetryAfterWindows(t *testing.T) {
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	ra := func(v string) http.Header { return http.Header{"Retry-After": {v}} }
	log := []Request{
		{Method: "POST", Path: "/bulk", At: t0, Answer: ra("30")},
		{Method: "GET", Path: "/search", At: t0.Add(10 * time.Second)}, // inside
		{Method: "POST", Path: "/bulk", At: t0.Add(31 * time.Second)},  // after
		{Method: "GET", Path: "/search", At: t0.Add(40 * time.Second), Answer: ra("soon")},
	}
	windows, broken := RetryAfterWindows(log)
	if windows != 1 || len(broken) != 2 {
		t.Fatalf("windows %d, broken %q; want 1 and 2 lines", windows, broken)
	}
	if !strings.Contains(broken[0], "GET /search") || !strings.Contains(broken[1], `"soon"`) {
		t.Errorf("broken %q", broken)
	}
	if w, b := RetryAfterWindows(log[2:3]); w != 0 || len(b) != 0 {
		t.Errorf("a log without answers: %d windows, %q", w, b)
	}
}
