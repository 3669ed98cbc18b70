package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/flow"
)

var (
	// loginRE: a GitHub login (alphanumerics and hyphens), optionally an
	// App's bot account ("name[bot]").
	loginRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?$`)
	// mentionRE: what the comment executor mentions: a login or org/team.
	mentionRE    = regexp.MustCompile(`^@[A-Za-z0-9][A-Za-z0-9-]{0,38}(/[A-Za-z0-9][A-Za-z0-9._-]*)?$`)
	customRE     = regexp.MustCompile(`^customfield_[0-9]+$`)
	projectKeyRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]+$`)
)

// checker collects errors; resolve reports the first in file order.
type checker struct {
	root *yaml.Node
	errs []*Error
}

func (k *checker) add(field, msg string, path ...string) {
	k.errs = append(k.errs, &Error{Line: findLine(k.root, path...), Field: field, Msg: msg})
}

func (k *checker) first() error {
	if len(k.errs) == 0 {
		return nil
	}
	sort.SliceStable(k.errs, func(i, j int) bool { return k.errs[i].Line < k.errs[j].Line })
	return k.errs[0]
}

// resolve applies defaults and clamps, validates everything and builds All.
// root is the parsed document (nil for an empty file); it supplies lines.
func (c *Config) resolve(root *yaml.Node) error {
	k := &checker{root: root}
	if c.Version != 0 && c.Version != 1 {
		k.add("version", fmt.Sprintf("%d is not supported (want 1)", c.Version), "version")
	}
	c.clamp(root)
	if c.AnswerPermission != "" {
		p, err := access.Parse(c.AnswerPermission)
		if err != nil || p == access.None || p == access.Read {
			k.add("answer_permission", fmt.Sprintf("%q: want triage, write, maintain or admin", c.AnswerPermission), "answer_permission")
		}
	}
	c.checkRoles(k)
	for i, a := range c.Agents {
		if !loginRE.MatchString(strings.TrimPrefix(a, "@")) {
			k.add(fmt.Sprintf("agents[%d]", i), fmt.Sprintf("%q is not a GitHub login (e.g. claude[bot])", a), "agents", fmt.Sprintf("[%d]", i))
		}
	}
	c.Executor.Agent = mention(c.Executor.Agent)
	defaultOK := checkExecutor(k, c.Executor, "executor", []string{"executor"})

	slugs, err := c.resolveFlows(k)
	if err != nil {
		return err
	}
	if c.DefaultFlow != "" {
		if _, ok := c.All[c.DefaultFlow]; !ok {
			if _, custom := c.Flows[c.DefaultFlow]; !custom { // an invalid custom flow is reported above
				k.add("default_flow", fmt.Sprintf("unknown flow %q (have %s)", c.DefaultFlow, strings.Join(c.All.Names(), ", ")), "default_flow")
			}
		}
	}
	if c.MergeGate != "" && !slugs[c.MergeGate] {
		k.add("merge_gate", fmt.Sprintf("%q is not a step of any flow; name the step whose completion lets the PR merge", c.MergeGate), "merge_gate")
	}
	if n := c.CheckName; n != "" && (len(n) > 100 || strings.TrimSpace(n) != n || strings.ContainsAny(n, "\r\n")) {
		k.add("check_name", fmt.Sprintf("%q: want a one-line name of at most 100 characters without surrounding spaces", n), "check_name")
	}
	c.checkSteps(k, slugs, defaultOK)
	c.checkApprovals(k, slugs)
	c.checkJira(k)
	c.checkDeployGate(k, slugs)
	return k.first()
}

// resolveFlows builds All from the built-in flows and the file's own,
// reporting invalid ones, and returns every step slug any flow has.
func (c *Config) resolveFlows(k *checker) (map[string]bool, error) {
	builtin, err := parseBuiltin()
	if err != nil {
		return nil, err
	}
	c.All = flow.Set{}
	for n, f := range builtin {
		c.All[n] = f
	}
	slugs := map[string]bool{}
	for _, f := range builtin {
		for _, s := range f.Steps {
			slugs[s.Slug] = true
		}
	}
	for _, name := range c.inFileOrder(k.root, "flows", keys(c.Flows)) {
		f := c.Flows[name]
		f.Name = name
		for _, s := range f.Steps {
			slugs[s.Slug] = true
		}
		if _, dup := builtin[name]; dup {
			k.add("flows."+name, "redefines a built-in flow; pick another name", "flows", name)
			continue
		}
		if err := f.Validate(); err != nil {
			var fe *flow.FieldError
			if !errors.As(err, &fe) {
				return nil, err
			}
			k.add(fe.Path, fe.Msg, append([]string{"flows", name}, splitPath(strings.TrimPrefix(fe.Path, "flows."+name))...)...)
			continue
		}
		c.All[name] = &f
	}
	return slugs, nil
}

// checkSteps checks the per-step executor entries: each names a step of
// some flow and a valid executor (alone when the default is invalid,
// which is reported already).
func (c *Config) checkSteps(k *checker, slugs map[string]bool, defaultOK bool) {
	for _, slug := range c.inFileOrder(k.root, "steps", keys(c.Steps)) {
		at := []string{"steps", slug}
		if !slugs[slug] {
			k.add("steps."+slug, "no flow has a step with this slug", at...)
			continue
		}
		ex := c.Steps[slug]
		ex.Agent = mention(ex.Agent)
		c.Steps[slug] = ex
		if defaultOK {
			checkExecutor(k, c.ExecutorFor(slug), "steps."+slug, at)
		} else { // the default is reported already; check the entry alone
			checkExecutor(k, Executor{Kind: ex.Kind, Agent: ex.Agent}, "steps."+slug, at)
		}
	}
}

