package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Every engine event (a type of engine/events with an eventName, in any of
// its files) has one row in the engine's handler table, and every row
// handles an event.
func TestEveryEngineEventHasAHandlerRow(t *testing.T) {
	files, err := filepath.Glob("events/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var decls []ast.Decl
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		decls = append(decls, f.Decls...)
	}
	names := map[string]bool{}
	for _, d := range decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "eventName" || fn.Body == nil || len(fn.Body.List) != 1 {
			continue
		}
		ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
		if !ok || len(ret.Results) != 1 {
			continue
		}
		lit, ok := ret.Results[0].(*ast.BasicLit)
		if !ok {
			continue
		}
		name, _ := strconv.Unquote(lit.Value)
		names[name] = true
		if _, ok := eventHandlers[name]; !ok {
			t.Errorf("event %q has no row in the handler table", name)
		}
	}
	if len(names) < 10 {
		t.Fatalf("found %d events in events/", len(names))
	}
	for name := range eventHandlers {
		if !names[name] {
			t.Errorf("handler row %q names no event", name)
		}
	}
}
