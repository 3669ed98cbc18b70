package ghevent

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/ghevent/jsonproj"
)

// routedNames are the event names with a payload shape of their own, plus
// one that decodes as the bare envelope.
var routedNames = []string{"issues", "issue_comment", "pull_request", "pull_request_review", "workflow_run", "installation"}

// sameAsDecode fails the test unless DecodeFast and Decode agree exactly:
// equal events, or equal errors.
func sameAsDecode(t *testing.T, name string, payload []byte) {
	t.Helper()
	want, wantErr := Decode(name, payload)
	got, gotErr := DecodeFast(name, payload)
	if !reflect.DeepEqual(gotErr, wantErr) {
		t.Fatalf("DecodeFast(%q) error = %v, Decode error = %v", name, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeFast(%q) = %+v\nDecode = %+v", name, got, want)
	}
}

func TestDecodeFastEqualsDecodeOnEveryVendoredPayloadUnderEveryShape(t *testing.T) {
	for _, file := range ghtest.Files(t) {
		payload := ghtest.Payload(t, file)
		for _, name := range append([]string{ghtest.EventName(file)}, routedNames...) {
			t.Run(file+"/"+name, func(t *testing.T) {
				sameAsDecode(t, name, payload)
			})
		}
	}
}

// TestProjectionKeepsLittleOfRealPayloads checks that the fast path is the
// one taken for GitHub's payloads, and that it is worth taking.
func TestProjectionKeepsLittleOfRealPayloads(t *testing.T) {
	for _, file := range ghtest.Files(t) {
		payload := ghtest.Payload(t, file)
		if len(payload) < 1024 {
			continue // schedule.minimal
		}
		p := projections[reflect.TypeOf(payloadFor(ghtest.EventName(file)))]
		if p == nil {
			t.Errorf("%s: no projection of the payload type: DecodeFast falls back to Decode (add the event to buildProjections)", file)
			continue
		}
		lean, ok := jsonproj.Project(payload, p)
		if !ok {
			t.Errorf("%s: projection refused GitHub's own payload", file)
			continue
		}
		if !json.Valid(lean) {
			t.Errorf("%s: projection is not JSON: %s", file, lean)
		}
		if len(lean)*4 > len(payload) {
			t.Errorf("%s: projection keeps %d of %d bytes, want under a quarter", file, len(lean), len(payload))
		}
	}
}

func TestDecodeFastEqualsDecodeOnEdgeCases(t *testing.T) {
	labeled := string(ghtest.Payload(t, "issues.labeled.json"))
	body := strings.TrimSpace(labeled)
	inner := body[1 : len(body)-1]
	tests := []struct {
		name, event, payload string
	}{
		{"upper-case member names", "issues", `{"ACTION":"labeled","Repository":{"FULL_NAME":"a/b"},"issue":{"NUMBER":3},"label":{"Name":"x"}}`},
		{"escaped member name", "issues", `{"\u0061ction":"labeled","repository":{"full_name":"a/b"},"issue":{"number":3},"label":{"name":"x"}}`},
		{"kelvin sign folds to k", "workflow_run", `{"action":"completed","repository":{"full_name":"a/b"},"workflow_run":{"id":5},"wor\u212aflow":{"name":"CI"}}`},
		{"long s folds to s", "issues", `{"action":"labeled","repository":{"full_name":"a/b"},"issue":{"number":3,"\u017Ftate":"open"},"label":{"name":"x"}}`},
		{"non-ASCII member name", "issues", `{"action":"labeled","repository":{"full_name":"a/b"},"issue":{"number":3,"ünknown":1},"label":{"name":"x"}}`},
		{"duplicate members merge", "issues", `{"action":"opened","issue":{"number":1},"issue":{"title":"t"},"action":"labeled","repository":{"full_name":"a/b"},"label":{"name":"x"}}`},
		{"null replaces an object", "issues", `{"action":"labeled","issue":{"number":1},"issue":null,"repository":{"full_name":"a/b"}}`},
		{"type error in a kept member", "issues", `{"action":"labeled","issue":{"number":"1"},"repository":{"full_name":"a/b"}}`},
		{"type error in a skipped member", "issues", `{"action":"labeled","issue":{"number":1,"user":{"login":5}},"repository":{"full_name":"a/b"},"label":{"name":"x"}}`},
		{"array where an object goes", "pull_request", `{"action":"opened","pull_request":[1,2],"repository":{"full_name":"a/b"}}`},
		{"labels not an array", "issues", `{"action":"labeled","issue":{"number":1,"labels":{"name":"x"}},"repository":{"full_name":"a/b"},"label":{"name":"x"}}`},
		{"label elements of mixed kinds", "issues", `{"action":"labeled","issue":{"number":1,"labels":[null,{"name":"a","color":"f"},"b"]},"repository":{"full_name":"a/b"},"label":{"name":"x"}}`},
		{"number overflow", "issues", `{"action":"labeled","issue":{"number":99999999999999999999},"repository":{"full_name":"a/b"}}`},
		{"fraction into an int", "issue_comment", `{"action":"created","issue":{"number":1},"comment":{"id":1.5},"repository":{"full_name":"a/b"}}`},
		{"bad timestamp", "issue_comment", `{"action":"created","issue":{"number":1},"comment":{"id":1,"created_at":"yesterday"},"repository":{"full_name":"a/b"}}`},
		{"invalid UTF-8 in a value", "issues", "{\"action\":\"labeled\",\"issue\":{\"number\":1,\"title\":\"\xff\xfe\"},\"repository\":{\"full_name\":\"a/b\"},\"label\":{\"name\":\"x\"}}"},
		{"surrogate escapes", "issues", `{"action":"labeled","issue":{"number":1,"title":"\ud83d\ude00 \ud800"},"repository":{"full_name":"a/b"},"label":{"name":"x"}}`},
		{"whitespace everywhere", "issues", " \t\r\n{ \"action\" : \"labeled\" , \"issue\" : { \"number\" : 1 } , \"repository\" : { \"full_name\" : \"a/b\" } , \"label\" : { \"name\" : \"x\" } } \n"},
		{"empty object", "issues", `{}`},
		{"real payload, trailing garbage", "issues", body + "x"},
		{"real payload, two objects", "issues", body + body},
		{"real payload, truncated", "issues", body[:len(body)/2]},
		{"real payload, members duplicated", "issues", "{" + inner + "," + inner + "}"},
		{"trailing comma", "issues", `{"action":"labeled",}`},
		{"leading zero", "issues", `{"action":"labeled","x":01}`},
		{"bare minus", "issues", `{"action":"labeled","x":-}`},
		{"dot without digits", "issues", `{"action":"labeled","x":1.}`},
		{"exponent without digits", "issues", `{"action":"labeled","x":1e+}`},
		{"good exotic numbers", "issues", `{"action":"labeled","x":[-0,0.5e-3,1E9,-12.25]}`},
		{"control character in a string", "issues", "{\"action\":\"lab\x01eled\"}"},
		{"bad escape", "issues", `{"action":"lab\qeled"}`},
		{"short unicode escape", "issues", `{"action":"\u12"}`},
		{"misspelt literal", "issues", `{"action":"labeled","x":nul}`},
		{"single quotes", "issues", `{'action':'labeled'}`},
		{"byte order mark", "issues", "\xef\xbb\xbf" + `{"action":"labeled"}`},
		{"array at top", "issues", `[{"action":"labeled"}]`},
		{"missing colon", "issues", `{"action" "labeled"}`},
		{"unclosed string at end", "issues", `{"action":"labeled`},
		{"nesting deeper than projected", "issues", `{"x":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`},
		{"nesting past encoding/json's limit", "issues", `{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`},
		{"empty event name", "", body},
		{"unknown event", "star", body},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sameAsDecode(t, tt.event, []byte(tt.payload))
		})
	}
}

