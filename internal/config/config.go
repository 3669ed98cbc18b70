// Package config parses and validates .github/autopilot.yml: flows, executors,
// prompts, limits, permissions, roles and Jira settings. Errors name the line
// and field. Out-of-range limits are clamped silently (seed 004). This package
// does no I/O: callers hand it bytes.
package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/flow"
	"github.com/autopilot-dev/autopilot/internal/state"
	"go.yaml.in/yaml/v3"
)

// DefaultPath is where the config lives in a repository.
const DefaultPath = ".github/autopilot.yml"

// Limits are the loop limits of seed 004.
type Limits struct {
	MaxSessions         int     `yaml:"max_sessions" json:"max_sessions"`
	MaxHours            float64 `yaml:"max_hours" json:"max_hours"`
	ConfidenceThreshold float64 `yaml:"confidence_threshold" json:"confidence_threshold"`
}

// Executor configures how steps run; per-step entries override the default.
type Executor struct {
	Kind string `yaml:"kind,omitempty" json:"kind,omitempty"` // manual | comment | dispatch
	// Agent is the mention used by the comment executor, e.g. "@claude".
	Agent string `yaml:"agent,omitempty" json:"agent,omitempty"`
	// Prompt is the comment executor's template ({{title}}, {{number}},
	// {{step}}, {{name}}, {{sub_step}}, {{attempt}}, {{produces}}, {{links}}).
	Prompt string `yaml:"prompt,omitempty" json:"prompt,omitempty"`
	// Workflow and Ref: the dispatch executor's workflow file and git ref.
	Workflow string `yaml:"workflow,omitempty" json:"workflow,omitempty"`
	Ref      string `yaml:"ref,omitempty" json:"ref,omitempty"`
	// Timeout: how long a dispatched run may take before the sweep fails it.
	Timeout Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`
}

// Duration is a time.Duration written as "90s", "2h".
type Duration time.Duration

// UnmarshalYAML parses Go duration syntax. A bad value is reported as a
// type error so the decoder keeps its line and Parse can name the field.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: cannot unmarshal %s into config.Duration", n.Line, n.ShortTag())}}
	}
	s := n.Value
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %q is not a duration (e.g. 90s, 2h)", n.Line, s)}}
	}
	*d = Duration(v)
	return nil
}

// Jira holds Jira settings that are not secrets (those come from inputs).
type Jira struct {
	// Enabled false turns Jira off without asking; nil = ask when it is
	// unreachable or not configured.
	Enabled       *bool    `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	Project       string   `yaml:"project,omitempty" json:"project,omitempty"`
	Deployment    string   `yaml:"deployment,omitempty" json:"deployment,omitempty"` // cloud | datacenter | "" (detect)
	EpicLinkField string   `yaml:"epic_link_field,omitempty" json:"epic_link_field,omitempty"`
	EpicNameField string   `yaml:"epic_name_field,omitempty" json:"epic_name_field,omitempty"`
	PointsField   string   `yaml:"points_field,omitempty" json:"points_field,omitempty"`
	TaskType      string   `yaml:"task_type,omitempty" json:"task_type,omitempty"`
	EpicType      string   `yaml:"epic_type,omitempty" json:"epic_type,omitempty"`
	SearchLag     Duration `yaml:"search_lag,omitempty" json:"search_lag,omitempty"`
	TaskFiles     string   `yaml:"task_files,omitempty" json:"task_files,omitempty"` // e.g. _docs/02_tasks
	// TransitionOnClose moves Jira issues to done when the GitHub issue closes.
	TransitionOnClose bool `yaml:"transition_on_close,omitempty" json:"transition_on_close,omitempty"`
}

// Values of Config.Tracker: the tracker names package state defines (one
// definition for the config, the state and the engine).
const (
	TrackerJira   = string(state.TrackerJira)
	TrackerGitHub = string(state.TrackerGitHub)
	TrackerLocal  = string(state.TrackerLocal)
)

