// Package writes holds the envelope of a pass's writes: the random id of a
// state write, the fingerprint that recognises a request GitHub refused,
// whether a comment read back is the one written, which of the comments a
// pass posted a concurrent run posted first, and the wait that lets a
// state write claiming Jira creates stand before they are sent.
package writes

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
	hidden "github.com/autopilot-dev/autopilot/internal/state/marker"
)

// NewID is the random id of one state write (State.WriteID).
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// SameBody reports two comment bodies equal up to line endings and
// surrounding space (GitHub may hand back either).
func SameBody(a, b string) bool {
	norm := func(s string) string { return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")) }
	return norm(a) == norm(b)
}

// maxFingerprint is the length the state allows a Refused entry.
const maxFingerprint = 200

// Fingerprint identifies a request for State.Refused: its kind, marker and
// a hash of its content. A marker too long for maxFingerprint bytes is cut
// and hashed with the content, so the hash stays whole and still tells
// apart requests that differ only past the cut.
func Fingerprint(kind, marker, content string) string {
	head := kind
	if marker != "" {
		head += " " + strings.TrimSuffix(strings.TrimPrefix(marker, hidden.Prefix), hidden.Suffix)
	}
	if fp := head + " " + hash8(content); len(fp) <= maxFingerprint {
		return fp
	}
	sum := " " + hash8(marker+"\x00"+content)
	n := maxFingerprint - len(sum)
	for n > 0 && !utf8.RuneStart(head[n]) {
		n-- // cut between characters, not inside one
	}
	return head[:n] + sum
}

// hash8 is the first 8 bytes of s's SHA-256, in hex.
func hash8(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// Refused reports a request (by fingerprint) GitHub refused with 422 that
// the state remembers.
func Refused(s *state.State, fp string) bool {
	return s != nil && slices.Contains(s.Refused, fp)
}

// Duplicate is a comment a pass posted that a concurrent run posted first.
type Duplicate struct {
	ID     int64 // ours, to delete
	Kept   int64 // the earlier one, which stands
	Marker string
}

// Duplicates lists, in id order, the comments posted (id → marker) whose
// marker's standing comment (first, as read back) is another: the earlier
// one stands, so there is at most one comment per marker.
func Duplicates(posted map[int64]string, first map[string]int64) []Duplicate {
	ids := make([]int64, 0, len(posted))
	for id := range posted {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []Duplicate
	for _, id := range ids {
		m := posted[id]
		low, ok := first[m]
		if !ok || low == id {
			continue
		}
		out = append(out, Duplicate{ID: id, Kept: low, Marker: m})
	}
	return out
}

// DefaultClaimSettle is how long a pass waits, after recording Jira creates
// in the state, before it reads the state back and sends them. Runs outside
// one lock (Action runs outside one concurrency group, the Action and the
// App during a migration) can overlap; GitHub has no compare-and-swap, so
// the wait is what keeps two of them from both creating the same Jira
// issues. It costs seconds only when creating.
const DefaultClaimSettle = 2 * time.Second

// ParseClaimSettle reads AUTOPILOT_CLAIM_SETTLE: empty means the default,
// "0s" turns the wait off (tests).
func ParseClaimSettle(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return DefaultClaimSettle, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("AUTOPILOT_CLAIM_SETTLE: want a duration such as 2s, got %q", v)
	}
	return d, nil
}

// CommentGetter reads one comment back.
type CommentGetter interface {
	GetComment(ctx context.Context, id int64) (forge.Comment, error)
}

// ClaimStands waits d, then reads the state comment id back and reports
// whether it still holds body, the write that claims the Jira creates: if
// another run's write replaced it, the creates are that run's to send. No
// wait (d not positive) or no comment written (id zero) stands.
func ClaimStands(ctx context.Context, f CommentGetter, d time.Duration, id int64, body string) (bool, error) {
	if d <= 0 || id == 0 {
		return true, nil
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		return false, ctx.Err()
	}
	c, err := f.GetComment(ctx, id)
	if err != nil {
		return false, fmt.Errorf("read the state back before creating Jira issues: %w", err)
	}
	return SameBody(c.Body, body), nil
}
