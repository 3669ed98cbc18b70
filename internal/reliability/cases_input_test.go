package reliability

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/grammar"
	"github.com/autopilot-dev/autopilot/internal/server"
)

// case23: malformed or unsigned webhooks. 4xx before any parsing for a bad
// signature (constant-time compare: server.VerifySignature uses
// hmac.Equal), a capped body, 2xx no-op for unknown events, no panic, the
// GitHub documentation's test vector passes. Measure: fuzzed payloads never
// panic the decoder; FakeGitHub sees zero API calls for rejected
// deliveries.
func case23(t *testing.T) {
	// GitHub's documented example (docs "Validating webhook deliveries").
	if !server.VerifySignature([]byte("It's a Secret to Everybody"), []byte("Hello, World!"),
		"sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17") {
		t.Error("GitHub's documented test vector does not verify")
	}
	w := NewWorld(t, Options{Mode: ModeApp})
	w.StartApp(AppOptions{})
	n := w.NewIssue("Add CSV export", "Users want CSV.")
	w.Label(n, "autopilot")
	c := w.Say(n, Maria, "/autopilot status")
	d := w.CommentDelivery(c, "created")
	sign := func(b []byte) string { return server.Sign([]byte(WebhookSecret), b) }
	var reserialized bytes.Buffer
	must(t, json.Compact(&reserialized, d.Payload))
	reserialized.WriteString(" ")
	mac := hmac.New(sha1.New, []byte(WebhookSecret))
	mac.Write(d.Payload)
	sha1Sig := "sha1=" + hex.EncodeToString(mac.Sum(nil))
	truncated := d.Payload[:len(d.Payload)/2]
	huge := append(bytes.Repeat([]byte(" "), 30<<20), d.Payload...)
	with := func(p []byte) Delivery { x := d; x.Payload = p; return x }
	star := with(ghtest.WithRepo(t, ghtest.Payload(t, "star.created.json"), Repo))
	star.Event = "star"
	assigned := with(bytes.Replace(w.LabelDelivery(n, "labeled", "autopilot", Maria).Payload, []byte(`"action":"labeled"`), []byte(`"action":"assigned"`), 1))
	assigned.Event = "issues"
	cases := []struct {
		name        string
		d           Delivery
		sig, ctype  string
		want        int
		wantHandled bool
	}{
		{"missing signature", d, "", "application/json", http.StatusUnauthorized, false},
		{"wrong secret", d, server.Sign([]byte("not the secret"), d.Payload), "application/json", http.StatusUnauthorized, false},
		{"signature over re-serialised JSON", d, sign(reserialized.Bytes()), "application/json", http.StatusUnauthorized, false},
		{"sha1 only", d, sha1Sig, "application/json", http.StatusUnauthorized, false},
		{"truncated JSON", with(truncated), sign(truncated), "application/json", http.StatusBadRequest, false},
		{"wrong content type", d, sign(d.Payload), "application/x-www-form-urlencoded", http.StatusBadRequest, false},
		{"unknown event", star, sign(star.Payload), "application/json", http.StatusOK, false},
		{"unknown action", assigned, sign(assigned.Payload), "application/json", http.StatusOK, false},
		{"30 MB body", with(huge), sign(huge), "application/json", http.StatusRequestEntityTooLarge, false},
	}
	for _, tc := range cases {
		if got := w.PostRaw(tc.d, tc.sig, tc.ctype); got != tc.want {
			t.Errorf("%s: answered %d, want %d", tc.name, got, tc.want)
		}
	}
	w.app.idle(t)
	if calls := w.Calls(); len(calls) != 0 {
		t.Errorf("%d API calls for rejected or ignored deliveries, want 0 (first %s %s)", len(calls), calls[0].Method, calls[0].Path)
	}
	// A seeded mini-fuzz of signed, damaged payloads: no 5xx from intake,
	// no panic from the decoder (scripts/fuzz.sh runs the real fuzzers).
	rnd := rand.New(rand.NewPCG(23, 23))
	files := ghtest.Files(t)
	for range 200 {
		file := files[rnd.IntN(len(files))]
		p := damage(rnd, ghtest.Payload(t, file))
		_, _ = ghevent.Decode(ghtest.EventName(file), p)
		x := Delivery{ID: w.deliveryID(), Event: "ping", Payload: p} // ping: parsed, never queued
		if got := w.PostRaw(x, sign(p), "application/json"); got >= 500 {
			t.Errorf("%s damaged: answered %d", file, got)
		}
	}
	checkOnly(t, w.CheckPolite(-1))
}

