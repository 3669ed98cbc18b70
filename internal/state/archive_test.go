package state

import (
	"strings"
	"testing"
)

// archivedTwo makes s a state whose first 20 decisions went to two
// archive comments.
func archivedTwo(s *State) {
	s.DecisionsArchived = 20
	s.Archives = []DecisionArchive{
		{From: 1, To: 10, URL: "https://github.com/octo-org/hello-world/issues/12#issuecomment-501", Opened: at("2026-11-20T10:00:00Z")},
		{From: 11, To: 20, URL: "https://github.com/octo-org/hello-world/issues/12#issuecomment-502", Opened: at("2026-11-21T10:00:00Z")},
	}
}

func TestArchiveMarkerRoundTrip(t *testing.T) {
	m := ArchiveMarker(21, 40)
	if m != "<!-- autopilot:decisions 21-40 -->" {
		t.Fatalf("marker %q", m)
	}
	if from, to, ok := ParseArchiveMarker(m); !ok || from != 21 || to != 40 {
		t.Errorf("ParseArchiveMarker(%q) = %d, %d, %v", m, from, to, ok)
	}
	for _, bad := range []string{"<!-- autopilot:decisions 40-21 -->", "<!-- autopilot:decisions 0-3 -->",
		"<!-- autopilot:decisions 1-2", "<!-- autopilot:notice x -->", "<!-- autopilot:decisions a-b -->"} {
		if _, _, ok := ParseArchiveMarker(bad); ok {
			t.Errorf("ParseArchiveMarker(%q) accepted", bad)
		}
	}
}

// An archive holds the decisions it names, escaped as the Key Decisions
// section escapes them, and links the archive before it; the state comment
// says how many are archived and links them.
func TestRenderArchiveAndTheStateLinkingIt(t *testing.T) {
	s := sample()
	archivedTwo(s)
	d := s.Decisions[0]
	d.Question = "Ship it? <!-- autopilot:state --> @org/security"
	s.Decisions = []Decision{d, s.Decisions[0]}
	body, ok := RenderArchive(s, 21, 22)
	if !ok {
		t.Fatal("RenderArchive refused the next two decisions")
	}
	if !strings.HasPrefix(body, "<!-- autopilot:decisions 21-22 -->\n") || strings.Count(body, "<!--") != 1 {
		t.Errorf("archive does not start with its marker alone, or lets a marker through:\n%s", body)
	}
	if strings.Contains(body, "@org/security") || !strings.Contains(body, "issuecomment-502") || strings.Count(body, "\n- **") != 2 {
		t.Errorf("archive body:\n%s", body)
	}
	for _, r := range [][2]int{{20, 21}, {21, 23}, {22, 22}} {
		if _, ok := RenderArchive(s, r[0], r[1]); ok {
			t.Errorf("RenderArchive(%d, %d) accepted decisions the state does not hold next", r[0], r[1])
		}
	}
	human := checkRoundTrip(t, s, nil)
	if !strings.Contains(human, "_20 earlier decisions in archive comments: [decisions 1–10](https://github.com/octo-org/hello-world/issues/12#issuecomment-501), ") {
		t.Errorf("state comment does not link the archives:\n%s", human)
	}
	s.Decisions = nil
	human = checkRoundTrip(t, s, nil)
	if i := strings.Index(human, "### Key Decisions"); strings.Contains(human[i:i+200], "- none") {
		t.Errorf("a state whose decisions are all archived says none:\n%s", human[i:i+200])
	}
}
