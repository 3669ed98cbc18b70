package action_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/autopilot-dev/autopilot/internal/action"
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/wiring"
)

// moduleRoot walks up from the working directory to go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// yamlValues parses every document of a YAML stream.
func yamlValues(data []byte) ([]any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if v != nil {
			docs = append(docs, v)
		}
	}
	if len(docs) == 0 {
		return nil, errors.New("no YAML document")
	}
	return docs, nil
}

// yamlDocs parses a YAML stream whose documents are all mappings.
func yamlDocs(data []byte) ([]map[string]any, error) {
	vs, err := yamlValues(data)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(vs))
	for i, v := range vs {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("document %d is a %T, not a mapping", i+1, v)
		}
		out[i] = m
	}
	return out, nil
}

// repoYAML lists every .yml/.yaml file of the module (not testdata), by
// path relative to the root.
func repoYAML(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(p); ext == ".yml" || ext == ".yaml" {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEveryYAMLFileIsValid parses every YAML file of the repository and
// checks the structure GitHub (or Docker Compose, or Kubernetes) needs.
func TestEveryYAMLFileIsValid(t *testing.T) {
	root := moduleRoot(t)
	files := repoYAML(t, root)
	for _, want := range []string{"action.yml", ".github/workflows/ci.yml", ".github/workflows/release.yml", "docs/examples/autopilot.yml"} {
		if !slices.Contains(files, want) {
			t.Errorf("%s is missing (found %v)", want, files)
		}
	}
	workflows := 0
	for _, rel := range files {
		t.Run(rel, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root, rel))
			if err != nil {
				t.Fatal(err)
			}
			docs, err := yamlDocs(data)
			if err != nil {
				t.Fatalf("does not parse: %v", err)
			}
			switch {
			case rel == "action.yml":
				checkAction(t, docs[0])
			case strings.HasPrefix(rel, ".github/workflows/"):
				workflows++
				checkWorkflow(t, docs[0])
			case strings.HasPrefix(rel, "docs/examples/"):
				if _, ok := docs[0]["jobs"]; ok {
					workflows++
					checkWorkflow(t, docs[0])
				} else if _, err := config.Parse(data); err != nil {
					t.Errorf("neither a workflow nor a valid autopilot config: %v", err)
				}
			case rel == ".github/autopilot.yml" || strings.HasSuffix(rel, "/autopilot.yml"):
				if _, err := config.Parse(data); err != nil {
					t.Errorf("invalid autopilot config: %v", err)
				}
			case strings.HasPrefix(rel, "deploy/"):
				checkDeploy(t, rel, docs)
			}
		})
	}
	if workflows < 3 {
		t.Errorf("checked %d workflows, want at least 3", workflows)
	}
}

// Event names GitHub Actions accepts under on: (the ones this repository
// could use; a typo here would silently never trigger).
var knownEvents = map[string]bool{
	"push": true, "pull_request": true, "pull_request_target": true, "pull_request_review": true,
	"pull_request_review_comment": true, "issues": true, "issue_comment": true, "workflow_run": true,
	"workflow_dispatch": true, "workflow_call": true, "schedule": true, "release": true,
	"repository_dispatch": true, "merge_group": true, "check_run": true, "check_suite": true,
}

