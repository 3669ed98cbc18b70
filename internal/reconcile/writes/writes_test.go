package writes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func sandbox(t *testing.T) (*forge.Sandbox, int) {
	t.Helper()
	sb := forge.NewSandbox("o/r", forge.User{Login: "bot[bot]", Type: "Bot"}, func() time.Time { return t0 })
	return sb, sb.CreateIssue("alice", "t", "b").Number
}

func TestSameBody(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"a\nb", "a\nb", true},
		{"a\r\nb\r\n", "a\nb", true},
		{"  a\nb\n\n", "a\nb", true},
		{"a\nb", "a\nc", false},
		{"a b", "a  b", false},
		{"a\n\nb", "a\nb", false},
	} {
		if got := SameBody(tc.a, tc.b); got != tc.want {
			t.Errorf("SameBody(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	base := Fingerprint("comment", "<!-- autopilot:reply 5 -->", "hello")
	if again := Fingerprint("comment", "<!-- autopilot:reply 5 -->", "hello"); again != base {
		t.Errorf("same request fingerprinted twice: %q != %q", again, base)
	}
	for name, other := range map[string]string{
		"content": Fingerprint("comment", "<!-- autopilot:reply 5 -->", "hello!"),
		"marker":  Fingerprint("comment", "<!-- autopilot:reply 6 -->", "hello"),
		"kind":    Fingerprint("edit", "<!-- autopilot:reply 5 -->", "hello"),
		"none":    Fingerprint("comment", "", "hello"),
	} {
		if other == base {
			t.Errorf("changed %s: fingerprint still %q", name, base)
		}
	}
	if !strings.HasPrefix(base, "comment reply 5 ") || strings.Contains(base, "<!--") {
		t.Errorf("fingerprint %q does not name kind and bare marker", base)
	}
	if long := Fingerprint("comment", "<!-- autopilot:"+strings.Repeat("x", 500)+" -->", "c"); len(long) > 200 {
		t.Errorf("fingerprint of a long marker is %d bytes, want at most 200", len(long))
	}
}

// TestFingerprintOfALongMarkerKeepsTheHash: a fingerprint takes at most
// 200 bytes (what the state keeps), and a marker too long for that is cut,
// never the hash, so requests that differ only past the cut still
// fingerprint apart.
func TestFingerprintOfALongMarkerKeepsTheHash(t *testing.T) {
	marker := func(n int, end string) string {
		return "<!-- autopilot:archive " + strings.Repeat("d", n) + end + " -->"
	}
	type req struct{ kind, marker, content string }
	for _, tc := range []struct {
		name string
		a, b req
	}{
		{"markers of 218 characters differing at the end", req{"comment", marker(190, "1"), "c"}, req{"comment", marker(190, "2"), "c"}},
		{"markers of 503 characters differing at the end", req{"comment", marker(475, "1"), "c"}, req{"comment", marker(475, "2"), "c"}},
		{"one marker of 200 characters, other contents", req{"comment", marker(173, ""), "c"}, req{"comment", marker(173, ""), "d"}},
		{"one marker of 327 characters, other contents", req{"comment", marker(300, ""), "c"}, req{"comment", marker(300, ""), "d"}},
		{"a multi-byte marker, other contents", req{"comment", "<!-- autopilot:a" + strings.Repeat("é", 150) + " -->", "c"}, req{"comment", "<!-- autopilot:a" + strings.Repeat("é", 150) + " -->", "d"}},
	} {
		fa, fb := Fingerprint(tc.a.kind, tc.a.marker, tc.a.content), Fingerprint(tc.b.kind, tc.b.marker, tc.b.content)
		if fa == fb {
			t.Errorf("%s: both fingerprint as %q", tc.name, fa)
		}
		for _, fp := range []string{fa, fb} {
			if len(fp) > 200 || !utf8.ValidString(fp) {
				t.Errorf("%s: fingerprint %q is %d bytes (valid UTF-8: %v), want at most 200 of UTF-8", tc.name, fp, len(fp), utf8.ValidString(fp))
			}
			if !strings.HasPrefix(fp, "comment ") {
				t.Errorf("%s: fingerprint %q does not start with its kind", tc.name, fp)
			}
		}
		if again := Fingerprint(tc.a.kind, tc.a.marker, tc.a.content); again != fa {
			t.Errorf("%s: the same request fingerprinted twice: %q != %q", tc.name, again, fa)
		}
	}
}

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		id := NewID()
		if len(id) != 16 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("NewID() = %q, want 16 lower-case hex digits", id)
		}
		if seen[id] {
			t.Fatalf("NewID() repeated %q", id)
		}
		seen[id] = true
	}
}

func TestRefused(t *testing.T) {
	fp := Fingerprint("comment", "<!-- autopilot:reply 5 -->", "body")
	s := &state.State{Refused: []string{fp}}
	if !Refused(s, fp) {
		t.Error("a fingerprint the state remembers is not refused")
	}
	if Refused(s, Fingerprint("comment", "<!-- autopilot:reply 5 -->", "body, changed")) {
		t.Error("a changed request counts as refused; it should be sent")
	}
	if Refused(nil, fp) {
		t.Error("no state: nothing can be refused")
	}
}

