package budget

import (
	"net/http"
	"strings"
	"testing"
)

// FuzzBucketOf: any x-ratelimit-* headers read as a bucket with a
// remaining of 0 or more and a resource this package budgets, or not at all.
func FuzzBucketOf(f *testing.F) {
	f.Add("5000", "4999", "1772442000", "core")
	f.Add("5000", "0", "1772442000", "graphql")
	f.Add("60", "-1", "x", "search")
	f.Add("", "", "", "")
	f.Fuzz(func(t *testing.T, limit, remaining, reset, resource string) {
		h := http.Header{}
		h.Set("X-RateLimit-Limit", limit)
		h.Set("X-RateLimit-Remaining", remaining)
		h.Set("X-RateLimit-Reset", reset)
		h.Set("X-RateLimit-Resource", resource)
		b, graphql, ok := bucketOf(h)
		if !ok {
			return
		}
		if b.Remaining < 0 {
			t.Fatalf("remaining %d from %q", b.Remaining, remaining)
		}
		if graphql && !strings.EqualFold(resource, "graphql") {
			t.Fatalf("graphql from resource %q", resource)
		}
	})
}
