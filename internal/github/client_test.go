package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

func TestNewRejectsBadRepoAndBaseURL(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		ok   bool
	}{
		{"owner and name", Options{Repo: "octocat/Hello-World"}, true},
		{"missing slash", Options{Repo: "octocat"}, false},
		{"empty owner", Options{Repo: "/Hello-World"}, false},
		{"empty name", Options{Repo: "octocat/"}, false},
		{"extra segment", Options{Repo: "a/b/c"}, false},
		{"relative base URL", Options{Repo: "a/b", BaseURL: "api.github.com"}, false},
		{"GHES base URL", Options{Repo: "a/b", BaseURL: "https://ghes.example.com/api/v3"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.opts)
			if (err == nil) != tt.ok {
				t.Fatalf("New(%+v) error = %v, want ok=%v", tt.opts, err, tt.ok)
			}
			if tt.ok && c.Repo() != tt.opts.Repo {
				t.Errorf("Repo() = %q, want %q", c.Repo(), tt.opts.Repo)
			}
		})
	}
}

func TestDefaultBaseURLIsGitHubDotCom(t *testing.T) {
	c, err := New(Options{Repo: "a/b"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.gh.BaseURL.String(); got != DefaultBaseURL {
		t.Errorf("base URL = %q, want %q", got, DefaultBaseURL)
	}
}

func TestBaseURLIsHonouredWithStandardHeaders(t *testing.T) {
	for _, prefix := range []string{"", "/api/v3"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			e := newEnv(t, prefix, nil)
			e.handle("GET /repos/octocat/Hello-World/issues/1347", status(200, fixture(t, "issue.json")))
			is, err := e.client.GetIssue(context.Background(), 1347)
			if err != nil {
				t.Fatalf("GetIssue: %v", err)
			}
			if is.Number != 1347 {
				t.Errorf("number = %d", is.Number)
			}
			r := e.requests()[0]
			if r.Path != prefix+"/repos/octocat/Hello-World/issues/1347" {
				t.Errorf("path = %q", r.Path)
			}
			for k, want := range map[string]string{
				"Authorization":        "Bearer t0ken",
				"Accept":               "application/vnd.github.v3+json",
				"X-Github-Api-Version": "2022-11-28",
			} {
				if got := r.Header.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if r.Header.Get("User-Agent") == "" {
				t.Error("no User-Agent")
			}
		})
	}
}

func TestHTTPClientOverridesToken(t *testing.T) {
	var hc http.Client
	hc.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "token installation")
		return http.DefaultTransport.RoundTrip(r)
	})
	e := newEnv(t, "", func(o *Options) { o.HTTPClient = &hc })
	e.handle("GET /repos/octocat/Hello-World/issues/1347", status(200, fixture(t, "issue.json")))
	if _, err := e.client.GetIssue(context.Background(), 1347); err != nil {
		t.Fatal(err)
	}
	if got := e.requests()[0].Header.Get("Authorization"); got != "token installation" {
		t.Errorf("Authorization = %q, want the HTTPClient's", got)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// pages serves fixture pages with Link headers pointing at the next page.
func pages(e *env, path string, bodies ...[]byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		page := 1
		fmt.Sscan(r.URL.Query().Get("page"), &page)
		q := r.URL.Query()
		var links []string
		if page < len(bodies) {
			q.Set("page", fmt.Sprint(page+1))
			links = append(links, fmt.Sprintf("<%s?%s>; rel=\"next\"", e.url(path), q.Encode()))
			q.Set("page", fmt.Sprint(len(bodies)))
			links = append(links, fmt.Sprintf("<%s?%s>; rel=\"last\"", e.url(path), q.Encode()))
		}
		var hdr []string
		if len(links) > 0 {
			hdr = append(hdr, "Link: "+strings.Join(links, ", "))
		}
		hdr = append(hdr, fmt.Sprintf("ETag: \"page-%d\"", page))
		if r.Header.Get("If-None-Match") == fmt.Sprintf("\"page-%d\"", page) {
			reply(w, http.StatusNotModified, nil, hdr...)
			return
		}
		reply(w, 200, bodies[page-1], hdr...)
	}
}

