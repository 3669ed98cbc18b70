package state

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/doctable"
)

// TestDocsNameEveryStateField: the "State fields" table of
// docs/state-format.md names every member of the machine block's state, and
// nothing the state does not have.
func TestDocsNameEveryStateField(t *testing.T) {
	md, err := doctable.Read("docs/state-format.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, r := range doctable.Rows(doctable.Section(md, "State fields")) {
		for _, c := range doctable.Code(r[0]) {
			documented[strings.TrimSuffix(c, "[]")] = true
		}
	}
	if len(documented) == 0 {
		t.Fatal("docs/state-format.md has no State fields table")
	}
	typ := reflect.TypeOf(State{})
	fields := map[string]bool{}
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		fields[name] = true
		if !documented[name] {
			t.Errorf("docs/state-format.md does not describe the state field %q", name)
		}
	}
	for name := range documented {
		if !fields[name] {
			t.Errorf("docs/state-format.md describes %q, which the state does not have", name)
		}
	}
}

var nestedRE = regexp.MustCompile(`\[\{[^}]*\}\]`)

// TestDocsNameEveryMemberOfNestedFields: where the table spells a nested
// member out as `{a, b, …}`, the list is the Go type's JSON members.
func TestDocsNameEveryMemberOfNestedFields(t *testing.T) {
	md, err := doctable.Read("docs/state-format.md")
	if err != nil {
		t.Fatal(err)
	}
	typ := reflect.TypeOf(State{})
	byName := map[string]reflect.Type{}
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		byName[name] = typ.Field(i).Type
	}
	checked := 0
	for _, r := range doctable.Rows(doctable.Section(md, "State fields")) {
		names, meaning := doctable.Code(r[0]), doctable.Code(r[1])
		if len(names) != 1 || len(meaning) == 0 || !strings.HasPrefix(meaning[0], "{") {
			continue
		}
		ft := byName[strings.TrimSuffix(names[0], "[]")]
		for ft != nil && (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Pointer) {
			ft = ft.Elem()
		}
		if ft == nil || ft.Kind() != reflect.Struct {
			continue
		}
		var doc []string
		inner := nestedRE.ReplaceAllString(meaning[0][1:strings.LastIndex(meaning[0], "}")], "") // options[{…}] → options
		for _, m := range strings.Split(inner, ",") {
			w := strings.Fields(m)
			if len(w) > 0 {
				doc = append(doc, w[0])
			}
		}
		var code []string
		for i := 0; i < ft.NumField(); i++ {
			if n, _, _ := strings.Cut(ft.Field(i).Tag.Get("json"), ","); n != "" && n != "-" {
				code = append(code, n)
			}
		}
		if strings.Join(doc, ",") != strings.Join(code, ",") {
			t.Errorf("docs: %s is {%s}; the type has {%s}", names[0], strings.Join(doc, ", "), strings.Join(code, ", "))
		}
		checked++
	}
	if checked < 4 {
		t.Errorf("only %d nested members checked; the table spells out more", checked)
	}
}
