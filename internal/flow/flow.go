// Package flow defines workflows as data: a Flow is an ordered list of Steps
// with attributes (session boundary, Jira kind, evidence gate, ...) that the
// engine interprets. The built-in flows live in builtin.yml and are parsed
// with the same schema a user writes under `flows:` in .github/autopilot.yml.
// This package never does I/O beyond reading its embedded file.
package flow

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// Executor kinds.
const (
	ExecManual   = "manual"
	ExecComment  = "comment"
	ExecDispatch = "dispatch"
)

// Step is one step of a flow.
type Step struct {
	Slug  string `yaml:"slug" json:"slug"`
	Name  string `yaml:"name" json:"name"`
	Label string `yaml:"label,omitempty" json:"label,omitempty"` // banner label, default "Step N"
	// Produces says what the step should produce (shown in announcements).
	Produces string `yaml:"produces,omitempty" json:"produces,omitempty"`
	// Boundary: after this step completes, ask (fresh session / continue)
	// before starting the next one.
	Boundary bool `yaml:"boundary,omitempty" json:"boundary,omitempty"`
	// Jira is "epics" or "tasks" when the step declares Jira items.
	Jira string `yaml:"jira,omitempty" json:"jira,omitempty"`
	// SkipReason: skipping this step requires a reason.
	SkipReason bool `yaml:"skip_reason,omitempty" json:"skip_reason,omitempty"`
	// Evidence is "review" (an approving PR review) or "checks" (green checks
	// on the PR head); a bare "done" never completes such a step.
	Evidence string `yaml:"evidence,omitempty" json:"evidence,omitempty"`
	// Gate "approval": entering the step asks a human to approve / request
	// changes / abort (meta-repo config review).
	Gate string `yaml:"gate,omitempty" json:"gate,omitempty"`
	// Interview: leaving needs a recorded rationale or a maintainer's skip.
	Interview bool `yaml:"interview,omitempty" json:"interview,omitempty"`
	// Consensus: leaving needs an architect approval then a critic approval.
	Consensus bool `yaml:"consensus,omitempty" json:"consensus,omitempty"`
	// ReturnTo is the step a non-clean verdict returns to (review loop).
	ReturnTo string `yaml:"return_to,omitempty" json:"return_to,omitempty"`
	// Confirm: irreversible step; ask before starting it.
	Confirm bool `yaml:"confirm,omitempty" json:"confirm,omitempty"`
	// Implements marks steps whose completion closes a batch of tasks
	// (carryover is measured there).
	Implements bool `yaml:"implements,omitempty" json:"implements,omitempty"`
	// Noun names the step's work in questions ("start implementation?");
	// see Work for the default.
	Noun string `yaml:"noun,omitempty" json:"noun,omitempty"`
}

// Work is the step's work as a noun phrase for questions and options:
// Noun when set, else "the <Name> step" (step names are imperatives such as
// "Implement", which read badly after "start").
func (s Step) Work() string {
	if s.Noun != "" {
		return s.Noun
	}
	return "the " + s.Name + " step"
}

// Loop makes a flow continue at another step after its last one (the
// existing-code feature cycle); a Choose asks next feature / finish.
type Loop struct {
	To string `yaml:"to" json:"to"`
}

// Flow is an ordered list of steps.
type Flow struct {
	Name  string `yaml:"-" json:"name"`
	Title string `yaml:"title,omitempty" json:"title,omitempty"`
	Steps []Step `yaml:"steps" json:"steps"`
	Loop  *Loop  `yaml:"loop,omitempty" json:"loop,omitempty"`
	// ReviewLoop enables the seed-003 review-loop fields (slug, snapshot,
	// review cycles, max iterations).
	ReviewLoop bool `yaml:"review_loop,omitempty" json:"review_loop,omitempty"`
}

// Index returns the 0-based index of the step with the slug, or -1.
func (f *Flow) Index(slug string) int {
	for i, s := range f.Steps {
		if s.Slug == slug {
			return i
		}
	}
	return -1
}

// StepAt returns the step at the 1-based position n.
func (f *Flow) StepAt(n int) (Step, bool) {
	if n < 1 || n > len(f.Steps) {
		return Step{}, false
	}
	return f.Steps[n-1], true
}

// LabelOf returns the banner label of the 1-based step n.
func (f *Flow) LabelOf(n int) string {
	if s, ok := f.StepAt(n); ok && s.Label != "" {
		return s.Label
	}
	return fmt.Sprintf("Step %d", n)
}

var (
	slugRE     = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	flowNameRE = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
)

// MaxNameLen is the longest step slug or flow name: both end up in labels
// ("autopilot/step:<slug>", "autopilot/flow:<name>", 15 characters of
// prefix) and GitHub refuses label names longer than 50 characters.
const MaxNameLen = 35

