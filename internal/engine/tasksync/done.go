package tasksync

// Transition is one way a tracker's workflow offers out of an issue's
// status (Jira's transitions), as the rules need it.
type Transition struct {
	// ID names it to the tracker; one without cannot be performed.
	ID string
	// Unavailable: the tracker says it cannot be performed now (Jira
	// Cloud's isAvailable false).
	Unavailable bool
	// ToDone: its target status is in the done category.
	ToDone bool
}

// DoneTransition picks the transition that closes an issue: the first
// available one with an id whose target status is in the done category;
// ok is false when none is.
func DoneTransition(ts []Transition) (i int, ok bool) {
	for i, t := range ts {
		if t.ID != "" && !t.Unavailable && t.ToDone {
			return i, true
		}
	}
	return 0, false
}
