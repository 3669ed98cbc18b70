package arch

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
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
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	names := map[string]string{} // local name -> import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = p
	}
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
