package transcript_test

// The coverage test: every flow, gate kind, gate action, effect kind,
// command, engine event, step attribute, executor kind and stop reason the code defines
// has a transcript that exercises it. The lists are read from the code
// (the flow set, the engine's openGate calls and event types, its help
// reply, the gate action and effect tables, the flow schema, the constants), so adding one without a
// transcript fails here.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/flow"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/transcript"
)

// customFlow names the transcript of a flow defined in the config file.
const customFlow = "custom"

func TestTranscriptCoverage(t *testing.T) {
	files := readTranscripts(t, "testdata/engine")
	t.Run("files", func(t *testing.T) { coverFiles(t, files) })
	t.Run("outputs", func(t *testing.T) { coverOutputs(t, files) })
	t.Run("runs", func(t *testing.T) { coverRuns(t, files) })
	t.Run("inputs", func(t *testing.T) {
		said := commandsSaid(files)
		for _, cmd := range commands(t) {
			if !said[cmd] {
				t.Errorf("no transcript sends /autopilot %s", cmd)
			}
		}
		used := attributesUsed(t, files)
		for _, a := range attributes(t) {
			if !used[a] {
				t.Errorf("no transcript runs a flow with %s", a)
			}
		}
	})
}

// coverFiles: a transcript per flow (flow-<name>.txt, flow-custom.txt for
// a flow of the config) and per gate kind (gate-<kind>.txt).
func coverFiles(t *testing.T, files map[string]*transcript.File) {
	for _, name := range append(config.Default().All.Names(), customFlow) {
		f := files["flow-"+name]
		switch {
		case f == nil:
			t.Errorf("flow %s has no transcript testdata/engine/flow-%s.txt", name, name)
		case name == customFlow && !strings.Contains(f.String(), "\nflows:"):
			t.Errorf("flow-%s.txt defines no flow in its config", name)
		case name != customFlow && !strings.Contains(f.String(), `+ flow = "`+name+`"`):
			t.Errorf("flow-%s.txt never runs the %s flow", name, name)
		}
	}
	for _, kind := range gateKinds(t) {
		f := files["gate-"+kind]
		switch {
		case f == nil:
			t.Errorf("gate kind %s has no transcript testdata/engine/gate-%s.txt", kind, kind)
		case !regexp.MustCompile(`autopilot:gate g[0-9]+-` + regexp.QuoteMeta(kind)).MatchString(f.String()):
			t.Errorf("gate-%s.txt never opens a %s gate", kind, kind)
		}
	}
}

// coverOutputs: every executor kind and stop reason shows in some
// transcript's state changes.
func coverOutputs(t *testing.T, files map[string]*transcript.File) {
	var all strings.Builder
	for _, f := range files {
		all.WriteString(f.String())
	}
	for _, kind := range constants(t, "../flow", "Exec") {
		if !regexp.MustCompile(`exec\.executor(: "[^"]*" →| =) "` + kind + `"`).MatchString(all.String()) {
			t.Errorf("no transcript runs a step with the %s executor", kind)
		}
	}
	for _, reason := range append(constants(t, "../engine", "Kill"), constants(t, "../engine", "Stop")...) {
		if !regexp.MustCompile(`stop\.reason(: "[^"]*" →| =) "` + reason + `"`).MatchString(all.String()) {
			t.Errorf("no transcript stops a run with %s", reason)
		}
	}
}

// coverRuns plays the transcripts again and checks that every engine
// event type is applied, every gate action taken and every effect kind
// written.
func coverRuns(t *testing.T, files map[string]*transcript.File) {
	applied, actions, effects := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, f := range files {
		d := newEngineDriver(t)
		for _, c := range f.Cases {
			d.do(c)
		}
		maps.Copy(applied, d.applied)
		maps.Copy(actions, d.actions)
		for k := range d.effects {
			effects[k] = true
		}
	}
	for k := range state.EffectKinds {
		if !effects[string(k)] {
			t.Errorf("no transcript writes an effect of kind %s", k)
		}
	}
	for _, a := range state.ActionKinds() {
		if !actions[string(a)] {
			t.Errorf("no transcript answers a gate with an option whose action is %s", a)
		}
	}
	for _, ev := range eventTypes(t) {
		if !applied["events."+ev] {
			t.Errorf("no transcript applies the engine event %s", ev)
		}
	}
}

