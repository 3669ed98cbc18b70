package fakejira

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakeclock"
)

func newFake(t *testing.T, o Options) (*Server, *fakeclock.Clock) {
	t.Helper()
	c := fakeclock.New(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	o.Now = c.Now
	s := New(o)
	t.Cleanup(s.Close)
	return s, c
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// auth modes for call.
const (
	authBasic  = "basic"
	authBearer = "bearer"
	authNone   = "none"
	authWrong  = "wrong"
)

func call(t *testing.T, s *Server, method, path, auth string, body any) answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	switch auth {
	case authBasic:
		req.SetBasicAuth(s.Options().User, s.Options().Token)
	case authBearer:
		req.Header.Set("Authorization", "Bearer "+s.Options().Token)
	case authWrong:
		req.SetBasicAuth(s.Options().User, "expired")
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

func fields(summary, typ string, extra map[string]any) map[string]any {
	f := map[string]any{
		"project":   map[string]any{"key": "PROJ"},
		"summary":   summary,
		"issuetype": map[string]any{"name": typ},
		"labels":    []string{"autopilot", "autopilot-0123456789"},
	}
	for k, v := range extra {
		f[k] = v
	}
	return map[string]any{"fields": f}
}

func TestServerInfoAndAuthByDeployment(t *testing.T) {
	tests := []struct {
		deployment, auth string
		revoke           bool
		wantType         string
		wantMyself       int
	}{
		{Cloud, authBasic, false, "Cloud", 200},
		{Cloud, authBearer, false, "Cloud", 401}, // Cloud takes e-mail + API token only
		{Cloud, authWrong, false, "Cloud", 401},
		{Cloud, authNone, false, "Cloud", 401},
		{Cloud, authBasic, true, "Cloud", 401},
		{DataCenter, authBearer, false, "Server", 200},
		{DataCenter, authBasic, false, "Server", 200},
		{DataCenter, authBearer, true, "Server", 401},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/%s/revoked=%v", tc.deployment, tc.auth, tc.revoke), func(t *testing.T) {
			s, _ := newFake(t, Options{Deployment: tc.deployment})
			s.SetAuthValid(!tc.revoke)
			info := call(t, s, "GET", "/rest/api/2/serverInfo", authNone, nil)
			if info.status != 200 || info.body["deploymentType"] != tc.wantType {
				t.Fatalf("serverInfo = %d %v", info.status, info.body)
			}
			me := call(t, s, "GET", "/rest/api/2/myself", tc.auth, nil)
			if me.status != tc.wantMyself {
				t.Fatalf("myself = %d %s", me.status, me.raw)
			}
			if me.status == 401 && len(me.body["errorMessages"].([]any)) == 0 {
				t.Fatalf("401 without errorMessages: %s", me.raw)
			}
		})
	}
}

func TestCreateValidatesLikeJira(t *testing.T) {
	long := strings.Repeat("x", 256)
	tests := []struct {
		name       string
		deployment string
		body       map[string]any
		wantStatus int
		wantField  string
	}{
		{"created", Cloud, fields("Login form", "Task", nil), 201, ""},
		{"missing summary", Cloud, fields("", "Task", nil), 400, "summary"},
		{"summary too long", Cloud, fields(long, "Task", nil), 400, "summary"},
		{"summary with newline", Cloud, fields("a\nb", "Task", nil), 400, "summary"},
		{"unknown issue type", Cloud, fields("x", "Saga", nil), 400, "issuetype"},
		{"label with space", Cloud, fields("x", "Task", map[string]any{"labels": []string{"two words"}}), 400, "labels"},
		{"unknown field", Cloud, fields("x", "Task", map[string]any{"customfield_99": 1}), 400, "customfield_99"},
		{"points must be a number", Cloud, fields("x", "Task", map[string]any{"customfield_10016": "three"}), 400, "customfield_10016"},
		{"cloud parent must be an epic", Cloud, fields("x", "Task", map[string]any{"parent": map[string]any{"key": "PROJ-99"}}), 400, "parent"},
		{"dc parent not settable", DataCenter, fields("x", "Task", map[string]any{"parent": map[string]any{"key": "PROJ-1"}}), 400, "parent"},
		{"dc epic needs epic name", DataCenter, fields("x", "Epic", nil), 400, "customfield_10102"},
		{"dc epic with epic name", DataCenter, fields("x", "Epic", map[string]any{"customfield_10102": "x"}), 201, ""},
		{"dc epic link must be an epic", DataCenter, fields("x", "Task", map[string]any{"customfield_10100": "PROJ-7"}), 400, "customfield_10100"},
		{"wrong project", Cloud, map[string]any{"fields": map[string]any{"project": map[string]any{"key": "NOPE"}, "summary": "x", "issuetype": map[string]any{"name": "Task"}}}, 400, "project"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newFake(t, Options{Deployment: tc.deployment})
			a := call(t, s, "POST", "/rest/api/2/issue", authBasic, tc.body)
			if a.status != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", a.status, tc.wantStatus, a.raw)
			}
			if tc.wantField == "" {
				if a.body["key"] != "PROJ-1" || a.body["id"] != "10000" || !strings.HasSuffix(a.body["self"].(string), "/rest/api/2/issue/10000") {
					t.Fatalf("created = %v", a.body)
				}
				return
			}
			errs, _ := a.body["errors"].(map[string]any)
			if msg, _ := errs[tc.wantField].(string); msg == "" {
				t.Fatalf("errors = %v, want field %s named", a.body, tc.wantField)
			}
			if len(s.Issues()) != 0 {
				t.Fatal("a rejected create stored an issue")
			}
		})
	}
}

