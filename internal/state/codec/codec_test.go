package codec

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"math/rand"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/marker"
	"github.com/autopilot-dev/autopilot/internal/state/statetest"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
	"github.com/autopilot-dev/autopilot/internal/transcript"
)

var update = flag.Bool("update", false, "rewrite testdata/state.golden")

var key = []byte("test-state-key")

func greenfieldView() View {
	names := []string{"Problem", "Research", "Plan", "Decompose", "Implement", "Run Tests", "Security Audit", "Deploy"}
	v := View{Action: "waiting for `/autopilot done` from the executor"}
	for i, slug := range slugs {
		v.Steps = append(v.Steps, StepInfo{Slug: slug, Name: names[i], Label: "Step " + string(rune('1'+i))})
	}
	return v
}

func mustRender(t *testing.T, s *state.State, k []byte) string {
	t.Helper()
	body, err := Render(s, greenfieldView(), k)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return body
}

func TestRenderGolden(t *testing.T) {
	body := mustRender(t, statetest.Sample(), key)
	transcript.Golden(t, filepath.Join("testdata", "state.golden"), body, *update)
}

func TestRoundTripRandomStates(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	g := gen{r}
	for i := 0; i < 400; i++ {
		s := g.state(g.n(12))
		k := key
		if i%3 == 0 {
			k = nil
		}
		checkRoundTrip(t, s, k)
	}
}

func TestRoundTripHugeStatesStayUnderTheLimit(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	g := gen{r}
	for _, n := range []int{150, 400} {
		s := g.state(n)
		for i := range s.Tasks {
			s.Tasks[i].Title = strings.Repeat("Implement the ", 8) + s.Tasks[i].Title
		}
		body := checkRoundTrip(t, s, key)
		if n < 400 {
			continue
		}
		if !strings.Contains(body, "more tasks in the machine block") {
			t.Errorf("%d tasks: human part was not shortened", n)
		}
		if !strings.Contains(body, dataPrefix+gzipPrefix) {
			t.Errorf("%d tasks: machine block was not compressed", n)
		}
	}
}

// checkRoundTrip renders s, checks the bounds and escaping of the body, and
// checks parse(render(s)) == s (times compared in UTC).
func checkRoundTrip(t *testing.T, s *state.State, k []byte) string {
	t.Helper()
	body, err := Render(s, greenfieldView(), k)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if n := textsafe.Len(body); n > textsafe.SafeBody {
		t.Fatalf("body has %d characters, over %d", n, textsafe.SafeBody)
	}
	if n := strings.Count(body, "<!--"); n != 2 {
		t.Fatalf("body has %d HTML comment openers, want 2 (marker, data):\n%s", n, textsafe.Clip(body, 4000))
	}
	if n := strings.Count(body, "-->"); n != 2 {
		t.Fatalf("body has %d HTML comment closers, want 2:\n%s", n, textsafe.Clip(body, 4000))
	}
	got, err := Parse(body, Want{Repo: s.Repo, Issue: s.Issue, Key: k})
	if err != nil {
		t.Fatalf("Parse(Render(s)): %v\nbody:\n%s", err, textsafe.Clip(body, 4000))
	}
	want := *s
	utc(reflect.ValueOf(&want))
	utc(reflect.ValueOf(got))
	if !reflect.DeepEqual(&want, got) {
		wj, _ := json.MarshalIndent(&want, "", " ")
		gj, _ := json.MarshalIndent(got, "", " ")
		t.Fatalf("round trip changed the state:\nwant %s\n got %s", textsafe.Clip(string(wj), 4000), textsafe.Clip(string(gj), 4000))
	}
	return body
}

func TestRenderEscapesUserText(t *testing.T) {
	body := mustRender(t, statetest.Sample(), nil)
	human := body[:strings.Index(body, dataPrefix)]
	for _, bad := range []string{"@org/security", "#4", "<GitHub>", "--> <!--", "@octocat"} {
		if strings.Contains(human, bad) {
			t.Errorf("human part contains unescaped %q", bad)
		}
	}
	for _, want := range []string{"by @\u200boctocat on 2026-11-22 14:05 UTC", `can't log in \| see #` + "\u200b4", "&lt;GitHub&gt;",
		"([comment](https://github.com/octo-org/hello-world/issues/12#issuecomment-1001))"} {
		if !strings.Contains(human, want) {
			t.Errorf("human part lacks %q", want)
		}
	}
	fences := 0
	for _, l := range strings.Split(human, "\n") {
		if strings.HasPrefix(l, "```") {
			fences++
		}
	}
	if fences != 4 {
		t.Errorf("human part has %d fence lines, want 4 (banner and yaml)", fences)
	}
}