// TestProjectAcceptsExactlyValidJSON compares project's verdict with
// json.Valid on objects of ordinary depth.
func TestProjectAcceptsExactlyValidJSON(t *testing.T) {
	p := projections[reflect.TypeOf(payloadFor("issues"))]
	for _, in := range []string{
		`{}`, ` {"a":1} `, `{"a":[]}`, `{"a":[1,[2,{}]],"b":{"c":"d"}}`, `{"a":"\"\\\/\b\f\n\r\t\u00e9"}`,
		`{"a":-0.0e+0}`, `{"a":true,"b":false,"c":null}`, "{\"a\":\"\xff\"}",
		`{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":+1}`, `{"a":.5}`,
		`{"a":1.e3}`, `{"a":0x10}`, `{"a":"\x"}`, `{"a":"\u00g0"}`, "{\"a\":\"\n\"}", `{"a":tru}`,
		`{"a":1}}`, `{"a":[}`, `{"a":{]}`, `{a:1}`, "{\"a\":1}\x00", `{"a":Infinity}`, `{"a":"x"` + `"y"}`,
	} {
		_, got := jsonproj.Project([]byte(in), p)
		if want := json.Valid([]byte(in)); got != want {
			t.Errorf("project(%q) ok = %v, json.Valid = %v", in, got, want)
		}
	}
}

