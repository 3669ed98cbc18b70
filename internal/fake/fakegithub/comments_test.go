package fakegithub

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
)

func TestCommentLifecycleKeepsTimestampsAndEditorHistory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	n := e.issue("lifecycle")
	alice, mallory := e.client(humanTok), e.client(writerTok)

	created, resp, err := alice.Issues.CreateComment(ctx, "octo", "repo", n, &github.IssueComment{Body: github.String("v1")})
	wantStatus(t, resp, err, http.StatusCreated)
	if got := created.GetCreatedAt().Time; !got.Equal(epoch) || !created.GetUpdatedAt().Time.Equal(epoch) {
		t.Fatalf("created_at %v updated_at %v, want both %v", got, created.GetUpdatedAt(), epoch)
	}
	if created.GetUser().GetLogin() != "alice" || created.GetUser().GetType() != "User" {
		t.Fatalf("author %+v, want alice (User)", created.GetUser())
	}
	if created.GetAuthorAssociation() != "COLLABORATOR" {
		t.Fatalf("author_association %q, want COLLABORATOR", created.GetAuthorAssociation())
	}
	if !strings.HasSuffix(created.GetHTMLURL(), fmt.Sprintf("/octo/repo/issues/%d#issuecomment-%d", n, created.GetID())) {
		t.Fatalf("html_url %q", created.GetHTMLURL())
	}

	// mallory (write access) edits alice's comment over HTTP.
	e.clock.Advance(90 * time.Second)
	edited, resp, err := mallory.Issues.EditComment(ctx, "octo", "repo", created.GetID(), &github.IssueComment{Body: github.String("v2")})
	wantStatus(t, resp, err, http.StatusOK)
	if !edited.GetUpdatedAt().Time.Equal(epoch.Add(90*time.Second)) || !edited.GetCreatedAt().Time.Equal(epoch) {
		t.Fatalf("after edit created_at %v updated_at %v", edited.GetCreatedAt(), edited.GetUpdatedAt())
	}
	if edited.GetUser().GetLogin() != "alice" {
		t.Fatalf("editing changed the author to %q", edited.GetUser().GetLogin())
	}

	// An unchanged body is not an edit.
	e.clock.Advance(time.Minute)
	_, resp, err = mallory.Issues.EditComment(ctx, "octo", "repo", created.GetID(), &github.IssueComment{Body: github.String("v2")})
	wantStatus(t, resp, err, http.StatusOK)

	// A tamper through the Go API, as a human using the web UI.
	e.clock.Advance(time.Minute)
	if _, err := e.s.EditComment(created.GetID(), "eve", "v3"); err != nil {
		t.Fatal(err)
	}
	got, resp, err := alice.Issues.GetComment(ctx, "octo", "repo", created.GetID())
	wantStatus(t, resp, err, http.StatusOK)
	if got.GetBody() != "v3" || !got.GetUpdatedAt().Time.Equal(epoch.Add(210*time.Second)) {
		t.Fatalf("GET after tamper: body %q updated_at %v", got.GetBody(), got.GetUpdatedAt())
	}

	snap, _ := e.s.Comment(created.GetID())
	want := []struct {
		editor, before, after string
		at                    time.Time
	}{
		{"mallory", "v1", "v2", epoch.Add(90 * time.Second)},
		{"eve", "v2", "v3", epoch.Add(210 * time.Second)},
	}
	if len(snap.Edits) != len(want) {
		t.Fatalf("edit history %+v, want %d edits", snap.Edits, len(want))
	}
	for i, w := range want {
		ed := snap.Edits[i]
		if ed.Editor.Login != w.editor || ed.Before != w.before || ed.After != w.after || !ed.At.Equal(w.at) {
			t.Errorf("edit %d = %+v, want %+v", i, ed, w)
		}
	}

	resp, err = alice.Issues.DeleteComment(ctx, "octo", "repo", created.GetID())
	wantStatus(t, resp, err, http.StatusNoContent)
	_, resp, err = alice.Issues.GetComment(ctx, "octo", "repo", created.GetID())
	wantStatus(t, resp, err, http.StatusNotFound)
	if snap, _ := e.s.Comment(created.GetID()); !snap.Deleted {
		t.Fatal("snapshot does not show the comment deleted")
	}
	if left := e.s.Comments(testRepo, n); len(left) != 0 {
		t.Fatalf("deleted comment still listed: %+v", left)
	}
	_, resp, err = mallory.Issues.EditComment(ctx, "octo", "repo", created.GetID(), &github.IssueComment{Body: github.String("zombie")})
	wantStatus(t, resp, err, http.StatusNotFound)
}

