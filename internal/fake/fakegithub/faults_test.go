package fakegithub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
)

func TestScriptedStatusesAreConsumedInOrder(t *testing.T) {
	e := newEnv(t)
	n := e.issue("script")
	c, err := e.s.AddComment(testRepo, n, "autopilot[bot]", "state v1")
	must(t, err)
	e.s.Script("PATCH", "/repos/*/*/issues/comments/*", Fail(502), Fail(502))
	gh := e.client(humanTok)
	var got []int
	for i := range 3 {
		_, resp, _ := gh.Issues.EditComment(context.Background(), "octo", "repo", c.ID,
			&github.IssueComment{Body: github.String(fmt.Sprintf("state v%d", i+2))})
		got = append(got, resp.StatusCode)
	}
	if fmt.Sprint(got) != "[502 502 200]" {
		t.Fatalf("statuses %v, want [502 502 200]", got)
	}
	snap, _ := e.s.Comment(c.ID)
	if snap.Body != "state v4" || len(snap.Edits) != 1 {
		t.Fatalf("failed PATCHes must not apply: body %q, %d edits", snap.Body, len(snap.Edits))
	}
	if e.s.PendingSteps() != 0 || e.s.Count("PATCH /repos/*/*/issues/comments/*") != 3 {
		t.Fatalf("pending %d, count %d", e.s.PendingSteps(), e.s.Count("PATCH /repos/*/*/issues/comments/*"))
	}
	// A script only applies to its method and path.
	e.s.Script("POST", "/repos/*/*/issues/*/comments", Fail(500))
	if _, resp, _ := gh.Issues.GetComment(context.Background(), "octo", "repo", c.ID); resp.StatusCode != 200 {
		t.Fatalf("GET hit a POST script: %d", resp.StatusCode)
	}
	if e.s.PendingSteps() != 1 {
		t.Fatal("the POST step was consumed by a GET")
	}
	e.s.ClearScripts()
	if e.s.PendingSteps() != 0 {
		t.Fatal("ClearScripts left steps")
	}
}

func TestCommitThenFailReallyCommits(t *testing.T) {
	tests := []struct {
		name   string
		step   Step
		status int // 0: connection closed
	}{
		{"answer 503", AfterCommit(503), 503},
		{"close connection", AfterCommit(0), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			n := e.issue("lost response")
			e.s.Script("POST", "/repos/octo/repo/issues/*/comments", tt.step)
			_, resp, err := e.client(humanTok).Issues.CreateComment(context.Background(), "octo", "repo", n,
				&github.IssueComment{Body: github.String("<!-- marker -->")})
			if err == nil {
				t.Fatal("client saw success")
			}
			if tt.status != 0 && (resp == nil || resp.StatusCode != tt.status) {
				t.Fatalf("response %v err %v, want %d", resp, err, tt.status)
			}
			if tt.status == 0 && resp != nil {
				t.Fatalf("got a response %d, want a closed connection", resp.StatusCode)
			}
			if got := e.s.Comments(testRepo, n); len(got) != 1 || got[0].Body != "<!-- marker -->" {
				t.Fatalf("comments %+v: the mutation must have been applied", got)
			}
			if reqs := e.s.Requests(); reqs[len(reqs)-1].Status != tt.status {
				t.Fatalf("log status %d, want %d", reqs[len(reqs)-1].Status, tt.status)
			}
		})
	}
}

func TestDisconnectDoesNotCommit(t *testing.T) {
	e := newEnv(t)
	n := e.issue("dropped")
	e.s.Script("POST", "/repos/*/*/issues/*/comments", Disconnect())
	_, _, err := e.client(humanTok).Issues.CreateComment(context.Background(), "octo", "repo", n,
		&github.IssueComment{Body: github.String("x")})
	if err == nil {
		t.Fatal("client saw success")
	}
	if got := e.s.Comments(testRepo, n); len(got) != 0 {
		t.Fatalf("comments %+v, want none", got)
	}
}