// TestTranscriptReconcileCoverage: every event kind the reconciler handles
// (ghevent's table: those with actions or a sweep) is delivered by some
// reconcile transcript.
func TestTranscriptReconcileCoverage(t *testing.T) {
	delivered := map[string]bool{}
	for _, f := range readTranscripts(t, "testdata/reconcile") {
		d := newReconcileDriver(t)
		for _, c := range f.Cases {
			d.do(c)
		}
		for k := range d.delivered {
			delivered[k] = true
		}
	}
	for _, k := range ghevent.Kinds() {
		if (len(k.Actions) > 0 || k.Sweep) && !delivered[k.Name] {
			t.Errorf("no reconcile transcript delivers a %s event", k.Name)
		}
	}
}

// readTranscripts parses every transcript in dir, by base name.
func readTranscripts(t *testing.T, dir string) map[string]*transcript.File {
	paths, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*transcript.File{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := transcript.Parse(string(b))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[strings.TrimSuffix(filepath.Base(p), ".txt")] = f
	}
	return out
}

// gateKinds reads the engine's openGate calls: the kind is the first
// argument, a state.GateKind constant or a call of one of state's
// per-step kinds on the step's slug (state.GateSkip(slug) is kind "skip"),
// or a deploy question's (deploygate.Kind(env, sha) is kind "deploy").
func gateKinds(t *testing.T) []string {
	consts := gateKindConsts(t)
	perStep := map[string]func(string) state.GateKind{
		"GateApproval": state.GateApproval, "GateConfirm": state.GateConfirm,
		"GateSkip": state.GateSkip, "GateRollback": state.GateRollback,
	}
	seen := map[string]bool{}
	for _, file := range parseDir(t, "../engine") {
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "openGate" || len(call.Args) == 0 {
				return true
			}
			switch arg := call.Args[0].(type) {
			case *ast.SelectorExpr:
				if v, ok := consts[arg.Sel.Name]; ok {
					seen[v] = true
					return true
				}
			case *ast.CallExpr:
				if f, ok := arg.Fun.(*ast.SelectorExpr); ok && perStep[f.Sel.Name] != nil {
					seen[strings.TrimSuffix(string(perStep[f.Sel.Name]("")), "-")] = true
					return true
				}
				if f, ok := arg.Fun.(*ast.SelectorExpr); ok && f.Sel.Name == "Kind" {
					if pkg, ok := f.X.(*ast.Ident); ok && pkg.Name == "deploygate" {
						seen["deploy"] = true // a deploy question: deploy-<sha>-<environment>
						return true
					}
				}
			}
			t.Errorf("%s: openGate's kind is not a state.GateKind constant or per-step kind; teach gateKinds to read it", fset.Position(call.Pos()))
			return true
		})
	}
	if len(seen) == 0 {
		t.Fatal("found no openGate calls in internal/engine")
	}
	return sorted(seen)
}

// gateKindConsts reads package state's GateKind constants: name → value.
func gateKindConsts(t *testing.T) map[string]string {
	out := map[string]string{}
	for _, file := range parseDir(t, "../state") {
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "GateKind" {
					continue
				}
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						out[name.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("found no GateKind constants in internal/state")
	}
	return out
}

// eventTypes reads the engine's event types: those with an eventName
// method.
func eventTypes(t *testing.T) []string {
	seen := map[string]bool{}
	for _, file := range parseDir(t, "../engine") {
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "eventName" || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			typ := fn.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				seen[id.Name] = true
			}
		}
	}
	if len(seen) == 0 {
		t.Fatal("found no engine event types (eventName methods)")
	}
	return sorted(seen)
}

// commands reads the commands from the engine's answer to /autopilot
// help (its usage lines "- `/autopilot <words> <args>`"): a command is the
// words before its first argument ("done", "jira sync").
func commands(t *testing.T) []string {
	d := newEngineDriver(t)
	d.do(&transcript.Case{Cmd: "start", Args: []transcript.Arg{{Key: "flow", Val: "greenfield"}}})
	out := d.do(&transcript.Case{Cmd: "comment", Args: []transcript.Arg{{Key: "maria"}}, Input: "/autopilot help"})
	seen := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		_, syn, ok := strings.Cut(l, "- `/autopilot ")
		if !ok {
			continue
		}
		syn, _, _ = strings.Cut(syn, "`")
		var words []string
		for _, w := range strings.Fields(syn) {
			if strings.ContainsAny(w[:1], "<[-") {
				break
			}
			words = append(words, w)
		}
		seen[strings.Join(words, " ")] = true
	}
	if len(seen) < 5 {
		t.Fatalf("read %d commands from the help reply:\n%s", len(seen), out)
	}
	return sorted(seen)
}

