package arch

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/autopilot-dev/autopilot"

// pureRoots decide the workflow (a "/..." root takes every package below
// it, so a new engine or state subpackage is checked without a change
// here); they and every module package they import
// must stay free of I/O so the engine is a function of its input.
var pureRoots = []string{"engine/...", "state/...", "grammar", "flow", "dashboard/model"}

// forbidden are imports that do I/O, carry cancellation or read the clock or
// randomness. A path ending in "/" forbids the whole tree below it too.
var forbidden = []string{
	"context", "os", "os/", "net", "net/", "log", "log/", "io/fs", "io/ioutil",
	"syscall", "path/filepath", "database/", "plugin", "crypto/rand", "math/rand",
	"math/rand/v2", "time/tzdata",
	module + "/internal/forge", module + "/internal/tracker",
	module + "/internal/github", module + "/internal/jira",
}

// allowed overrides forbidden, each with its reason.
var allowed = map[string]string{
	// A parser: no sockets, no DNS. state checks stored links with it; a
	// hand-written replacement would accept subtly different links.
	"net/url": "pure URL parsing",
}

// thirdParty are the only non-module, non-standard packages a pure package
// may import: parsers and text tables with no I/O.
var thirdParty = []string{"go.yaml.in/yaml/v3", "golang.org/x/text/"}

// clockCalls read the wall clock or wait on it; the engine gets times as data.
var clockCalls = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true,
}

// pkg is the part of `go list -json` output the checks read.
type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

func TestPurePackagesDoNoIO(t *testing.T) {
	pkgs := listDeps(t)
	closure := pureClosure(pkgs)
	if len(closure) < len(pureRoots) {
		t.Fatalf("go list found %d of the %d pure roots: %v", len(closure), len(pureRoots), closure)
	}
	var bad []string
	for _, p := range closure {
		bad = append(bad, importViolations(p)...)
		bad = append(bad, clockViolations(t, p)...)
	}
	for _, b := range bad {
		t.Error(b)
	}
	if t.Failed() {
		t.Log("the engine and its pure helpers take every input as data; move shared types to a leaf package (access, idem) instead")
	}
	t.Logf("checked %d packages: %s", len(closure), strings.Join(names(closure), ", "))
}

// TestChecksCatchForbiddenImports proves the checks can fail: a pure package
// importing the forge, slog, a socket or an unknown module is reported.
func TestChecksCatchForbiddenImports(t *testing.T) {
	p := pkg{ImportPath: module + "/internal/engine", Imports: []string{
		"fmt", "net/url", "time", module + "/internal/state", "golang.org/x/text/width",
		module + "/internal/forge", "log/slog", "net", "os/exec", "context", "github.com/google/go-github/v60/github",
	}}
	got := importViolations(p)
	want := []string{"internal/forge", "log/slog", `"net"`, "os/exec", "context", "go-github"}
	if len(got) != len(want) {
		t.Fatalf("violations = %q, want %d", got, len(want))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("violation %d = %q, want it to name %s", i, got[i], w)
		}
	}
	src := "package engine\nimport clock \"time\"\nfunc f() { _ = clock.Now() }\n"
	if v := clockInFile(t, "f.go", src); len(v) != 1 || !strings.Contains(v[0], "Now") {
		t.Errorf("clock violations = %q, want one naming Now", v)
	}
	if v := clockInFile(t, "f.go", "package engine\nimport \"time\"\nvar d time.Duration\n"); len(v) != 0 {
		t.Errorf("time as a type reported: %q", v)
	}
}

func listDeps(t *testing.T) []pkg {
	t.Helper()
	args := []string{"-deps"}
	for _, r := range pureRoots {
		args = append(args, module+"/internal/"+r)
	}
	return goList(t, "", args...)
}

// goList runs `go list -json` with args in dir ("" is this directory) and
// returns the part of each package the checks read.
func goList(t *testing.T, dir string, args ...string) []pkg {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Dir,GoFiles,Imports"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// pureClosure returns the module packages among the roots' dependencies.
// Standard packages imported by the standard library itself (fmt imports os)
// are not checked: only each module package's own imports are.
func pureClosure(pkgs []pkg) []pkg {
	var out []pkg
	for _, p := range pkgs {
		if p.ImportPath == module || strings.HasPrefix(p.ImportPath, module+"/") {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ImportPath < out[j].ImportPath })
	return out
}

func importViolations(p pkg) []string {
	var bad []string
	for _, imp := range p.Imports {
		if why := forbiddenImport(imp); why != "" {
			bad = append(bad, fmt.Sprintf("%s imports %q: %s", p.ImportPath, imp, why))
		}
	}
	return bad
}

func forbiddenImport(imp string) string {
	if _, ok := allowed[imp]; ok {
		return ""
	}
	for _, f := range forbidden {
		if imp == f || (strings.HasSuffix(f, "/") && strings.HasPrefix(imp, f)) {
			return "does I/O or reads the clock or randomness"
		}
	}
	if strings.HasPrefix(imp, module+"/") || isStandard(imp) {
		return ""
	}
	for _, tp := range thirdParty {
		if imp == tp || (strings.HasSuffix(tp, "/") && strings.HasPrefix(imp, tp)) {
			return ""
		}
	}
	return "third-party package not on the pure allow-list"
}

// isStandard: standard import paths have no dot in their first element.
func isStandard(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}

func clockViolations(t *testing.T, p pkg) []string {
	t.Helper()
	// Reading the directory and files through os makes go test's cache key
	// cover them: go list runs in a child process the cache cannot see.
	if _, err := os.ReadDir(p.Dir); err != nil {
		t.Fatalf("read %s: %v", p.Dir, err)
	}
	var bad []string
	for _, f := range p.GoFiles {
		path := filepath.Join(p.Dir, f)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("read %s: %v", path, err)
		}
		bad = append(bad, clockInFile(t, path, string(b))...)
	}
	return bad
}

// clockInFile reports calls such as time.Now() under whatever name the file
// imports "time" as; time as a type (time.Time, time.Duration) is fine.
func clockInFile(t *testing.T, path, src string) []string {
	t.Helper()
	fset, f := parseSrc(t, path, src)
	name := ""
	for local, p := range importNames(f) {
		if p == "time" {
			name = local
		}
	}
	if name == "" {
		return nil
	}
	var bad []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && clockCalls[sel.Sel.Name] {
			bad = append(bad, fmt.Sprintf("%s: %s.%s reads the clock", fset.Position(sel.Pos()), name, sel.Sel.Name))
		}
		return true
	})
	return bad
}

// parseSrc parses one Go file.
func parseSrc(t *testing.T, path, src string) (*token.FileSet, *ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return fset, f
}

// importNames maps each name a file imports a package under to its path.
func importNames(f *ast.File) map[string]string {
	names := map[string]string{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = p
	}
	return names
}

func names(pkgs []pkg) []string {
	out := make([]string, len(pkgs))
	for i, p := range pkgs {
		out[i] = strings.TrimPrefix(p.ImportPath, module+"/")
	}
	return out
}
