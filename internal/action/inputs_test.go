package action_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/action"
)

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestLoadInputs(t *testing.T) {
	defaults := action.Inputs{ConfigPath: ".github/autopilot.yml", TriggerLabel: "autopilot", BotLogin: "github-actions[bot]", AnswerPermission: access.Write}
	with := func(f func(*action.Inputs)) action.Inputs {
		in := defaults
		f(&in)
		return in
	}
	tests := []struct {
		name      string
		env       map[string]string
		prefix    string
		want      action.Inputs
		wantField string // InputError.Field when an error is expected
	}{
		{"defaults", nil, "", defaults, ""},
		{"GITHUB_TOKEN fallback", map[string]string{"GITHUB_TOKEN": "ghs_env"}, "",
			with(func(in *action.Inputs) { in.GitHubToken = "ghs_env" }), ""},
		{"the input wins over GITHUB_TOKEN", map[string]string{"GITHUB_TOKEN": "ghs_env", "INPUT_GITHUB_TOKEN": "ghs_in"}, "",
			with(func(in *action.Inputs) { in.GitHubToken = "ghs_in" }), ""},
		{"App prefix has no GITHUB_TOKEN fallback", map[string]string{"GITHUB_TOKEN": "ghs_env", "AUTOPILOT_TRIGGER_LABEL": "ap"}, "AUTOPILOT_",
			with(func(in *action.Inputs) { in.TriggerLabel = "ap" }), ""},
		{"values are trimmed", map[string]string{"INPUT_TRIGGER_LABEL": "  go  ", "INPUT_DRY_RUN": " true\n"}, "",
			with(func(in *action.Inputs) { in.TriggerLabel, in.DryRun = "go", true }), ""},
		{"every input read", map[string]string{
			"INPUT_GITHUB_TOKEN": "t", "INPUT_CONFIG_PATH": "ci/ap.yml", "INPUT_TRIGGER_LABEL": "robot", "INPUT_BOT_LOGIN": "my-app[bot]",
			"INPUT_STATE_KEY": "k", "INPUT_ANSWER_PERMISSION": "maintain", "INPUT_JIRA_URL": "https://acme.atlassian.net",
			"INPUT_JIRA_USER": "bot@acme.com", "INPUT_JIRA_TOKEN": "jt", "INPUT_JIRA_PROJECT": "PROJ", "INPUT_DRY_RUN": "false",
			"INPUT_TELEMETRY_PATH": "t.jsonl"}, "",
			action.Inputs{GitHubToken: "t", ConfigPath: "ci/ap.yml", TriggerLabel: "robot", BotLogin: "my-app[bot]", StateKey: "k",
				AnswerPermission: access.Maintain, JiraURL: "https://acme.atlassian.net", JiraUser: "bot@acme.com", JiraToken: "jt",
				JiraProject: "PROJ", TelemetryPath: "t.jsonl"}, ""},
		{"answer_permission triage", map[string]string{"INPUT_ANSWER_PERMISSION": "triage"}, "",
			with(func(in *action.Inputs) { in.AnswerPermission = access.Triage }), ""},
		{"answer_permission admin", map[string]string{"INPUT_ANSWER_PERMISSION": "admin"}, "",
			with(func(in *action.Inputs) { in.AnswerPermission = access.Admin }), ""},
		{"answer_permission read is refused", map[string]string{"INPUT_ANSWER_PERMISSION": "read"}, "", action.Inputs{}, "answer_permission"},
		{"answer_permission none is refused", map[string]string{"INPUT_ANSWER_PERMISSION": "none"}, "", action.Inputs{}, "answer_permission"},
		{"answer_permission unknown", map[string]string{"INPUT_ANSWER_PERMISSION": "owner"}, "", action.Inputs{}, "answer_permission"},
		{"dry_run 1", map[string]string{"INPUT_DRY_RUN": "1"}, "", with(func(in *action.Inputs) { in.DryRun = true }), ""},
		{"dry_run yes is refused", map[string]string{"INPUT_DRY_RUN": "yes"}, "", action.Inputs{}, "dry_run"},
		{"trigger_label over 50 characters", map[string]string{"INPUT_TRIGGER_LABEL": strings.Repeat("x", 51)}, "", action.Inputs{}, "trigger_label"},
		{"Jira Data Center without a user", map[string]string{"INPUT_JIRA_URL": "http://jira.local", "INPUT_JIRA_TOKEN": "pat", "INPUT_JIRA_PROJECT": "P"}, "",
			with(func(in *action.Inputs) { in.JiraURL, in.JiraToken, in.JiraProject = "http://jira.local", "pat", "P" }), ""},
		{"Jira URL alone", map[string]string{"INPUT_JIRA_URL": "https://acme.atlassian.net"}, "", action.Inputs{}, "jira_*"},
		{"Jira user alone", map[string]string{"INPUT_JIRA_USER": "bot@acme.com"}, "", action.Inputs{}, "jira_*"},
		{"Jira without a token", map[string]string{"INPUT_JIRA_URL": "https://a.example", "INPUT_JIRA_PROJECT": "P"}, "", action.Inputs{}, "jira_*"},
		{"Jira project from the config", map[string]string{"INPUT_JIRA_URL": "https://a.example", "INPUT_JIRA_TOKEN": "t"}, "",
			with(func(in *action.Inputs) { in.JiraURL, in.JiraToken = "https://a.example", "t" }), ""},
		{"Jira URL not http(s)", map[string]string{"INPUT_JIRA_URL": "ftp://jira", "INPUT_JIRA_TOKEN": "t", "INPUT_JIRA_PROJECT": "P"}, "", action.Inputs{}, "jira_url"},
		{"Jira URL without a host", map[string]string{"INPUT_JIRA_URL": "https://", "INPUT_JIRA_TOKEN": "t", "INPUT_JIRA_PROJECT": "P"}, "", action.Inputs{}, "jira_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := action.LoadInputs(envOf(tt.env), tt.prefix)
			if tt.wantField != "" {
				var ie *action.InputError
				if !errors.As(err, &ie) || ie.Field != tt.wantField {
					t.Fatalf("err = %v, want an InputError on %s", err, tt.wantField)
				}
				if !strings.Contains(err.Error(), tt.wantField) {
					t.Errorf("message %q does not name the field", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("inputs\n got %+v\nwant %+v", got, tt.want)
			}
			if got.JiraEnabled() != (tt.want.JiraURL != "") {
				t.Errorf("JiraEnabled = %v", got.JiraEnabled())
			}
		})
	}
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
