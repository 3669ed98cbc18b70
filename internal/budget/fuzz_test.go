package budget

import (
	"net/http"
	"strconv"
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

// FuzzRecordOf: any hash read back from Redis (or answered by the merge
// script) is a record: a bucket is kept only when its limit, remaining and
// reset all parse, and is blank (remaining -1) otherwise.
func FuzzRecordOf(f *testing.F) {
	f.Add("5000", "4999", "1772442000", "1772442000123")
	f.Add("5000", "x", "1772442000", "")
	f.Add("", "", "", "-1")
	f.Fuzz(func(t *testing.T, limit, remaining, reset, notBefore string) {
		rec := recordOf(map[string]string{"cl": limit, "cr": remaining, "ct": reset, "nb": notBefore})
		_, err1 := strconv.ParseInt(limit, 10, 64)
		_, err2 := strconv.ParseInt(remaining, 10, 64)
		_, err3 := strconv.ParseInt(reset, 10, 64)
		if parsed := err1 == nil && err2 == nil && err3 == nil; !parsed && rec.Core.Remaining != -1 {
			t.Fatalf("core %+v from %q %q %q, want blank", rec.Core, limit, remaining, reset)
		}
		if rec.GraphQL.Remaining != -1 {
			t.Fatalf("graphql %+v from a hash without g* fields", rec.GraphQL)
		}
	})
}