func TestParseClaimSettle(t *testing.T) {
	for in, want := range map[string]time.Duration{"": DefaultClaimSettle, "  ": DefaultClaimSettle, "0s": 0, " 5s ": 5 * time.Second, "250ms": 250 * time.Millisecond} {
		got, err := ParseClaimSettle(in)
		if err != nil || got != want {
			t.Errorf("ParseClaimSettle(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"-1s", "-1ns", "soon", "5", "2 s"} {
		if got, err := ParseClaimSettle(in); err == nil {
			t.Errorf("ParseClaimSettle(%q) = %v, want an error", in, got)
		} else if !strings.Contains(err.Error(), "AUTOPILOT_CLAIM_SETTLE") {
			t.Errorf("ParseClaimSettle(%q) error %q does not name the variable", in, err)
		}
	}
}

func TestDuplicates(t *testing.T) {
	posted := map[int64]string{9: "n", 5: "m", 3: "m", 7: "o", 2: "n"}
	first := map[string]int64{"m": 3, "n": 2}
	got := Duplicates(posted, first)
	want := []Duplicate{{ID: 5, Kept: 3, Marker: "m"}, {ID: 9, Kept: 2, Marker: "n"}}
	if len(got) != len(want) {
		t.Fatalf("Duplicates = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Duplicates[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestDeleteDuplicates(t *testing.T) {
	ctx := context.Background()
	sb, issue := sandbox(t)
	post := func(body string) int64 {
		c, err := sb.CreateComment(ctx, issue, body)
		if err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	keptState, keptReply := post(state.Marker+"\na"), post("<!-- autopilot:reply 1 -->\nx")
	dupState, dupReply := post(state.Marker+"\nb"), post("<!-- autopilot:reply 1 -->\ny")
	posted := map[int64]string{dupState: state.Marker, dupReply: "<!-- autopilot:reply 1 -->"}
	first := map[string]int64{state.Marker: keptState, "<!-- autopilot:reply 1 -->": keptReply}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	notes, stateDup, err := DeleteDuplicates(ctx, sb, log, issue, posted, first)
	if err != nil {
		t.Fatal(err)
	}
	if !stateDup || len(notes) != 2 {
		t.Errorf("notes %q, stateDup %v; want 2 notes and the state comment among them", notes, stateDup)
	}
	var left []int64
	for _, c := range sb.Comments(issue) {
		left = append(left, c.ID)
	}
	if len(left) != 2 || left[0] != keptState || left[1] != keptReply {
		t.Errorf("comments left %v, want the earlier ones %d and %d", left, keptState, keptReply)
	}

	// A failed delete is reported, not swallowed.
	sb.FailNext("DELETE comment", errors.New("boom"))
	other := post("<!-- autopilot:reply 1 -->\nz")
	if _, _, err := DeleteDuplicates(ctx, sb, log, issue, map[int64]string{other: "<!-- autopilot:reply 1 -->"}, first); err == nil {
		t.Error("failed delete: no error")
	}
}

func TestClaimStands(t *testing.T) {
	ctx := context.Background()
	sb, issue := sandbox(t)
	c, err := sb.CreateComment(ctx, issue, "claim\r\n")
	if err != nil {
		t.Fatal(err)
	}
	// No wait, or nothing written: stands without reading.
	for _, tc := range []struct {
		d  time.Duration
		id int64
	}{{0, c.ID}, {-time.Second, c.ID}, {time.Hour, 0}} {
		if ok, err := ClaimStands(ctx, sb, tc.d, tc.id, "other"); !ok || err != nil {
			t.Errorf("ClaimStands(d=%v, id=%d) = %v, %v; want true", tc.d, tc.id, ok, err)
		}
	}
	if n := sb.Calls()["GET comment"]; n != 0 {
		t.Errorf("%d reads without a wait, want none", n)
	}
	if ok, err := ClaimStands(ctx, sb, time.Nanosecond, c.ID, "claim"); !ok || err != nil {
		t.Errorf("same body read back = %v, %v; want it to stand", ok, err)
	}
	if ok, err := ClaimStands(ctx, sb, time.Nanosecond, c.ID, "another run's claim"); ok || err != nil {
		t.Errorf("replaced body read back = %v, %v; want it not to stand", ok, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if ok, err := ClaimStands(cctx, sb, time.Hour, c.ID, "claim"); ok || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait = %v, %v; want false, context.Canceled", ok, err)
	}
}

func TestRefusedOutbox(t *testing.T) {
	refusedBody := "too much"
	s := &state.State{Outbox: []state.Effect{
		{Kind: state.EffComment, Marker: "<!-- autopilot:a -->", Body: refusedBody},
		{Kind: state.EffComment, Marker: "<!-- autopilot:b -->", Body: "fine"},
	}}
	_, bad := CommentRequest("<!-- autopilot:a -->", refusedBody)
	s.Refused = []string{bad}
	if got := RefusedOutbox(s); !got["<!-- autopilot:a -->"] || got["<!-- autopilot:b -->"] {
		t.Errorf("RefusedOutbox = %v, want only a", got)
	}
}

// TestSeenReportsARefusedArchive: the outbox keeps no body for an archive,
// so its refusal is found by the body rendered from the decisions the
// state holds, the body it was posted with.
func TestSeenReportsARefusedArchive(t *testing.T) {
	s := &state.State{}
	for i := 1; i <= 30; i++ {
		s.Decisions = append(s.Decisions, state.Decision{Gate: fmt.Sprintf("g%d", i), Question: "Ship?", Option: "A", OptionText: "yes", By: "maria", At: t0, GateOpenedAt: t0})
	}
	m := state.ArchiveMarker(1, 25)
	s.Outbox = []state.Effect{{Kind: state.EffArchive, Marker: m}}
	body, ok := codec.RenderArchive(s, 1, 25)
	if !ok {
		t.Fatal("archive 1-25 does not render")
	}
	_, bad := CommentRequest(m, body)
	s.Refused = []string{bad}
	if got := RefusedOutbox(s); !got[m] {
		t.Errorf("a refused archive is not seen refused: %v", got)
	}
	s.Refused = []string{Fingerprint("comment", m, "another body")}
	if got := RefusedOutbox(s); got[m] {
		t.Errorf("an archive refused under another body is seen refused: %v", got)
	}
}
