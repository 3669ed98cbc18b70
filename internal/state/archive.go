package state

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state/marker"
)

// Key decisions are kept forever (PRODUCT §6) but not all in the state: the
// oldest move to archive comments, each holding a numbered batch rendered
// as the Key Decisions section renders them. The state counts them
// (DecisionsArchived) and links the newest archives; each archive links the
// one before it.

// DecisionArchive is one archive comment: decisions From to To (numbered
// from 1 over the whole run).
type DecisionArchive struct {
	From int    `json:"from"`
	To   int    `json:"to"`
	URL  string `json:"url,omitempty"`
	// Opened is when the gate of its first decision opened: a late answer
	// written after it (and before the first decision kept) was for one of
	// its gates.
	Opened time.Time `json:"opened"`
}

// MaxArchives bounds State.Archives; older archives stay reachable through
// the "earlier" link each archive carries.
const MaxArchives = 20

// ArchiveMarker is the hidden first line of the archive of decisions from
// to to.
func ArchiveMarker(from, to int) string {
	return marker.Build(marker.Decisions, fmt.Sprintf("%d-%d", from, to))
}

// ParseArchiveMarker reads the range of an archive marker.
func ParseArchiveMarker(m string) (from, to int, ok bool) {
	r, ok := marker.Args(m, marker.Decisions)
	a, b, cut := strings.Cut(r, "-")
	if !ok || !cut {
		return 0, 0, false
	}
	from, err1 := strconv.Atoi(a)
	to, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || from < 1 || to < from {
		return 0, 0, false
	}
	return from, to, true
}

func validArchives(s *State) error {
	if s.DecisionsArchived < 0 {
		return bad("decisions_archived", "is negative")
	}
	if len(s.Archives) > MaxArchives {
		return bad("archives", "lists %d, at most %d", len(s.Archives), MaxArchives)
	}
	if s.DecisionsArchived > 0 && len(s.Archives) == 0 {
		return bad("archives", "empty while %d decisions are archived", s.DecisionsArchived)
	}
	for i, a := range s.Archives {
		f := fmt.Sprintf("archives[%d]", i)
		switch {
		case a.From < 1 || a.To < a.From:
			return bad(f, "range %d–%d is not a range of decisions", a.From, a.To)
		case i > 0 && a.From != s.Archives[i-1].To+1:
			return bad(f+".from", "is %d, the archive before ends at %d", a.From, s.Archives[i-1].To)
		case i == len(s.Archives)-1 && a.To != s.DecisionsArchived:
			return bad(f+".to", "is %d, but %d decisions are archived", a.To, s.DecisionsArchived)
		}
		if err := validLink(f+".url", a.URL); err != nil {
			return err
		}
	}
	return nil
}
