package tasksync

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/idem"
)

// The rules of a tracker's bulk create (tracker/subissues asks them): what
// one item's answer does to the items after it, the "Depends on" line a
// host without dependency links gets, and the batch parents' keys and
// texts.

// StopCause is what the items after a stopping one answer, unsent.
type StopCause int

const (
	// StopNone: the next item is sent.
	StopNone StopCause = iota
	// StopNotSent: they were not sent (an earlier create stopped the
	// request); the next run sends them.
	StopNotSent
	// StopLimited: they answer the item's own rate limit.
	StopLimited
)

// CreateVerdict is what a bulk create does with one item's answer.
type CreateVerdict struct {
	// Record: the item's result (its issue, or its error) is in the
	// answer; an item left out has an unknown outcome, and the next lookup
	// finds its issue by its marker.
	Record bool
	// Abort: the whole call fails with the item's error (the first item,
	// refused credentials: nothing was created).
	Abort bool
	// Stop: what the items after it answer.
	Stop StopCause
}

// OnCreate decides on one item's answer r (nil: created and linked).
// first: no item before it has a result; created: its issue exists but
// its link to the parent is not known to stand.
func OnCreate(r *Refusal, first, created bool) CreateVerdict {
	switch {
	case r == nil:
		return CreateVerdict{Record: true}
	case r.Class == Auth && first:
		return CreateVerdict{Abort: true}
	case r.Class == Auth:
		return CreateVerdict{Record: true, Stop: StopNotSent}
	case created && r.Class == RateLimited:
		return CreateVerdict{Stop: StopLimited}
	case created:
		return CreateVerdict{Stop: StopNotSent}
	case r.Class == RateLimited:
		return CreateVerdict{Record: true, Stop: StopLimited}
	case r.Class == Rejected:
		return CreateVerdict{Record: true}
	}
	// Transient or unknown: the create's outcome is unknown.
	return CreateVerdict{Stop: StopNotSent}
}

// DependsOnText is the line a task's issue carries about its blockers
// (issue numbers) when the host has no dependency links (links: it has);
// "" when it needs none.
func DependsOnText(links bool, blockers []int) string {
	if links || len(blockers) == 0 {
		return ""
	}
	on := make([]string, len(blockers))
	for i, b := range blockers {
		on[i] = "#" + strconv.Itoa(b)
	}
	return "Depends on " + strings.Join(on, ", ")
}

// BatchKey is the idempotency key of parent p's batch parent number n
// (2: the first batch) under the autopilot issue root.
func BatchKey(root, p, n int) string {
	return idem.Key(fmt.Sprintf("batch/%d", root), p, strconv.Itoa(n))
}

// BatchText is the title of parent p's batch parent number n under the
// autopilot issue root, and the line its body starts with; full: p already
// holds limit sub-issues, so the batch parent stands on its own.
func BatchText(root, p, n int, full bool, limit int) (title, intro string) {
	title = fmt.Sprintf("Tasks of #%d, batch %d", root, n)
	if full {
		return title, fmt.Sprintf("#%d already has %d sub-issues, GitHub's limit: its tasks continue here.", p, limit)
	}
	return title, fmt.Sprintf("More than %d sub-issues: the tasks continue here.", limit)
}
