package dashboard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzSessionCookie: whatever a visitor sends as the session cookie, it
// is a signed-in user only when this dashboard sealed it: the only session
// ever sealed here is maria's, so any other user accepted is a forgery.
func FuzzSessionCookie(f *testing.F) {
	s := &SignIn{ClientID: "Iv1.x", ClientSecret: "secret", Now: func() time.Time { return time.Unix(1e9, 0) }}
	good, err := s.seal(session{Login: "maria", Token: "ghu_x", Expires: time.Unix(2e9, 0)})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add("")
	f.Add("eyJsb2dpbiI6Im1hcmlhIn0")
	f.Add(good[:len(good)-2] + "AA")
	f.Fuzz(func(t *testing.T, v string) {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: v})
		u, ok := s.user(req)
		if ok && (u.Login != "maria" || u.Token != "ghu_x") {
			t.Fatalf("a forged cookie %q signed in %+v", v, u)
		}
	})
}

// FuzzLocalPath: the page a sign-in returns to is always on this site.
func FuzzLocalPath(f *testing.F) {
	for _, s := range []string{"/", "/health", "//evil.example", "/\\evil.example", "https://evil.example", "javascript:alert(1)", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) {
		p := localPath(next)
		if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") {
			t.Fatalf("localPath(%q) = %q leaves the site", next, p)
		}
		req := httptest.NewRequest(http.MethodGet, "http://dash.example/", nil)
		rec := httptest.NewRecorder()
		http.Redirect(rec, req, p, http.StatusFound)
		if loc := rec.Header().Get("Location"); strings.HasPrefix(loc, "//") {
			t.Fatalf("redirect to %q leaves the site", loc)
		}
	})
}

// FuzzListQuery: whatever the list's query (page, filters, an
// Accept-Encoding), the page answers 200 with at most one page of rows,
// and a gzip answer is only sent to a request naming gzip.
func FuzzListQuery(f *testing.F) {
	d, err := New(Options{Store: manyRows(150), Now: func() time.Time { return now }})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []struct{ q, enc string }{{"page=2", "gzip"}, {"page=-1&status=stopped", "gzip;q=0"}, {"page=99999999999999999999", "br, GZIP;q=0.5"},
		{"repo=octo-org%2Frepo-1&page=1", ""}, {"page=2&page=3", "gzip;q=x"}} {
		f.Add(s.q, s.enc)
	}
	f.Fuzz(func(t *testing.T, query, enc string) {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL.RawQuery = query
		req.Header.Set("Accept-Encoding", enc)
		rec := httptest.NewRecorder()
		d.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("?%s = %d", query, rec.Code)
		}
		gz := rec.Header().Get("Content-Encoding") == "gzip"
		if gz && !strings.Contains(strings.ToLower(enc), "gzip") {
			t.Fatalf("gzip sent for Accept-Encoding %q", enc)
		}
		if !gz && strings.Count(rec.Body.String(), "<tr id=") > ListPageSize {
			t.Fatalf("?%s drew more than a page", query)
		}
	})
}