// Permission scopes of the workflow syntax and their levels.
var (
	knownScopes = map[string]bool{
		"actions": true, "artifact-metadata": true, "attestations": true, "checks": true, "contents": true, "deployments": true,
		"discussions": true, "id-token": true, "issues": true, "models": true, "packages": true, "pages": true,
		"pull-requests": true, "repository-projects": true, "security-events": true, "statuses": true,
	}
	knownLevels = map[string]bool{"read": true, "write": true, "none": true}
	usesRef     = regexp.MustCompile(`^([A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[A-Za-z0-9_./-]+|\./[A-Za-z0-9_./-]*|docker://\S+)$`)
)

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// checkWorkflow checks what GitHub needs to accept a workflow file.
func checkWorkflow(t *testing.T, wf map[string]any) {
	t.Helper()
	on, ok := wf["on"]
	if !ok {
		t.Fatal("no on: triggers")
	}
	for _, ev := range triggerNames(on) {
		if !knownEvents[ev] {
			t.Errorf("unknown trigger %q", ev)
		}
	}
	jobs := asMap(wf["jobs"])
	if len(jobs) == 0 {
		t.Fatal("no jobs")
	}
	checkPermissions(t, "workflow", wf["permissions"])
	for name, j := range jobs {
		job := asMap(j)
		if job == nil {
			t.Errorf("job %s is not a mapping", name)
			continue
		}
		checkPermissions(t, "job "+name, job["permissions"])
		if uses, ok := job["uses"].(string); ok { // a reusable workflow call
			if !usesRef.MatchString(uses) {
				t.Errorf("job %s: uses %q is not owner/repo/path@ref or ./path", name, uses)
			}
			continue
		}
		if job["runs-on"] == nil {
			t.Errorf("job %s has no runs-on", name)
		}
		steps, _ := job["steps"].([]any)
		if len(steps) == 0 {
			t.Errorf("job %s has no steps", name)
		}
		for i, s := range steps {
			step := asMap(s)
			_, hasUses := step["uses"]
			_, hasRun := step["run"]
			if hasUses == hasRun {
				t.Errorf("job %s step %d: want exactly one of uses and run, got %v", name, i, step)
			}
			if u, ok := step["uses"].(string); ok && !usesRef.MatchString(u) {
				t.Errorf("job %s step %d: uses %q is not owner/repo@ref, ./path or docker://", name, i, u)
			}
		}
		checkJobName(t, name, job)
	}
	checkExpressions(t, wf, "")
}

// checkJobName fails on a job that runs autopilot under the PR check's
// default name: GitHub names the job's own check run after the job (its
// name:, else its id), and that run would stand in for the check.
func checkJobName(t *testing.T, id string, job map[string]any) {
	t.Helper()
	if len(actionSteps(map[string]any{"jobs": map[string]any{id: job}})) == 0 {
		return
	}
	for _, n := range []any{id, job["name"]} {
		if s, _ := n.(string); strings.EqualFold(s, config.DefaultCheckName) {
			t.Errorf("job %s runs autopilot under the PR check's name %q: its own check run would stand in for the check (docs/action.md, \"The job's name\")", id, s)
		}
	}
}

// TestExampleWorkflowTypesAreHandled: every event type the documented
// workflow runs for is one autopilot acts on, so each run on a PR head
// checks the job's name (an ignored type ends with no API call).
func TestExampleWorkflowTypesAreHandled(t *testing.T) {
	wf, _ := exampleWorkflow(t)
	kinds := map[string]ghevent.Kind{}
	for _, k := range ghevent.Kinds() {
		kinds[k.Name] = k
	}
	for ev, v := range asMap(wf["on"]) {
		k, ok := kinds[ev]
		if !ok {
			t.Errorf("on.%s: not an event autopilot acts on", ev)
			continue
		}
		types, _ := asMap(v)["types"].([]any)
		for _, ty := range types {
			if s, _ := ty.(string); !k.Sweep && !k.Handles(s) {
				t.Errorf("on.%s.types lists %q, which autopilot ignores", ev, s)
			}
		}
	}
}

// triggerNames lists the events of an on: value (string, list or map).
func triggerNames(on any) []string {
	switch v := on.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, fmt.Sprint(e))
		}
		return out
	case map[string]any:
		var out []string
		for k := range v {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	return nil
}

func checkPermissions(t *testing.T, where string, p any) {
	t.Helper()
	switch v := p.(type) {
	case nil:
	case string:
		if v != "read-all" && v != "write-all" && v != "{}" {
			t.Errorf("%s: permissions %q", where, v)
		}
	case map[string]any:
		for scope, level := range v {
			if !knownScopes[scope] || !knownLevels[fmt.Sprint(level)] {
				t.Errorf("%s: permission %s: %v is not a known scope and level", where, scope, level)
			}
		}
	default:
		t.Errorf("%s: permissions of type %T", where, p)
	}
}

