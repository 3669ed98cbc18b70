package jsonproj

import (
	"encoding/json"
	"reflect"
	"testing"
)

type inner struct {
	ID int `json:"id"`
}

type outer struct {
	Name  string  `json:"name"`
	Items []inner `json:"items"`
	Skip  string  `json:"-"`
}

// Project keeps the members the type reads, drops the rest, and the kept
// object decodes exactly as the whole one.
func TestProjectKeepsWhatTheTypeReads(t *testing.T) {
	in := []byte(`{"name":"x","big":{"a":[1,2,3]},"items":[{"id":1,"junk":true},{"id":2}],"Skip":"s"}`)
	lean, ok := Project(in, Of(reflect.TypeFor[outer]()))
	if !ok {
		t.Fatal("refused a valid object")
	}
	if want := `{"name":"x","items":[{"id":1},{"id":2}]}`; string(lean) != want {
		t.Errorf("lean = %s, want %s", lean, want)
	}
	var whole, part outer
	if err := json.Unmarshal(in, &whole); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(lean, &part); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(whole, part) {
		t.Errorf("decoded %+v from the projection, %+v from the whole", part, whole)
	}
}

func TestProjectRefusesWhatIsNotOneObject(t *testing.T) {
	p := Of(reflect.TypeFor[outer]())
	for _, in := range []string{``, `[]`, `{"name":}`, `{"name":"x"} {}`, `{"name":"x",}`, `{"a":` + deep(MaxDepth+1) + `}`} {
		if _, ok := Project([]byte(in), p); ok {
			t.Errorf("Project(%.40q) accepted", in)
		}
	}
}

func deep(n int) string {
	s := ""
	for range n {
		s += "["
	}
	for range n {
		s += "]"
	}
	return s
}