func TestCommentValidation(t *testing.T) {
	e := newEnv(t)
	n := e.issue("validation")
	path := fmt.Sprintf("/repos/octo/repo/issues/%d/comments", n)
	tests := []struct {
		name, body string
		want       int
	}{
		{"missing body", `{}`, http.StatusUnprocessableEntity},
		{"body at the limit", fmt.Sprintf(`{"body":%q}`, strings.Repeat("é", 65536)), http.StatusCreated},
		{"body over the limit", fmt.Sprintf(`{"body":%q}`, strings.Repeat("a", 65537)), http.StatusUnprocessableEntity},
		{"malformed JSON", `{"body":`, http.StatusBadRequest},
		{"unknown issue", `{"body":"x"}`, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := path
			if tt.name == "unknown issue" {
				p = "/repos/octo/repo/issues/999/comments"
			}
			resp, _ := e.do("POST", p, humanTok, tt.body, nil)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
	if got := len(e.s.Comments(testRepo, n)); got != 1 {
		t.Fatalf("%d comments stored, want only the valid one", got)
	}
}

func TestCommentsPaginateWithLinkHeadersOver250(t *testing.T) {
	e := newEnv(t)
	n := e.issue("busy")
	for i := range 250 {
		if _, err := e.s.AddComment(testRepo, n, "bob", fmt.Sprintf("c%d", i)); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Second)
	}
	base := fmt.Sprintf("/repos/octo/repo/issues/%d/comments", n)
	tests := []struct {
		query     string
		wantLen   int
		wantFirst string
		rels      map[string]string // rel -> page
	}{
		{"", 30, "c0", map[string]string{"next": "2", "last": "9"}},
		{"?per_page=100", 100, "c0", map[string]string{"next": "2", "last": "3"}},
		{"?per_page=100&page=2", 100, "c100", map[string]string{"prev": "1", "next": "3", "last": "3", "first": "1"}},
		{"?per_page=100&page=3", 50, "c200", map[string]string{"prev": "2", "first": "1"}},
		{"?per_page=500", 100, "c0", map[string]string{"next": "2", "last": "3"}},
		{"?per_page=100&page=4", 0, "", map[string]string{"prev": "3", "first": "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			var got []map[string]any
			resp := e.doJSON("GET", base+tt.query, humanTok, "", &got)
			if len(got) != tt.wantLen {
				t.Fatalf("got %d comments, want %d", len(got), tt.wantLen)
			}
			if tt.wantLen > 0 && got[0]["body"] != tt.wantFirst {
				t.Fatalf("first body %v, want %s", got[0]["body"], tt.wantFirst)
			}
			links := parseLinks(t, resp.Header.Get("Link"))
			if len(links) != len(tt.rels) {
				t.Fatalf("Link %q, want rels %v", resp.Header.Get("Link"), tt.rels)
			}
			for rel, page := range tt.rels {
				if !strings.Contains(links[rel], "page="+page) || !strings.HasPrefix(links[rel], e.s.URL()+base) {
					t.Errorf("rel %s = %q, want page %s on %s", rel, links[rel], page, base)
				}
			}
		})
	}

	// go-github follows the Link header and sees every comment once, oldest first.
	c := e.client(humanTok)
	var all []*github.IssueComment
	opt := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		page, resp, err := c.Issues.ListComments(context.Background(), "octo", "repo", n, opt)
		wantStatus(t, resp, err, http.StatusOK)
		all = append(all, page...)
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	if len(all) != 250 {
		t.Fatalf("go-github collected %d comments, want 250", len(all))
	}
	for i, c := range all {
		if c.GetBody() != fmt.Sprintf("c%d", i) {
			t.Fatalf("comment %d body %q: not oldest first", i, c.GetBody())
		}
	}
}

func parseLinks(t *testing.T, h string) map[string]string {
	t.Helper()
	out := map[string]string{}
	if h == "" {
		return out
	}
	for _, part := range strings.Split(h, ", ") {
		u, rel, ok := strings.Cut(part, "; rel=")
		if !ok {
			t.Fatalf("bad Link part %q", part)
		}
		out[strings.Trim(rel, `"`)] = strings.Trim(u, "<>")
	}
	return out
}

func TestCommentsSinceFiltersOnUpdatedAt(t *testing.T) {
	e := newEnv(t)
	n := e.issue("since")
	var ids []int64
	for i := range 4 {
		c, err := e.s.AddComment(testRepo, n, "bob", fmt.Sprintf("c%d", i))
		must(t, err)
		ids = append(ids, c.ID)
		e.clock.Advance(time.Minute)
	}
	cut := epoch.Add(2 * time.Minute) // c2 was created exactly then
	if _, err := e.s.EditComment(ids[0], "bob", "c0 edited"); err != nil {
		t.Fatal(err)
	}
	got, resp, err := e.client(humanTok).Issues.ListComments(context.Background(), "octo", "repo", n,
		&github.IssueListCommentsOptions{Since: &cut})
	wantStatus(t, resp, err, http.StatusOK)
	var bodies []string
	for _, c := range got {
		bodies = append(bodies, c.GetBody())
	}
	if want := "c0 edited,c2,c3"; strings.Join(bodies, ",") != want {
		t.Fatalf("since %v returned %v, want %s", cut, bodies, want)
	}
	resp2, _ := e.do("GET", fmt.Sprintf("/repos/octo/repo/issues/%d/comments?since=yesterday", n), humanTok, "", nil)
	if resp2.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("bad since answered %d, want 422", resp2.StatusCode)
	}
}

