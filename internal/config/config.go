// Package config parses and validates .github/autopilot.yml: flows, executors,
// prompts, limits, permissions, roles and Jira settings. Errors name the line
// and field. Out-of-range limits are clamped silently (seed 004). This package
// does no I/O: callers hand it bytes.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/flow"
	"github.com/autopilot-dev/autopilot/internal/forge"
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

// UnmarshalYAML parses Go duration syntax.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: %q is not a duration (e.g. 90s, 2h)", n.Line, s)
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

// Config is the parsed .github/autopilot.yml.
type Config struct {
	Version          int                  `yaml:"version,omitempty" json:"version,omitempty"`
	DefaultFlow      string               `yaml:"default_flow,omitempty" json:"default_flow,omitempty"`
	AnswerPermission string               `yaml:"answer_permission,omitempty" json:"answer_permission,omitempty"`
	Limits           Limits               `yaml:"limits,omitempty" json:"limits"`
	MaxIterations    int                  `yaml:"max_iterations,omitempty" json:"max_iterations,omitempty"`
	Roles            map[string][]string  `yaml:"roles,omitempty" json:"roles,omitempty"`
	Agents           []string             `yaml:"agents,omitempty" json:"agents,omitempty"`
	Executor         Executor             `yaml:"executor,omitempty" json:"executor"`
	Steps            map[string]Executor  `yaml:"steps,omitempty" json:"steps,omitempty"`
	Jira             Jira                 `yaml:"jira,omitempty" json:"jira"`
	Flows            map[string]flow.Flow `yaml:"flows,omitempty" json:"-"`

	// Resolved after parsing: built-in plus custom flows.
	All flow.Set `yaml:"-" json:"-"`
}

// Defaults and bounds of the loop limits (seed 004).
const (
	DefaultMaxSessions   = 5
	DefaultMaxHours      = 4.0
	DefaultConfidence    = 0.85
	DefaultMaxIterations = 10
)

// Error is a configuration error naming the line and field.
type Error struct {
	Line  int
	Field string
	Msg   string
}

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

// Parse parses and validates a config file. An empty file means defaults.
func Parse(data []byte) (*Config, error) {
	c := &Config{}
	var root yaml.Node
	if len(bytes.TrimSpace(data)) > 0 {
		if len(data) > 256<<10 {
			return nil, &Error{Field: "file", Msg: "larger than 256 KiB"}
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(c); err != nil {
			return nil, yamlError(err)
		}
		if err := yaml.Unmarshal(data, &root); err != nil {
			return nil, yamlError(err)
		}
	}
	if err := c.resolve(&root); err != nil {
		return nil, err
	}
	return c, nil
}

func yamlError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		return &Error{Field: "yaml", Msg: strings.Join(te.Errors, "; ")}
	}
	return &Error{Field: "yaml", Msg: err.Error()}
}

func (c *Config) resolve(root *yaml.Node) error {
	lineOf := func(path ...string) int { return findLine(root, path...) }
	if c.Version != 0 && c.Version != 1 {
		return &Error{lineOf("version"), "version", fmt.Sprintf("%d is not supported (want 1)", c.Version)}
	}
	c.clamp()
	if c.AnswerPermission != "" {
		p, err := forge.ParsePermission(c.AnswerPermission)
		if err != nil || p == forge.PermNone || p == forge.PermRead {
			return &Error{lineOf("answer_permission"), "answer_permission", fmt.Sprintf("%q: want triage, write, maintain or admin", c.AnswerPermission)}
		}
	}
	for role, logins := range c.Roles {
		if role != "architect" && role != "critic" {
			return &Error{lineOf("roles", role), "roles." + role, "unknown role (want architect or critic)"}
		}
		for _, l := range logins {
			if strings.TrimSpace(strings.TrimPrefix(l, "@")) == "" {
				return &Error{lineOf("roles", role), "roles." + role, "empty login"}
			}
		}
	}
	if err := checkExecutor(c.Executor, "executor", lineOf("executor")); err != nil {
		return err
	}

	builtin, err := parseBuiltin()
	if err != nil {
		return err
	}
	c.All = flow.Set{}
	for n, f := range builtin {
		c.All[n] = f
	}
	for name, f := range c.Flows {
		f := f
		f.Name = name
		if _, dup := builtin[name]; dup {
			return &Error{lineOf("flows", name), "flows." + name, "redefines a built-in flow; pick another name"}
		}
		if err := f.Validate(); err != nil {
			var fe *flow.FieldError
			if errors.As(err, &fe) {
				return &Error{lineOf("flows", name), fe.Path, fe.Msg}
			}
			return err
		}
		c.All[name] = &f
	}
	if c.DefaultFlow != "" {
		if _, ok := c.All[c.DefaultFlow]; !ok {
			return &Error{lineOf("default_flow"), "default_flow", fmt.Sprintf("unknown flow %q (have %s)", c.DefaultFlow, strings.Join(c.All.Names(), ", "))}
		}
	}
	for slug, ex := range c.Steps {
		known := false
		for _, f := range c.All {
			if f.Index(slug) >= 0 {
				known = true
			}
		}
		if !known {
			return &Error{lineOf("steps", slug), "steps." + slug, "no flow has a step with this slug"}
		}
		if err := checkExecutor(ex, "steps."+slug, lineOf("steps", slug)); err != nil {
			return err
		}
	}
	switch c.Jira.Deployment {
	case "", "cloud", "datacenter":
	default:
		return &Error{lineOf("jira", "deployment"), "jira.deployment", fmt.Sprintf("%q: want cloud or datacenter", c.Jira.Deployment)}
	}
	return nil
}

