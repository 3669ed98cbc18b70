package codec

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/statetest"
)

// An archive holds the decisions it names, escaped as the Key Decisions
// section escapes them, and links the archive before it; the state comment
// says how many are archived and links them.
func TestRenderArchiveAndTheStateLinkingIt(t *testing.T) {
	s := statetest.Sample()
	statetest.ArchivedTwo(s)
	d := s.Decisions[0]
	d.Question = "Ship it? <!-- autopilot:state --> @org/security"
	s.Decisions = []state.Decision{d, s.Decisions[0]}
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
