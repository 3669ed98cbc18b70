package jira

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/tasksync"
	"github.com/autopilot-dev/autopilot/internal/fake/fakejira"
	"github.com/autopilot-dev/autopilot/internal/reconcile/trackersync"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

func TestNewChecksConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"cloud ok", Config{URL: "https://acme.atlassian.net", User: "a@b.c", Token: "t", Project: "P"}, ""},
		{"datacenter PAT ok", Config{URL: "https://jira.acme.internal/jira", Token: "t", Project: "P", Deployment: "datacenter"}, ""},
		{"no scheme", Config{URL: "acme.atlassian.net", Token: "t", Project: "P"}, "want an http(s) site URL"},
		{"no project", Config{URL: "https://x.atlassian.net", User: "u", Token: "t"}, "jira_project"},
		{"no token", Config{URL: "https://x.atlassian.net", User: "u", Project: "P"}, "jira_token"},
		{"cloud host without user", Config{URL: "https://acme.atlassian.net", Token: "t", Project: "P"}, "jira_user"},
		{"bad deployment", Config{URL: "https://j.example", Token: "t", Project: "P", Deployment: "onprem"}, "deployment"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestDeploymentIsDetectedOnceFromServerInfo(t *testing.T) {
	for _, dep := range deployments {
		t.Run(dep, func(t *testing.T) {
			e := setup(t, dep, nil, func(c *Config) { c.Deployment = "" })
			for range 2 {
				cloud, err := e.c.IsCloud(context.Background())
				if err != nil || cloud != (dep == fakejira.Cloud) {
					t.Fatalf("IsCloud = %v, %v", cloud, err)
				}
			}
			if n := len(e.fj.RequestsTo(fakejira.EndpointServerInfo)); n != 1 {
				t.Fatalf("serverInfo asked %d times", n)
			}
		})
	}
}

func TestCheckAuth(t *testing.T) {
	tests := []struct {
		name       string
		deployment string
		token      string
		revoke     bool
		wantStatus int // 0 = ok
		wantScheme string
	}{
		{"cloud api token", fakejira.Cloud, "", false, 0, "Basic "},
		{"cloud wrong token", fakejira.Cloud, "nope", false, 401, "Basic "},
		{"cloud expired token", fakejira.Cloud, "", true, 401, "Basic "},
		{"datacenter PAT", fakejira.DataCenter, "", false, 0, "Bearer "},
		{"datacenter wrong PAT", fakejira.DataCenter, "nope", false, 401, "Bearer "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, tc.deployment, nil, func(c *Config) {
				if tc.token != "" {
					c.Token = tc.token
				}
			})
			e.fj.SetAuthValid(!tc.revoke)
			err := e.c.CheckAuth(context.Background())
			var ae *tracker.AuthError
			switch {
			case tc.wantStatus == 0 && err != nil:
				t.Fatalf("CheckAuth = %v", err)
			case tc.wantStatus != 0 && (!errors.As(err, &ae) || ae.Status != tc.wantStatus):
				t.Fatalf("CheckAuth = %v, want AuthError %d", err, tc.wantStatus)
			}
			me := e.fj.RequestsTo(fakejira.EndpointMyself)
			if len(me) != 1 || !strings.HasPrefix(me[0].Header.Get("Authorization"), tc.wantScheme) {
				t.Fatalf("myself requests %+v", me)
			}
		})
	}
}

