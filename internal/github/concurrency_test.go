package github

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/forge"
)

func TestConcurrentCallersRespectWindowAndSpacing(t *testing.T) {
	e := newEnv(t, "", nil)
	e.handle("GET "+issuePath, script(status(403, secondaryLimitBody, "Retry-After: 30"), status(200, fixture(t, "issue.json"))))
	e.handle("POST /repos/octocat/Hello-World/issues/1347/labels", status(200, fixture(t, "labels.json")))
	ctx := context.Background()
	if err := getIssue(e); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 8 {
		wg.Add(2)
		go func() { defer wg.Done(); errs <- getIssue(e) }()
		go func() { defer wg.Done(); errs <- e.client.AddLabels(ctx, 1347, []forge.Label{{Name: "bug"}}) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	reqs := e.requests()
	windowEnd := reqs[0].At.Add(30 * time.Second)
	var posts []time.Time
	for _, r := range reqs[1:] {
		if r.At.Before(windowEnd) {
			t.Errorf("%s %s sent at %v, inside the window ending %v", r.Method, r.Path, r.At, windowEnd)
		}
		if r.Method == "POST" {
			posts = append(posts, r.At)
		}
	}
	sort.Slice(posts, func(i, j int) bool { return posts[i].Before(posts[j]) })
	for i := 1; i < len(posts); i++ {
		if gap := posts[i].Sub(posts[i-1]); gap < time.Second {
			t.Errorf("mutations %d and %d only %v apart", i-1, i, gap)
		}
	}
	if len(posts) != 8 {
		t.Errorf("%d POSTs, want 8", len(posts))
	}
}
