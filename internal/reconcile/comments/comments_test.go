package comments

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/state"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func cm(id int64, at time.Time, body string) forge.Comment {
	return forge.Comment{ID: id, CreatedAt: at, Body: body, Author: forge.User{Login: "alice", Type: "User"}}
}

func ids(cs []forge.Comment) []int64 {
	var out []int64
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func TestInOrder(t *testing.T) {
	cs := []forge.Comment{cm(4, t0.Add(time.Minute), ""), cm(9, t0, ""), cm(2, t0.Add(time.Minute), ""), cm(7, t0.Add(-time.Hour), "")}
	InOrder(cs)
	if got, want := ids(cs), []int64{7, 9, 2, 4}; !slices.Equal(got, want) {
		t.Errorf("InOrder = %v, want %v (creation time, then id)", got, want)
	}
}

func TestParserReparsesAnEdit(t *testing.T) {
	var p Parser // the zero value is ready
	c := cm(1, t0, "A")
	first := p.Parse(c)
	if !first.Acts() || first.Letter != "A" {
		t.Fatalf("Parse(%q) = %+v, want choice A", c.Body, first)
	}
	if again := p.Parse(c); again.Letter != first.Letter || again.Kind != first.Kind {
		t.Errorf("same body parsed again = %+v, want %+v", again, first)
	}
	c.Body = "Looks good to me."
	if edited := p.Parse(c); edited.Acts() {
		t.Errorf("edited body kept the old parse: %+v", edited)
	}
	c.Body = "B"
	if edited := p.Parse(c); edited.Letter != "B" {
		t.Errorf("edited to B: parse %+v", edited)
	}
	// Another comment is parsed on its own.
	if other := p.Parse(cm(2, t0, "/autopilot status")); other.Cmd != "status" {
		t.Errorf("comment 2 parse = %+v, want the status command", other)
	}
}

func TestReplyMarker(t *testing.T) {
	m := ReplyMarker(42)
	if m != "<!-- autopilot:reply 42 -->" {
		t.Errorf("ReplyMarker(42) = %q", m)
	}
	if ReplyMarker(43) == m {
		t.Error("two comments share a reply marker")
	}
}

func TestPendingAndUnseen(t *testing.T) {
	var p Parser
	acting, chat := cm(10, t0, "A"), cm(11, t0, "Looks good to me.")
	st := &state.State{}
	if Pending([]forge.Comment{chat}, st, p.Parse) {
		t.Error("a comment that cannot act is pending")
	}
	if !Pending([]forge.Comment{chat, acting}, st, p.Parse) {
		t.Error("an unhandled acting comment is not pending")
	}
	if Pending([]forge.Comment{acting}, &state.State{Ledger: []state.LedgerEntry{{CommentID: 10, Outcome: "x"}}}, p.Parse) {
		t.Error("a comment in the ledger is pending")
	}
	if Pending([]forge.Comment{acting}, &state.State{LedgerFloor: 10}, p.Parse) {
		t.Error("a comment under the ledger floor is pending")
	}

	none := func(forge.Comment) bool { return false }
	if !Unseen([]forge.Comment{acting}, map[int64]bool{}, none, st, p.Parse) {
		t.Error("an acting comment not seen at the load is not reported")
	}
	if Unseen([]forge.Comment{acting}, map[int64]bool{10: true}, none, st, p.Parse) {
		t.Error("a comment seen at the load is reported")
	}
	if Unseen([]forge.Comment{acting}, nil, func(forge.Comment) bool { return true }, st, p.Parse) {
		t.Error("the bot's own comment is reported")
	}
	if Unseen([]forge.Comment{chat}, nil, none, st, p.Parse) {
		t.Error("a comment that cannot act is reported")
	}
}

func TestEditUnproven(t *testing.T) {
	c := cm(5, t0, "A")
	c.UpdatedAt = t0
	if EditUnproven(c, nil) {
		t.Error("an unedited comment is unproven")
	}
	c.UpdatedAt = time.Time{}
	if EditUnproven(c, nil) {
		t.Error("a comment without updated_at is unproven")
	}
	c.UpdatedAt = t0.Add(time.Minute)
	if !EditUnproven(c, nil) {
		t.Error("an edit without proof counts as proven")
	}
	proof := c
	proof.Author.Login = "ALICE"
	if EditUnproven(c, &proof) {
		t.Error("the author's delivery with the same text does not prove the edit")
	}
	for name, mut := range map[string]func(*forge.Comment){
		"other author":  func(p *forge.Comment) { p.Author.Login = "mallory" },
		"other text":    func(p *forge.Comment) { p.Body = "B" },
		"other comment": func(p *forge.Comment) { p.ID = 6 },
	} {
		pr := c
		mut(&pr)
		if !EditUnproven(c, &pr) {
			t.Errorf("proof with %s counts", name)
		}
	}
}

func TestPRs(t *testing.T) {
	st := &state.State{LinkedPRs: []int{3, 5, 1}}
	for _, tc := range []struct {
		name           string
		trigger, issue int
		all            bool
		run            state.RunStatus
		want           []int
	}{
		{"trigger only", 5, 1, false, "", []int{5}},
		{"all, trigger first, issue left out", 5, 1, true, "", []int{5, 3}},
		{"all without trigger", 0, 1, true, "", []int{3, 5}},
		{"done run reads only the trigger", 5, 1, true, state.RunDone, []int{5}},
		{"nothing", 0, 1, false, "", nil},
	} {
		s := *st
		s.Run = tc.run
		if got := PRs(tc.trigger, tc.issue, &s, tc.all); !slices.Equal(got, tc.want) {
			t.Errorf("%s: PRs = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestReadPRs(t *testing.T) {
	lists := map[int][]forge.Comment{
		3: {cm(30, t0, "A"), {ID: 31, Author: forge.User{Login: "bot", Type: "Bot"}}},
		5: {cm(50, t0, "B")},
	}
	list := func(pr int) ([]forge.Comment, error) {
		if cs, ok := lists[pr]; ok {
			return cs, nil
		}
		return nil, forge.ErrNotFound
	}
	trusted := func(c forge.Comment) bool { return c.Author.IsBot() }
	got, err := ReadPRs([]int{3, 9, 5}, list, trusted)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(got), []int64{30, 50}) {
		t.Fatalf("ReadPRs = %v, want 30 and 50 (bot's left out, gone PR skipped)", ids(got))
	}
	if got[0].IssueNumber != 3 || got[1].IssueNumber != 5 {
		t.Errorf("comments not stamped with their PR: %d, %d", got[0].IssueNumber, got[1].IssueNumber)
	}
	boom := errors.New("boom")
	if _, err := ReadPRs([]int{3}, func(int) ([]forge.Comment, error) { return nil, boom }, trusted); !errors.Is(err, boom) {
		t.Errorf("a failed list = %v, want it returned", err)
	}
}

func TestPermsOncePerLogin(t *testing.T) {
	sb := forge.NewSandbox("o/r", forge.User{Login: "bot[bot]", Type: "Bot"}, func() time.Time { return t0 })
	sb.AddUser(forge.User{Login: "Alice"}, access.Write)
	ps := &Perms{Forge: sb, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx := context.Background()
	for _, login := range []string{"Alice", "alice", "ALICE"} {
		if p, err := ps.Get(ctx, login); err != nil || p != access.Write {
			t.Errorf("Get(%q) = %v, %v; want write", login, p, err)
		}
	}
	if n := sb.Calls()["GET permission"]; n != 1 {
		t.Errorf("%d permission lookups for one login, want 1", n)
	}
	boom := errors.New("boom")
	sb.FailNext("GET permission", boom)
	if _, err := ps.Get(ctx, "bob"); !errors.Is(err, boom) {
		t.Errorf("failed lookup = %v, want boom", err)
	}
	if _, err := ps.Get(ctx, "bob"); !errors.Is(err, boom) {
		t.Errorf("failed lookup not kept (fail closed): %v", err)
	}
	if n := sb.Calls()["GET permission"]; n != 2 {
		t.Errorf("%d lookups, want 2", n)
	}
}

func TestFitWithoutDeclarationKeepsEvent(t *testing.T) {
	ev := engine.Comment{ID: 3, Body: "A"}
	got, note, err := Fit(engine.Settings{}, &state.State{}, ev, t0, false)
	if err != nil || note != "" || got.ID != ev.ID || got.DeclaredTooLarge != "" {
		t.Errorf("Fit without tasks = %+v, %q, %v; want ev unchanged", got, note, err)
	}
}