// checkExpressions fails on a ${{ without its closing }}.
func checkExpressions(t *testing.T, v any, path string) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			checkExpressions(t, e, path+"."+k)
		}
	case []any:
		for i, e := range x {
			checkExpressions(t, e, fmt.Sprintf("%s[%d]", path, i))
		}
	case string:
		rest := x
		for {
			i := strings.Index(rest, "${{")
			if i < 0 {
				break
			}
			j := strings.Index(rest[i:], "}}")
			if j < 0 {
				t.Errorf("%s: unclosed expression in %q", path, x)
				break
			}
			rest = rest[i+j+2:]
		}
	}
}

// checkAction checks action.yml against GitHub's metadata syntax and the
// code: the inputs and outputs must be exactly what the Action reads and
// writes, and the defaults must be the code's defaults.
func checkAction(t *testing.T, a map[string]any) {
	t.Helper()
	for _, k := range []string{"name", "description"} {
		if s, _ := a[k].(string); strings.TrimSpace(s) == "" {
			t.Errorf("action.yml: %s is empty", k)
		}
	}
	runs := asMap(a["runs"])
	if runs["using"] != "docker" {
		t.Errorf("runs.using = %v, want docker", runs["using"])
	}
	image, _ := runs["image"].(string)
	if image == "" {
		t.Error("runs.image is empty")
	} else if !strings.HasPrefix(image, "docker://") {
		if _, err := os.Stat(filepath.Join(moduleRoot(t), image)); err != nil {
			t.Errorf("runs.image %q: %v", image, err)
		}
	}
	if args, _ := runs["args"].([]any); len(args) == 0 || args[0] != "action" {
		t.Errorf("runs.args = %v, want [action]", runs["args"])
	}
	b := asMap(a["branding"])
	if b["icon"] == nil || b["color"] == nil {
		t.Errorf("branding = %v, want an icon and a colour", b)
	}
	inputs, outputs := asMap(a["inputs"]), asMap(a["outputs"])
	if got, want := keys(inputs), sorted(wiring.InputNames); !slices.Equal(got, want) {
		t.Errorf("action.yml inputs %v, code reads %v", got, want)
	}
	if got, want := keys(outputs), sorted(action.OutputNames); !slices.Equal(got, want) {
		t.Errorf("action.yml outputs %v, code writes %v", got, want)
	}
	for name, v := range inputs {
		in := asMap(v)
		if s, _ := in["description"].(string); s == "" {
			t.Errorf("input %s has no description", name)
		}
		if name != strings.ToLower(name) || strings.Contains(name, "-") {
			t.Errorf("input %s is not snake_case", name)
		}
	}
	for name, v := range outputs {
		if s, _ := asMap(v)["description"].(string); s == "" {
			t.Errorf("output %s has no description", name)
		}
	}
	if d := asMap(inputs["github_token"])["default"]; d != "${{ github.token }}" {
		t.Errorf("github_token default %v, want ${{ github.token }}", d)
	}
	// The defaults in action.yml are the code's defaults: passing them
	// explicitly changes nothing.
	env := map[string]string{}
	for name, v := range inputs {
		d := fmt.Sprint(asMap(v)["default"])
		if asMap(v)["default"] == nil || strings.Contains(d, "${{") {
			continue
		}
		env["INPUT_"+strings.ToUpper(name)] = d
	}
	withDefaults, err := wiring.LoadInputs(func(k string) string { return env[k] }, "")
	if err != nil {
		t.Fatalf("the action.yml defaults are rejected: %v", err)
	}
	bare, err := wiring.LoadInputs(func(string) string { return "" }, "")
	if err != nil {
		t.Fatal(err)
	}
	if withDefaults != bare {
		t.Errorf("action.yml defaults give %+v, the code's defaults %+v", withDefaults, bare)
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sorted(xs []string) []string {
	out := slices.Clone(xs)
	sort.Strings(out)
	if len(slices.Compact(slices.Clone(out))) != len(out) {
		panic("duplicate names in " + strings.Join(xs, ","))
	}
	return out
}

// checkDeploy checks the App deployment files: Compose services have an
// image or a build; Kubernetes objects have apiVersion, kind and a name.
func checkDeploy(t *testing.T, rel string, docs []map[string]any) {
	t.Helper()
	for i, d := range docs {
		if svcs := asMap(d["services"]); svcs != nil {
			for name, s := range svcs {
				if asMap(s)["image"] == nil && asMap(s)["build"] == nil {
					t.Errorf("%s: service %s has neither image nor build", rel, name)
				}
			}
			continue
		}
		if d["groups"] != nil || d["rule_files"] != nil {
			checkPrometheusRules(t, rel, d) // deploy/prometheus: promtool runs them in .ci/run
			continue
		}
		if d["apiVersion"] == nil || d["kind"] == nil || asMap(d["metadata"])["name"] == nil {
			t.Errorf("%s document %d: want apiVersion, kind and metadata.name", rel, i)
		}
	}
}

// checkPrometheusRules checks the shape of a Prometheus rule file (groups
// of named rules, each an alert or a record with an expr) or of its
// promtool test file (rule_files and tests).
func checkPrometheusRules(t *testing.T, rel string, d map[string]any) {
	t.Helper()
	if d["rule_files"] != nil {
		if tests, _ := d["tests"].([]any); len(tests) == 0 {
			t.Errorf("%s: a promtool test file without tests", rel)
		}
		return
	}
	groups, _ := d["groups"].([]any)
	for i, g := range groups {
		rules, _ := asMap(g)["rules"].([]any)
		if asMap(g)["name"] == nil || len(rules) == 0 {
			t.Errorf("%s: group %d wants a name and rules", rel, i)
		}
		for j, r := range rules {
			if (asMap(r)["alert"] == nil && asMap(r)["record"] == nil) || asMap(r)["expr"] == nil {
				t.Errorf("%s: group %d rule %d wants alert (or record) and expr", rel, i, j)
			}
		}
	}
}

// exampleWorkflow reads the workflow users copy.
func exampleWorkflow(t *testing.T) (map[string]any, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "examples", "autopilot.yml"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := yamlDocs(data)
	if err != nil {
		t.Fatal(err)
	}
	return docs[0], data
}

// TestExampleWorkflow: the workflow users copy has the permissions, the
// per-issue concurrency group and a trigger for every event of PRODUCT §4.
func TestExampleWorkflow(t *testing.T) {
	wf, _ := exampleWorkflow(t)
	perms := asMap(wf["permissions"])
	for scope, level := range map[string]string{"issues": "write", "pull-requests": "write", "contents": "read"} {
		if perms[scope] != level {
			t.Errorf("permissions.%s = %v, want %s", scope, perms[scope], level)
		}
	}
	conc := asMap(wf["concurrency"])
	group, _ := conc["group"].(string)
	if !strings.Contains(group, "github.event.issue.number") || !strings.Contains(group, "github.event.pull_request.number") {
		t.Errorf("concurrency.group = %q, want one group per issue (and per PR)", group)
	}
	if v, ok := conc["cancel-in-progress"].(bool); !ok || v {
		t.Errorf("concurrency.cancel-in-progress = %v, want false", conc["cancel-in-progress"])
	}
	on := asMap(wf["on"])
	wantTypes := map[string][]string{
		"issues":              {"labeled", "unlabeled", "closed", "reopened"},
		"issue_comment":       {"created", "edited"},
		"pull_request":        {"opened", "edited", "closed"},
		"pull_request_review": {"submitted"},
		"workflow_run":        {"completed"},
	}
	for ev, types := range wantTypes {
		got, _ := asMap(on[ev])["types"].([]any)
		for _, ty := range types {
			if !slices.Contains(got, any(ty)) {
				t.Errorf("on.%s.types = %v, lacks %s", ev, got, ty)
			}
		}
	}
	if wfs, _ := asMap(on["workflow_run"])["workflows"].([]any); len(wfs) == 0 {
		t.Error("on.workflow_run lists no workflows")
	}
	sched, _ := on["schedule"].([]any)
	if len(sched) == 0 || asMap(sched[0])["cron"] == nil {
		t.Errorf("on.schedule = %v, want a cron", on["schedule"])
	} else if f := strings.Fields(fmt.Sprint(asMap(sched[0])["cron"])); len(f) != 5 {
		t.Errorf("cron %v does not have 5 fields", f)
	}
	if _, ok := on["workflow_dispatch"]; !ok {
		t.Error("no workflow_dispatch trigger (the manual sweep)")
	}
	steps := actionSteps(wf)
	if len(steps) != 1 {
		t.Fatalf("%d steps use the action, want 1", len(steps))
	}
	checkWith(t, "docs/examples/autopilot.yml", steps[0])
}

// actionSteps returns the steps that use autopilot.
func actionSteps(wf map[string]any) []map[string]any {
	var out []map[string]any
	for _, j := range asMap(wf["jobs"]) {
		steps, _ := asMap(j)["steps"].([]any)
		for _, s := range steps {
			if u, _ := asMap(s)["uses"].(string); strings.HasPrefix(u, "autopilot-dev/autopilot@") || u == "./" {
				out = append(out, asMap(s))
			}
		}
	}
	return out
}

// checkWith fails on a with: key the action does not declare.
func checkWith(t *testing.T, where string, step map[string]any) {
	t.Helper()
	for k := range asMap(step["with"]) {
		if !slices.Contains(wiring.InputNames, k) {
			t.Errorf("%s: with.%s is not an input of the action", where, k)
		}
	}
}

var fence = regexp.MustCompile("(?ms)^[ \t]*```ya?ml[^\n]*\n(.*?)^[ \t]*```")

// TestDocsYAMLSnippets parses every YAML block of README.md and docs/*.md:
// each must parse, its autopilot steps may only pass declared inputs, and
// the workflow shown in docs/action.md must be the example file.
func TestDocsYAMLSnippets(t *testing.T) {
	root := moduleRoot(t)
	mds, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	mds = append(mds, filepath.Join(root, "README.md"))
	blocks := 0
	for _, md := range mds {
		data, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, md)
		for i, m := range fence.FindAllSubmatch(data, -1) {
			blocks++
			where := fmt.Sprintf("%s block %d", rel, i+1)
			docs, err := yamlValues(m[1])
			if err != nil {
				t.Errorf("%s does not parse: %v\n%s", where, err, m[1])
				continue
			}
			for _, d := range docs {
				walkSteps(d, func(step map[string]any) {
					if u, _ := step["uses"].(string); strings.HasPrefix(u, "autopilot-dev/autopilot@") {
						checkWith(t, where, step)
					}
				})
				if m := asMap(d); m["jobs"] != nil {
					checkWorkflow(t, m)
				}
			}
		}
	}
	if blocks == 0 {
		t.Fatal("found no YAML blocks in the docs")
	}
	// docs/action.md shows the example workflow; they must not drift.
	doc, err := os.ReadFile(filepath.Join(root, "docs", "action.md"))
	if err != nil {
		t.Fatal(err)
	}
	wf, _ := exampleWorkflow(t)
	found := false
	for _, m := range fence.FindAllSubmatch(doc, -1) {
		if !bytes.Contains(m[1], []byte("copy of docs/examples/autopilot.yml")) {
			continue
		}
		found = true
		docs, err := yamlDocs(m[1])
		if err != nil {
			t.Fatal(err)
		}
		var d []string
		diffYAML(docs[0], wf, "", &d)
		if len(d) > 0 {
			t.Errorf("the workflow in docs/action.md differs from docs/examples/autopilot.yml:\n%s", strings.Join(d, "\n"))
		}
	}
	if !found {
		t.Error("docs/action.md does not show the example workflow")
	}
}

// walkSteps calls f for every mapping that looks like a step (has uses).
func walkSteps(v any, f func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["uses"]; ok {
			f(x)
		}
		for _, e := range x {
			walkSteps(e, f)
		}
	case []any:
		for _, e := range x {
			walkSteps(e, f)
		}
	}
}

// diffYAML lists the paths where two decoded YAML values differ.
func diffYAML(a, b any, path string, out *[]string) {
	ma, aok := a.(map[string]any)
	mb, bok := b.(map[string]any)
	if aok && bok {
		ks := keys(ma)
		for _, k := range keys(mb) {
			if _, ok := ma[k]; !ok {
				ks = append(ks, k)
			}
		}
		for _, k := range ks {
			diffYAML(ma[k], mb[k], path+"."+k, out)
		}
		return
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		*out = append(*out, fmt.Sprintf("%s: %v vs %v", path, a, b))
	}
}