// commandsSaid returns every "/autopilot ..." first line the transcripts'
// comments send, as its words and each prefix of them ("jira sync" also
// counts as "jira").
func commandsSaid(files map[string]*transcript.File) map[string]bool {
	said := map[string]bool{}
	for _, f := range files {
		for _, c := range f.Cases {
			first, _, _ := strings.Cut(c.Input, "\n")
			rest, ok := strings.CutPrefix(first, "/autopilot ")
			if c.Cmd != "comment" || !ok {
				continue
			}
			words := strings.Fields(rest)
			for i := range words {
				said[strings.Join(words[:i+1], " ")] = true
			}
		}
	}
	return said
}

// constants returns the string values of the package-level constants in
// dir whose names start with prefix.
func constants(t *testing.T, dir, prefix string) []string {
	seen := map[string]bool{}
	for _, file := range parseDir(t, dir) {
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !strings.HasPrefix(n.Name, prefix) || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						seen[s] = true
					}
				}
			}
		}
	}
	if len(seen) == 0 {
		t.Fatalf("no %s* constants in %s", prefix, dir)
	}
	return sorted(seen)
}

var fset = token.NewFileSet()

// parseDir parses the non-test Go files of dir and of the packages below
// it (engine/prose, engine/checkview), so a gate or a constant that moves
// into a subpackage is still found.
func parseDir(t *testing.T, dir string) []*ast.File {
	var out []*ast.File
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case e.IsDir() && e.Name() == "testdata":
			return filepath.SkipDir
		case e.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err == nil {
			out = append(out, f)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// descriptive are the schema fields that name or describe a step or flow
// rather than change how the engine runs it.
var descriptive = map[string]bool{"slug": true, "name": true, "label": true, "produces": true, "noun": true, "title": true, "steps": true, "-": true}

// attributes lists what the flow schema can ask of the engine: every
// behavioural field of flow.Flow and flow.Step ("step.boundary",
// "flow.loop"), and for a string field with a fixed set of values (read
// from the switch in flow.Validate) each value ("step.evidence=review").
func attributes(t *testing.T) []string {
	values := enumValues(t)
	var out []string
	for _, x := range []struct {
		prefix string
		typ    reflect.Type
	}{{"flow", reflect.TypeOf(flow.Flow{})}, {"step", reflect.TypeOf(flow.Step{})}} {
		for i := 0; i < x.typ.NumField(); i++ {
			f := x.typ.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if descriptive[tag] {
				continue
			}
			if vs := values[f.Name]; len(vs) > 0 {
				for _, v := range vs {
					out = append(out, fmt.Sprintf("%s.%s=%s", x.prefix, tag, v))
				}
				continue
			}
			out = append(out, x.prefix+"."+tag)
		}
	}
	return out
}

// enumValues reads the switches on s.<Field> in the flow package: field →
// the non-empty string cases.
func enumValues(t *testing.T) map[string][]string {
	out := map[string][]string{}
	for _, file := range parseDir(t, "../flow") {
		ast.Inspect(file, func(n ast.Node) bool {
			sw, ok := n.(*ast.SwitchStmt)
			if !ok {
				return true
			}
			sel, ok := sw.Tag.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			for _, st := range sw.Body.List {
				for _, e := range st.(*ast.CaseClause).List {
					if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if s, _ := strconv.Unquote(lit.Value); s != "" {
							out[sel.Sel.Name] = append(out[sel.Sel.Name], s)
						}
					}
				}
			}
			return true
		})
	}
	return out
}

// attributesUsed collects the attributes of the flows the transcripts
// start (start flow=<name>, or a flow-select gate's candidates), with the
// flows of each transcript's config.
func attributesUsed(t *testing.T, files map[string]*transcript.File) map[string]bool {
	used := map[string]bool{}
	mark := func(prefix string, v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if descriptive[tag] || v.Field(i).IsZero() {
				continue
			}
			used[prefix+"."+tag] = true
			if s, ok := v.Field(i).Interface().(string); ok {
				used[prefix+"."+tag+"="+s] = true
			}
		}
	}
	for name, f := range files {
		cfg := config.Default()
		for _, c := range f.Cases {
			switch c.Cmd {
			case "config":
				var err error
				if cfg, err = config.Parse([]byte(c.Input)); err != nil {
					t.Fatalf("%s:%d: %v", name, c.Line, err)
				}
			case "start":
				names := strings.Split(c.Or("candidates", ""), ",")
				if v, ok := c.Get("flow"); ok {
					names = []string{v}
				}
				for _, n := range names {
					fl := cfg.All[n]
					if fl == nil {
						continue
					}
					mark("flow", reflect.ValueOf(*fl))
					for _, st := range fl.Steps {
						mark("step", reflect.ValueOf(st))
					}
				}
			}
		}
	}
	return used
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
