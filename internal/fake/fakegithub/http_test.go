package fakegithub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
)

func TestRepositoryCallsWithoutValidTokenAre401(t *testing.T) {
	e := newEnv(t)
	n := e.issue("auth")
	e.s.AddToken("expired", Identity{Login: "old", ExpiresAt: time.Now().Add(-time.Minute)})
	tests := []struct {
		name, auth string
		want       int
	}{
		{"no header", "", http.StatusUnauthorized},
		{"unknown token", "token nope", http.StatusUnauthorized},
		{"expired token", "token expired", http.StatusUnauthorized},
		{"basic scheme", "Basic " + humanTok, http.StatusUnauthorized},
		{"token scheme", "token " + humanTok, http.StatusOK},
		{"bearer scheme", "Bearer " + humanTok, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := e.do("GET", fmt.Sprintf("/repos/octo/repo/issues/%d", n), "", "", map[string]string{"Authorization": tt.auth})
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
			if tt.want == http.StatusUnauthorized && !strings.Contains(string(body), `"message":"Bad credentials"`) {
				t.Fatalf("body %s, want Bad credentials", body)
			}
		})
	}
	_, resp, err := e.client("nope").Issues.Get(context.Background(), "octo", "repo", n)
	wantStatus(t, resp, err, http.StatusUnauthorized)
}

func TestGHESPrefixIsAccepted(t *testing.T) {
	e := newEnv(t)
	n := e.issue("ghes")
	c, err := github.NewClient(nil).WithAuthToken(humanTok).WithEnterpriseURLs(e.s.URL(), e.s.URL())
	must(t, err)
	is, resp, err := c.Issues.Get(context.Background(), "octo", "repo", n)
	wantStatus(t, resp, err, http.StatusOK)
	if is.GetTitle() != "ghes" {
		t.Fatalf("title %q", is.GetTitle())
	}
	if got := e.s.Count("GET /repos/octo/repo/issues/*"); got != 1 {
		t.Fatalf("Count = %d, want the /api/v3 request logged without prefix", got)
	}
}

func TestETagNotModifiedDoesNotConsumeBudget(t *testing.T) {
	e := newEnv(t)
	n := e.issue("etag")
	path := fmt.Sprintf("/repos/octo/repo/issues/%d", n)

	first, _ := e.do("GET", path, humanTok, "", nil)
	etag := first.Header.Get("ETag")
	if first.StatusCode != http.StatusOK || etag == "" {
		t.Fatalf("first GET %d etag %q", first.StatusCode, etag)
	}
	remaining := first.Header.Get("X-RateLimit-Remaining")

	for _, inm := range []string{etag, strings.TrimPrefix(etag, "W/"), `"other", ` + etag} {
		again, body := e.do("GET", path, humanTok, "", map[string]string{"If-None-Match": inm})
		if again.StatusCode != http.StatusNotModified || len(body) != 0 {
			t.Fatalf("If-None-Match %s: status %d body %q, want 304 and no body", inm, again.StatusCode, body)
		}
		if got := again.Header.Get("X-RateLimit-Remaining"); got != remaining {
			t.Fatalf("304 consumed budget: remaining %s, want %s", got, remaining)
		}
	}

	e.clock.Advance(time.Minute)
	_, err := e.s.AddComment(testRepo, n, "bob", "changes the issue's comment count")
	must(t, err)
	changed, _ := e.do("GET", path, humanTok, "", map[string]string{"If-None-Match": etag})
	if changed.StatusCode != http.StatusOK || changed.Header.Get("ETag") == etag {
		t.Fatalf("after a change: status %d etag %q (old %q), want 200 and a new ETag", changed.StatusCode, changed.Header.Get("ETag"), etag)
	}
	left, _ := strconv.Atoi(changed.Header.Get("X-RateLimit-Remaining"))
	before, _ := strconv.Atoi(remaining)
	if left != before-1 {
		t.Fatalf("a 200 should consume one request: remaining %d, before %d", left, before)
	}
}

