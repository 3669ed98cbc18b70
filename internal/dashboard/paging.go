package dashboard

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// ListPageSize is how many issues the list shows per page. The filters
// apply to every row first; the page is cut from what they kept, so the
// browser lays out at most this many rows however many issues are open.
const ListPageSize = 100

// pager is the list's place in the rows shown: rows From–To of Of, with
// the links to the previous and next page (filters kept; "" at an end).
type pager struct {
	From, To, Of int
	Prev, Next   string
}

// cut reads ?page= (1 when absent or not a number, the last page past the
// end) and returns the half-open range of the n rows shown to draw,
// setting p.Pager when they span more than one page.
func (p *listPage) cut(q url.Values, n int) (from, to int) {
	pages := max(1, (n+ListPageSize-1)/ListPageSize)
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil || page < 1 {
		page = 1
	}
	page = min(page, pages)
	from, to = (page-1)*ListPageSize, min(page*ListPageSize, n)
	if pages == 1 {
		return from, to
	}
	link := func(page int) string {
		q.Set("page", strconv.Itoa(page))
		return "/?" + q.Encode()
	}
	p.Pager = &pager{From: from + 1, To: to, Of: n}
	if page > 1 {
		p.Pager.Prev = link(page - 1)
	}
	if page < pages {
		p.Pager.Next = link(page + 1)
	}
	return from, to
}

// gzips reuses gzip writers across responses.
var gzips = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return zw
}}

// compressed returns where to write r's page: w itself, or a gzip stream
// on it when the browser accepts gzip; done flushes and releases it. The
// list's thousand rows are text that compresses about tenfold.
func compressed(w http.ResponseWriter, r *http.Request) (out io.Writer, done func() error) {
	w.Header().Add("Vary", "Accept-Encoding")
	if !acceptsGzip(r.Header.Get("Accept-Encoding")) {
		return w, func() error { return nil }
	}
	w.Header().Set("Content-Encoding", "gzip")
	zw := gzips.Get().(*gzip.Writer)
	zw.Reset(w)
	return zw, func() error {
		err := zw.Close()
		gzips.Put(zw)
		return err
	}
}

// acceptsGzip reports whether an Accept-Encoding header accepts gzip (not
// refused with q=0).
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		if !ok {
			return true
		}
		v, err := strconv.ParseFloat(q, 64)
		return err == nil && v > 0
	}
	return false
}
