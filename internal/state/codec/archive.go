package codec

import (
	"fmt"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/textsafe"
)

// RenderArchive returns the archive comment of the decisions numbered from
// to to, which s must still hold, or false when they are not all in s.
// It links the newest archive s knows (the one before it).
func RenderArchive(s *state.State, from, to int) (string, bool) {
	i, j := from-s.DecisionsArchived-1, to-s.DecisionsArchived
	if from != s.DecisionsArchived+1 || j > len(s.Decisions) || i > j || i < 0 {
		return "", false
	}
	var b strings.Builder
	b.WriteString(state.ArchiveMarker(from, to) + "\n")
	fmt.Fprintf(&b, "### Key Decisions %d–%d (archived)\n\n", from, to)
	if n := len(s.Archives); n > 0 {
		a := s.Archives[n-1]
		fmt.Fprintf(&b, "_Earlier: %s_\n\n", archiveLink(a))
	}
	for _, d := range s.Decisions[i:j] {
		b.WriteString(decisionLine(d, budgets[0]) + "\n")
	}
	return b.String(), true
}

// ArchiveFits reports whether the archive of decisions from to to stays
// within textsafe.SafeBody.
func ArchiveFits(s *state.State, from, to int) bool {
	body, ok := RenderArchive(s, from, to)
	return ok && textsafe.Len(body) <= textsafe.SafeBody
}

func archiveLink(a state.DecisionArchive) string {
	text := fmt.Sprintf("decisions %d–%d", a.From, a.To)
	if a.URL == "" {
		return text
	}
	return "[" + text + "](" + a.URL + ")"
}

// archived writes the Key Decisions section's line about archived ones.
func archived(b *strings.Builder, s *state.State) {
	if s.DecisionsArchived == 0 {
		return
	}
	links := make([]string, len(s.Archives))
	for i, a := range s.Archives {
		links[i] = archiveLink(a)
	}
	fmt.Fprintf(b, "_%d earlier decisions in archive comments: %s_\n\n", s.DecisionsArchived, strings.Join(links, ", "))
}
