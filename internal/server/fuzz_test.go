package server

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/server/settings"
)

// FuzzIntake throws random bodies and headers at the intake path: it must
// never panic, only answer the documented codes, and accept (202) nothing
// whose signature does not verify.
func FuzzIntake(f *testing.F) {
	for _, name := range []string{"issues.labeled", "issue_comment.created", "ping", "pull_request_review.submitted", "workflow_run.completed"} {
		p := payload(f, name)
		f.Add(p.Event, p.Body, true, "application/json", "d-"+name)
		f.Add(p.Event, p.Body[:len(p.Body)/3], true, "application/json", "t-"+name)
	}
	f.Add("issues", []byte(`{"action":"labeled","issue":{"number":-1},"repository":{"full_name":"a/b"}}`), true, "application/json", "neg")
	f.Add("issue_comment", []byte(`{"action":"created","issue":{"number":1},"comment":{"id":"x"}}`), true, "application/json; charset=utf-8", "type")
	f.Add("issues", []byte(`{}`), false, "application/json", "unsigned")
	f.Add("", []byte(`null`), true, "text/plain", "")

	rec := newRecorder()
	cfg := testConfig()
	cfg.QueueSize = 1 << 20 // never full: every signed, handled body is queued
	s, err := New(cfg, Deps{Processor: rec, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), BotLogin: "autopilot[bot]"})
	if err != nil {
		f.Fatal(err)
	}
	h := s.Handler()
	allowed := map[int]bool{200: true, 202: true, 400: true, 401: true, 413: true, 503: true}

	f.Fuzz(func(t *testing.T, event string, body []byte, signed bool, contentType, id string) {
		req := httptest.NewRequest(http.MethodPost, settings.DefaultWebhookPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", id)
		if signed {
			req.Header.Set("X-Hub-Signature-256", Sign([]byte(testSecret), body))
		} else {
			req.Header.Set("X-Hub-Signature-256", Sign([]byte("wrong"), body))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if !allowed[w.Code] {
			t.Fatalf("answered %d", w.Code)
		}
		if !signed && w.Code != http.StatusUnauthorized {
			t.Fatalf("unsigned delivery answered %d, want 401", w.Code)
		}
		if w.Code == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
			t.Fatal("503 without Retry-After")
		}
	})
}
