package github

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

func TestCommentDecodesPerformedViaGitHubApp(t *testing.T) {
	tests := []struct {
		file      string
		wantApp   int64
		wantLogin string
		wantBot   bool
		wantID    int64
	}{
		{"bot-comment.json", 15368, "github-actions[bot]", true, 2},
		{"comment.json", 0, "octocat", false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			e := newEnv(t, "", nil)
			e.handle("GET /repos/octocat/Hello-World/issues/comments/{id}", status(200, fixture(t, tt.file)))
			cm, err := e.client.GetComment(context.Background(), tt.wantID)
			if err != nil {
				t.Fatal(err)
			}
			want := forge.Comment{ID: tt.wantID, IssueNumber: 1347, AppID: tt.wantApp}
			if cm.ID != want.ID || cm.IssueNumber != want.IssueNumber || cm.AppID != want.AppID ||
				cm.Author.Login != tt.wantLogin || cm.Author.IsBot() != tt.wantBot {
				t.Errorf("comment = %+v", cm)
			}
			if cm.CreatedAt.IsZero() || cm.URL == "" || cm.Body == "" {
				t.Errorf("comment lacks time, url or body: %+v", cm)
			}
		})
	}
}

// commentStore is a minimal stateful comments endpoint: POST appends
// (optionally "losing" the response after committing), GET lists.
type commentStore struct {
	t  *testing.T
	mu sync.Mutex
	// posts scripts POST answers: 0 = commit and answer 201, 503 = commit
	// but answer 503 (response lost), -503 = fail without committing.
	posts    []int
	author   string
	comments []map[string]any
	nextID   int64
}

func (s *commentStore) install(e *env) {
	const path = "/repos/octocat/Hello-World/issues/1347/comments"
	e.handle("GET "+path, func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		b, _ := json.Marshal(s.comments)
		s.mu.Unlock()
		reply(w, 200, b)
	})
	e.handle("POST "+path, func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Body string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			s.t.Errorf("POST body: %v", err)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		mode := 0
		if len(s.posts) > 0 {
			mode, s.posts = s.posts[0], s.posts[1:]
		}
		if mode < 0 {
			reply(w, -mode, serverErrorBody)
			return
		}
		var c map[string]any
		_ = json.Unmarshal(fixture(s.t, "bot-comment.json"), &c)
		s.nextID++
		c["id"] = 100 + s.nextID
		c["body"] = in.Body
		c["user"].(map[string]any)["login"] = s.author
		s.comments = append(s.comments, c)
		if mode != 0 {
			reply(w, mode, serverErrorBody)
			return
		}
		b, _ := json.Marshal(c)
		reply(w, 201, b)
	})
}

func TestCreateCommentAfterLostResponse(t *testing.T) {
	const marked = "<!-- autopilot:decision 7 -->\nApplied A."
	tests := []struct {
		name      string
		body      string
		posts     []int
		author    string // who the server attributes comments to
		botLogin  string
		wantErr   bool
		wantPosts int
		wantCount int // comments on the issue afterwards
		wantID    int64
	}{
		{"503 that committed is found by marker, no duplicate", marked, []int{503}, "github-actions[bot]", "github-actions[bot]", false, 1, 1, 101},
		{"503 that did not commit is re-posted once", marked, []int{-503, 0}, "github-actions[bot]", "github-actions[bot]", false, 2, 1, 101},
		{"marker posted by someone else is not adopted", marked, []int{503, 0}, "mallory", "github-actions[bot]", false, 2, 2, 102},
		{"no marker: failure returned, not retried", "plain text", []int{503}, "github-actions[bot]", "github-actions[bot]", true, 1, 1, 0},
		{"no identity configured: a Bot author is adopted", marked, []int{503}, "github-actions[bot]", "", false, 1, 1, 101},
		{"persistent 503 without commit gives up", marked, []int{-503, -503, -503, -503}, "github-actions[bot]", "github-actions[bot]", true, 4, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "", func(o *Options) { o.BotLogin = tt.botLogin })
			s := &commentStore{t: t, posts: tt.posts, author: tt.author}
			s.install(e)
			cm, err := e.client.CreateComment(context.Background(), 1347, tt.body)
			if tt.wantErr {
				var te *forge.TransientError
				if !errors.As(err, &te) {
					t.Fatalf("err = %v, want TransientError", err)
				}
			} else if err != nil {
				t.Fatalf("CreateComment: %v", err)
			}
			if cm.ID != tt.wantID {
				t.Errorf("comment id = %d, want %d", cm.ID, tt.wantID)
			}
			if n := e.count("POST", "/comments"); n != tt.wantPosts {
				t.Errorf("%d POSTs, want %d", n, tt.wantPosts)
			}
			if n := len(s.comments); n != tt.wantCount {
				t.Errorf("%d comments on the issue, want %d", n, tt.wantCount)
			}
			for i, r := range e.requests() {
				if i > 0 && r.Method == "POST" && !strings.Contains(e.requests()[i-1].Method, "GET") {
					t.Errorf("request %d re-POSTed without looking for the marker first", i)
				}
			}
		})
	}
}