func (c *Config) checkRoles(k *checker) {
	for _, role := range c.inFileOrder(k.root, "roles", keys(c.Roles)) {
		if role != "architect" && role != "critic" {
			k.add("roles."+role, "unknown role (want architect or critic)", "roles", role)
			continue
		}
		for i, l := range c.Roles[role] {
			at := []string{"roles", role, fmt.Sprintf("[%d]", i)}
			field := fmt.Sprintf("roles.%s[%d]", role, i)
			switch bare := strings.TrimPrefix(l, "@"); {
			case strings.TrimSpace(bare) == "":
				k.add(field, "empty login", at...)
			case strings.Contains(bare, "/"):
				k.add(field, fmt.Sprintf("%q: teams are not supported here; list the logins", l), at...)
			case !loginRE.MatchString(bare):
				k.add(field, fmt.Sprintf("%q is not a GitHub login", l), at...)
			}
		}
	}
}

// checkExecutor validates an executor (for a step: merged with the default)
// and reports whether it is usable.
func checkExecutor(k *checker, e Executor, field string, at []string) bool {
	n := len(k.errs)
	sub := func(key string) []string { return append(append([]string(nil), at...), key) }
	switch e.Kind {
	case "", flow.ExecManual, flow.ExecComment, flow.ExecDispatch:
	default:
		k.add(field+".kind", fmt.Sprintf("%q: want manual, comment or dispatch", e.Kind), sub("kind")...)
	}
	if e.Kind == flow.ExecDispatch && strings.TrimSpace(e.Workflow) == "" {
		k.add(field+".workflow", "the dispatch executor needs a workflow file name (e.g. autopilot-step.yml)", sub("workflow")...)
	}
	if e.Kind == flow.ExecComment && e.Agent == "" {
		k.add(field+".agent", "the comment executor needs an agent to mention (e.g. @claude)", sub("agent")...)
	}
	if e.Agent != "" && !mentionRE.MatchString(e.Agent) {
		k.add(field+".agent", fmt.Sprintf("%q: want a mention such as @claude or @org/team", e.Agent), sub("agent")...)
	}
	return len(k.errs) == n
}

// mention puts the "@" in front of an agent written without it, so the
// comment executor's prompt really notifies the agent.
func mention(agent string) string {
	agent = strings.TrimSpace(agent)
	if agent == "" || strings.HasPrefix(agent, "@") {
		return agent
	}
	return "@" + agent
}

func (c *Config) checkJira(k *checker) {
	if c.Tracker != "" && !knownTracker(c.Tracker) {
		k.add("tracker", fmt.Sprintf("%q: want %s (or leave it out: jira when Jira is configured, else local)", c.Tracker, trackerChoices()), "tracker")
	}
	j := c.Jira
	switch j.Deployment {
	case "", "cloud", "datacenter":
	default:
		k.add("jira.deployment", fmt.Sprintf("%q: want cloud or datacenter (or leave it out to detect)", j.Deployment), "jira", "deployment")
	}
	if j.Project != "" && !projectKeyRE.MatchString(j.Project) {
		k.add("jira.project", fmt.Sprintf("%q is not a Jira project key (e.g. PROJ)", j.Project), "jira", "project")
	}
	for _, f := range []struct{ key, v string }{
		{"epic_link_field", j.EpicLinkField}, {"epic_name_field", j.EpicNameField}, {"points_field", j.PointsField},
	} {
		if f.v != "" && !customRE.MatchString(f.v) {
			k.add("jira."+f.key, fmt.Sprintf("%q: want a custom field id such as customfield_10016", f.v), "jira", f.key)
		}
	}
	if t := j.TaskFiles; t != "" {
		if strings.HasPrefix(t, "/") || strings.Contains(t, `\`) || path.Clean(t) == ".." || strings.HasPrefix(path.Clean(t), "../") {
			k.add("jira.task_files", fmt.Sprintf("%q: want a folder inside the repository, e.g. _docs/02_tasks", t), "jira", "task_files")
		}
	}
}

// clamp applies defaults to limits the file leaves out (or sets to null)
// and silently clamps out-of-range values. NaN counts as left out.
func (c *Config) clamp(root *yaml.Node) {
	l := &c.Limits
	if !present(root, "limits", "max_sessions") {
		l.MaxSessions = DefaultMaxSessions
	}
	l.MaxSessions = clampInt(l.MaxSessions, 1, 50)
	if !present(root, "limits", "max_hours") || math.IsNaN(l.MaxHours) {
		l.MaxHours = DefaultMaxHours
	}
	l.MaxHours = clampFloat(l.MaxHours, 0.5, 24)
	if !present(root, "limits", "confidence_threshold") || math.IsNaN(l.ConfidenceThreshold) {
		l.ConfidenceThreshold = DefaultConfidence
	}
	l.ConfidenceThreshold = clampFloat(l.ConfidenceThreshold, 0, 1)
	if !present(root, "max_iterations") {
		c.MaxIterations = DefaultMaxIterations
	}
	c.MaxIterations = clampInt(c.MaxIterations, 1, 100)
}

func clampInt(v, lo, hi int) int { return max(lo, min(hi, v)) }

func clampFloat(v, lo, hi float64) float64 { return max(lo, min(hi, v)) }

// inFileOrder sorts map keys by their line under section, then by name, so
// errors and results do not depend on map iteration order.
func (c *Config) inFileOrder(root *yaml.Node, section string, names []string) []string {
	sort.Slice(names, func(i, j int) bool {
		li, lj := findLine(root, section, names[i]), findLine(root, section, names[j])
		if li != lj {
			return li < lj
		}
		return names[i] < names[j]
	})
	return names
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
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
