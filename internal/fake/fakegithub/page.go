package fakegithub

import (
	"fmt"
	"strconv"
	"strings"
)

// Pagination as GitHub does it: per_page (default 30, at most 100), page
// (from 1), and a Link header with prev, next, last and first relations.

// pageBounds returns the slice bounds of the requested page over n items and
// the Link header value ("" when everything fits on one page).
func (s *Server) pageBounds(c *call, n int) (lo, hi int, link string) {
	per, _ := strconv.Atoi(c.query.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	page, _ := strconv.Atoi(c.query.Get("page"))
	page = max(page, 1)
	last := max(1, (n+per-1)/per)
	lo = min((page-1)*per, n)
	hi = min(lo+per, n)
	if last == 1 && page == 1 {
		return lo, hi, ""
	}
	ref := func(p int, rel string) string {
		q := c.r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, s.ts.URL, c.r.URL.EscapedPath(), q.Encode(), rel)
	}
	var rels []string
	if page > 1 {
		rels = append(rels, ref(min(page-1, last), "prev"))
	}
	if page < last {
		rels = append(rels, ref(page+1, "next"), ref(last, "last"))
	}
	if page > 1 {
		rels = append(rels, ref(1, "first"))
	}
	return lo, hi, strings.Join(rels, ", ")
}

// paged answers one page of items, rendering only that page.
func paged[T any](s *Server, c *call, items []T, render func(T) obj) reply {
	lo, hi, link := s.pageBounds(c, len(items))
	out := make([]obj, 0, hi-lo)
	for _, it := range items[lo:hi] {
		out = append(out, render(it))
	}
	rep := ok(out)
	if link != "" {
		rep.set("Link", link)
	}
	return rep
}
