package transport

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

var epoch = time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)

// GitHub's answers to a secondary limit, a spent primary budget and a plain
// permission refusal (bodies as documented).
var (
	secondaryLimitBody = []byte(`{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`)
	primaryLimitBody   = []byte(`{"message":"API rate limit exceeded for installation ID 1234.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`)
	forbiddenBody      = []byte(`{"message":"Resource not accessible by integration","status":"403"}`)
	notFoundBody       = []byte(`{"message":"Not Found"}`)
)

func unix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

func TestClassifyLimit(t *testing.T) {
	now := epoch
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	tests := []struct {
		name      string
		status    int
		header    http.Header
		body      []byte
		streak    int
		ok        bool
		wait      time.Duration
		secondary bool
	}{
		{"forbidden", 403, h(), forbiddenBody, 0, false, 0, false},
		{"not found", 404, h("Retry-After", "5"), notFoundBody, 0, false, 0, false},
		{"retry-after seconds", 403, h("Retry-After", "7"), secondaryLimitBody, 0, true, 7 * time.Second, true},
		{"retry-after date", 429, h("Retry-After", now.Add(90*time.Second).Format(http.TimeFormat)), nil, 0, true, 90 * time.Second, true},
		{"primary with reset", 403, h("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", unix(now.Add(time.Minute))), primaryLimitBody, 0, true, time.Minute, false},
		{"primary reset already past", 403, h("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", unix(now.Add(-time.Minute))), primaryLimitBody, 0, true, time.Second, false},
		{"secondary no header", 403, h(), secondaryLimitBody, 0, true, time.Minute, true},
		{"secondary no header third time", 403, h(), secondaryLimitBody, 2, true, 4 * time.Minute, true},
		{"abuse wording", 403, h(), []byte(`{"message":"You have triggered an abuse detection mechanism."}`), 0, true, time.Minute, true},
		{"bare 429", 429, h(), nil, 0, true, time.Minute, true},
		{"absurd retry-after is capped", 429, h("Retry-After", "99999999999"), nil, 0, true, maxLimitWait, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := classifyLimit(tt.status, tt.header, tt.body, now, tt.streak)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if got := l.until.Sub(now); got != tt.wait || l.secondary != tt.secondary {
				t.Errorf("wait %v secondary %v, want %v %v", got, l.secondary, tt.wait, tt.secondary)
			}
		})
	}
}

func FuzzClassifyLimit(f *testing.F) {
	f.Add(403, "60", "", "", string(secondaryLimitBody), 0)
	f.Add(403, "", "0", "1717243260", string(primaryLimitBody), 1)
	f.Add(429, "Sat, 01 Jun 2024 12:01:00 GMT", "", "", "", 3)
	f.Add(403, "", "", "", string(forbiddenBody), 0)
	f.Fuzz(func(t *testing.T, status int, retryAfter, remaining, reset, body string, streak int) {
		h := http.Header{}
		h.Set("Retry-After", retryAfter)
		h.Set("X-RateLimit-Remaining", remaining)
		h.Set("X-RateLimit-Reset", reset)
		if streak < 0 {
			streak = -streak
		}
		l, ok := classifyLimit(status, h, []byte(body), epoch, streak%64)
		if !ok {
			return
		}
		if status != 403 && status != 429 {
			t.Fatalf("status %d classified as a rate limit", status)
		}
		if l.until.Before(epoch) || l.until.After(epoch.Add(maxLimitWait)) {
			t.Fatalf("until %v outside [now, now+%v]", l.until, maxLimitWait)
		}
	})
}