func TestListOpenIssuesFollowsLinkAcrossThreePages(t *testing.T) {
	e := newEnv(t, "", nil)
	const path = "/repos/octocat/Hello-World/issues"
	// Page 3 also holds a pull request, which must be skipped.
	page3 := strings.Replace(string(fixture(t, "issues-page-3.json")), "[", "["+string(fixture(t, "issue.json"))+",", 1)
	e.handle("GET "+path, pages(e, path, fixture(t, "issues-page-1.json"), fixture(t, "issues-page-2.json"), []byte(page3)))

	issues, err := e.client.ListOpenIssues(context.Background(), "autopilot")
	if err != nil {
		t.Fatalf("ListOpenIssues: %v", err)
	}
	var numbers []int
	for _, is := range issues {
		numbers = append(numbers, is.Number)
		if is.IsPR {
			t.Errorf("pull request #%d listed", is.Number)
		}
	}
	if want := []int{13, 12, 11, 10, 9, 8, 7, 6, 5}; !reflect.DeepEqual(numbers, want) {
		t.Errorf("numbers = %v, want %v", numbers, want)
	}
	reqs := e.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		for _, want := range []string{"state=open", "labels=autopilot", "per_page=100"} {
			if !strings.Contains(r.Query, want) {
				t.Errorf("request %d query %q lacks %q", i, r.Query, want)
			}
		}
		if i > 0 && !strings.Contains(r.Query, fmt.Sprintf("page=%d", i+1)) {
			t.Errorf("request %d query %q is not page %d", i, r.Query, i+1)
		}
	}
}

func TestListCommentsFollowsLinkAcrossThreePages(t *testing.T) {
	e := newEnv(t, "", nil)
	const path = "/repos/octocat/Hello-World/issues/1347/comments"
	one := fixture(t, "comments.json")
	e.handle("GET "+path, pages(e, path, one, []byte("["+string(fixture(t, "bot-comment.json"))+"]"), one))
	comments, err := e.client.ListComments(context.Background(), 1347)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, c := range comments {
		ids = append(ids, c.ID)
		if c.IssueNumber != 1347 {
			t.Errorf("comment %d issue = %d", c.ID, c.IssueNumber)
		}
	}
	if want := []int64{1, 2, 1}; !reflect.DeepEqual(ids, want) {
		t.Errorf("ids = %v, want %v", ids, want)
	}
	if n := e.count("GET", "/comments"); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestConditionalGetReusesCachedValueOn304(t *testing.T) {
	type call func(c *Client) (any, error)
	tests := []struct {
		name string
		path string
		body []byte
		call call
	}{
		{"GetIssue", "/repos/octocat/Hello-World/issues/1347", fixture(t, "issue.json"),
			func(c *Client) (any, error) { return c.GetIssue(context.Background(), 1347) }},
		{"GetComment", "/repos/octocat/Hello-World/issues/comments/2", fixture(t, "bot-comment.json"),
			func(c *Client) (any, error) { return c.GetComment(context.Background(), 2) }},
		{"ListComments", "/repos/octocat/Hello-World/issues/1347/comments", fixture(t, "comments.json"),
			func(c *Client) (any, error) { return c.ListComments(context.Background(), 1347) }},
		{"ListReviews", "/repos/octocat/Hello-World/pulls/12/reviews", fixture(t, "reviews.json"),
			func(c *Client) (any, error) { return c.ListReviews(context.Background(), 12) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "", nil)
			const etag = `"6dcb09b5b57875f334f61aebed695e2e4193db5e"`
			e.handle("GET "+tt.path, func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("If-None-Match") == etag {
					reply(w, http.StatusNotModified, nil, "ETag: "+etag, "X-RateLimit-Remaining: 4999")
					return
				}
				reply(w, 200, tt.body, "ETag: "+etag, "X-RateLimit-Remaining: 4998")
			})
			first, err := tt.call(e.client)
			if err != nil {
				t.Fatalf("first call: %v", err)
			}
			second, err := tt.call(e.client)
			if err != nil {
				t.Fatalf("second call: %v", err)
			}
			if !reflect.DeepEqual(first, second) {
				t.Errorf("304 answer differs from the cached one:\n%+v\n%+v", first, second)
			}
			reqs := e.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			if got := reqs[0].Header.Get("If-None-Match"); got != "" {
				t.Errorf("first request sent If-None-Match %q", got)
			}
			if got := reqs[1].Header.Get("If-None-Match"); got != etag {
				t.Errorf("second request If-None-Match = %q, want %q", got, etag)
			}
			st := e.client.Stats()
			if st.ConditionalHits != 1 || st.Total != 2 || st.RateRemaining != 4999 {
				t.Errorf("stats = %+v, want 1 conditional hit of 2 requests, remaining 4999", st)
			}
		})
	}
}