func TestSyncCreatesEpicsAndLinkedTasks(t *testing.T) {
	for _, dep := range deployments {
		t.Run(dep, func(t *testing.T) {
			e := setup(t, dep, nil, nil)
			ts := []state.Task{
				mkTask("01", state.KindEpic, "Authentication", "", 0),
				mkTask("02", state.KindTask, "Login form", "Authentication", 3),
				mkTask("03", state.KindTask, "Password reset", "01", 1.5),
			}
			res := e.sync(t, ts, nil)
			if res.Created != 3 || res.Waiting != 0 || res.Note != "" {
				t.Fatalf("result %+v", res)
			}
			issues := e.fj.Issues()
			epic := issues[0]
			if epic.Type != "Epic" || epic.Key != res.Tasks[0].Key {
				t.Fatalf("epic %+v", epic)
			}
			if dep == fakejira.DataCenter && epic.EpicName != "Authentication" {
				t.Fatalf("DC epic without Epic Name: %+v", epic)
			}
			for i, is := range issues[1:] {
				link := is.Parent
				if dep == fakejira.DataCenter {
					link = is.EpicLink
				}
				if link != epic.Key || is.Type != "Task" || is.Points == nil || *is.Points != ts[i+1].Points {
					t.Errorf("task issue %+v", is)
				}
				if is.Description != ts[i+1].Description || len(is.Labels) != 2 || is.Labels[1] != ts[i+1].IdemKey {
					t.Errorf("task issue fields %+v", is)
				}
			}
			for _, tk := range res.Tasks {
				if !strings.HasPrefix(tk.URL, e.fj.URL()+"/browse/PROJ-") {
					t.Errorf("url %q", tk.URL)
				}
			}
			// The lookup before the create and the status read-back of a
			// second sync both use the flavour's search endpoint.
			e.sync(t, res.Tasks, nil)
			want, gone := fakejira.EndpointSearchJQL, fakejira.EndpointSearch
			if dep == fakejira.DataCenter {
				want, gone = gone, want
			}
			if len(e.fj.RequestsTo(want)) != 2 || len(e.fj.RequestsTo(gone)) != 0 {
				t.Fatalf("search requests: %s=%d %s=%d", want, len(e.fj.RequestsTo(want)), gone, len(e.fj.RequestsTo(gone)))
			}
			for _, r := range e.fj.Requests() {
				if r.Header.Get("Idempotency-Key") != "" || r.Header.Get("X-Idempotency-Key") != "" {
					t.Fatalf("request %s %s carries an idempotency header", r.Method, r.Path)
				}
			}
		})
	}
}

func TestSync120TasksTakesThreeCreateRequests(t *testing.T) {
	for _, dep := range deployments {
		t.Run(dep, func(t *testing.T) {
			e := setup(t, dep, nil, nil)
			ts := tasksN(120)
			res := e.sync(t, ts, nil)
			if res.Created != 120 {
				t.Fatalf("created %d: %s", res.Created, res.Note)
			}
			if n := len(e.fj.RequestsTo(fakejira.EndpointBulk)); n != 3 {
				t.Fatalf("%d bulk requests, want 3", n)
			}
			if n := len(e.fj.RequestsTo(fakejira.EndpointCreate)); n != 0 {
				t.Fatalf("%d single creates", n)
			}
			onePerKey(t, e.fj, ts)
			byKey := map[string]string{}
			for _, is := range e.fj.Issues() {
				byKey[is.Key] = is.Labels[1]
			}
			for _, tk := range res.Tasks {
				if byKey[tk.Key] != tk.IdemKey {
					t.Fatalf("task %s recorded as %s, which carries %s", tk.ID, tk.Key, byKey[tk.Key])
				}
			}
		})
	}
}

func TestSyncPartialFailureFailsOnlyTheRejectedTask(t *testing.T) {
	for _, dep := range deployments {
		t.Run(dep, func(t *testing.T) {
			e := setup(t, dep, nil, nil)
			ts := tasksN(5)
			ts[2].Title = strings.Repeat("long ", 60)
			res := e.sync(t, ts, nil)
			if res.Created != 4 || res.Failed != 1 {
				t.Fatalf("result %+v", res)
			}
			bad := res.Tasks[2]
			if bad.Sync != state.SyncFailed || !strings.Contains(bad.Error, `"summary"`) || !strings.Contains(bad.Error, "255") {
				t.Fatalf("rejected task %+v", bad)
			}
			issues := e.fj.Issues()
			for _, tk := range res.Tasks {
				if tk.Sync != state.SyncCreated {
					continue
				}
				found := false
				for _, is := range issues {
					found = found || (is.Key == tk.Key && is.Labels[1] == tk.IdemKey)
				}
				if !found {
					t.Errorf("task %s mapped to the wrong issue %s", tk.ID, tk.Key)
				}
			}
		})
	}
}

