package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// Every engine event (a type of engine/events with an eventName) has one
// row in the engine's handler table, and every row handles an event.
func TestEveryEngineEventHasAHandlerRow(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "events/events.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, d := range f.Decls {
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
		t.Fatalf("found %d events in events/events.go", len(names))
	}
	for name := range eventHandlers {
		if !names[name] {
			t.Errorf("handler row %q names no event", name)
		}
	}
}
