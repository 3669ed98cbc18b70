package transport

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// secondaryBaseWait is the wait after a secondary rate limit that carries no
// retry-after or reset header: GitHub asks for "at least one minute", doubled
// each time the limit repeats.
const secondaryBaseWait = time.Minute

// maxLimitWait caps a computed wait so a hostile or broken header cannot
// produce an absurd window.
const maxLimitWait = 24 * time.Hour

// limit describes a rate-limit answer: no request may be sent before until.
type limit struct {
	until     time.Time
	secondary bool
	// headerless is true when the wait was not given by the server and was
	// derived from the secondary back-off (the streak doubles it).
	headerless bool
	msg        string
}

// errorMessage extracts GitHub's {"message": ...} from an error body; it
// returns "" when the body is not such an object.
func errorMessage(body []byte) string {
	var m struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	return m.Message
}

// classifyLimit decides whether a 403/429 answer is a rate limit and, if so,
// until when. streak is how many header-less secondary limits came right
// before this one (0 for the first): the default wait doubles with it.
// A 403 without rate-limit headers whose message does not speak of rate
// limits is a plain "forbidden" and yields ok=false.
func classifyLimit(status int, h http.Header, body []byte, now time.Time, streak int) (l limit, ok bool) {
	if status != http.StatusForbidden && status != http.StatusTooManyRequests {
		return limit{}, false
	}
	msg := errorMessage(body)
	lower := strings.ToLower(msg)
	secondaryMsg := strings.Contains(lower, "secondary rate limit") || strings.Contains(lower, "abuse")
	exhausted := strings.TrimSpace(h.Get("X-RateLimit-Remaining")) == "0"
	l.msg = msg

	if d, ok := parseRetryAfter(h.Get("Retry-After"), now); ok {
		l.until = now.Add(clampWait(d))
		l.secondary = secondaryMsg || !exhausted
		return l, true
	}
	if exhausted {
		l.secondary = secondaryMsg
		if reset, ok := parseReset(h.Get("X-RateLimit-Reset")); ok && reset.After(now) {
			l.until = now.Add(clampWait(reset.Sub(now)))
		} else {
			// Reset missing or already past by our clock: the server still
			// refused, so give it a moment rather than hammering.
			l.until = now.Add(time.Second)
		}
		return l, true
	}
	if secondaryMsg || status == http.StatusTooManyRequests || strings.Contains(lower, "rate limit") {
		if streak > 10 {
			streak = 10
		}
		l.until = now.Add(clampWait(secondaryBaseWait << streak))
		l.secondary = true
		l.headerless = true
		return l, true
	}
	return limit{}, false
}

// parseRetryAfter reads a Retry-After value: delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(maxLimitWait/time.Second) {
			return maxLimitWait, true
		}
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// parseReset reads x-ratelimit-reset (UTC epoch seconds).
func parseReset(v string) (time.Time, bool) {
	secs, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || secs <= 0 {
		return time.Time{}, false
	}
	return time.Unix(secs, 0), true
}

func clampWait(d time.Duration) time.Duration {
	if d > maxLimitWait {
		return maxLimitWait
	}
	if d < 0 {
		return 0
	}
	return d
}
