package grammar_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/grammar"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

// x/text before v0.39.0 loops forever in norm's composing iterator on a
// UTF-8 lead byte whose sequence is cut short by a combining mark
// (GO-2026-5970; the fix adds this input to norm's own tests). Comments,
// issue titles and webhook payloads are written by anyone, so every parser
// of ours that reads them gets it, its neighbours, and the long runs of
// combining marks and invalid UTF-8 that make normalisation work hardest.
const normLoopTrigger = "\xf3\xcc\x80" // F3 (4-byte lead) + U+0300 COMBINING GRAVE ACCENT

// hostileTexts are whole comment bodies; each stays under GitHub's 65,536
// character limit for a comment.
func hostileTexts() map[string]string {
	return map[string]string{
		"trigger":                    normLoopTrigger,
		"trigger after a letter":     "A " + normLoopTrigger,
		"trigger before a letter":    normLoopTrigger + "A",
		"trigger in a command":       "/autopilot choose b " + normLoopTrigger,
		"trigger in done's summary":  "/autopilot done " + normLoopTrigger + " shipped",
		"trigger on every line":      strings.Repeat("B"+normLoopTrigger+"\n", 2000),
		"trigger repeated":           strings.Repeat(normLoopTrigger, 20000),
		"lead bytes then marks":      strings.Repeat("\xf0\xe0\xc3", 5000) + strings.Repeat("\u0300", 20000),
		"combining run after letter": "A" + strings.Repeat("\u0301", 30000),
		"combining run alone":        strings.Repeat("\u0345\u0316\u0301", 10000),
		"combining run in command":   "/autopilot progress 2 " + strings.Repeat("\u0308", 30000),
		"fullwidth letter and marks": "\uff21" + strings.Repeat("\u0323\u0302", 15000),
		"invalid bytes":              strings.Repeat("\xff\xfe\xcc", 20000),
		"cut-short leads":            strings.Repeat("\xc3", 60000),
		"surrogate halves":           strings.Repeat("\xed\xa0\x80\xed\xbf\xbf", 10000),
		"hangul jamo run":            strings.Repeat("\u1100\u1161\u11a8", 20000),
	}
}

// finishes runs f and fails the test if it has not returned by the deadline.
// The deadline is far above any sane run time (it only bounds a hang; the
// goroutine of a hung call is left behind, the test binary then fails).
func finishes(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not return within 2 minutes: an endless loop (GO-2026-5970 in golang.org/x/text/unicode/norm?)", what)
	}
}

// TestNormLoopTriggerIsTheRealOne walks norm's iterator over the trigger:
// with a vulnerable golang.org/x/text this never returns, so the test fails
// if go.mod ever goes back below v0.39.0 and proves the inputs below are the
// ones that matter.
func TestNormLoopTriggerIsTheRealOne(t *testing.T) {
	for _, f := range []norm.Form{norm.NFC, norm.NFKC, norm.NFD, norm.NFKD} {
		finishes(t, "norm.Iter over the trigger", func() {
			var it norm.Iter
			it.InitString(f, normLoopTrigger)
			var out []byte
			for !it.Done() {
				out = append(out, it.Next()...)
			}
			if !bytes.HasSuffix(out, []byte("\u0300")) {
				t.Errorf("form %v: iterator output %q lost the combining mark", f, out)
			}
		})
	}
}

// TestHostileUnicodeReply: the reply parser returns on every hostile text,
// and a first line with invalid UTF-8 never counts as a decision or command.
func TestHostileUnicodeReply(t *testing.T) {
	for name, body := range hostileTexts() {
		t.Run(name, func(t *testing.T) {
			var r grammar.Result
			finishes(t, "grammar.Parse", func() { r = engine.Parse(body) })
			first, _, _ := strings.Cut(body, "\n")
			if !utf8.ValidString(first) && r.Kind != grammar.None {
				t.Errorf("invalid UTF-8 on the first line parsed as %+v", r)
			}
		})
	}
}