// damage flips, cuts or duplicates a few bytes.
func damage(rnd *rand.Rand, p []byte) []byte {
	p = bytes.Clone(p)
	for range 1 + rnd.IntN(4) {
		i := rnd.IntN(len(p))
		switch rnd.IntN(3) {
		case 0:
			p[i] = byte(rnd.IntN(256))
		case 1:
			p = p[:i]
		default:
			p = append(p[:i], append([]byte{p[i], p[i]}, p[i:]...)...)
		}
		if len(p) == 0 {
			return []byte("{")
		}
	}
	return p
}

// case24: huge comments: a 65,536-character reply with "A" on line 1000;
// a task list whose rendering is over 65,536 characters; a state near the
// limit. The reply is not a command (first-line rule); output is cut at a
// rune boundary with a note; the state stays valid. Measure: I7; no 422.
func case24(t *testing.T) {
	w, n := started(t, Options{})
	for _, s := range []string{"problem", "research", "plan"} {
		w.post(n, Devin, "/autopilot done "+s)
	}
	// ~330 tasks of ~170 characters: the comment fits GitHub's limit, its
	// rendering in the state does not.
	var b strings.Builder
	b.WriteString("/autopilot done decomposed\n\n```autopilot-tasks\n")
	for i := range 330 {
		fmt.Fprintf(&b, "- title: Task %03d — stream report type %03d as CSV with a header row, quoting, and a test of the round trip é😀\n", i, i)
	}
	b.WriteString("```")
	if b.Len() > 4*GitHubMaxRunes || len([]rune(b.String())) > GitHubMaxRunes {
		t.Fatalf("the declaring comment has %d characters, over GitHub's limit", len([]rune(b.String())))
	}
	w.post(n, Devin, b.String())
	s := w.mustState(n)
	if len(s.Tasks) != 330 || s.Gate == nil {
		t.Fatalf("%d tasks, gate %v: want 330 and the boundary gate", len(s.Tasks), s.Gate)
	}
	long := strings.Repeat("context line\n", 999) + "A\n" + strings.Repeat("x", GitHubMaxRunes-999*13-2)
	if len([]rune(long)) != GitHubMaxRunes {
		t.Fatalf("long comment has %d characters", len([]rune(long)))
	}
	l := w.post(n, Maria, long)
	w.post(n, Devin, "B") // a real answer stores the classification
	s = w.mustState(n)
	if got := outcome(s, l.ID); got != NotACommand {
		t.Errorf("the long comment with A on line 1000 classified %q, want %s", got, NotACommand)
	}
	if len(s.Decisions) != 1 || s.Decisions[0].By != Devin {
		t.Errorf("decisions %s, want devin's B", decisions(s))
	}
	for _, c := range w.BotComments(n) {
		if k := len([]rune(c.Body)); k > MaxRunes {
			t.Errorf("bot comment %q has %d characters", firstLine(c.Body), k)
		}
	}
	for _, q := range w.GH.Requests() {
		if q.Status == http.StatusUnprocessableEntity {
			t.Errorf("%s %s was refused 422", q.Method, q.Path)
		}
	}
	w.MustSweep()
	check(t, w, CheckOptions{Issue: n})
}

// canonical is PRODUCT.md §7's answer grammar, written independently of
// internal/grammar: the first non-empty line outside quotes and fences, after
// NFKC and trimming, is a letter A-D (either case) alone or followed by
// ")", ".", ":" or whitespace and a reason; or "/autopilot choose <letter>".
var canonical = regexp.MustCompile(`^(?:([A-Da-d])(?:[).:]|\s|$)|/autopilot\s+choose\s+([A-Da-d])(?:\s|$))`)

func canonicalLetter(body string) (string, bool) {
	fence := false
	for _, l := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		l = strings.TrimSpace(norm.NFKC.String(l))
		switch {
		case strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~"):
			fence = !fence
			continue
		case fence || l == "" || strings.HasPrefix(l, ">"):
			continue
		}
		m := canonical.FindStringSubmatch(l)
		if m == nil {
			return "", false
		}
		return strings.ToUpper(m[1] + m[2]), true
	}
	return "", false
}

