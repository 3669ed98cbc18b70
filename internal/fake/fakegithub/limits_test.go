package fakegithub

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
)

const (
	instTokA = "ghs_inst_a"
	instTokB = "ghs_inst_b"
	otherTok = "ghs_other"
)

// limitEnv is a fake with Limits on and two tokens of installation 7 (as
// after an hourly token rotation) and one of installation 8.
func limitEnv(t *testing.T, lim Limits, rate int) *env {
	t.Helper()
	clock := fakeclock.New(epoch)
	s := New(Options{Clock: clock.Now, Limits: &lim, RateLimit: rate})
	t.Cleanup(s.Close)
	must(t, s.AddRepo(testRepo))
	s.AddToken(humanTok, Identity{Login: "alice"})
	must(t, s.SetPermission(testRepo, "alice", "write"))
	for tok, inst := range map[string]int64{instTokA: 7, instTokB: 7, otherTok: 8} {
		s.AddToken(tok, Identity{Login: "autopilot[bot]", Type: "Bot", AppID: 99, InstallationID: inst})
	}
	return &env{t: t, s: s, clock: clock}
}

func header(resp *http.Response, k string) int {
	n, _ := strconv.Atoi(resp.Header.Get(k))
	return n
}

func TestLimitsShareOnePrimaryBudgetPerInstallation(t *testing.T) {
	for _, status := range []int{http.StatusForbidden, http.StatusTooManyRequests} {
		e := limitEnv(t, Limits{Primary429: status == http.StatusTooManyRequests}, 3)
		n := e.issue("a")
		path := "/repos/" + testRepo + "/issues/" + strconv.Itoa(n)
		for i, tok := range []string{instTokA, instTokB, instTokA} {
			resp, _ := e.do("GET", path, tok, "", nil)
			if resp.StatusCode != http.StatusOK || header(resp, "X-RateLimit-Remaining") != 2-i {
				t.Fatalf("request %d: status %d remaining %q", i, resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"))
			}
		}
		resp, body := e.do("GET", path, instTokB, "", nil)
		if resp.StatusCode != status || resp.Header.Get("X-RateLimit-Remaining") != "0" || resp.Header.Get("X-RateLimit-Reset") == "" {
			t.Fatalf("spent budget: status %d remaining %q: %s", resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"), body)
		}
		// Another installation has a budget of its own.
		if resp, _ := e.do("GET", path, otherTok, "", nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("installation 8: status %d", resp.StatusCode)
		}
		st := e.s.LimitStats()
		if st.Primary != 1 || st.ByInstallation[7].Primary != 1 || st.ByInstallation[7].Requests != 4 || st.ByStatus[status] != 1 {
			t.Fatalf("stats %+v", st)
		}
	}
}

func TestConditionalRequestsAnswer304WithoutCharging(t *testing.T) {
	e := limitEnv(t, Limits{}, 100)
	n := e.issue("a")
	path := "/repos/" + testRepo + "/issues/" + strconv.Itoa(n)
	first, _ := e.do("GET", path, instTokA, "", nil)
	etag, lastMod := first.Header.Get("ETag"), first.Header.Get("Last-Modified")
	if etag == "" || lastMod == "" {
		t.Fatalf("ETag %q Last-Modified %q", etag, lastMod)
	}
	for _, h := range []map[string]string{{"If-None-Match": etag}, {"If-Modified-Since": lastMod}} {
		resp, _ := e.do("GET", path, instTokB, "", h)
		if resp.StatusCode != http.StatusNotModified || header(resp, "X-RateLimit-Remaining") != 99 {
			t.Fatalf("%v: status %d remaining %q", h, resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"))
		}
	}
	// A change ends both validators.
	e.clock.Advance(time.Minute)
	must(t, e.s.SetBody(testRepo, n, "changed"))
	for _, h := range []map[string]string{{"If-None-Match": etag}, {"If-Modified-Since": lastMod}} {
		if resp, _ := e.do("GET", path, instTokA, "", h); resp.StatusCode != http.StatusOK {
			t.Fatalf("%v after a change: status %d", h, resp.StatusCode)
		}
	}
	st := e.s.LimitStats()
	if st.NotModified != 2 || st.ByInstallation[7].NotModified != 2 || st.ByInstallation[7].Used != 3 || st.ByStatus[http.StatusNotModified] != 2 {
		t.Fatalf("stats %+v", st)
	}
}

func TestConcurrentRequestsBeyondTheLimitAreSecondaryLimited(t *testing.T) {
	e := limitEnv(t, Limits{Concurrent: 1}, 100)
	n := e.issue("a")
	path := "/repos/" + testRepo + "/issues/" + strconv.Itoa(n)
	e.s.Script("GET", path, Delayed(time.Hour)) // held in flight until cancelled
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, "GET", e.s.URL()+path, nil)
		req.Header.Set("Authorization", "token "+instTokA)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	for e.s.InFlight(7) == 0 {
		time.Sleep(time.Millisecond) // waits for a condition, not for time
	}
	resp, body := e.do("GET", path, instTokB, "", nil)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("second concurrent request: status %d retry-after %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	var msg struct{ Message string }
	must(t, json.Unmarshal(body, &msg))
	if msg.Message != secondaryMsg {
		t.Fatalf("message %q", msg.Message)
	}
	// Another installation is not held back.
	if resp, _ := e.do("GET", path, otherTok, "", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("installation 8: status %d", resp.StatusCode)
	}
	cancel()
	<-done
	if st := e.s.LimitStats(); st.Secondary != 1 || st.ByInstallation[7].Secondary != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestPointsPerMinuteAndRetryAfterWindow(t *testing.T) {
	e := limitEnv(t, Limits{PointsPerMinute: 11}, 100)
	n := e.issue("a")
	comments := "/repos/" + testRepo + "/issues/" + strconv.Itoa(n) + "/comments"
	for i := range 2 { // 5 points each
		if resp, _ := e.do("POST", comments, instTokA, `{"body":"x"}`, nil); resp.StatusCode != http.StatusCreated {
			t.Fatalf("post %d: status %d", i, resp.StatusCode)
		}
	}
	e.clock.Advance(10 * time.Second)
	if resp, _ := e.do("GET", comments, instTokB, "", nil); resp.StatusCode != http.StatusOK { // 11 points
		t.Fatalf("get: status %d", resp.StatusCode)
	}
	resp, _ := e.do("GET", comments, instTokB, "", nil) // the 12th point
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Retry-After") != "50" {
		t.Fatalf("over the minute: status %d retry-after %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	e.clock.Advance(49 * time.Second)
	if resp, _ := e.do("GET", comments, instTokA, "", nil); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("inside retry-after: status %d", resp.StatusCode)
	}
	e.clock.Advance(time.Second)
	if resp, _ := e.do("GET", comments, instTokA, "", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("after retry-after: status %d", resp.StatusCode)
	}
	if st := e.s.LimitStats(); st.Secondary != 2 || st.InsideRetryAfter != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestContentCreationPerMinute(t *testing.T) {
	e := limitEnv(t, Limits{ContentPerMinute: 2}, 100)
	n := e.issue("a")
	comments := "/repos/" + testRepo + "/issues/" + strconv.Itoa(n) + "/comments"
	for i := range 2 {
		if resp, _ := e.do("POST", comments, instTokA, `{"body":"x"}`, nil); resp.StatusCode != http.StatusCreated {
			t.Fatalf("post %d: status %d", i, resp.StatusCode)
		}
	}
	if resp, _ := e.do("GET", comments, instTokA, "", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("a read is not content: status %d", resp.StatusCode)
	}
	resp, _ := e.do("POST", comments, instTokB, `{"body":"x"}`, nil)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Retry-After") != "60" {
		t.Fatalf("third create: status %d retry-after %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if got := len(mustComments(t, e, n)); got != 2 {
		t.Fatalf("%d comments, want 2 (the refused create changed nothing)", got)
	}
}

func mustComments(_ *testing.T, e *env, n int) []Comment { return e.s.Comments(testRepo, n) }

func TestGraphQLChargesTheQueryCostAndReportsRateLimit(t *testing.T) {
	e := limitEnv(t, Limits{}, 100)
	n := e.issue("a")
	q := testRecentQuery[:len(testRecentQuery)-1] + " rateLimit { cost remaining limit used resetAt } }"
	resp, b := e.do("POST", "/graphql", instTokA, gqlBody(RecentCommentsOp, q,
		map[string]any{"owner": "octo", "name": "repo", "number": n, "last": 100}), nil)
	var ans struct {
		Data struct {
			RateLimit struct{ Cost, Remaining, Limit, Used int }
		}
	}
	must(t, json.Unmarshal(b, &ans))
	rl := ans.Data.RateLimit
	if rl.Cost != 1 || rl.Remaining != 99 || rl.Limit != 100 || rl.Used != 1 {
		t.Fatalf("rateLimit %+v: %s", rl, b)
	}
	if resp.Header.Get("X-RateLimit-Resource") != "graphql" || header(resp, "X-RateLimit-Used") != 1 {
		t.Fatalf("headers %v", resp.Header)
	}
}

// TestSetInstallationRateLimitIsSharedByItsTokens: the budget set for an
// installation is the one all its tokens spend, and others keep theirs.
func TestSetInstallationRateLimitIsSharedByItsTokens(t *testing.T) {
	e := limitEnv(t, Limits{}, 5000)
	n := e.issue("a")
	path := "/repos/" + testRepo + "/issues/" + strconv.Itoa(n)
	must(t, e.s.SetInstallationRateLimit(7, 5000, 2, epoch.Add(time.Hour)))
	for i, tok := range []string{instTokA, instTokB} {
		resp, _ := e.do("GET", path, tok, "", nil)
		if resp.StatusCode != http.StatusOK || header(resp, "X-RateLimit-Remaining") != 1-i || header(resp, "X-RateLimit-Limit") != 5000 {
			t.Fatalf("request %d: status %d remaining %q", i, resp.StatusCode, resp.Header.Get("X-RateLimit-Remaining"))
		}
	}
	if resp, _ := e.do("GET", path, instTokA, "", nil); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("spent: status %d, want 403", resp.StatusCode)
	}
	if resp, _ := e.do("GET", path, otherTok, "", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("installation 8: status %d", resp.StatusCode)
	}
	off := New(Options{})
	defer off.Close()
	if err := off.SetInstallationRateLimit(7, 1, 1, epoch); err == nil {
		t.Error("without Limits: no error")
	}
}
