package fakegithub

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
)

var epoch = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

const (
	testRepo  = "octo/repo"
	humanTok  = "tok-alice"
	writerTok = "tok-mallory"
)

// env is a fake with one repository, a human (alice, write) and a second
// writer (mallory), plus a go-github client per token.
type env struct {
	t     *testing.T
	s     *Server
	clock *fakeclock.Clock
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clock := fakeclock.New(epoch)
	s := New(Options{Clock: clock.Now})
	t.Cleanup(s.Close)
	must(t, s.AddRepo(testRepo))
	s.AddToken(humanTok, Identity{Login: "alice"})
	s.AddToken(writerTok, Identity{Login: "mallory"})
	must(t, s.SetPermission(testRepo, "alice", "write"))
	must(t, s.SetPermission(testRepo, "mallory", "write"))
	return &env{t: t, s: s, clock: clock}
}

func (e *env) client(tok string) *github.Client {
	c := github.NewClient(nil).WithAuthToken(tok)
	u, err := c.BaseURL.Parse(e.s.URL() + "/")
	must(e.t, err)
	c.BaseURL = u
	return c
}

func (e *env) issue(title string, labels ...string) int {
	e.t.Helper()
	n, err := e.s.CreateIssue(testRepo, "alice", title, "body of "+title, labels)
	must(e.t, err)
	return n
}

// do sends a raw request and returns the response and its body.
func (e *env) do(method, path, tok, body string, hdr map[string]string) (*http.Response, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, e.s.URL()+path, rd)
	must(e.t, err)
	if tok != "" {
		req.Header.Set("Authorization", "token "+tok)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	must(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(e.t, err)
	return resp, b
}

// doJSON is do plus decoding of a JSON object or array answer.
func (e *env) doJSON(method, path, tok, body string, out any) *http.Response {
	e.t.Helper()
	resp, b := e.do(method, path, tok, body, nil)
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s %s: decode %q: %v", method, path, b, err)
		}
	}
	return resp
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantStatus(t *testing.T, resp *github.Response, err error, want int) {
	t.Helper()
	if resp == nil {
		t.Fatalf("no response (err %v), want status %d", err, want)
	}
	if resp.StatusCode != want {
		t.Fatalf("status %d (err %v), want %d", resp.StatusCode, err, want)
	}
}
