package ghevent

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
)

// DecodeFast returns exactly what Decode returns for the same arguments —
// the same Event, or the same error — at a fraction of the cost for the
// large payloads GitHub sends: one hand-written pass checks the JSON and
// keeps only the members Decode reads (about a tenth of a typical payload),
// and encoding/json decodes that. The webhook server calls it on every
// delivery.
//
// Whatever the pass is unsure of — a payload it cannot prove well-formed,
// nesting deeper than it follows, an event shape it has no projection for,
// or any error at all — is handed to Decode, so errors always come from
// Decode itself.
func DecodeFast(name string, payload []byte) (*Event, error) {
	p := payloadFor(name)
	proj, ok := projections[reflect.TypeOf(p)]
	if !ok || name == "" || len(payload) > MaxPayloadBytes {
		return Decode(name, payload)
	}
	lean, ok := project(payload, proj)
	if !ok {
		return Decode(name, payload)
	}
	ev, err := decodeAs(name, lean, p)
	if err != nil {
		return Decode(name, payload) // the error, with its offsets in payload
	}
	return ev, nil
}

// projection is the part of a JSON object one Go struct type reads: its
// members by JSON name, each with the projection of its own value (nil: keep
// the value whole).
type projection struct {
	fields []projField
	// elem is set instead of fields for a slice of structs: the projection
	// of each element.
	elem *projection
}

type projField struct {
	name  string
	child *projection
}

// projections holds the projection of every payload type payloadFor
// returns, built once from the wire types' json tags. It is never written
// after package initialisation. An event whose payload type is missing here
// (a shape added to payloadFor later) is decoded by Decode.
var projections = buildProjections()

func buildProjections() map[reflect.Type]*projection {
	out := map[reflect.Type]*projection{}
	for _, p := range append([]eventPayload{bare()}, payloads()...) {
		t := reflect.TypeOf(p)
		out[t] = projectionOf(t)
	}
	return out
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// projectionOf returns the projection of the type t decodes from, or nil
// when t's value is kept whole: anything but a struct, a slice of structs,
// or a pointer to either, and any type that decodes itself.
func projectionOf(t reflect.Type) *projection {
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
		p := &projection{}
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
		if elem := projectionOf(t.Elem()); elem != nil {
			return &projection{elem: elem}
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
func addFields(p *projection, t reflect.Type) {
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
		var child *projection
		if !strings.Contains(opts, "string") {
			child = projectionOf(ft)
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
// projection. key is the raw text between the quotes; plain says it has no
// escape and no byte outside ASCII. A key that is not plain is always kept
// whole: encoding/json unescapes and Unicode-folds keys before matching,
// and keeping a member is never wrong.
func (p *projection) match(key []byte, plain bool) (keep bool, child *projection) {
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
