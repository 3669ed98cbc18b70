package outbox

import (
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

// Key decisions past ArchiveAbove move to archive comments, oldest first,
// in batches that leave ArchiveKeep in the state (a batch is smaller when
// its comment would not fit textsafe.SafeBody). Measured on a run holding
// the largest task list a declaration may leave (141 tasks of 300
// characters, a machine block of 38,300 characters): each decision of a
// few hundred characters adds about 525 to the machine block, and 37 fit
// before the state comment passes textsafe.SafeBody. 26 at most (while an
// archive is owed a few more) leave room for the ledger and notes.
const (
	ArchiveAbove = 25
	ArchiveKeep  = 5
)

// settleArchives handles the archives the stored outbox announced, before
// Settle re-announces what is still owed: one seen on the thread drops its
// decisions from s and is recorded (with its link); one GitHub refused is
// given up and its decisions stay (the next write announces the batch
// again, archiveNext, which the reconciler does not resend while the
// refusal is remembered); one not seen is posted again, its body rendered
// from the decisions s still holds (the outbox keeps only its marker, so
// announcing it never grows the state).
func settleArchives(s *state.State, seen Seen) []state.Effect {
	var again []state.Effect
	keep := s.Outbox[:0:0]
	for _, e := range s.Outbox {
		if e.Kind != state.EffArchive {
			keep = append(keep, e)
			continue
		}
		from, to, ok := state.ParseArchiveMarker(e.Marker)
		if !ok || seen.Refused[e.Marker] {
			continue
		}
		body, ok := codec.RenderArchive(s, from, to)
		switch {
		case !ok:
			continue // not the next batch (cannot happen): given up
		case seen.Markers[e.Marker]:
			archiveDone(s, from, to, seen.Links[e.Marker])
			continue
		}
		keep = append(keep, e)
		e.Body = body
		again = append(again, e)
	}
	s.Outbox = keep
	return again
}

// archiveDone drops the decisions from to to (posted in an archive
// comment at url) from s.
func archiveDone(s *state.State, from, to int, url string) {
	n := to - from + 1
	a := state.DecisionArchive{From: from, To: to, URL: url, Opened: s.Decisions[0].GateOpenedAt}
	s.Decisions = append([]state.Decision(nil), s.Decisions[n:]...)
	s.DecisionsArchived = to
	s.Archives = append(s.Archives, a)
	if k := len(s.Archives) - state.MaxArchives; k > 0 {
		s.Archives = append([]state.DecisionArchive(nil), s.Archives[k:]...)
	}
}

// archiveNext announces the next archive when the state holds more than
// ArchiveAbove decisions and no archive is owed yet. Only a pass that
// writes the state announces one (the write carries it).
func archiveNext(s *state.State) (state.Effect, bool) {
	if len(s.Decisions) <= ArchiveAbove {
		return state.Effect{}, false
	}
	for _, o := range s.Outbox {
		if o.Kind == state.EffArchive {
			return state.Effect{}, false
		}
	}
	from := s.DecisionsArchived + 1
	to := s.DecisionsArchived + len(s.Decisions) - ArchiveKeep
	for to > from && !codec.ArchiveFits(s, from, to) {
		to = from + (to-from)/2
	}
	body, _ := codec.RenderArchive(s, from, to)
	e := state.Effect{Kind: state.EffArchive, Marker: state.ArchiveMarker(from, to), Body: body}
	s.Outbox = append(s.Outbox, outboxEntry(e))
	return e, true
}

// outboxEntry is what the state's outbox keeps of an announced effect.
func outboxEntry(e state.Effect) state.Effect {
	o := state.Effect{Kind: e.Kind, Marker: e.Marker, Body: e.Body, Workflow: e.Workflow, Ref: e.Ref, Inputs: e.Inputs,
		RunID: e.RunID, Environment: e.Environment, Answer: e.Answer}
	if e.Kind == state.EffArchive {
		o.Body = "" // rendered again from the decisions, which stay until it is seen
	}
	return o
}