func TestConditionalGetPicksUpChangedResource(t *testing.T) {
	e := newEnv(t, "", nil)
	n := 0
	e.handle("GET /repos/octocat/Hello-World/issues/1347", func(w http.ResponseWriter, r *http.Request) {
		n++
		etag := fmt.Sprintf(`"v%d"`, n)
		if r.Header.Get("If-None-Match") == etag {
			reply(w, http.StatusNotModified, nil)
			return
		}
		body := patchJSON(t, fixture(t, "issue.json"), func(m map[string]any) { m["title"] = fmt.Sprint("title ", n) })
		reply(w, 200, body, "ETag: "+etag)
	})
	for want := 1; want <= 2; want++ {
		is, err := e.client.GetIssue(context.Background(), 1347)
		if err != nil {
			t.Fatal(err)
		}
		if is.Title != fmt.Sprint("title ", want) {
			t.Errorf("call %d title = %q", want, is.Title)
		}
	}
	if e.client.Stats().ConditionalHits != 0 {
		t.Error("a changed resource was counted as a conditional hit")
	}
}

func TestListPagesAreConditionalEachOnItsOwn(t *testing.T) {
	e := newEnv(t, "", nil)
	const path = "/repos/octocat/Hello-World/issues/1347/comments"
	one := fixture(t, "comments.json")
	e.handle("GET "+path, pages(e, path, one, one, one))
	first, err := e.client.ListComments(context.Background(), 1347)
	if err != nil {
		t.Fatal(err)
	}
	second, err := e.client.ListComments(context.Background(), 1347)
	if err != nil {
		t.Fatal(err)
	}
	if len(second) != 3 || !reflect.DeepEqual(first, second) {
		t.Errorf("second listing = %d comments, want the same 3", len(second))
	}
	st := e.client.Stats()
	if st.Total != 6 || st.ConditionalHits != 3 {
		t.Errorf("stats = %+v, want 6 requests with 3 conditional hits (pagination survives 304s)", st)
	}
}

func TestStatsCountRequestsByKind(t *testing.T) {
	e := newEnv(t, "", func(o *Options) { o.MinMutationGap = -1 })
	e.handle("GET /repos/octocat/Hello-World/issues/1347", status(200, fixture(t, "issue.json")))
	e.handle("POST /repos/octocat/Hello-World/issues/1347/labels", status(200, fixture(t, "labels.json")))
	ctx := context.Background()
	if _, err := e.client.GetIssue(ctx, 1347); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.GetIssue(ctx, 1347); err != nil {
		t.Fatal(err)
	}
	if err := e.client.AddLabels(ctx, 1347, []forge.Label{{Name: "bug"}}); err != nil {
		t.Fatal(err)
	}
	st := e.client.Stats()
	want := map[string]int{"GET issue": 2, "POST labels": 1}
	if !reflect.DeepEqual(st.Requests, want) || st.Total != 3 {
		t.Errorf("stats = %+v, want %v", st, want)
	}
	if st.RateRemaining != -1 {
		t.Errorf("RateRemaining = %d before any header, want -1", st.RateRemaining)
	}
}

func TestErrorsMapToForgeTypes(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   []byte
		want   error
	}{
		{"404 not found", 404, notFoundBody, forge.ErrNotFound},
		{"403 forbidden", 403, forbiddenBody, forge.ErrForbidden},
		{"422 validation", 422, fixture(t, "error-422-label.json"), forge.ErrValidation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, "", nil)
			e.handle("GET /repos/octocat/Hello-World/issues/1", status(tt.status, tt.body))
			_, err := e.client.GetIssue(context.Background(), 1)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if n := len(e.requests()); n != 1 {
				t.Errorf("%d requests, want 1 (not retried)", n)
			}
		})
	}
}

func TestDeletedResourceDropsItsCachedETag(t *testing.T) {
	e := newEnv(t, "", nil)
	const etag = `"v1"`
	e.handle("GET /repos/octocat/Hello-World/issues/comments/2", script(
		status(200, fixture(t, "bot-comment.json"), "ETag: "+etag),
		status(404, notFoundBody),
		status(200, fixture(t, "bot-comment.json"), "ETag: "+etag),
	))
	ctx := context.Background()
	if _, err := e.client.GetComment(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.GetComment(ctx, 2); !errors.Is(err, forge.ErrNotFound) {
		t.Fatalf("deleted comment: err = %v, want ErrNotFound", err)
	}
	if _, err := e.client.GetComment(ctx, 2); err != nil {
		t.Fatal(err)
	}
	reqs := e.requests()
	if got := reqs[2].Header.Get("If-None-Match"); got != "" {
		t.Errorf("after a 404 the stale ETag %q was still sent", got)
	}
}