func TestBulkCreateReportsPartialFailures(t *testing.T) {
	s, _ := newFake(t, Options{})
	ok := fields("ok", "Task", nil)
	bad := fields("", "Task", nil)
	a := call(t, s, "POST", "/rest/api/2/issue/bulk", authBasic, map[string]any{"issueUpdates": []any{ok, bad, ok}})
	if a.status != 201 {
		t.Fatalf("status %d: %s", a.status, a.raw)
	}
	issues := a.body["issues"].([]any)
	errs := a.body["errors"].([]any)
	if len(issues) != 2 || len(errs) != 1 {
		t.Fatalf("answer %s", a.raw)
	}
	e := errs[0].(map[string]any)
	if e["failedElementNumber"] != float64(1) || e["status"] != float64(400) {
		t.Fatalf("error element %v", e)
	}
	if _, named := e["elementErrors"].(map[string]any)["errors"].(map[string]any)["summary"]; !named {
		t.Fatalf("error element does not name summary: %v", e)
	}
	if keys := []any{issues[0].(map[string]any)["key"], issues[1].(map[string]any)["key"]}; keys[0] != "PROJ-1" || keys[1] != "PROJ-2" {
		t.Fatalf("keys %v", keys)
	}

	all := call(t, s, "POST", "/rest/api/2/issue/bulk", authBasic, map[string]any{"issueUpdates": []any{bad}})
	if all.status != 400 || len(all.body["errors"].([]any)) != 1 {
		t.Fatalf("all failed: %d %s", all.status, all.raw)
	}
	many := make([]any, 51)
	for i := range many {
		many[i] = ok
	}
	over := call(t, s, "POST", "/rest/api/2/issue/bulk", authBasic, map[string]any{"issueUpdates": many})
	if over.status != 400 || len(s.Issues()) != 2 {
		t.Fatalf("51 items: %d, %d issues", over.status, len(s.Issues()))
	}
}

