package fakegithub

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v60/github"
)

// appClients returns go-github clients authenticated as the App (JWT) and
// as its installation.
func appClients(t *testing.T) (*env, *github.Client, *github.Client) {
	e, key := appEnv(t)
	atr := ghinstallation.NewAppsTransportFromPrivateKey(http.DefaultTransport, testAppID, key)
	atr.BaseURL = e.s.URL()
	app := github.NewClient(&http.Client{Transport: atr})
	app.BaseURL = e.client("").BaseURL
	itr := ghinstallation.NewFromAppsTransport(atr, testInstall)
	itr.BaseURL = e.s.URL()
	inst := github.NewClient(&http.Client{Transport: itr})
	inst.BaseURL = app.BaseURL
	return e, app, inst
}

func record(t *testing.T, e *env, d HookDelivery) int64 {
	t.Helper()
	if d.AppID == 0 {
		d.AppID = testAppID
	}
	if d.Event == "" {
		d.Event, d.Action = "issues", "labeled"
	}
	id, err := e.s.RecordDelivery(d)
	must(t, err)
	return id
}

func TestHookDeliveriesListNewestFirstAcrossCursorPages(t *testing.T) {
	e, app, _ := appClients(t)
	var ids []int64
	for i := range 5 {
		ids = append(ids, record(t, e, HookDelivery{StatusCode: []int{200, 503, 0, 202, 500}[i], InstallationID: testInstall, RepositoryID: 9}))
		e.clock.Advance(time.Minute)
	}
	// Another App's deliveries are not listed.
	record(t, e, HookDelivery{AppID: ActionsAppID})

	var got []*github.HookDelivery
	opts := &github.ListCursorOptions{PerPage: 2}
	pages := 0
	for {
		page, resp, err := app.Apps.ListHookDeliveries(context.Background(), opts)
		wantStatus(t, resp, err, http.StatusOK)
		got = append(got, page...)
		pages++
		if resp.Cursor == "" {
			break
		}
		opts.Cursor = resp.Cursor
	}
	if pages != 3 {
		t.Errorf("%d pages of 2 for 5 deliveries, want 3", pages)
	}
	var gotIDs []int64
	for _, d := range got {
		gotIDs = append(gotIDs, d.GetID())
	}
	want := slices.Clone(ids)
	slices.Reverse(want)
	if !slices.Equal(gotIDs, want) {
		t.Fatalf("ids %v, want %v (newest first)", gotIDs, want)
	}
	first := got[len(got)-1]
	if first.GetStatusCode() != 200 || first.GetStatus() != "OK" || first.GetEvent() != "issues" || first.GetAction() != "labeled" ||
		first.GetInstallationID() != testInstall || first.GetRepositoryID() != 9 || first.GetRedelivery() ||
		!first.GetDeliveredAt().Time.Equal(epoch) || first.GetGUID() == "" {
		t.Fatalf("oldest delivery %+v", first)
	}
	if s := got[2].GetStatus(); s != "timed out" {
		t.Errorf("status of a delivery without an answer = %q, want timed out", s)
	}
	if s := got[3].GetStatus(); s != "Invalid HTTP Response: 503" {
		t.Errorf("status of a 503 = %q", s)
	}
}

