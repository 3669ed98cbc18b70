package wiring

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/access"
)

// Inputs are the action inputs of PRODUCT §4 (snake_case in action.yml,
// INPUT_<NAME> in the environment of a Docker action; AUTOPILOT_<NAME> for
// the App).
type Inputs struct {
	GitHubToken      string
	ConfigPath       string
	TriggerLabel     string
	BotLogin         string
	StateKey         string
	AnswerPermission access.Level
	JiraURL          string
	JiraUser         string
	JiraToken        string
	JiraProject      string
	DryRun           bool
	TelemetryPath    string
	// MembersToken reads team membership for approver policies with
	// teams (the workflow's GITHUB_TOKEN cannot); empty: GitHubToken.
	MembersToken string
}

// InputNames lists every input the code reads; a test checks action.yml
// declares exactly these.
var InputNames = []string{
	"github_token", "config_path", "trigger_label", "bot_login", "state_key", "answer_permission",
	"jira_url", "jira_user", "jira_token", "jira_project", "dry_run", "telemetry_path",
	"members_token",
}

// InputError is a usage/configuration error in the inputs (exit code 2).
type InputError struct{ Field, Msg string }

func (e *InputError) Error() string { return "input " + e.Field + ": " + e.Msg }

// input reads INPUT_<NAME> as GitHub sets it for Docker actions.
func input(getenv func(string) string, name string) string {
	return strings.TrimSpace(getenv("INPUT_" + strings.ToUpper(name)))
}

// Prefixes of the input variables: the Action reads INPUT_<NAME> as GitHub
// sets them for Docker actions, the App AUTOPILOT_<NAME>.
const (
	ActionPrefix = ""
	AppPrefix    = "AUTOPILOT_"
)

// LoadInputs reads and validates the inputs; prefix ActionPrefix reads
// INPUT_*, AppPrefix the App's AUTOPILOT_<INPUT> variables.
func LoadInputs(getenv func(string) string, prefix string) (Inputs, error) {
	get := func(n string) string {
		if prefix == "" {
			return input(getenv, n)
		}
		return strings.TrimSpace(getenv(prefix + strings.ToUpper(n)))
	}
	in := Inputs{
		GitHubToken:   get("github_token"),
		ConfigPath:    or(get("config_path"), ".github/autopilot.yml"),
		TriggerLabel:  or(get("trigger_label"), "autopilot"),
		BotLogin:      or(get("bot_login"), "github-actions[bot]"),
		StateKey:      get("state_key"),
		JiraURL:       get("jira_url"),
		JiraUser:      get("jira_user"),
		JiraToken:     get("jira_token"),
		JiraProject:   get("jira_project"),
		TelemetryPath: get("telemetry_path"),
		MembersToken:  get("members_token"),
	}
	if in.GitHubToken == "" && prefix == "" {
		in.GitHubToken = strings.TrimSpace(getenv("GITHUB_TOKEN"))
	}
	p := or(get("answer_permission"), string(access.Write))
	perm, err := access.Parse(p)
	if err != nil || perm == access.None || perm == access.Read {
		return in, &InputError{"answer_permission", fmt.Sprintf("%q: want triage, write, maintain or admin", p)}
	}
	in.AnswerPermission = perm
	if d := get("dry_run"); d != "" {
		b, err := strconv.ParseBool(d)
		if err != nil {
			return in, &InputError{"dry_run", fmt.Sprintf("%q: want true or false", d)}
		}
		in.DryRun = b
	}
	if len(in.TriggerLabel) > 50 {
		return in, &InputError{"trigger_label", "longer than GitHub's 50-character label limit"}
	}
	jira := []string{in.JiraURL, in.JiraUser, in.JiraToken, in.JiraProject}
	set := 0
	for _, v := range jira {
		if v != "" {
			set++
		}
	}
	if set > 0 && (in.JiraURL == "" || in.JiraToken == "") {
		return in, &InputError{"jira_*", "jira_url and jira_token are needed together (jira_user too on Jira Cloud, and jira_project here or as jira.project in the config); leave all empty to disable Jira"}
	}
	if in.JiraURL != "" {
		u, err := url.Parse(in.JiraURL)
		if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
			return in, &InputError{"jira_url", fmt.Sprintf("%q is not an http(s) URL", in.JiraURL)}
		}
	}
	return in, nil
}

// JiraEnabled reports whether Jira credentials were given.
func (in Inputs) JiraEnabled() bool { return in.JiraURL != "" }

func or(v, d string) string {
	if v == "" {
		return d
	}
	return v
}