func TestSearchEndpointsAndLag(t *testing.T) {
	for _, dep := range []string{Cloud, DataCenter} {
		t.Run(dep, func(t *testing.T) {
			s, c := newFake(t, Options{Deployment: dep, SearchLag: 90 * time.Second})
			auth := authBasic
			good, gone := "/rest/api/2/search/jql", "/rest/api/2/search"
			wantGone := 410
			if dep == DataCenter {
				auth = authBearer
				good, gone = gone, good
				wantGone = 404
			}
			call(t, s, "POST", "/rest/api/2/issue", auth, fields("one", "Task", nil))
			q := "?jql=" + url.QueryEscape(`project = PROJ AND labels in ("autopilot-0123456789")`) + "&fields=labels,status"
			if a := call(t, s, "GET", gone+q, auth, nil); a.status != wantGone {
				t.Fatalf("%s answered %d, want %d", gone, a.status, wantGone)
			} else if dep == Cloud && !strings.Contains(a.raw, "CHANGE-2046") {
				t.Fatalf("410 body %s", a.raw)
			}
			for _, step := range []struct {
				advance time.Duration
				want    int
			}{{0, 0}, {89 * time.Second, 0}, {time.Second, 1}} {
				c.Advance(step.advance)
				a := call(t, s, "GET", good+q, auth, nil)
				if a.status != 200 || len(a.body["issues"].([]any)) != step.want {
					t.Fatalf("+%s: %d %s", step.advance, a.status, a.raw)
				}
			}
			a := call(t, s, "GET", good+q, auth, nil)
			is := a.body["issues"].([]any)[0].(map[string]any)
			st := is["fields"].(map[string]any)["status"].(map[string]any)
			if is["key"] != "PROJ-1" || st["statusCategory"].(map[string]any)["key"] != "new" {
				t.Fatalf("issue %v", is)
			}
			if err := s.Transition("PROJ-1", "Done"); err != nil {
				t.Fatal(err)
			}
			g := call(t, s, "GET", "/rest/api/2/issue/PROJ-1", auth, nil)
			if g.body["fields"].(map[string]any)["status"].(map[string]any)["statusCategory"].(map[string]any)["key"] != "done" {
				t.Fatalf("after transition: %s", g.raw)
			}
			if nf := call(t, s, "GET", "/rest/api/2/issue/PROJ-9", auth, nil); nf.status != 404 {
				t.Fatalf("missing issue: %d", nf.status)
			}
		})
	}
}

func TestSearchPagingAndJQLErrors(t *testing.T) {
	s, _ := newFake(t, Options{})
	for i := 0; i < 120; i++ {
		call(t, s, "POST", "/rest/api/2/issue", authBasic, fields(fmt.Sprint("t", i), "Task", nil))
	}
	base := "/rest/api/2/search/jql?jql=" + url.QueryEscape("project = PROJ ORDER BY key ASC") + "&maxResults=50"
	seen, pages, tok := 0, 0, ""
	for {
		a := call(t, s, "GET", base+"&nextPageToken="+url.QueryEscape(tok), authBasic, nil)
		if a.status != 200 {
			t.Fatalf("page %d: %d %s", pages, a.status, a.raw)
		}
		issues := a.body["issues"].([]any)
		if _, hasKey := issues[0].(map[string]any)["key"]; hasKey {
			t.Fatal("without fields, Cloud search/jql returns ids only")
		}
		seen += len(issues)
		pages++
		if a.body["isLast"] == true {
			if _, has := a.body["nextPageToken"]; has {
				t.Fatal("last page carries a nextPageToken")
			}
			break
		}
		tok = a.body["nextPageToken"].(string)
	}
	if seen != 120 || pages != 3 {
		t.Fatalf("saw %d issues in %d pages", seen, pages)
	}
	for _, jql := range []string{
		"key in (PROJ-1, PROJ-999)", // Jira validates keys
		"labels in (a, b",
		"nosuchfield = 1",
		"project = NOPE",
		`labels = "unterminated`,
		"",
	} {
		a := call(t, s, "GET", "/rest/api/2/search/jql?jql="+url.QueryEscape(jql), authBasic, nil)
		if a.status != 400 || len(a.body["errorMessages"].([]any)) == 0 {
			t.Errorf("jql %q: %d %s", jql, a.status, a.raw)
		}
	}
}