func TestRenderShowsDoneStep(t *testing.T) {
	s := statetest.Sample()
	s.Step, s.Slug, s.Name, s.Status, s.Run = 0, "done", "Done", state.Completed, state.RunDone
	body := mustRender(t, s, nil)
	if !strings.Contains(body, "\nstep: done\n") || !strings.Contains(body, " Current: Done\n") {
		t.Errorf("done state not rendered as done:\n%s", body)
	}
}

func TestRenderLabelsUnknownStepsBySlug(t *testing.T) {
	s := statetest.Sample()
	body, err := Render(s, View{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body, " Step 3   plan ") || !strings.Contains(body, " Current: Step 3 — Plan") {
		t.Errorf("steps missing from the view should show as Step n / slug:\n%s", body)
	}
}

func TestRenderSignatureHandling(t *testing.T) {
	s := statetest.Sample()
	mustRender(t, s, key)
	if len(s.Sig) != 64 {
		t.Fatalf("Render with a key set Sig = %q", s.Sig)
	}
	mustRender(t, s, nil)
	if s.Sig != "" {
		t.Errorf("Render without a key kept the stale Sig %q", s.Sig)
	}
	s.Sig = "keep"
	s.RetryCount = 9
	if _, err := Render(s, View{}, key); err == nil || s.Sig != "keep" {
		t.Errorf("failed Render: err = %v, Sig = %q; want an error and Sig untouched", err, s.Sig)
	}
}

func TestRenderFailsWhenMachineBlockCannotFit(t *testing.T) {
	s := statetest.Sample()
	r := rand.New(rand.NewSource(7))
	noise := make([]byte, 60000)
	r.Read(noise)
	s.Outbox = append(s.Outbox, state.Effect{Kind: "comment", Body: base64.StdEncoding.EncodeToString(noise)})
	_, err := Render(s, View{}, key)
	if err == nil || !strings.Contains(err.Error(), "machine block alone is too large") {
		t.Errorf("Render of an oversized state: err = %v", err)
	}
}

func TestRenderRejectsInvalidState(t *testing.T) {
	s := statetest.Sample()
	s.Tasks[0].Title = "bad \xff utf-8"
	_, err := Render(s, View{}, nil)
	var fe *state.FieldError
	if !errors.As(err, &fe) || fe.Field != "tasks[0].title" {
		t.Errorf("Render with invalid UTF-8: err = %v, want FieldError on tasks[0].title", err)
	}
	if _, err := Render(nil, View{}, nil); err == nil {
		t.Error("Render(nil) did not fail")
	}
}

// envelopeOf decodes the machine block of a rendered body.
func envelopeOf(t *testing.T, body string) (human string, env map[string]any) {
	t.Helper()
	i := strings.Index(body, dataPrefix)
	payload := strings.TrimSuffix(body[i+len(dataPrefix):], marker.Suffix)
	raw, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		t.Fatal(err)
	}
	return body[:i], env
}

// withPayload builds a body from a human part and an envelope.
func withPayload(t *testing.T, human string, env any) string {
	t.Helper()
	js, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return human + dataPrefix + base64.StdEncoding.EncodeToString(js) + marker.Suffix
}

// mutate re-encodes the body's envelope after f changed its state map.
func mutate(t *testing.T, body string, f func(state, env map[string]any)) string {
	t.Helper()
	human, env := envelopeOf(t, body)
	f(env["state"].(map[string]any), env)
	return withPayload(t, human, env)
}