func TestHookDeliveriesStatusFilter(t *testing.T) {
	e, key := appEnv(t)
	ok := record(t, e, HookDelivery{StatusCode: 200})
	bad := record(t, e, HookDelivery{StatusCode: 502})
	now := time.Now().Unix()
	auth := map[string]string{"Authorization": "Bearer " + signJWT(t, key, "RS256", map[string]any{"iss": "4242", "iat": now - 30, "exp": now + 120})}
	tests := []struct {
		query string
		code  int
		want  []int64
	}{
		{"?status=success", 200, []int64{ok}},
		{"?status=failure", 200, []int64{bad}},
		{"", 200, []int64{bad, ok}},
		{"?status=other", 422, nil},
		{"?cursor=bogus", 400, nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			resp, raw := e.do("GET", "/app/hook/deliveries"+tt.query, "", "", auth)
			if resp.StatusCode != tt.code {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, raw, tt.code)
			}
			if tt.code != 200 {
				return
			}
			var list []struct {
				ID int64 `json:"id"`
			}
			must(t, json.Unmarshal(raw, &list))
			var got []int64
			for _, d := range list {
				got = append(got, d.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRedeliveryIsAcceptedWithinThreeDaysOnly(t *testing.T) {
	e, app, _ := appClients(t)
	old := record(t, e, HookDelivery{StatusCode: 503})
	e.clock.Advance(73 * time.Hour)
	recent := record(t, e, HookDelivery{StatusCode: 503, GUID: "guid-recent", InstallationID: testInstall})
	e.s.RedeliverWith(func(d HookDelivery) int {
		if d.GUID != "guid-recent" {
			t.Errorf("redelivering %+v", d)
		}
		return 202
	})
	ctx := context.Background()

	_, resp, err := app.Apps.RedeliverHookDelivery(ctx, recent)
	var accepted *github.AcceptedError
	if !errors.As(err, &accepted) || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("redeliver recent: %v (status %v), want 202", err, resp)
	}
	_, resp, _ = app.Apps.RedeliverHookDelivery(ctx, old)
	wantStatus(t, resp, nil, http.StatusUnprocessableEntity)
	_, resp, _ = app.Apps.RedeliverHookDelivery(ctx, 999999)
	wantStatus(t, resp, nil, http.StatusNotFound)

	if got := e.s.RedeliveryRequests(); !slices.Equal(got, []int64{recent}) {
		t.Fatalf("redelivery requests %v, want [%d]", got, recent)
	}
	all := e.s.Deliveries(testAppID)
	again := all[0]
	if !again.Redelivery || again.GUID != "guid-recent" || again.StatusCode != 202 || again.ID <= recent ||
		again.InstallationID != testInstall || !again.DeliveredAt.Equal(e.clock.Now()) {
		t.Fatalf("redelivery attempt %+v", again)
	}
}

func TestHookDeliveriesNeedTheAppJWT(t *testing.T) {
	e, _, inst := appClients(t)
	record(t, e, HookDelivery{StatusCode: 500})
	if resp, _ := e.do("GET", "/app/hook/deliveries", humanTok, "", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a user token listed deliveries: %d, want 401", resp.StatusCode)
	}
	_, resp, _ := inst.Apps.ListHookDeliveries(context.Background(), nil)
	wantStatus(t, resp, nil, http.StatusUnauthorized)
	if _, err := e.s.RecordDelivery(HookDelivery{AppID: 1, Event: "issues"}); err == nil {
		t.Fatal("recorded a delivery for an unregistered App")
	}
}

func TestInstallationRepositoriesListsWhatTheInstallationCovers(t *testing.T) {
	e, _, inst := appClients(t)
	ctx := context.Background()
	got, resp, err := inst.Apps.ListRepos(ctx, &github.ListOptions{PerPage: 100})
	wantStatus(t, resp, err, http.StatusOK)
	if got.GetTotalCount() != 1 || len(got.Repositories) != 1 || got.Repositories[0].GetFullName() != testRepo {
		t.Fatalf("repositories %+v, want only %s", got, testRepo)
	}
	if resp, _ := e.do("GET", "/installation/repositories", humanTok, "", nil); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a user token listed installation repositories: %d, want 403", resp.StatusCode)
	}
}

func TestInstallationRepositoriesPages(t *testing.T) {
	e, key := appEnv(t)
	for _, r := range []string{"wide/a", "wide/b", "wide/c"} {
		must(t, e.s.AddRepo(r))
	}
	must(t, e.s.RegisterApp(5151, "wide", &key.PublicKey, Installation{ID: 515, Account: "wide"}))
	atr := ghinstallation.NewAppsTransportFromPrivateKey(http.DefaultTransport, 5151, key)
	atr.BaseURL = e.s.URL()
	itr := ghinstallation.NewFromAppsTransport(atr, 515)
	itr.BaseURL = e.s.URL()
	gh := github.NewClient(&http.Client{Transport: itr})
	gh.BaseURL = e.client("").BaseURL
	var names []string
	opts := &github.ListOptions{PerPage: 2}
	for {
		page, resp, err := gh.Apps.ListRepos(context.Background(), opts)
		wantStatus(t, resp, err, http.StatusOK)
		if page.GetTotalCount() != 3 {
			t.Fatalf("total_count %d, want 3", page.GetTotalCount())
		}
		for _, r := range page.Repositories {
			names = append(names, r.GetFullName())
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if !slices.Equal(names, []string{"wide/a", "wide/b", "wide/c"}) {
		t.Fatalf("repositories %v", names)
	}
}