// ValidSlug reports whether s is a kebab-case slug of at most MaxNameLen
// characters.
func ValidSlug(s string) bool { return len(s) <= MaxNameLen && slugRE.MatchString(s) }

// FieldError names the flow, step and field that is wrong.
type FieldError struct {
	Path string // e.g. "flows.greenfield.steps[2].jira"
	Msg  string
}

// Error formats the error as "path: message".
func (e *FieldError) Error() string { return e.Path + ": " + e.Msg }

// Validate checks the flow's internal consistency. Errors name the field path.
func (f *Flow) Validate() error {
	base := "flows." + f.Name
	if err := f.validateShape(base); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, s := range f.Steps {
		if err := f.validateStep(fmt.Sprintf("%s.steps[%d]", base, i), s, seen); err != nil {
			return err
		}
		seen[s.Slug] = true
	}
	for i, s := range f.Steps {
		if err := f.validateReturnTo(fmt.Sprintf("%s.steps[%d].return_to", base, i), i, s.ReturnTo, seen); err != nil {
			return err
		}
	}
	if f.Loop != nil && !seen[f.Loop.To] {
		return &FieldError{base + ".loop.to", fmt.Sprintf("unknown step %q", f.Loop.To)}
	}
	return nil
}

// validateShape checks the flow's name (it becomes a label) and how many
// steps it has.
func (f *Flow) validateShape(base string) error {
	if !flowNameRE.MatchString(f.Name) {
		return &FieldError{base, "flow name must be kebab-case (a-z, 0-9, '-')"}
	}
	if len(f.Name) > MaxNameLen {
		return &FieldError{base, fmt.Sprintf("flow name longer than %d characters (it becomes a label)", MaxNameLen)}
	}
	if len(f.Steps) == 0 {
		return &FieldError{base + ".steps", "a flow needs at least one step"}
	}
	if len(f.Steps) > 40 {
		return &FieldError{base + ".steps", "at most 40 steps"}
	}
	return nil
}

// validateStep checks one step's own fields at path p; seen holds the slugs
// of the steps before it.
func (f *Flow) validateStep(p string, s Step, seen map[string]bool) error {
	if !ValidSlug(s.Slug) {
		return &FieldError{p + ".slug", fmt.Sprintf("%q is not a kebab-case slug of at most %d characters", s.Slug, MaxNameLen)}
	}
	if s.Slug == "done" {
		return &FieldError{p + ".slug", `"done" is reserved`}
	}
	if seen[s.Slug] {
		return &FieldError{p + ".slug", fmt.Sprintf("duplicate step %q", s.Slug)}
	}
	if strings.TrimSpace(s.Name) == "" {
		return &FieldError{p + ".name", "required"}
	}
	if err := s.validateWords(p); err != nil {
		return err
	}
	// The engine keeps consensus approvals and return-to-plan findings
	// in the review-loop state, which only review_loop flows have.
	if s.Consensus && !f.ReviewLoop {
		return &FieldError{p + ".consensus", "needs review_loop: true on the flow"}
	}
	return nil
}

// validateWords checks the step fields that take one of a few words.
func (s Step) validateWords(p string) error {
	for _, w := range []struct {
		field, value, want string
		allowed            []string
	}{
		{"jira", s.Jira, "want epics or tasks", []string{"epics", "tasks"}},
		{"evidence", s.Evidence, "want review or checks", []string{"review", "checks"}},
		{"gate", s.Gate, "want approval", []string{"approval"}},
	} {
		if w.value != "" && !slices.Contains(w.allowed, w.value) {
			return &FieldError{p + "." + w.field, fmt.Sprintf("%q: %s", w.value, w.want)}
		}
	}
	return nil
}

// validateReturnTo checks the return_to (at path p) of step i: it names an
// earlier step, in a review_loop flow. seen holds every step's slug.
func (f *Flow) validateReturnTo(p string, i int, to string, seen map[string]bool) error {
	switch {
	case to == "":
		return nil
	case !seen[to]:
		return &FieldError{p, fmt.Sprintf("unknown step %q", to)}
	case f.Index(to) >= i:
		return &FieldError{p, "must name an earlier step"}
	case !f.ReviewLoop:
		return &FieldError{p, "needs review_loop: true on the flow"}
	}
	return nil
}

//go:embed builtin.yml
var builtinYAML []byte

// BuiltinSource returns the YAML the built-in flows are defined in.
func BuiltinSource() []byte { return append([]byte(nil), builtinYAML...) }

// Set is a name → flow table.
type Set map[string]*Flow

// Names returns the flow names, sorted.
func (s Set) Names() []string {
	out := make([]string, 0, len(s))
	for n := range s {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// StepTimeout is the default time a dispatched step may run before the sweep
// treats it as failed.
const StepTimeout = 6 * time.Hour
