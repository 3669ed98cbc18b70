package fakegithub

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
)

// FuzzServeHTTP throws arbitrary requests at a seeded fake: it must never
// panic, must answer a real status, and JSON answers must be valid JSON.
func FuzzServeHTTP(f *testing.F) {
	seeds := []struct{ method, path, body string }{
		{"GET", "/repos/octo/repo/issues/1", ""},
		{"PATCH", "/repos/octo/repo/issues/1", `{"state":"closed","labels":["a"]}`},
		{"POST", "/repos/octo/repo/issues/1/comments", `{"body":"A"}`},
		{"PATCH", "/repos/octo/repo/issues/comments/1003", `{"body":"B"}`},
		{"POST", "/repos/octo/repo/issues/comments/1003/reactions", `{"content":"eyes"}`},
		{"POST", "/repos/octo/repo/issues/1/labels", `{"labels":[{"name":"x"},"y"]}`},
		{"PUT", "/repos/octo/repo/issues/1/labels", `["z"]`},
		{"DELETE", "/repos/octo/repo/issues/1/labels/a%2Fb", ""},
		{"GET", "/repos/octo/repo/issues?labels=a,b&state=all&per_page=1&page=2", ""},
		{"GET", "/api/v3/repos/octo/repo/contents/dir/../x", ""},
		{"POST", "/repos/octo/repo/actions/workflows/a.yml/dispatches", `{"ref":"main","inputs":{"session":1},"return_run_details":true}`},
		{"GET", "/repos/octo/repo/actions/workflows/a.yml/runs?created=2026-01-01..2026-12-31", ""},
		{"POST", "/repos/octo/repo/pulls/2/reviews", `{"event":"APPROVE"}`},
		{"GET", "/app", ""},
		{"GET", "/repos/octo/repo/collaborators/alice/permission", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.body)
	}
	f.Fuzz(func(t *testing.T, method, target, body string) {
		u, err := url.Parse(target)
		if err != nil || !strings.HasPrefix(u.Path, "/") {
			return
		}
		s := New(Options{Clock: fakeclock.New(epoch).Now})
		defer s.Close()
		if s.AddRepo(testRepo) != nil {
			t.Fatal("seed repo")
		}
		s.AddToken(humanTok, Identity{Login: "alice"})
		if _, err := s.CreateIssue(testRepo, "alice", "t", "b", []string{"a"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CreatePull(testRepo, "bob", "p", "", "f", "sha"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddComment(testRepo, 1, "bob", "hi"); err != nil {
			t.Fatal(err)
		}
		req := &http.Request{Method: method, URL: u, Header: http.Header{"Authorization": {"token " + humanTok}},
			Body: http.NoBody}
		if body != "" {
			req.Body = &readCloser{strings.NewReader(body)}
		}
		req = req.WithContext(t.Context())
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code < 200 || rec.Code > 599 {
			t.Fatalf("%s %s: status %d", method, target, rec.Code)
		}
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") && rec.Body.Len() > 0 && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s %s: invalid JSON %q", method, target, rec.Body.String())
		}
		if n := len(s.Requests()); n != 1 {
			t.Fatalf("logged %d requests, want 1", n)
		}
	})
}

type readCloser struct{ *strings.Reader }

func (readCloser) Close() error { return nil }
