package fakejira

import (
	"fmt"
	"strconv"
	"time"
)

// RetryAfterWindows checks a request log against Jira's politeness rule: no
// request may arrive inside the Retry-After window of an earlier answer. It
// returns how many windows the log holds and one line per request that
// broke one (or per Retry-After value that is not a number of seconds).
func RetryAfterWindows(log []Request) (windows int, broken []string) {
	for i, q := range log {
		v := q.Answer.Get("Retry-After")
		if v == "" {
			continue
		}
		secs, err := strconv.Atoi(v)
		if err != nil {
			broken = append(broken, fmt.Sprintf("request %d answered Retry-After %q", i, v))
			continue
		}
		windows++
		end := q.At.Add(time.Duration(secs) * time.Second)
		for _, later := range log[i+1:] {
			if later.At.Before(end) {
				broken = append(broken, fmt.Sprintf("%s %s at %s, %v inside the %ss Retry-After window answered at %s",
					later.Method, later.Path, later.At.Format("15:04:05.000"), end.Sub(later.At), v, q.At.Format("15:04:05.000")))
			}
		}
	}
	return windows, broken
}
