package arch

import (
	"fmt"
	"go/ast"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// builtOnce are option types only internal/wiring may fill in for the entry
// points, so the Action and the App cannot build them differently.
var builtOnce = map[string]bool{
	module + "/internal/reconcile.Options": true,
	module + "/internal/github.Options":    true,
}

// entryPoints are the packages that run a mode.
var entryPoints = []string{"cmd/bot", "internal/action", "internal/appmode"}

func TestModesBuildOptionsThroughWiring(t *testing.T) {
	for _, dir := range entryPoints {
		files, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range optionLiterals(t, f, string(b)) {
				t.Errorf("%s: build it with internal/wiring (Wiring.GitHub, Wiring.Reconcile) so both modes agree", v)
			}
		}
	}
}

func TestOptionLiteralsAreFound(t *testing.T) {
	src := `package x
import (
	rc "github.com/autopilot-dev/autopilot/internal/reconcile"
	gh "github.com/autopilot-dev/autopilot/internal/github"
)
var a = rc.Options{}
var b = &gh.Options{Repo: "o/r"}
var c = gh.Stats{}
`
	if got := optionLiterals(t, "x.go", src); len(got) != 2 {
		t.Errorf("found %q, want the reconcile and github Options", got)
	}
}

// optionLiterals lists composite literals of a builtOnce type in src.
func optionLiterals(t *testing.T, path, src string) []string {
	t.Helper()
	fset, f := parseSrc(t, path, src)
	names := importNames(f) // local name -> import path
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		sel, ok := lit.Type.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && builtOnce[names[x.Name]+"."+sel.Sel.Name] {
			out = append(out, fmt.Sprintf("%s: %s.%s literal", fset.Position(lit.Pos()), x.Name, sel.Sel.Name))
		}
		return true
	})
	return out
}

// TestAppModeDoesNotImportTheAction: what both modes share lives in wiring,
// so App mode builds without the Action's entry point.
func TestAppModeDoesNotImportTheAction(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Dir}}", module+"/internal/appmode").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var deps []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, dir, _ := strings.Cut(line, " ")
		deps = append(deps, path)
		if strings.HasPrefix(path, module+"/") {
			// Read through os so go test's cache covers the module's
			// packages: go list runs where the cache cannot see.
			if _, err := os.ReadDir(dir); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !slices.Contains(deps, module+"/internal/wiring") {
		t.Fatalf("appmode's dependencies lack wiring: %v", deps)
	}
	if slices.Contains(deps, module+"/internal/action") {
		t.Error("internal/appmode depends on internal/action: move what both need to internal/wiring")
	}
}