func TestCreateCommentLearnsItsIdentity(t *testing.T) {
	e := newEnv(t, "", nil)
	s := &commentStore{t: t, posts: []int{0, 503}, author: "autopilot-app[bot]"}
	s.install(e)
	ctx := context.Background()
	if _, err := e.client.CreateComment(ctx, 1347, "<!-- autopilot:one -->\n1"); err != nil {
		t.Fatal(err)
	}
	// A Bot comment by another app carrying the same marker must not be
	// taken for ours once the identity is known.
	var other map[string]any
	_ = json.Unmarshal(fixture(t, "bot-comment.json"), &other)
	other["id"] = 50
	other["body"] = "<!-- autopilot:two -->\nforged"
	s.comments = append(s.comments, other)
	cm, err := e.client.CreateComment(ctx, 1347, "<!-- autopilot:two -->\n2")
	if err != nil {
		t.Fatal(err)
	}
	if cm.ID == 50 || cm.Author.Login != "autopilot-app[bot]" {
		t.Errorf("adopted %+v, want our own comment", cm)
	}
}

func TestCreateAndEditCommentSendBody(t *testing.T) {
	e := newEnv(t, "", func(o *Options) { o.MinMutationGap = -1 })
	var got []string
	record := func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+readAll(r))
		reply(w, map[string]int{"POST": 201, "PATCH": 200}[r.Method], fixture(t, "bot-comment.json"))
	}
	e.handle("POST /repos/octocat/Hello-World/issues/1347/comments", record)
	e.handle("PATCH /repos/octocat/Hello-World/issues/comments/2", record)
	ctx := context.Background()
	cm, err := e.client.CreateComment(ctx, 1347, "a <b> & c")
	if err != nil || cm.AppID != 15368 {
		t.Fatalf("CreateComment = %+v, %v", cm, err)
	}
	if _, err := e.client.EditComment(ctx, 2, "edited"); err != nil {
		t.Fatal(err)
	}
	want := []string{`POST {"body":"a <b> & c"}` + "\n", `PATCH {"body":"edited"}` + "\n"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("bodies = %q, want %q", got, want)
	}
}

func TestReactAcceptsCreatedAndExisting(t *testing.T) {
	for _, code := range []int{200, 201} {
		e := newEnv(t, "", nil)
		var body string
		e.handle("POST /repos/octocat/Hello-World/issues/comments/1/reactions", func(w http.ResponseWriter, r *http.Request) {
			body = readAll(r)
			reply(w, code, fixture(t, "reaction.json"))
		})
		if err := e.client.React(context.Background(), 1, "heart"); err != nil {
			t.Errorf("status %d: %v", code, err)
		}
		if body != `{"content":"heart"}`+"\n" {
			t.Errorf("body = %q", body)
		}
	}
	e := newEnv(t, "", nil)
	if err := e.client.React(context.Background(), 1, "thumbsup"); !errors.Is(err, forge.ErrValidation) {
		t.Errorf("unknown reaction err = %v, want ErrValidation", err)
	}
	if n := len(e.requests()); n != 0 {
		t.Errorf("%d requests for an invalid reaction", n)
	}
}

func TestHiddenMarker(t *testing.T) {
	tests := map[string]string{
		"<!-- autopilot:decision 7 -->\nApplied": "<!-- autopilot:decision 7 -->",
		"<!-- autopilot:x -->\r\nbody":           "<!-- autopilot:x -->",
		"<!-- autopilot-state {\"v\":1} -->":     "<!-- autopilot-state {\"v\":1} -->",
		"text\n<!-- autopilot:x -->":             "",
		"<!-- other -->\n":                       "",
		"<!-- autopilot:unterminated":            "",
		"":                                       "",
	}
	for body, want := range tests {
		if got := hiddenMarker(body); got != want {
			t.Errorf("hiddenMarker(%q) = %q, want %q", body, got, want)
		}
	}
}

func FuzzHiddenMarker(f *testing.F) {
	f.Add("<!-- autopilot:decision 7 -->\nApplied")
	f.Add("<!-- autopilot -->")
	f.Add("x\n<!-- autopilot:x -->")
	f.Fuzz(func(t *testing.T, body string) {
		m := hiddenMarker(body)
		if m == "" {
			return
		}
		if !strings.HasPrefix(m, markerPrefix) || strings.ContainsAny(m, "\n") {
			t.Fatalf("marker %q", m)
		}
		if hiddenMarker(m+"\nanything") != m {
			t.Fatalf("marker %q not stable", m)
		}
	})
}