func TestDelayAndLatencySlowRequests(t *testing.T) {
	e := newEnv(t)
	n := e.issue("slow")
	e.s.Script("GET", "/repos/*/*/issues/*", Delayed(80*time.Millisecond))
	gh := e.client(humanTok)
	start := time.Now()
	_, resp, err := gh.Issues.Get(context.Background(), "octo", "repo", n)
	wantStatus(t, resp, err, http.StatusOK)
	if d := time.Since(start); d < 80*time.Millisecond {
		t.Fatalf("delayed request took %v", d)
	}
	start = time.Now()
	_, _, err = gh.Issues.Get(context.Background(), "octo", "repo", n)
	must(t, err)
	if d := time.Since(start); d > 70*time.Millisecond {
		t.Fatalf("undelayed request took %v", d)
	}

	e.s.SetLatency(60 * time.Millisecond)
	start = time.Now()
	_, _, err = gh.Issues.Get(context.Background(), "octo", "repo", n)
	must(t, err)
	if d := time.Since(start); d < 60*time.Millisecond {
		t.Fatalf("latency not applied: %v", d)
	}

	// A client that gives up during the latency changes nothing.
	e.s.SetLatency(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, _, err = gh.Issues.CreateComment(ctx, "octo", "repo", n, &github.IssueComment{Body: github.String("late")})
	if err == nil {
		t.Fatal("timed-out request succeeded")
	}
	deadline := time.Now().Add(2 * time.Second)
	for e.s.Count("POST /repos/*/*/issues/*/comments") == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	reqs := e.s.Requests()
	if last := reqs[len(reqs)-1]; last.Status != statusClientGone {
		t.Fatalf("abandoned request logged as %+v", last)
	}
	if len(e.s.Comments(testRepo, n)) != 0 {
		t.Fatal("abandoned request created a comment")
	}
}

func TestRateLimitStepsMatchGoGithubErrors(t *testing.T) {
	e := newEnv(t)
	n := e.issue("secondary")
	reset := epoch.Add(40 * time.Minute)
	e.s.Script("*", "/repos/*/*/issues/*",
		SecondaryRateLimit(60*time.Second), SecondaryRateLimit(0), SecondaryRateLimit429(30*time.Second),
		PrimaryRateLimit(1000, reset))
	gh := e.client(humanTok)
	get := func() (*github.Response, error) {
		_, resp, err := gh.Issues.Get(context.Background(), "octo", "repo", n)
		return resp, err
	}

	resp, err := get()
	var abuse *github.AbuseRateLimitError
	if !errors.As(err, &abuse) || abuse.RetryAfter == nil || *abuse.RetryAfter != 60*time.Second {
		t.Fatalf("403 with retry-after: %v", err)
	}
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Retry-After") != "60" {
		t.Fatalf("status %d retry-after %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	// go-github refuses to send inside the retry-after window; use a fresh client.
	// Without retry-after, go-github falls back to x-ratelimit-reset.
	gh = e.client(humanTok)
	resp, err = get()
	if !errors.As(err, &abuse) || resp.Header.Get("Retry-After") != "" || resp.Header.Get("X-RateLimit-Reset") == "" {
		t.Fatalf("403 without retry-after: %v %v", err, resp.Header)
	}

	gh = e.client(humanTok)
	resp, err = get()
	if resp == nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "30" {
		t.Fatalf("429: %v %v", resp, err)
	}

	gh = e.client(humanTok)
	_, err = get()
	var rle *github.RateLimitError
	if !errors.As(err, &rle) || rle.Rate.Remaining != 0 || !rle.Rate.Reset.Time.Equal(reset) {
		t.Fatalf("primary: %v", err)
	}
}

func TestScriptedBodyAndHeadersAreSentVerbatim(t *testing.T) {
	e := newEnv(t)
	bare := SecondaryRateLimit(0)
	bare.Headers["X-RateLimit-Reset"] = ""
	e.s.Script("GET", "/repos/octo/repo", Step{Status: 418, Body: `{"message":"teapot"}`, Headers: map[string]string{"X-Test": "1"}}, bare)
	resp, body := e.do("GET", "/repos/octo/repo", humanTok, "", nil)
	if resp.StatusCode != 418 || string(body) != `{"message":"teapot"}` || resp.Header.Get("X-Test") != "1" {
		t.Fatalf("status %d body %s headers %v", resp.StatusCode, body, resp.Header)
	}
	if resp.Header.Get("X-RateLimit-Limit") == "" {
		t.Fatal("scripted answers carry rate-limit headers")
	}
	_, _, err := e.client(humanTok).Repositories.Get(context.Background(), "octo", "repo")
	var abuse *github.AbuseRateLimitError
	if !errors.As(err, &abuse) || abuse.RetryAfter != nil {
		t.Fatalf("secondary limit with neither retry-after nor reset: %v", err)
	}
}