func TestReactionsAnswer201ThenExisting200(t *testing.T) {
	e := newEnv(t)
	n := e.issue("react")
	c, err := e.s.AddComment(testRepo, n, "bob", "A")
	must(t, err)
	gh := e.client(humanTok)
	ctx := context.Background()
	steps := []struct {
		content string
		want    int
	}{
		{"eyes", http.StatusCreated},
		{"eyes", http.StatusOK},
		{"+1", http.StatusCreated},
	}
	var firstID int64
	for i, st := range steps {
		r, resp, err := gh.Reactions.CreateIssueCommentReaction(ctx, "octo", "repo", c.ID, st.content)
		wantStatus(t, resp, err, st.want)
		if i == 0 {
			firstID = r.GetID()
		}
		if i == 1 && r.GetID() != firstID {
			t.Fatalf("repeat reaction id %d, want the existing %d", r.GetID(), firstID)
		}
		if r.GetUser().GetLogin() != "alice" || r.GetContent() != st.content {
			t.Fatalf("reaction %+v", r)
		}
	}
	_, resp, err := gh.Reactions.CreateIssueCommentReaction(ctx, "octo", "repo", c.ID, "thumbsup")
	wantStatus(t, resp, err, http.StatusUnprocessableEntity)
	if got := e.s.Reactions(c.ID); len(got) != 2 || got[0].Content != "eyes" || got[1].Content != "+1" {
		t.Fatalf("stored reactions %+v, want eyes and +1", got)
	}
	cm, _, err := gh.Issues.GetComment(ctx, "octo", "repo", c.ID)
	must(t, err)
	if cm.GetReactions().GetTotalCount() != 2 || cm.GetReactions().GetEyes() != 1 {
		t.Fatalf("reaction rollup %+v", cm.GetReactions())
	}
}

// TestCommentsSinceIsInclusiveAndPages: since keeps comments updated at or
// after it (equal timestamps included, whole seconds as GitHub renders
// them), leaves out deleted ones, and its Link header keeps since on every
// page, so a client paging a since listing never falls back to everything.
func TestCommentsSinceIsInclusiveAndPages(t *testing.T) {
	e := newEnv(t)
	n := e.issue("since pages")
	e.clock.Advance(time.Minute)
	cut := e.clock.Now().UTC().Truncate(time.Second)
	var ids []int64
	for i := range 5 {
		// Five comments in the same second as the cut.
		c, err := e.s.AddComment(testRepo, n, "bob", fmt.Sprintf("same second %d", i))
		must(t, err)
		ids = append(ids, c.ID)
	}
	must(t, e.s.DeleteComment(ids[4]))
	ctx := context.Background()
	var got []string
	opts := &github.IssueListCommentsOptions{Since: &cut, ListOptions: github.ListOptions{PerPage: 2}}
	pages := 0
	for {
		cs, resp, err := e.client(humanTok).Issues.ListComments(ctx, "octo", "repo", n, opts)
		wantStatus(t, resp, err, http.StatusOK)
		pages++
		for _, c := range cs {
			got = append(got, c.GetBody())
		}
		if resp.NextPage == 0 {
			break
		}
		if !strings.Contains(resp.Header.Get("Link"), "since=") {
			t.Fatalf("Link %q drops since", resp.Header.Get("Link"))
		}
		opts.Page = resp.NextPage
	}
	if want := "same second 0,same second 1,same second 2,same second 3"; strings.Join(got, ",") != want || pages != 2 {
		t.Fatalf("since %v over %d pages = %v, want %s over 2", cut, pages, got, want)
	}
	later := cut.Add(time.Second)
	cs, resp, err := e.client(humanTok).Issues.ListComments(ctx, "octo", "repo", n, &github.IssueListCommentsOptions{Since: &later})
	wantStatus(t, resp, err, http.StatusOK)
	if len(cs) != 0 {
		t.Fatalf("since a second later returned %d comments, want 0", len(cs))
	}
}