func checkExecutor(e Executor, field string, line int) error {
	switch e.Kind {
	case "", flow.ExecManual, flow.ExecComment, flow.ExecDispatch:
	default:
		return &Error{line, field + ".kind", fmt.Sprintf("%q: want manual, comment or dispatch", e.Kind)}
	}
	if e.Kind == flow.ExecDispatch && e.Workflow == "" {
		return &Error{line, field + ".workflow", "the dispatch executor needs a workflow file name"}
	}
	if e.Kind == flow.ExecComment && e.Agent == "" {
		return &Error{line, field + ".agent", "the comment executor needs an agent to mention (e.g. @claude)"}
	}
	return nil
}

// clamp applies defaults and silently clamps out-of-range limits.
func (c *Config) clamp() {
	l := &c.Limits
	if l.MaxSessions == 0 {
		l.MaxSessions = DefaultMaxSessions
	}
	l.MaxSessions = clampInt(l.MaxSessions, 1, 50)
	if l.MaxHours == 0 {
		l.MaxHours = DefaultMaxHours
	}
	l.MaxHours = clampFloat(l.MaxHours, 0.5, 24)
	if l.ConfidenceThreshold == 0 {
		l.ConfidenceThreshold = DefaultConfidence
	}
	l.ConfidenceThreshold = clampFloat(l.ConfidenceThreshold, 0, 1)
	if c.MaxIterations == 0 {
		c.MaxIterations = DefaultMaxIterations
	}
	c.MaxIterations = clampInt(c.MaxIterations, 1, 100)
}

func clampInt(v, lo, hi int) int { return max(lo, min(hi, v)) }
func clampFloat(v, lo, hi float64) float64 {
	if v != v { // NaN
		return lo
	}
	return max(lo, min(hi, v))
}

func parseBuiltin() (flow.Set, error) {
	var raw map[string]flow.Flow
	dec := yaml.NewDecoder(bytes.NewReader(flow.BuiltinSource()))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("built-in flows: %w", err)
	}
	out := flow.Set{}
	for name, f := range raw {
		f := f
		f.Name = name
		if err := f.Validate(); err != nil {
			return nil, fmt.Errorf("built-in flows: %w", err)
		}
		out[name] = &f
	}
	return out, nil
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
func (c *Config) HasRole(role, login string) bool {
	for _, l := range c.Roles[role] {
		if strings.EqualFold(strings.TrimPrefix(l, "@"), login) {
			return true
		}
	}
	return false
}

// IsAgent reports whether login is a configured agent account whose
// executor reports (done/fail/progress) count even though it is a bot.
func (c *Config) IsAgent(login string) bool {
	for _, a := range c.Agents {
		if strings.EqualFold(strings.TrimPrefix(a, "@"), login) {
			return true
		}
	}
	return false
}

// findLine returns the line of the value at path in a YAML document, or 0.
func findLine(root *yaml.Node, path ...string) int {
	if root == nil {
		return 0
	}
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := 0
	for _, key := range path {
		if n.Kind != yaml.MappingNode {
			return line
		}
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				line = n.Content[i].Line
				n = n.Content[i+1]
				found = true
				break
			}
		}
		if !found {
			return line
		}
	}
	return line
}