func TestValidationErrorsNameTheField(t *testing.T) {
	tests := []struct {
		name       string
		deployment string
		cfg        func(*Config)
		task       state.Task
		wantField  string
	}{
		{"unknown points field", fakejira.Cloud, func(c *Config) { c.PointsField = "customfield_99999" },
			mkTask("01", state.KindTask, "Sized", "", 5), `"customfield_99999 (story points)"`},
		{"DC epic without epic name field", fakejira.DataCenter, func(c *Config) { c.EpicNameField = "" },
			mkTask("01", state.KindEpic, "Epic", "", 0), `"customfield_10102"`},
		{"unknown issue type", fakejira.Cloud, func(c *Config) { c.IssueTypeTask = "Chore" },
			mkTask("01", state.KindTask, "Chore", "", 0), `"issuetype"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, tc.deployment, nil, tc.cfg)
			res := e.sync(t, []state.Task{tc.task}, nil)
			got := res.Tasks[0]
			if got.Sync != state.SyncFailed || !strings.Contains(got.Error, tc.wantField) {
				t.Fatalf("task %+v, want failed naming %s", got, tc.wantField)
			}
			if b := e.fj.RequestsTo(fakejira.EndpointBulk); len(b) != 1 || b[0].Status != http.StatusBadRequest {
				t.Fatalf("bulk requests %+v", b)
			}
		})
	}
}

func TestSyncWithWrongProjectStopsAtTheLookupAndSaysWhy(t *testing.T) {
	e := setup(t, fakejira.DataCenter, nil, func(c *Config) { c.Project = "NOPE" })
	res := e.sync(t, tasksN(2), nil)
	if res.Waiting != 2 || !strings.Contains(res.Note, "The value 'NOPE' does not exist for the field 'project'") {
		t.Fatalf("result %+v", res)
	}
	if n := len(e.fj.RequestsTo(fakejira.EndpointBulk)); n != 0 {
		t.Fatalf("%d creates after a failed lookup", n)
	}
}

func TestSyncAdoptsIssuesOfARestoredState(t *testing.T) {
	e := setup(t, fakejira.Cloud, nil, nil)
	first := e.sync(t, tasksN(3), nil)
	// The state comment was lost and the tasks declared again: same ids, same
	// idempotency keys, all pending.
	again := e.sync(t, tasksN(3), nil)
	if again.Found != 3 || again.Created != 0 {
		t.Fatalf("result %+v", again)
	}
	for i, tk := range again.Tasks {
		if tk.Key != first.Tasks[i].Key {
			t.Fatalf("task %s adopted %s, want %s", tk.ID, tk.Key, first.Tasks[i].Key)
		}
	}
	onePerKey(t, e.fj, again.Tasks)
}

func TestSyncLostResponseMakesExactlyOneIssuePerKey(t *testing.T) {
	tests := []struct {
		name      string
		fault     fakejira.Fault
		wantFound int
	}{
		{"committed, connection dropped", fakejira.Fault{Commit: true, Drop: true}, 4},
		{"committed, 504 answered", fakejira.Fault{Commit: true, Status: 504}, 4},
		{"not committed, 503", fakejira.Fault{Status: 503}, 0},
	}
	for _, dep := range deployments {
		for _, tc := range tests {
			t.Run(dep+"/"+tc.name, func(t *testing.T) {
				e := setup(t, dep, func(o *fakejira.Options) { o.SearchLag = 90 * time.Second }, nil)
				e.fj.Script(fakejira.EndpointBulk, tc.fault)
				ts := tasksN(4)
				res := e.sync(t, ts, nil)
				if res.Waiting != 4 || res.Created != 0 {
					t.Fatalf("after the lost create: %+v", res)
				}
				for _, step := range []time.Duration{30 * time.Second, 30 * time.Second, 31 * time.Second} {
					e.clock.Advance(step)
					res = e.sync(t, res.Tasks, nil)
				}
				if res.Found != tc.wantFound || res.Found+res.Created != 4 || res.Waiting != 0 {
					t.Fatalf("after the lag: %+v", res)
				}
				onePerKey(t, e.fj, ts)
				wantBulk := 1
				if tc.wantFound == 0 {
					wantBulk = 2
				}
				if n := len(e.fj.RequestsTo(fakejira.EndpointBulk)); n != wantBulk {
					t.Fatalf("%d bulk requests, want %d", n, wantBulk)
				}
			})
		}
	}
}

func TestSyncRateLimitSendsNothingInsideRetryAfter(t *testing.T) {
	tests := []struct {
		name    string
		maxWait time.Duration
	}{
		{"waits inside the sync", time.Minute},
		{"defers to a later sync", 10 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, fakejira.Cloud, nil, nil)
			e.fj.Script(fakejira.EndpointBulk, fakejira.RateLimited(30*time.Second, "jira-per-issue-on-write"))
			ts := tasksN(60)
			res := e.sync(t, ts, func(o *trackersync.Options) { o.MaxWait = tc.maxWait })
			// A caller that syncs every 5 s, passing RetryAt back.
			for i := 0; res.Waiting > 0 && i < 20; i++ {
				e.clock.Advance(5 * time.Second)
				notBefore := res.RetryAt
				res = e.sync(t, res.Tasks, func(o *trackersync.Options) { o.MaxWait = tc.maxWait; o.NotBefore = notBefore })
			}
			if res.Waiting != 0 {
				t.Fatalf("outbox not drained: %+v", res)
			}
			bulk := e.fj.RequestsTo(fakejira.EndpointBulk)
			if bulk[0].Status != http.StatusTooManyRequests {
				t.Fatalf("first create %+v", bulk[0])
			}
			limitedAt := bulk[0].At
			log := e.fj.Requests()
			for len(log) > 0 && log[0].Status != http.StatusTooManyRequests {
				log = log[1:]
			}
			for _, r := range log[1:] {
				if r.At.Before(limitedAt.Add(30 * time.Second)) {
					t.Fatalf("request %s %s at +%s, inside the 30 s Retry-After window", r.Method, r.Path, r.At.Sub(limitedAt))
				}
			}
			onePerKey(t, e.fj, ts)
		})
	}
}

func TestSyncAuthFailureIsOneAttemptThenPaused(t *testing.T) {
	for _, dep := range deployments {
		t.Run(dep, func(t *testing.T) {
			e := setup(t, dep, nil, nil)
			e.fj.SetAuthValid(false)
			res := e.sync(t, tasksN(3), nil)
			if res.Paused != tasksync.PausedAuth || res.Waiting != 3 || !strings.Contains(res.Note, "authentication failed") {
				t.Fatalf("result %+v", res)
			}
			if log := e.fj.Requests(); len(log) != 1 || log[0].Status != http.StatusUnauthorized {
				t.Fatalf("requests %+v", log)
			}
			if res.Tasks[0].Sync != state.SyncPending {
				t.Fatalf("a refused create left the task %s", res.Tasks[0].Sync)
			}
		})
	}
}

// TestSyncSurvivesTwoHourOutageAndDrainsInOrder: two hours of trouble on
// the fake clock — 40 minutes of 429s (Retry-After 15 min), 40 of 503s
// (Retry-After 20 min), 40 of dropped connections — with a caller syncing
// every 5 minutes and passing RetryAt back as NotBefore, then recovery with
// a lost create. No request lands inside any Retry-After window, no sync
// makes more than a few calls, and the outbox drains in order with exactly
// one issue per key.
func TestSyncSurvivesTwoHourOutageAndDrainsInOrder(t *testing.T) {
	for _, dep := range deployments {
		t.Run(dep, func(t *testing.T) {
			e := setup(t, dep, func(o *fakejira.Options) { o.SearchLag = 90 * time.Second }, nil)
			start := e.clock.Now()
			unavailable := fakejira.Fault{Status: http.StatusServiceUnavailable, Header: http.Header{"Retry-After": {"1200"}}}
			e.fj.Outage(start.Add(40*time.Minute), fakejira.RateLimited(15*time.Minute, "jira-quota-global-based"))
			e.fj.Outage(start.Add(80*time.Minute), unavailable)
			e.fj.Outage(start.Add(2*time.Hour), fakejira.Fault{Drop: true, Commit: true})
			// The first create after recovery commits but loses its answer.
			e.fj.Script(fakejira.EndpointBulk, fakejira.Fault{Commit: true, Status: http.StatusBadGateway})
			ts := []state.Task{
				mkTask("01", state.KindEpic, "Epic A", "", 0),
				mkTask("02", state.KindEpic, "Epic B", "", 0),
				mkTask("03", state.KindTask, "A1", "01", 1),
				mkTask("04", state.KindTask, "B1", "02", 2),
				mkTask("05", state.KindTask, "A2", "01", 3),
				mkTask("06", state.KindTask, "Loose", "", 0),
			}
			res := e.sync(t, ts, nil)
			syncs, quiet, maxCalls, maxHTTP := 1, 0, 0, 0
			for res.Waiting > 0 && e.clock.Now().Before(start.Add(4*time.Hour)) {
				e.clock.Advance(5 * time.Minute)
				before := len(e.fj.Requests())
				notBefore := res.RetryAt
				res = e.sync(t, res.Tasks, func(o *trackersync.Options) { o.NotBefore = notBefore })
				syncs++
				sent := len(e.fj.Requests()) - before
				if sent == 0 {
					quiet++
				}
				maxCalls = max(maxCalls, res.Requests)
				maxHTTP = max(maxHTTP, sent)
			}
			if res.Waiting != 0 {
				t.Fatalf("outbox not drained after recovery: %+v", res)
			}
			if end := e.clock.Now(); end.After(start.Add(2*time.Hour + 30*time.Minute)) {
				t.Errorf("drained only at +%s", end.Sub(start))
			}
			windows := noRequestInsideRetryAfter(t, e.fj.Requests())
			if windows < 4 || quiet < 6 {
				t.Fatalf("%d Retry-After windows, %d of %d syncs sent nothing: the outage was not exercised", windows, quiet, syncs)
			}
			// Go's transport may resend an idempotent GET once when a reused
			// connection drops; POSTs are never resent (checked below).
			if maxCalls > tasksync.DefaultAttempts || maxHTTP > 2*tasksync.DefaultAttempts {
				t.Fatalf("a sync made %d calls, %d HTTP requests", maxCalls, maxHTTP)
			}
			if n := len(e.fj.RequestsTo(fakejira.EndpointBulk)); n != 2 {
				t.Fatalf("%d bulk requests, want 2 (the lost epics, then the tasks)", n)
			}
			onePerKey(t, e.fj, ts)
			var order []string
			for _, is := range e.fj.Issues() {
				order = append(order, is.Summary)
			}
			if got := strings.Join(order, ","); got != "Epic A,Epic B,A1,B1,A2,Loose" {
				t.Fatalf("creation order %s", got)
			}
			for _, tk := range res.Tasks {
				if tk.Sync != state.SyncCreated {
					t.Fatalf("task %+v", tk)
				}
			}
			t.Logf("%s: %d syncs (%d sent nothing), %d Retry-After windows, drained at +%s, at most %d calls per sync",
				dep, syncs, quiet, windows, e.clock.Now().Sub(start), maxCalls)
		})
	}
}

func TestStatusesTickDoneAndSurviveADeletedKey(t *testing.T) {
	for _, dep := range deployments {
		t.Run(dep, func(t *testing.T) {
			e := setup(t, dep, nil, nil)
			res := e.sync(t, tasksN(3), nil)
			if err := e.fj.Transition(res.Tasks[1].Key, "Done"); err != nil {
				t.Fatal(err)
			}
			ts := append(res.Tasks, state.Task{ID: "09", Kind: state.KindTask, Sync: state.SyncCreated, Key: "PROJ-999", IdemKey: "autopilot-gone000000"})
			res = e.sync(t, ts, nil)
			if res.Ticked != 1 || !res.Tasks[1].Done || res.Tasks[0].Done || res.Tasks[3].Done {
				t.Fatalf("result %+v", res)
			}
			if n := len(e.fj.RequestsTo(fakejira.EndpointGet)); n != 4 {
				t.Fatalf("%d per-key reads after the rejected key query, want 4", n)
			}
		})
	}
}

func TestSearchSwitchesFlavourOnGoneOrMissingEndpoint(t *testing.T) {
	tests := []struct {
		name, fake, configured string
	}{
		{"configured DC, site is Cloud", fakejira.Cloud, DeploymentDataCenter},
		{"configured Cloud, site is DC", fakejira.DataCenter, DeploymentCloud},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, tc.fake, nil, func(c *Config) {
				c.Deployment = tc.configured
				c.User = "bot@example.com" // basic auth works on both flavours
			})
			fo := e.fj.Options()
			right, err := New(Config{URL: e.fj.URL(), User: fo.User, Token: fo.Token, Project: fo.Project, Deployment: tc.fake, HTTPClient: e.fj.Client()})
			if err != nil {
				t.Fatal(err)
			}
			ts := tasksN(2)
			if res, err := trackersync.Outbox(context.Background(), right, ts, e.opts()); err != nil || res.Created != 2 {
				t.Fatalf("seeding: %+v, %v", res, err)
			}
			got, err := e.c.FindByIdemKeys(context.Background(), []string{ts[0].IdemKey, ts[1].IdemKey})
			if err != nil || len(got) != 2 || got[ts[1].IdemKey].Key != "PROJ-2" {
				t.Fatalf("FindByIdemKeys = %v, %v", got, err)
			}
			gone := fakejira.EndpointSearch
			if tc.fake == fakejira.DataCenter {
				gone = fakejira.EndpointSearchJQL
			}
			if n := len(e.fj.RequestsTo(gone)); n != 1 {
				t.Fatalf("%d requests to %s, want the one that triggered the switch", n, gone)
			}
			cloud, _ := e.c.IsCloud(context.Background())
			if cloud != (tc.fake == fakejira.Cloud) {
				t.Fatalf("IsCloud = %v after the fallback", cloud)
			}
		})
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	c := &Client{cfg: Config{Now: func() time.Time { return now }}}
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"seconds", map[string]string{"Retry-After": "30"}, 30 * time.Second},
		{"http date", map[string]string{"Retry-After": now.Add(time.Minute).Format(http.TimeFormat)}, time.Minute},
		{"past date", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"reset time", map[string]string{"X-RateLimit-Reset": now.Add(2 * time.Minute).Format(time.RFC3339)}, 2 * time.Minute},
		{"reset minutes", map[string]string{"X-RateLimit-Reset": "2026-03-02T09:05Z"}, 5 * time.Minute},
		{"nothing", nil, 0},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.header {
				h.Set(k, v)
			}
			if got := c.retryAfter(h); got != tc.want {
				t.Fatalf("retryAfter = %s, want %s", got, tc.want)
			}
		})
	}
}
