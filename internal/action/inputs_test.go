package action_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/action"
)

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

// runInProcess calls action.Run with env and returns the exit code,
// stdout and stderr.
func runInProcess(t *testing.T, env map[string]string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := action.Run(context.Background(), action.Env{Getenv: envOf(env), Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

// TestRunUsageErrorsExitTwo: bad inputs and a missing environment are
// usage errors (exit 2), reported as ::error:: naming the problem, before
// any request.
func TestRunUsageErrorsExitTwo(t *testing.T) {
	dir := t.TempDir()
	ev := filepath.Join(dir, "event.json")
	if err := os.WriteFile(ev, []byte(`{"action":"created"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "schedule", "GITHUB_REPOSITORY": "acme/widgets", "INPUT_GITHUB_TOKEN": "t",
		"GITHUB_API_URL": "http://127.0.0.1:9"} // nothing listens: a request would fail with exit 1
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name string
		env  map[string]string
		code int
		want string
	}{
		{"answer_permission read", with("INPUT_ANSWER_PERMISSION", "read"), 2, "input answer_permission"},
		{"dry_run maybe", with("INPUT_DRY_RUN", "maybe"), 2, "input dry_run"},
		{"partial Jira inputs", with("INPUT_JIRA_URL", "https://acme.atlassian.net"), 2, "input jira_*"},
		{"no event name", with("GITHUB_EVENT_NAME", ""), 2, "GITHUB_EVENT_NAME is not set"},
		{"no event file for a comment", with("GITHUB_EVENT_NAME", "issue_comment"), 2, "GITHUB_EVENT_PATH is not set"},
		{"no repository", with("GITHUB_REPOSITORY", ""), 2, "GITHUB_REPOSITORY is not set"},
		{"repository without owner", with("GITHUB_REPOSITORY", "widgets"), 2, "GITHUB_REPOSITORY"},
		{"no repository, unhandled event", with("GITHUB_REPOSITORY", "", "GITHUB_EVENT_NAME", "star", "GITHUB_EVENT_PATH", ev), 2, "GITHUB_REPOSITORY is not set"},
		{"no token at all", with("INPUT_GITHUB_TOKEN", ""), 2, "input github_token"},
		{"bad mutation gap", with("AUTOPILOT_MUTATION_GAP", "soon"), 2, "AUTOPILOT_MUTATION_GAP"},
		{"bad claim settle", with("AUTOPILOT_CLAIM_SETTLE", "later"), 2, "AUTOPILOT_CLAIM_SETTLE"},
		{"bad API URL", with("GITHUB_API_URL", "::not a url"), 2, "base URL"},
		{"unreadable event file", with("GITHUB_EVENT_NAME", "issue_comment", "GITHUB_EVENT_PATH", filepath.Join(dir, "missing.json")), 1, "read event file"},
		{"unknown event is fine", with("GITHUB_EVENT_NAME", "star", "GITHUB_EVENT_PATH", ev), 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runInProcess(t, tt.env)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			if tt.want == "" {
				if strings.Contains(stdout, "::error::") {
					t.Errorf("an error annotation on success: %s", stdout)
				}
				return
			}
			if !strings.Contains(stdout, "::error::") || !strings.Contains(stdout, tt.want) {
				t.Errorf("stdout %q lacks an ::error:: with %q", stdout, tt.want)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q lacks %q", stderr, tt.want)
			}
			if strings.Contains(stdout, "API calls") {
				t.Errorf("a usage error got as far as calling the API: %s", stdout)
			}
		})
	}
}

// TestErrorsPrintOnceOutsideActions: outside the runner an error is one line
// on stderr; the ::error:: annotation is for the Actions log only.
func TestErrorsPrintOnceOutsideActions(t *testing.T) {
	env := map[string]string{"GITHUB_EVENT_NAME": "schedule", "INPUT_GITHUB_TOKEN": "t"}
	code, stdout, stderr := runInProcess(t, env)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if strings.Count(stdout+stderr, "GITHUB_REPOSITORY is not set") != 1 {
		t.Errorf("the error is not printed exactly once:\nstdout: %s\nstderr: %s", stdout, stderr)
	}
	env["GITHUB_ACTIONS"] = "true"
	_, stdout, stderr = runInProcess(t, env)
	if !strings.Contains(stdout, "::error::GITHUB_REPOSITORY") || !strings.Contains(stderr, "GITHUB_REPOSITORY") {
		t.Errorf("inside Actions the error belongs on stderr and as an annotation:\nstdout: %s\nstderr: %s", stdout, stderr)
	}
}

// TestUnhandledEventNameHasNoStrayDot: an event without an action is
// named alone ("push"), not "push.".
func TestUnhandledEventNameHasNoStrayDot(t *testing.T) {
	ev := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(ev, []byte(`{"ref":"refs/heads/main"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := runInProcess(t, map[string]string{"GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": ev, "GITHUB_REPOSITORY": "acme/widgets", "INPUT_GITHUB_TOKEN": "t"})
	if code != 0 || !strings.Contains(stdout, "autopilot: push is not an event") {
		t.Errorf("exit %d, stdout %q; want 0 and \"push is not an event\"", code, stdout)
	}
}