func TestFaultScriptsOutagesAndRequestLog(t *testing.T) {
	s, c := newFake(t, Options{})
	s.Script(EndpointCreate,
		RateLimited(30*time.Second, "jira-per-issue-on-write"),
		Fault{Status: 503, Commit: true},
		Fault{Drop: true, Commit: true},
	)
	rl := call(t, s, "POST", "/rest/api/2/issue", authBasic, fields("a", "Task", nil))
	if rl.status != 429 || rl.header.Get("Retry-After") != "30" || rl.header.Get("RateLimit-Reason") != "jira-per-issue-on-write" {
		t.Fatalf("429 = %d %v", rl.status, rl.header)
	}
	if got := s.RequestsTo(EndpointCreate)[0].Answer.Get("Retry-After"); got != "30" {
		t.Fatalf("request log keeps Retry-After %q, want 30", got)
	}
	if len(s.Issues()) != 0 {
		t.Fatal("a rate-limited create was committed")
	}
	lost := call(t, s, "POST", "/rest/api/2/issue", authBasic, fields("b", "Task", nil))
	if lost.status != 503 || len(s.Issues()) != 1 {
		t.Fatalf("commit+503: %d, %d issues", lost.status, len(s.Issues()))
	}
	req, _ := http.NewRequest("POST", s.URL()+"/rest/api/2/issue", strings.NewReader(`{"fields":{"project":{"key":"PROJ"},"summary":"c","issuetype":{"name":"Task"}}}`))
	req.SetBasicAuth(s.Options().User, s.Options().Token)
	if resp, err := s.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("a dropped connection produced a response")
	}
	if len(s.Issues()) != 2 {
		t.Fatalf("drop+commit: %d issues", len(s.Issues()))
	}

	s.Outage(c.Now().Add(time.Hour), Fault{Status: 503}, EndpointMyself)
	if a := call(t, s, "GET", "/rest/api/2/myself", authBasic, nil); a.status != 503 {
		t.Fatalf("during outage: %d", a.status)
	}
	if a := call(t, s, "GET", "/rest/api/2/serverInfo", authNone, nil); a.status != 200 {
		t.Fatalf("outage leaked to another endpoint: %d", a.status)
	}
	c.Advance(time.Hour)
	if a := call(t, s, "GET", "/rest/api/2/myself", authBasic, nil); a.status != 200 {
		t.Fatalf("after outage: %d", a.status)
	}

	slow := New(Options{})
	defer slow.Close()
	slow.Script(EndpointMyself, Fault{Status: 200, Delay: 200 * time.Millisecond})
	cl := slow.Client()
	cl.Timeout = 20 * time.Millisecond
	if resp, err := cl.Get(slow.URL() + "/rest/api/2/myself"); err == nil {
		resp.Body.Close()
		t.Fatal("delay did not trip the client timeout")
	}
	// A create that commits, then hangs until the client gives up: the issue
	// exists, and the log says no answer was delivered.
	slow.Script(EndpointCreate, Fault{Status: 502, Commit: true, Delay: 200 * time.Millisecond})
	hung, _ := http.NewRequest("POST", slow.URL()+"/rest/api/2/issue", strings.NewReader(`{"fields":{"project":{"key":"PROJ"},"summary":"hung","issuetype":{"name":"Task"}}}`))
	hung.SetBasicAuth(slow.Options().User, slow.Options().Token)
	if resp, err := cl.Do(hung); err == nil {
		resp.Body.Close()
		t.Fatal("a hung create answered before the client timeout")
	}
	if is := slow.Issues(); len(is) != 1 || is[0].Summary != "hung" {
		t.Fatalf("commit before a hang: issues %+v", is)
	}
	// Past the delay, an answer would have been logged as 502.
	time.Sleep(400 * time.Millisecond)
	if st := slow.RequestsTo(EndpointCreate)[0].Status; st != 0 {
		t.Fatalf("a create whose client gave up is logged with status %d, want 0", st)
	}

	log := s.RequestsTo(EndpointCreate)
	wantStatus := []int{429, 503, 0}
	if len(log) != 3 {
		t.Fatalf("create log %+v", log)
	}
	for i, r := range log {
		if r.Status != wantStatus[i] || r.Method != "POST" || !r.At.Equal(log[0].At) {
			t.Errorf("log[%d] = %+v", i, r)
		}
	}
	if my := s.RequestsTo(EndpointMyself); !my[1].At.Equal(log[0].At.Add(time.Hour)) {
		t.Fatalf("request timestamps do not follow the fake clock: %v", my[1].At)
	}
}
