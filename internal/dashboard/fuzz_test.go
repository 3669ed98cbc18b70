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