// case25: homoglyphs and invisible characters. Each input is accepted as
// a letter only in a documented canonical form, or refused with a "did
// you mean" reply; Cyrillic and Greek never become a choice; a second line
// never counts. Measure: a table test, and a seeded fuzz in which no input
// outside the canonical set yields a decision.
func case25(t *testing.T) {
	table := []struct {
		in     string
		letter string // "" = not a decision
	}{
		{"\u0410", ""}, {"\u0391", ""}, {"A\u200b", ""}, {"\u202eA", ""}, {"\uff21", "A"}, {"a", "A"},
		{"**A**", ""}, {"A.", "A"}, {"`A`", ""}, {"A B", ""}, {"A\n/autopilot skip", "A"},
	}
	for _, tc := range table {
		r := engine.Parse(tc.in)
		got := ""
		if r.Kind == grammar.Choice {
			got = r.Letter
		}
		if got != tc.letter {
			t.Errorf("%q: decision %q, want %q", tc.in, got, tc.letter)
		}
		// The parser may be stricter than PRODUCT.md (it refuses "A B" as
		// ambiguous, with a reply), never looser.
		if want, ok := canonicalLetter(tc.in); tc.letter != "" && (!ok || want != tc.letter) {
			t.Errorf("%q: the independent grammar says %q %v, the table %q", tc.in, want, ok, tc.letter)
		}
	}
	// Seeded fuzz over confusable pieces.
	pieces := []string{"A", "a", "B", "E", "\u0410", "\u0391", "\u03b1", "\uff21", "\u0301", "\u200b", "\u202e", "\u00a0", " ", "\t", "\n", ">", "```", ")", ".", ":", "*", "`", "/autopilot choose ", "/autopilot ", "choose", "A B"}
	rnd := rand.New(rand.NewPCG(25, 25))
	for range 3000 {
		var b strings.Builder
		for range 1 + rnd.IntN(5) {
			b.WriteString(pieces[rnd.IntN(len(pieces))])
		}
		r := engine.Parse(b.String())
		if r.Kind != grammar.Choice {
			continue
		}
		if want, ok := canonicalLetter(b.String()); !ok || want != r.Letter {
			t.Errorf("%q became choice %s; the grammar says %q %v", b.String(), r.Letter, want, ok)
		}
	}
	// Through the bot: every lookalike is refused (one reply per person per
	// gate), then a fullwidth Ａ counts as A.
	w, n := started(t, Options{})
	w.toGate(n)
	var refused []int64
	for _, tc := range table {
		if tc.letter == "" {
			refused = append(refused, w.post(n, Maria, tc.in).ID)
		}
	}
	ok := w.post(n, Devin, "\uff21")
	s := w.mustState(n)
	replies := 0
	for _, id := range refused {
		if o := outcome(s, id); !strings.HasPrefix(o, "rejected:") {
			t.Errorf("lookalike comment %d classified %q", id, o)
		}
		replies += len(w.replies(n, id))
	}
	if replies != 1 {
		t.Errorf("%d \"did you mean\" replies to maria, want 1 per gate", replies)
	}
	if len(s.Decisions) != 1 || s.Decisions[0].CommentID != ok.ID || s.Decisions[0].Option != "A" {
		t.Errorf("decisions %s, want devin's fullwidth A", decisions(s))
	}
	check(t, w, CheckOptions{Issue: n})
}

// case26: mention and reference injection through echoed text (an issue
// title, a failure reason, a task title). The rendered bodies escape @ and
// # and HTML. Measure: assertions on the rendered strings; no mention or
// reference is created (FakeGitHub's mention parser).
func case26(t *testing.T) {
	evil := "Fix @acme/core and @maria #1 <img src=x onerror=alert(1)> [click](https://evil.example) <!-- x -->"
	w := NewWorld(t, Options{})
	n, err := w.GH.CreateIssue(Repo, Maria, evil, "Body mentions @acme/core and #1 too.", []string{"autopilot/flow:review-loop"})
	must(t, err)
	w.issues = append(w.issues, n)
	w.Label(n, "autopilot")
	w.MustRun(w.LabelDelivery(n, "labeled", "autopilot", Maria))
	w.post(n, Devin, "/autopilot fail "+evil)
	w.post(n, Devin, "/autopilot done "+evil)
	for _, c := range w.BotComments(n) {
		if m := fakegithub.Mentions(c.Body); len(m) > 0 {
			t.Errorf("bot comment %q mentions %v", firstLine(c.Body), m)
		}
		if r := fakegithub.References(c.Body); len(r) > 0 {
			t.Errorf("bot comment %q references %v", firstLine(c.Body), r)
		}
		body := c.Body
		if i := strings.LastIndex(body, "\n"+dataPrefix); i >= 0 {
			body = body[:i] // the machine block is base64
		}
		if strings.Contains(body, "<img") || strings.Contains(body, "](https://evil") {
			t.Errorf("bot comment %q echoes raw HTML or a link: %q", firstLine(c.Body), body)
		}
		checkMarkers(t, c.Body)
	}
	echoed := false
	for _, c := range w.BotComments(n) {
		echoed = echoed || strings.Contains(c.Body, "@\u200bacme/core") && strings.Contains(c.Body, "#\u200b1")
	}
	if !echoed {
		t.Error("no bot comment echoes the text (escaped as @\\u200b and #\\u200b): the case tests nothing")
	}
	w.Clock.Advance(time.Minute)
	check(t, w, CheckOptions{Issue: n})
}
