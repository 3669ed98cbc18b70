package action_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/action"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
)

// irrelevant writes a comment event on an issue without the trigger label
// and returns the runner's environment for it plus an API server that
// counts (and refuses) every call.
func irrelevant(b *testing.B) (map[string]string, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "no call expected", http.StatusTeapot)
	}))
	b.Cleanup(srv.Close)
	dir := b.TempDir()
	p := filepath.Join(dir, "event.json")
	payload := ghtest.Mutate(b, ghtest.WithRepo(b, ghtest.Payload(b, "issue_comment.created.json"), repo), map[string]any{
		"issue.labels": ghtest.Labels("bug"), "comment.body": "thanks, looks good",
	})
	if err := os.WriteFile(p, payload, 0o644); err != nil {
		b.Fatal(err)
	}
	return map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "issue_comment", "GITHUB_EVENT_PATH": p,
		"GITHUB_REPOSITORY": repo, "GITHUB_API_URL": srv.URL, "INPUT_GITHUB_TOKEN": "t",
	}, &calls
}

// BenchmarkIrrelevantEventInProcess measures the Action's handling of an
// event it ignores (decode, route, exit) without process start-up.
func BenchmarkIrrelevantEventInProcess(b *testing.B) {
	env, calls := irrelevant(b)
	getenv := func(k string) string { return env[k] }
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		if code := action.Run(context.Background(), action.Env{Getenv: getenv, Stdout: &out, Stderr: &out}); code != 0 {
			b.Fatalf("exit %d: %s", code, out.String())
		}
	}
	if n := calls.Load(); n != 0 {
		b.Fatalf("%d API calls for an irrelevant event, want 0", n)
	}
}

// BenchmarkIrrelevantEventBinary runs the real binary per event, as the
// runner does (process start-up included).
func BenchmarkIrrelevantEventBinary(b *testing.B) {
	env, calls := irrelevant(b)
	bin := binary(b)
	var list []string
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	for b.Loop() {
		cmd := exec.Command(bin)
		cmd.Env = list
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
	if n := calls.Load(); n != 0 {
		b.Fatalf("%d API calls for an irrelevant event, want 0", n)
	}
}