// TestHostileUnicodeState: the state decoder returns on hostile bodies,
// both as the whole body and inside a real state comment (fields, human
// part), and a state carrying such text round-trips.
func TestHostileUnicodeState(t *testing.T) {
	want := codec.Want{Repo: "octo-org/hello-world", Issue: 12, Key: []byte("0123456789abcdef0123456789abcdef")}
	for name, text := range hostileTexts() {
		t.Run(name, func(t *testing.T) {
			finishes(t, "codec.Parse", func() {
				if _, err := codec.Parse(text, want); err == nil {
					t.Error("a hostile text parsed as a state")
				}
				if _, err := codec.Parse(state.Marker+"\n"+text, want); err == nil {
					t.Error("the marker plus a hostile text parsed as a state")
				}
			})
			// Inside a real state: the decoder must keep or refuse it, in time.
			valid := strings.ToValidUTF8(text, "?")
			if len(valid) > 4000 {
				valid = valid[:4000]
				valid = strings.ToValidUTF8(valid, "")
			}
			s := &state.State{
				Schema: state.SchemaVersion, Version: 3, Repo: want.Repo, Issue: want.Issue, Title: valid,
				Flow: "greenfield", Step: 1, Slug: "plan", Name: "Plan", Status: state.InProgress,
				Run: state.RunInProgress, Cycle: 1,
				Steps:       []state.StepProgress{{Slug: "plan", Status: state.InProgress, Note: valid}},
				LastSession: state.Session{Notes: valid},
			}
			var body string
			finishes(t, "codec.Render", func() {
				var err error
				body, err = codec.Render(s, codec.View{}, want.Key)
				if err != nil {
					body = ""
				}
			})
			if body == "" {
				return // refused by Valid: nothing to decode
			}
			finishes(t, "codec.Parse of a rendered state", func() {
				got, err := codec.Parse(body, want)
				if err != nil {
					t.Errorf("a rendered state with this text is refused: %v", err)
					return
				}
				if got.Title != s.Title || got.LastSession.Notes != s.LastSession.Notes {
					t.Error("the text did not survive the round trip")
				}
			})
			// The same state with the hostile text appended to its human part.
			finishes(t, "codec.Parse of an edited state", func() {
				if _, err := codec.Parse(strings.Replace(body, "\n", "\n"+text+"\n", 1), want); err == nil {
					t.Error("an edited human part was not reported")
				}
			})
		})
	}
}

// TestHostileUnicodeWebhook: the webhook decoder returns on a real
// issue_comment.created payload whose comment body is each hostile text,
// both JSON-escaped and as raw bytes (GitHub never sends invalid UTF-8, a
// forger might), and the decoded body goes on to the reply parser as it
// does in production.
func TestHostileUnicodeWebhook(t *testing.T) {
	base := ghtest.Payload(t, "issue_comment.created.json")
	for name, text := range hostileTexts() {
		t.Run(name, func(t *testing.T) {
			escaped := ghtest.Mutate(t, base, map[string]any{"comment.body": text})
			marker := "AUTOPILOT-HOSTILE-BODY"
			raw := ghtest.Mutate(t, base, map[string]any{"comment.body": marker})
			raw = bytes.Replace(raw, []byte(marker), []byte(jsonStringBody(text)), 1)
			for _, payload := range [][]byte{escaped, raw} {
				var ev *ghevent.Event
				var err error
				finishes(t, "ghevent.Decode", func() { ev, err = ghevent.Decode("issue_comment", payload) })
				if err != nil {
					t.Fatalf("a real payload with a hostile comment body is refused: %v", err)
				}
				if ev.Comment == nil {
					t.Fatal("no comment decoded")
				}
				finishes(t, "grammar.Parse of the decoded comment", func() { engine.Parse(ev.Comment.Body) })
			}
		})
	}
}

// jsonStringBody returns text as the inside of a JSON string, escaping
// only what JSON requires, so invalid UTF-8 bytes stay raw.
func jsonStringBody(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			e, _ := json.Marshal(string(rune(c)))
			b.Write(e[1 : len(e)-1])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
