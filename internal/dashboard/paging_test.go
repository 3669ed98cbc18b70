package dashboard

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/dashboard/store"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// manyRows is a store of n issues over 7 repositories, every third one
// stopped.
func manyRows(n int) *store.Memory {
	m := store.NewMemory()
	for i := 1; i <= n; i++ {
		p := samplePass(func(s *state.State) {
			s.Issue, s.Repo, s.Title = i, fmt.Sprintf("octo-org/repo-%d", i%7), fmt.Sprintf("Issue %d", i)
			if i%3 == 0 {
				s.Run, s.Gate = state.RunStopped, nil
				s.Stop = &state.Stop{Reason: "max-hours-exceeded"}
			}
		})
		store.Updater{Store: m}.Passed(context.Background(), p)
	}
	return m
}

// TestListIsPagedServerSide: the list shows at most ListPageSize rows;
// the filters apply to every row before the page is cut, the summary
// counts all of them, and the pager's links keep the filters.
func TestListIsPagedServerSide(t *testing.T) {
	d := newDash(t, Options{Store: manyRows(250)})
	_, body := get(t, d, "/")
	if got := strings.Count(body, "<tr id="); got != ListPageSize {
		t.Errorf("page 1 has %d rows, want %d", got, ListPageSize)
	}
	for _, want := range []string{"250</b> of 250 open issues", "rows 1–100 of 250", `href="/?page=2"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page 1 lacks %q", want)
		}
	}
	_, body = get(t, d, "/?page=3")
	if got := strings.Count(body, "<tr id="); got != 50 {
		t.Errorf("page 3 has %d rows, want 50", got)
	}
	if !strings.Contains(body, "rows 201–250 of 250") || !strings.Contains(body, `href="/?page=2"`) || strings.Contains(body, `href="/?page=4"`) {
		t.Errorf("page 3's pager: %s", between(body, `<nav class="pager">`, "</nav>"))
	}
	_, body = get(t, d, "/?status=stopped&page=2")
	if !strings.Contains(body, "83</b> of 250 open issues") {
		t.Errorf("the stopped filter counts %s, want 83 of 250", between(body, `<p class="sum">`, "</p>"))
	}
	if strings.Count(body, "<tr id=") != 83 {
		t.Errorf("?page=2 of 83 rows shows %d rows, want the one page of 83", strings.Count(body, "<tr id="))
	}
	_, body = get(t, d, "/?repo=octo-org/repo-1&page=1")
	if strings.Contains(body, `<nav class="pager">`) {
		t.Error("a list that fits one page shows a pager")
	}
	_, body = get(t, newDash(t, Options{Store: manyRows(250)}), "/?status=awaiting-decision&page=2")
	if !strings.Contains(body, `href="/?page=1&amp;status=awaiting-decision"`) {
		t.Errorf("the pager drops the filter: %s", between(body, `<nav class="pager">`, "</nav>"))
	}
	for _, bad := range []string{"0", "-1", "x", "99999999999999999999"} {
		if code, body := get(t, d, "/?page="+bad); code != http.StatusOK || !strings.Contains(body, "rows 1–100 of 250") {
			t.Errorf("?page=%s = %d %s", bad, code, between(body, `<nav class="pager">`, "</nav>"))
		}
	}
}

// TestPagesAreCompressedForBrowsersThatAcceptGzip: a request accepting
// gzip gets the page gzip-compressed (and Vary says so); one that does
// not gets it plain.
func TestPagesAreCompressedForBrowsersThatAcceptGzip(t *testing.T) {
	d := newDash(t, Options{Store: manyRows(100)})
	for _, path := range []string{"/", "/health", "/issues/octo-org/repo-1/1"} {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Accept-Encoding", "gzip, deflate, br")
		rec := httptest.NewRecorder()
		d.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "gzip" || !strings.Contains(rec.Header().Get("Vary"), "Accept-Encoding") {
			t.Fatalf("%s: %d, Content-Encoding %q, Vary %q", path, rec.Code, rec.Header().Get("Content-Encoding"), rec.Header().Get("Vary"))
		}
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil || !strings.Contains(string(plain), "</html>") {
			t.Errorf("%s: gunzipped page %v %.100q", path, err, plain)
		}
		code, body := get(t, d, path)
		if code != http.StatusOK || !strings.Contains(body, "</html>") {
			t.Errorf("%s without gzip: %d %.100q", path, code, body)
		}
	}
}