func gz(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

func TestParseRejectsWithSentinelErrors(t *testing.T) {
	signed := mustRender(t, statetest.Sample(), key)
	unsigned := mustRender(t, statetest.Sample(), nil)
	other := statetest.Sample()
	other.Issue = 13
	otherIssue := mustRender(t, other, key)
	human, _ := envelopeOf(t, unsigned)
	want := Want{Repo: "octo-org/hello-world", Issue: 12, Key: key}

	tests := []struct {
		name  string
		body  string
		want  Want
		err   error
		field string // substring of the error message
	}{
		{"empty body", "", want, ErrNotState, ""},
		{"plain comment", "A\nlooks good", want, ErrNotState, ""},
		{"marker not first", "hi\n" + signed, want, ErrNotState, ""},
		{"marker with suffix", state.Marker + "x\n", want, ErrNotState, ""},
		{"no machine block", state.Marker + "\n## Autopilot State\n", want, ErrCorrupt, "missing"},
		{"two machine blocks", signed + "\n" + signed[strings.Index(signed, dataPrefix):], want, ErrCorrupt, "2 machine blocks"},
		{"machine block mid-line", state.Marker + "\nx " + dataPrefix + "AA== -->", want, ErrCorrupt, "start a line"},
		{"unterminated block", strings.TrimSuffix(signed, marker.Suffix), want, ErrCorrupt, "does not end"},
		{"not base64", human + dataPrefix + "!!!" + marker.Suffix, want, ErrCorrupt, "base64"},
		{"not gzip", human + dataPrefix + gzipPrefix + "AAAA" + marker.Suffix, want, ErrCorrupt, "gzip"},
		{"not json", human + dataPrefix + base64.StdEncoding.EncodeToString([]byte("{nope")) + marker.Suffix, want, ErrCorrupt, "JSON"},
		{"trailing json", human + dataPrefix + base64.StdEncoding.EncodeToString([]byte(`{"v":1} {}`)) + marker.Suffix, want, ErrCorrupt, "data after"},
		{"zip bomb", human + dataPrefix + gzipPrefix + gz(t, make([]byte, maxInflated+10)) + marker.Suffix, want, ErrCorrupt, "inflates"},
		{"unknown envelope field", mutate(t, signed, func(_, e map[string]any) { e["extra"] = 1 }), want, ErrCorrupt, "unknown field"},
		{"unknown state field", mutate(t, signed, func(s, _ map[string]any) { s["decided"] = "A" }), want, ErrCorrupt, "unknown field"},
		{"envelope version", mutate(t, signed, func(_, e map[string]any) { e["v"] = 3 }), want, ErrCorrupt, "envelope v is 3"},
		{"no state", mutate(t, signed, func(_, e map[string]any) { delete(e, "state") }), want, ErrCorrupt, "no state"},
		{"bad human hash", mutate(t, signed, func(_, e map[string]any) { e["human"] = "x" }), want, ErrCorrupt, "human hash"},
		{"schema 3", mutate(t, signed, func(s, _ map[string]any) { s["schema"] = 3 }), want, ErrCorrupt, "schema"},
		{"retry count 4", mutate(t, signed, func(s, _ map[string]any) { s["retry_count"] = 4 }), want, ErrCorrupt, "retry_count"},
		{"unknown status", mutate(t, signed, func(s, _ map[string]any) { s["status"] = "decided" }), want, ErrCorrupt, "status"},
		{"negative phase", mutate(t, signed, func(s, _ map[string]any) { s["sub_step"].(map[string]any)["phase"] = -1 }), want, ErrCorrupt, "sub_step.phase"},
		{"name not kebab", mutate(t, signed, func(s, _ map[string]any) { s["sub_step"].(map[string]any)["name"] = "Arch Review" }), want, ErrCorrupt, "sub_step.name"},
		{"wrong type", mutate(t, signed, func(s, _ map[string]any) { s["issue"] = "12" }), want, ErrCorrupt, "JSON"},
		{"other issue", otherIssue, want, ErrForeign, "octo-org/hello-world#13"},
		{"other repo", signed, Want{Repo: "octo-org/fork", Issue: 12, Key: key}, ErrForeign, ""},
		{"zero want", signed, Want{}, ErrForeign, ""},
		{"unsigned with key", unsigned, want, ErrUnsigned, ""},
		{"signed with another key", signed, Want{Repo: want.Repo, Issue: 12, Key: []byte("other")}, ErrForged, ""},
		{"tampered signature", mutate(t, signed, func(s, _ map[string]any) {
			sig := []byte(s["sig"].(string))
			sig[0] ^= 1
			s["sig"] = string(sig)
		}), want, ErrForged, ""},
		{"gate decided in machine block", mutate(t, signed, func(s, _ map[string]any) {
			s["run"] = state.RunInProgress
			s["gate"].(map[string]any)["recommend"] = "B"
		}), want, ErrForged, ""},
		{"human edit with recomputed hash", func() string {
			edited := strings.Replace(signed, "status: in_progress", "status: completed", 1)
			h, env := envelopeOf(t, edited)
			env["human"] = humanHash(h)
			return withPayload(t, h, env)
		}(), want, ErrForged, ""},
		{"forged marker comment with copied block", state.Marker + "\n" + signed[strings.Index(signed, dataPrefix):], want, ErrEdited, ""},
		{"collaborator flips a value", strings.Replace(signed, "status: in_progress", "status: completed", 1), want, ErrEdited, ""},
		{"collaborator ticks a task", strings.Replace(signed, "- [ ] 04", "- [x] 04", 1), want, ErrEdited, ""},
		{"text appended after block", signed + "\nappended", want, ErrEdited, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.body, tt.want)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Parse error = %v, want %v", err, tt.err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q does not mention %q", err, tt.field)
			}
			if (s != nil) != (tt.err == ErrEdited) {
				t.Errorf("Parse returned state %v with %v; a state comes only with ErrEdited", s != nil, err)
			}
		})
	}
}