func TestRateLimitHeadersAndExhaustion(t *testing.T) {
	e := newEnv(t)
	n := e.issue("budget")
	e.s.AddToken("small", Identity{Login: "carol", RateLimit: 3})
	path := fmt.Sprintf("/repos/octo/repo/issues/%d", n)
	reset := strconv.FormatInt(epoch.Add(time.Hour).Unix(), 10)
	for i := 1; i <= 3; i++ {
		resp, _ := e.do("GET", path, "small", "", nil)
		h := resp.Header
		if resp.StatusCode != http.StatusOK || h.Get("X-RateLimit-Limit") != "3" ||
			h.Get("X-RateLimit-Remaining") != strconv.Itoa(3-i) || h.Get("X-RateLimit-Used") != strconv.Itoa(i) ||
			h.Get("X-RateLimit-Reset") != reset || h.Get("X-RateLimit-Resource") != "core" {
			t.Fatalf("call %d: status %d headers %v", i, resp.StatusCode, h)
		}
	}
	_, _, err := e.client("small").Issues.Get(context.Background(), "octo", "repo", n)
	var rle *github.RateLimitError
	if !errors.As(err, &rle) {
		t.Fatalf("4th call: %v, want go-github RateLimitError", err)
	}
	if rle.Rate.Remaining != 0 || !rle.Rate.Reset.Time.Equal(epoch.Add(time.Hour)) ||
		!strings.HasPrefix(rle.Message, "API rate limit exceeded for user ID ") {
		t.Fatalf("rate limit error %+v", rle)
	}
	// Other tokens have their own budget.
	if resp, _ := e.do("GET", path, humanTok, "", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("alice blocked by carol's budget: %d", resp.StatusCode)
	}
	e.clock.Advance(time.Hour)
	if resp, _ := e.do("GET", path, "small", "", nil); resp.StatusCode != http.StatusOK || resp.Header.Get("X-RateLimit-Remaining") != "2" {
		t.Fatalf("after the reset: %d remaining %s", resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"))
	}

	// SetRateLimit models "remaining 0, reset in 40 minutes".
	must(t, e.s.SetRateLimit(humanTok, 1000, 0, e.clock.Now().Add(40*time.Minute)))
	resp, body := e.do("POST", path+"/comments", humanTok, `{"body":"x"}`, nil)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("exhausted POST: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if len(e.s.Comments(testRepo, n)) != 0 {
		t.Fatal("a rate-limited POST still created a comment")
	}
}

func TestRequestLogRecordsIdentityStatusAndMutationBodies(t *testing.T) {
	e := newEnv(t)
	n := e.issue("log")
	e.do("GET", fmt.Sprintf("/repos/octo/repo/issues/%d", n), humanTok, "", nil)
	e.clock.Advance(1500 * time.Millisecond)
	e.do("POST", fmt.Sprintf("/repos/octo/repo/issues/%d/comments", n), writerTok, `{"body":"hi"}`, nil)
	e.do("GET", "/repos/octo/missing", humanTok, "", nil)
	e.do("GET", "/repos/octo/repo", "", "", nil)

	reqs := e.s.Requests()
	want := []Request{
		{Time: epoch, Method: "GET", Path: fmt.Sprintf("/repos/octo/repo/issues/%d", n), Status: 200, Login: "alice"},
		{Time: epoch.Add(1500 * time.Millisecond), Method: "POST", Path: fmt.Sprintf("/repos/octo/repo/issues/%d/comments", n), Status: 201, Login: "mallory", Body: `{"body":"hi"}`},
		{Time: epoch.Add(1500 * time.Millisecond), Method: "GET", Path: "/repos/octo/missing", Status: 404, Login: "alice"},
		{Time: epoch.Add(1500 * time.Millisecond), Method: "GET", Path: "/repos/octo/repo", Status: 401},
	}
	if len(reqs) != len(want) {
		t.Fatalf("logged %d requests, want %d: %+v", len(reqs), len(want), reqs)
	}
	for i := range want {
		if reqs[i] != want[i] {
			t.Errorf("request %d = %+v\nwant %+v", i, reqs[i], want[i])
		}
	}
	counts := map[string]int{
		"GET /repos/*/*/issues/*":           1,
		"POST /repos/*/*/issues/*/comments": 1,
		"* /repos/octo/*":                   2,
		"/repos/octo/repo/issues/*":         1,
		"GET /repos/{owner}/{repo}":         2,
	}
	for pat, w := range counts {
		if got := e.s.Count(pat); got != w {
			t.Errorf("Count(%q) = %d, want %d", pat, got, w)
		}
	}
	if mt := e.s.MutationTimes(); len(mt) != 1 || !mt[0].Equal(epoch.Add(1500*time.Millisecond)) {
		t.Fatalf("MutationTimes = %v", mt)
	}
	e.s.ResetLog()
	if len(e.s.Requests()) != 0 {
		t.Fatal("ResetLog kept requests")
	}
}

func TestConcurrentClientsAreSerialised(t *testing.T) {
	e := newEnv(t)
	n := e.issue("race")
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gh := e.client(humanTok)
			for i := range 10 {
				body := fmt.Sprintf("w%d-%d", w, i)
				if _, _, err := gh.Issues.CreateComment(context.Background(), "octo", "repo", n, &github.IssueComment{Body: &body}); err != nil {
					t.Error(err)
					return
				}
				if _, _, err := gh.Issues.AddLabelsToIssue(context.Background(), "octo", "repo", n, []string{fmt.Sprintf("w%d", w)}); err != nil {
					t.Error(err)
					return
				}
				_ = e.s.Comments(testRepo, n)
			}
		}()
	}
	wg.Wait()
	if got := len(e.s.Comments(testRepo, n)); got != 80 {
		t.Fatalf("%d comments, want 80", got)
	}
	if got := len(e.s.Labels(testRepo, n)); got != 8 {
		t.Fatalf("%d labels, want 8", got)
	}
	seen := map[int64]bool{}
	for _, c := range e.s.Comments(testRepo, n) {
		if seen[c.ID] {
			t.Fatalf("duplicate comment id %d", c.ID)
		}
		seen[c.ID] = true
	}
}
