package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestEditProofTable pins which edits the engine treats as unproven: only
// an edit after posting whose text no delivery by its author carries.
func TestEditProofTable(t *testing.T) {
	c := Written{ID: 5, Author: "alice", Body: "A", CreatedAt: t0, UpdatedAt: t0.Add(time.Minute)}
	same := c
	same.Author = "ALICE"
	for _, tc := range []struct {
		name  string
		c     Written
		proof *Written
		want  bool
	}{
		{"never edited (updated_at = created_at)", Written{ID: 5, Author: "alice", Body: "A", CreatedAt: t0, UpdatedAt: t0}, nil, false},
		{"no updated_at", Written{ID: 5, Author: "alice", Body: "A", CreatedAt: t0}, nil, false},
		{"edited, no proof", c, nil, true},
		{"edited, the author's delivery with the same text", c, &same, false},
		{"proof by another author", c, &Written{ID: 5, Author: "mallory", Body: "A"}, true},
		{"proof with another text", c, &Written{ID: 5, Author: "alice", Body: "B"}, true},
		{"proof of another comment", c, &Written{ID: 6, Author: "alice", Body: "A"}, true},
	} {
		if got := EditUnproven(tc.c, tc.proof); got != tc.want {
			t.Errorf("%s: EditUnproven = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestTaskFilesOnlyFromAnswerers: a report without a task block reads the
// step's task files only when its author may answer.
func TestTaskFilesOnlyFromAnswerers(t *testing.T) {
	for _, tc := range []struct {
		perm, answer access.Level
		want         bool
	}{
		{access.Write, access.Write, true},
		{access.Admin, access.Write, true},
		{access.Read, access.Write, false},
		{access.Triage, access.Maintain, false},
		{"", access.Write, false},
	} {
		if got := MaySupplyTaskFiles(tc.perm, tc.answer); got != tc.want {
			t.Errorf("MaySupplyTaskFiles(%q, %q) = %v, want %v", tc.perm, tc.answer, got, tc.want)
		}
	}
}

// TestDeclarationFit pins how a task declaration too large for the state
// comment is refused: kept when it fits, else refused with a reply that
// says how many fit and a note for the outcome.
func TestDeclarationFit(t *testing.T) {
	h := newHarness(t, jiraOff)
	h.runTo("greenfield", "decompose")
	small := h.comment("maria", access.Write, "/autopilot done tasks")
	got, note, err := FitDeclaration(h.set, h.st, small, h.now(), false)
	if err != nil || note != "" || got.DeclaredTooLarge != "" {
		t.Fatalf("no declaration: %+v, %q, %v; want ev unchanged", got.DeclaredTooLarge, note, err)
	}
	small.Declared = []state.Task{{Kind: state.KindTask, Title: "a"}, {Kind: state.KindTask, Title: "b"}}
	got, note, err = FitDeclaration(h.set, h.st, small, h.now(), true)
	if err != nil || note != "" || len(got.Declared) != 2 {
		t.Fatalf("small declaration: %d tasks, %q, %v; want it kept", len(got.Declared), note, err)
	}
	rnd := rand.New(rand.NewPCG(27, 1))
	big := h.comment("maria", access.Write, "/autopilot done tasks")
	for i := 0; i < 180; i++ {
		big.Declared = append(big.Declared, state.Task{Kind: state.KindTask, Title: fmt.Sprintf("task %d", i), Description: noise(rnd, 300)})
	}
	got, note, err = FitDeclaration(h.set, h.st, big, h.now(), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Declared) != 0 || !strings.Contains(got.DeclaredTooLarge, "the 180 declared tasks") || !strings.Contains(got.DeclaredTooLarge, "; the first ") {
		t.Errorf("big declaration: %d tasks kept, reply %q", len(got.Declared), got.DeclaredTooLarge)
	}
	if !strings.HasPrefix(note, "comment ") || !strings.Contains(note, "task declaration refused: state too large (180 tasks, ") {
		t.Errorf("note = %q", note)
	}
}

// noise is n letters that do not compress.
func noise(rnd *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rnd.IntN(26))
	}
	return string(b)
}
