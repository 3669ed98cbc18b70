package tracker

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// forwarders lists, in the Go files given, what only passes on a name that
// lives elsewhere: type aliases to another package, constants that are
// another package's constant, and functions whose body is one return of
// another package's function called with the parameters as they came.
func forwarders(t *testing.T, files []string) []string {
	t.Helper()
	var out []string
	fs := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fs, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						if _, ok := sp.Type.(*ast.SelectorExpr); ok && sp.Assign.IsValid() {
							out = append(out, fs.Position(sp.Pos()).String()+": type "+sp.Name.Name)
						}
					case *ast.ValueSpec:
						for k, v := range sp.Values {
							if _, ok := v.(*ast.SelectorExpr); ok && d.Tok == token.CONST {
								out = append(out, fs.Position(sp.Pos()).String()+": const "+sp.Names[k].Name)
							}
						}
					}
				}
			case *ast.FuncDecl:
				if d.Recv != nil || d.Body == nil || len(d.Body.List) != 1 {
					continue
				}
				ret, ok := d.Body.List[0].(*ast.ReturnStmt)
				if !ok || len(ret.Results) != 1 {
					continue
				}
				call, ok := ret.Results[0].(*ast.CallExpr)
				if !ok {
					continue
				}
				if _, ok := call.Fun.(*ast.SelectorExpr); !ok {
					continue
				}
				var params []string
				for _, f := range d.Type.Params.List {
					for _, n := range f.Names {
						params = append(params, n.Name)
					}
				}
				var args []string
				for _, a := range call.Args {
					if id, ok := a.(*ast.Ident); ok {
						args = append(args, id.Name)
					}
				}
				if len(args) == len(call.Args) && strings.Join(args, ",") == strings.Join(params, ",") {
					out = append(out, fs.Position(d.Pos()).String()+": func "+d.Name.Name)
				}
			}
		}
	}
	return out
}

func TestNoForwardersLeftFromPackageMoves(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var src []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			src = append(src, f)
		}
	}
	src = append(src, filepath.Join("..", "engine", "tracker.go"))
	for _, f := range forwarders(t, src) {
		t.Errorf("%s passes on a name that lives elsewhere: make its callers use the real home", f)
	}
}
