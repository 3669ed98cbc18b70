package wiring

import (
	"errors"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/access"
)

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestLoadInputs(t *testing.T) {
	defaults := Inputs{ConfigPath: ".github/autopilot.yml", TriggerLabel: "autopilot", BotLogin: "github-actions[bot]", AnswerPermission: access.Write}
	with := func(f func(*Inputs)) Inputs {
		in := defaults
		f(&in)
		return in
	}
	tests := []struct {
		name      string
		env       map[string]string
		prefix    string
		want      Inputs
		wantField string // InputError.Field when an error is expected
	}{
		{"defaults", nil, "", defaults, ""},
		{"GITHUB_TOKEN fallback", map[string]string{"GITHUB_TOKEN": "ghs_env"}, "",
			with(func(in *Inputs) { in.GitHubToken = "ghs_env" }), ""},
		{"the input wins over GITHUB_TOKEN", map[string]string{"GITHUB_TOKEN": "ghs_env", "INPUT_GITHUB_TOKEN": "ghs_in"}, "",
			with(func(in *Inputs) { in.GitHubToken = "ghs_in" }), ""},
		{"App prefix has no GITHUB_TOKEN fallback", map[string]string{"GITHUB_TOKEN": "ghs_env", "AUTOPILOT_TRIGGER_LABEL": "ap"}, "AUTOPILOT_",
			with(func(in *Inputs) { in.TriggerLabel = "ap" }), ""},
		{"values are trimmed", map[string]string{"INPUT_TRIGGER_LABEL": "  go  ", "INPUT_DRY_RUN": " true\n"}, "",
			with(func(in *Inputs) { in.TriggerLabel, in.DryRun = "go", true }), ""},
		{"every input read", map[string]string{
			"INPUT_GITHUB_TOKEN": "t", "INPUT_CONFIG_PATH": "ci/ap.yml", "INPUT_TRIGGER_LABEL": "robot", "INPUT_BOT_LOGIN": "my-app[bot]",
			"INPUT_STATE_KEY": "k", "INPUT_ANSWER_PERMISSION": "maintain", "INPUT_JIRA_URL": "https://acme.atlassian.net",
			"INPUT_JIRA_USER": "bot@acme.com", "INPUT_JIRA_TOKEN": "jt", "INPUT_JIRA_PROJECT": "PROJ", "INPUT_DRY_RUN": "false",
			"INPUT_TELEMETRY_PATH": "t.jsonl"}, "",
			Inputs{GitHubToken: "t", ConfigPath: "ci/ap.yml", TriggerLabel: "robot", BotLogin: "my-app[bot]", StateKey: "k",
				AnswerPermission: access.Maintain, JiraURL: "https://acme.atlassian.net", JiraUser: "bot@acme.com", JiraToken: "jt",
				JiraProject: "PROJ", TelemetryPath: "t.jsonl"}, ""},
		{"answer_permission triage", map[string]string{"INPUT_ANSWER_PERMISSION": "triage"}, "",
			with(func(in *Inputs) { in.AnswerPermission = access.Triage }), ""},
		{"answer_permission admin", map[string]string{"INPUT_ANSWER_PERMISSION": "admin"}, "",
			with(func(in *Inputs) { in.AnswerPermission = access.Admin }), ""},
		{"answer_permission read is refused", map[string]string{"INPUT_ANSWER_PERMISSION": "read"}, "", Inputs{}, "answer_permission"},
		{"answer_permission none is refused", map[string]string{"INPUT_ANSWER_PERMISSION": "none"}, "", Inputs{}, "answer_permission"},
		{"answer_permission unknown", map[string]string{"INPUT_ANSWER_PERMISSION": "owner"}, "", Inputs{}, "answer_permission"},
		{"dry_run 1", map[string]string{"INPUT_DRY_RUN": "1"}, "", with(func(in *Inputs) { in.DryRun = true }), ""},
		{"dry_run yes is refused", map[string]string{"INPUT_DRY_RUN": "yes"}, "", Inputs{}, "dry_run"},
		{"trigger_label over 50 characters", map[string]string{"INPUT_TRIGGER_LABEL": strings.Repeat("x", 51)}, "", Inputs{}, "trigger_label"},
		{"Jira Data Center without a user", map[string]string{"INPUT_JIRA_URL": "http://jira.local", "INPUT_JIRA_TOKEN": "pat", "INPUT_JIRA_PROJECT": "P"}, "",
			with(func(in *Inputs) { in.JiraURL, in.JiraToken, in.JiraProject = "http://jira.local", "pat", "P" }), ""},
		{"Jira URL alone", map[string]string{"INPUT_JIRA_URL": "https://acme.atlassian.net"}, "", Inputs{}, "jira_*"},
		{"Jira user alone", map[string]string{"INPUT_JIRA_USER": "bot@acme.com"}, "", Inputs{}, "jira_*"},
		{"Jira without a token", map[string]string{"INPUT_JIRA_URL": "https://a.example", "INPUT_JIRA_PROJECT": "P"}, "", Inputs{}, "jira_*"},
		{"Jira project from the config", map[string]string{"INPUT_JIRA_URL": "https://a.example", "INPUT_JIRA_TOKEN": "t"}, "",
			with(func(in *Inputs) { in.JiraURL, in.JiraToken = "https://a.example", "t" }), ""},
		{"Jira URL not http(s)", map[string]string{"INPUT_JIRA_URL": "ftp://jira", "INPUT_JIRA_TOKEN": "t", "INPUT_JIRA_PROJECT": "P"}, "", Inputs{}, "jira_url"},
		{"Jira URL without a host", map[string]string{"INPUT_JIRA_URL": "https://", "INPUT_JIRA_TOKEN": "t", "INPUT_JIRA_PROJECT": "P"}, "", Inputs{}, "jira_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadInputs(envOf(tt.env), tt.prefix)
			if tt.wantField != "" {
				var ie *InputError
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