// Config is the parsed .github/autopilot.yml.
type Config struct {
	Version          int    `yaml:"version,omitempty" json:"version,omitempty"`
	DefaultFlow      string `yaml:"default_flow,omitempty" json:"default_flow,omitempty"`
	AnswerPermission string `yaml:"answer_permission,omitempty" json:"answer_permission,omitempty"`
	Limits           Limits `yaml:"limits,omitempty" json:"limits"`
	MaxIterations    int    `yaml:"max_iterations,omitempty" json:"max_iterations,omitempty"`
	// KeepStaleApprovals lets an approving review count as evidence after
	// a push to the PR (default false: it must approve the current head).
	KeepStaleApprovals bool `yaml:"keep_stale_approvals,omitempty" json:"keep_stale_approvals,omitempty"`
	// CheckName is the name of the check run on linked PRs (default
	// DefaultCheckName).
	CheckName string `yaml:"check_name,omitempty" json:"check_name,omitempty"`
	// MergeGate is the step whose completion turns the PR check green in
	// flows other than the review loop (default: the step after the
	// implementation).
	MergeGate string              `yaml:"merge_gate,omitempty" json:"merge_gate,omitempty"`
	Roles     map[string][]string `yaml:"roles,omitempty" json:"roles,omitempty"`
	Agents    []string            `yaml:"agents,omitempty" json:"agents,omitempty"`
	Executor  Executor            `yaml:"executor,omitempty" json:"executor"`
	Steps     map[string]Executor `yaml:"steps,omitempty" json:"steps,omitempty"`
	Jira      Jira                `yaml:"jira,omitempty" json:"jira"`
	// Tracker is where tasks go: "jira", "github" (native sub-issues) or
	// "local"; empty means jira when Jira is configured, else local.
	Tracker string `yaml:"tracker,omitempty" json:"tracker,omitempty"`
	// CloseChildren closes the open task issues (tracker: github) when the
	// autopilot issue closes.
	CloseChildren bool                 `yaml:"close_children,omitempty" json:"close_children,omitempty"`
	Flows         map[string]flow.Flow `yaml:"flows,omitempty" json:"-"`
	// DeployGate configures the deploy gate (docs/deploy-gate.md).
	DeployGate DeployGate `yaml:"deploy_gate,omitempty" json:"deploy_gate"`
	// Approvals are the approver policies by gate kind or step (see
	// Approval and ApprovalFor).
	Approvals map[string]Approval `yaml:"approvals,omitempty" json:"approvals,omitempty"`
	// Dashboard keeps one "autopilot dashboard" issue listing the open
	// autopilot issues, updated by the Action's scheduled sweep
	// (docs/dashboard.md).
	Dashboard bool `yaml:"dashboard,omitempty" json:"dashboard,omitempty"`

	// Resolved after parsing: built-in plus custom flows.
	All flow.Set `yaml:"-" json:"-"`
}

// Defaults of the loop limits (seed 004). Values outside the bounds
// (max_sessions 1..50, max_hours 0.5..24, confidence_threshold 0..1,
// max_iterations 1..100) are clamped silently.
const (
	DefaultMaxSessions   = 5
	DefaultMaxHours      = 4.0
	DefaultConfidence    = 0.85
	DefaultMaxIterations = 10
)

// DefaultCheckName is the PR check run's name when check_name is unset.
const DefaultCheckName = "autopilot"

// Error is a configuration error naming the line and field.
type Error struct {
	Line  int    // 1-based line in the file; 0 when no line applies
	Field string // dotted path, e.g. "limits.max_sessions", "flows.x.steps[2].slug"
	Msg   string
}

// Error formats the error as "line N: field: message".
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s: %s", e.Line, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Field, e.Msg)
}

// Default returns the configuration used when the repository has no file.
func Default() *Config {
	c := &Config{}
	if err := c.resolve(nil); err != nil {
		panic("built-in flows are invalid: " + err.Error()) // a build defect, caught by tests
	}
	return c
}

// MaxFileSize is the largest config file Parse accepts (256 KiB).
const MaxFileSize = 256 << 10

// Parse parses and validates a config file. An empty file, or one holding
// only comments, means defaults. When several things are wrong, the error
// names the first of them in file order.
func Parse(data []byte) (*Config, error) {
	if len(data) > MaxFileSize {
		return nil, &Error{Field: "file", Msg: fmt.Sprintf("%d bytes is larger than 256 KiB", len(data))}
	}
	data, err := utf8Text(data)
	if err != nil {
		return nil, err
	}
	c := &Config{}
	root, err := decode(data, c)
	if err != nil {
		return nil, err
	}
	if err := c.resolve(root); err != nil {
		return nil, err
	}
	return c, nil
}

// ExecutorFor resolves the executor of a step: per-step entry over default.
func (c *Config) ExecutorFor(slug string) Executor {
	e := c.Executor
	if s, ok := c.Steps[slug]; ok {
		if s.Kind != "" {
			e.Kind = s.Kind
		}
		if s.Agent != "" {
			e.Agent = s.Agent
		}
		if s.Prompt != "" {
			e.Prompt = s.Prompt
		}
		if s.Workflow != "" {
			e.Workflow = s.Workflow
		}
		if s.Ref != "" {
			e.Ref = s.Ref
		}
		if s.Timeout != 0 {
			e.Timeout = s.Timeout
		}
	}
	if e.Kind == "" {
		e.Kind = flow.ExecManual
	}
	if e.Timeout == 0 {
		e.Timeout = Duration(flow.StepTimeout)
	}
	return e
}

// HasRole reports whether login holds role ("architect" or "critic").
// Logins compare case-insensitively, with or without a leading "@".
func (c *Config) HasRole(role, login string) bool {
	return containsLogin(c.Roles[role], login)
}

// IsAgent reports whether login is a configured agent account whose
// executor reports (done/fail/progress) count even though it is a bot.
// Logins compare case-insensitively, with or without a leading "@".
func (c *Config) IsAgent(login string) bool {
	return containsLogin(c.Agents, login)
}

func containsLogin(list []string, login string) bool {
	login = strings.TrimPrefix(login, "@")
	if login == "" {
		return false
	}
	for _, l := range list {
		if strings.EqualFold(strings.TrimPrefix(l, "@"), login) {
			return true
		}
	}
	return false
}
