// Package jsonproj reduces a JSON object to the members a Go type reads,
// checking on the way that it is well-formed JSON, so that encoding/json
// decodes the reduced object into that type exactly as it decodes the
// whole. ghevent.DecodeFast uses it on every webhook delivery.
package jsonproj

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
)

// Projection is the part of a JSON object one Go struct type reads: its
// members by JSON name, each with the Projection of its own value (nil: keep
// the value whole).
type Projection struct {
	fields []projField
	// elem is set instead of fields for a slice of structs: the Projection
	// of each element.
	elem *Projection
}

type projField struct {
	name  string
	child *Projection
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// Of returns the Projection of the type t decodes from, or nil
// when t's value is kept whole: anything but a struct, a slice of structs,
// or a pointer to either, and any type that decodes itself.
func Of(t reflect.Type) *Projection {
	for t.Kind() == reflect.Pointer {
		if decodesItself(t) {
			return nil
		}
		t = t.Elem()
	}
	if decodesItself(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		p := &Projection{}
		addFields(p, t)
		if ambiguous(p.fields) {
			// Two members whose names fold together: keep the whole values
			// rather than reason about which one encoding/json picks.
			for i := range p.fields {
				p.fields[i].child = nil
			}
		}
		return p
	case reflect.Slice, reflect.Array:
		if elem := Of(t.Elem()); elem != nil {
			return &Projection{elem: elem}
		}
	}
	return nil
}

func decodesItself(t reflect.Type) bool {
	return t.Implements(jsonUnmarshaler) || t.Implements(textUnmarshaler) ||
		reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)
}

// addFields adds the JSON members of struct t to p the way encoding/json
// names them: the json tag's name, else the Go field name; untagged
// embedded structs contribute their own members. Collecting more members
// than encoding/json would use is harmless: they are merely kept.
func addFields(p *Projection, t reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(p, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		var child *Projection
		if !strings.Contains(opts, "string") {
			child = Of(ft)
		}
		p.fields = append(p.fields, projField{name: name, child: child})
	}
}

func ambiguous(fs []projField) bool {
	for i := range fs {
		for j := i + 1; j < len(fs); j++ {
			if strings.EqualFold(fs[i].name, fs[j].name) {
				return true
			}
		}
	}
	return false
}

// match reports whether a member called key is kept and with which
// Projection. key is the raw text between the quotes; plain says it has no
// escape and no byte outside ASCII. A key that is not plain is always kept
// whole: encoding/json unescapes and Unicode-folds keys before matching,
// and keeping a member is never wrong.
func (p *Projection) match(key []byte, plain bool) (keep bool, child *Projection) {
	if !plain {
		return true, nil
	}
	for i := range p.fields {
		if asciiEqualFold(key, p.fields[i].name) {
			return true, p.fields[i].child
		}
	}
	return false, nil
}

// asciiEqualFold is strings.EqualFold for ASCII key against an ASCII name.
func asciiEqualFold(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i := range len(key) {
		a, b := key[i], name[i]
		if a == b {
			continue
		}
		if a|0x20 != b|0x20 || a|0x20 < 'a' || a|0x20 > 'z' {
			return false
		}
	}
	return true
}