func TestParseEditedReturnsAuthenticState(t *testing.T) {
	orig := statetest.Sample()
	body := mustRender(t, orig, key)
	s, err := Parse(strings.Replace(body, "retry_count: 1", "retry_count: 0", 1), Want{Repo: orig.Repo, Issue: orig.Issue, Key: key})
	if !errors.Is(err, ErrEdited) {
		t.Fatalf("err = %v, want ErrEdited", err)
	}
	if s.RetryCount != 1 || s.Sig != orig.Sig {
		t.Errorf("returned state is not the signed one: retry_count %d", s.RetryCount)
	}
	if again := mustRender(t, s, key); again != body {
		t.Error("re-rendering the authentic state does not restore the original body")
	}
}

func TestParseAcceptsReplayOfOlderVersion(t *testing.T) {
	s := statetest.Sample()
	s.Version = 5
	old := mustRender(t, s, key)
	s.Version = 6
	s.RetryCount = 2
	mustRender(t, s, key)
	got, err := Parse(old, Want{Repo: s.Repo, Issue: s.Issue, Key: key})
	if err != nil || got.Version != 5 || got.RetryCount != 1 {
		t.Fatalf("replayed v5: state %+v, err %v; want version 5 accepted (ordering is the caller's job)", got, err)
	}
}

func TestParseTolerance(t *testing.T) {
	s := statetest.Sample()
	body := mustRender(t, s, key)
	tests := []struct {
		name string
		body string
		want Want
	}{
		{"crlf line endings", strings.ReplaceAll(body, "\n", "\r\n"), Want{Repo: s.Repo, Issue: s.Issue, Key: key}},
		{"trailing newline", body + "\n", Want{Repo: s.Repo, Issue: s.Issue, Key: key}},
		{"repo case differs", body, Want{Repo: "Octo-Org/Hello-World", Issue: s.Issue, Key: key}},
		{"signature ignored without key", body, Want{Repo: s.Repo, Issue: s.Issue}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse(tt.body, tt.want); err != nil {
				t.Errorf("Parse: %v", err)
			}
		})
	}
}

func TestParseRejectsOversizedBody(t *testing.T) {
	body := state.Marker + "\n" + strings.Repeat("x", maxBodyBytes)
	if _, err := Parse(body, Want{}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("err = %v, want ErrCorrupt", err)
	}
}

func BenchmarkRender(b *testing.B) {
	s := gen{rand.New(rand.NewSource(8))}.state(200)
	v := greenfieldView()
	for b.Loop() {
		if _, err := Render(s, v, key); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	s := gen{rand.New(rand.NewSource(8))}.state(200)
	body, err := Render(s, greenfieldView(), key)
	if err != nil {
		b.Fatal(err)
	}
	want := Want{Repo: s.Repo, Issue: s.Issue, Key: key}
	for b.Loop() {
		if _, err := Parse(body, want); err != nil {
			b.Fatal(err)
		}
	}
}