// FuzzDecodeFast checks, for any event name and payload, that DecodeFast
// returns exactly what Decode returns — every routing member included —
// and that the projection accepts a payload exactly when it is a valid JSON
// object of ordinary depth.
func FuzzDecodeFast(f *testing.F) {
	for _, file := range ghtest.Files(f) {
		payload := ghtest.Payload(f, file)
		f.Add(ghtest.EventName(file), payload)
		f.Add(ghtest.EventName(file), payload[:len(payload)*2/3])
	}
	f.Add("issues", []byte(`{"ACTION":"labeled","issue":{"number":1},"repository":{"full_name":"a/b"},"label":{"name":"x"}}`))
	f.Add("workflow_run", []byte(`{"action":"completed","repository":{"full_name":"a/b"},"workflow_run":{"id":5},"wor\u212aflow":{"name":"CI"}}`))
	f.Fuzz(func(t *testing.T, name string, payload []byte) {
		sameAsDecode(t, name, payload)
		trimmed := strings.TrimLeft(string(payload), " \t\r\n")
		if len(payload) > MaxPayloadBytes || !strings.HasPrefix(trimmed, "{") || strings.Count(trimmed, "[")+strings.Count(trimmed, "{") >= jsonproj.MaxDepth {
			return
		}
		p := projections[reflect.TypeOf(payloadFor(name))]
		lean, ok := jsonproj.Project(payload, p)
		if valid := json.Valid(payload); ok != valid {
			t.Fatalf("project ok = %v, json.Valid = %v", ok, valid)
		}
		if ok && !json.Valid(lean) {
			t.Fatalf("projection %q is not JSON", lean)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	benchDecode(b, Decode)
}

func BenchmarkDecodeFast(b *testing.B) {
	benchDecode(b, DecodeFast)
}

func benchDecode(b *testing.B, decode func(string, []byte) (*Event, error)) {
	type payload struct {
		name string
		body []byte
	}
	var ps []payload
	size := 0
	for _, file := range ghtest.Files(b) {
		p := payload{ghtest.EventName(file), ghtest.Payload(b, file)}
		ps = append(ps, p)
		size += len(p.body)
	}
	b.SetBytes(int64(size / len(ps)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		p := ps[i%len(ps)]
		if _, err := decode(p.name, p.body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkProject(b *testing.B) {
	var bodies [][]byte
	var projs []*jsonproj.Projection
	size := 0
	for _, file := range ghtest.Files(b) {
		body := ghtest.Payload(b, file)
		bodies = append(bodies, body)
		projs = append(projs, projections[reflect.TypeOf(payloadFor(ghtest.EventName(file)))])
		size += len(body)
	}
	b.SetBytes(int64(size / len(bodies)))
	b.ResetTimer()
	for i := range b.N {
		if _, ok := jsonproj.Project(bodies[i%len(bodies)], projs[i%len(bodies)]); !ok {
			b.Fatal("refused")
		}
	}
}

// TestDecodeFastEventOwnsItsMemory checks that nothing in a decoded event
// aliases the payload: the webhook server reuses body buffers once the
// event is decoded.
func TestDecodeFastEventOwnsItsMemory(t *testing.T) {
	for _, file := range ghtest.Files(t) {
		name := ghtest.EventName(file)
		payload := ghtest.Payload(t, file)
		want, err := Decode(name, payload)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		buf := slices.Clone(payload)
		got, err := DecodeFast(name, buf)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for i := range buf {
			buf[i] = 'x'
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: event changed when the payload buffer was overwritten", file)
		}
	}
}
