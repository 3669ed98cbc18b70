package wiring

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/config"
	gh "github.com/autopilot-dev/autopilot/internal/github"
	"github.com/autopilot-dev/autopilot/internal/tracker"
)

// sameSettings is one deployment's settings, as the Action's inputs and as
// the App's variables (the knobs are AUTOPILOT_* in both).
func sameSettings() map[string]string {
	env := map[string]string{"AUTOPILOT_MUTATION_GAP": "250ms", "AUTOPILOT_CLAIM_SETTLE": "3s"}
	for k, v := range map[string]string{
		"CONFIG_PATH": "ci/autopilot.yml", "TRIGGER_LABEL": "robot", "STATE_KEY": "k3y", "ANSWER_PERMISSION": "maintain",
		"JIRA_URL": "https://acme.atlassian.net", "JIRA_USER": "bot@acme.com", "JIRA_TOKEN": "jt", "JIRA_PROJECT": "PROJ",
		"DRY_RUN": "true",
	} {
		env["INPUT_"+k], env["AUTOPILOT_"+k] = v, v
	}
	return env
}

// budgetClient is an adapter that has seen x-ratelimit-remaining: left.
func budgetClient(t *testing.T, left int) *gh.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Remaining", strconv.Itoa(left))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"default_branch":"main"}`))
	}))
	t.Cleanup(srv.Close)
	c, err := gh.New(gh.Options{Repo: "o/r", Token: "t", BaseURL: srv.URL + "/", MinMutationGap: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.DefaultBranch(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestBothModesGetTheSameOptionsFromTheSameSettings(t *testing.T) {
	env := sameSettings()
	act, err := Load(func(k string) string { return env[k] }, ActionPrefix)
	if err != nil {
		t.Fatal(err)
	}
	app, err := Load(func(k string) string { return env[k] }, AppPrefix)
	if err != nil {
		t.Fatal(err)
	}
	app = app.ForApp(7, "autopilot[bot]")
	var built []Inputs
	record := func(in Inputs, _ config.Jira) (tracker.Tracker, error) {
		built = append(built, in)
		return nil, errors.New("recorded")
	}
	clock := func() time.Time { return time.Unix(1e9, 0) }
	for _, w := range []*Wiring{&act, &app} {
		w.NewTracker, w.Now = record, clock
	}

	// The adapter: everything but the identity is the same.
	ga, gp := act.GitHub("o/r"), app.GitHub("o/r")
	if ga.MinMutationGap != 250*time.Millisecond || gp.MinMutationGap != ga.MinMutationGap || !ga.DryRun || gp.DryRun != ga.DryRun {
		t.Errorf("adapter options differ: Action gap %v dry %v, App gap %v dry %v", ga.MinMutationGap, ga.DryRun, gp.MinMutationGap, gp.DryRun)
	}
	if ga.BotLogin != "github-actions[bot]" || ga.AppID != 0 || gp.BotLogin != "autopilot[bot]" || gp.AppID != 7 {
		t.Errorf("identities: Action %s/%d, App %s/%d", ga.BotLogin, ga.AppID, gp.BotLogin, gp.AppID)
	}

	// Reconcile: every field compared; functions by what they do.
	low := budgetClient(t, BudgetFloor-1)
	ra := act.Reconcile(nil, low, nil, nil)
	rp := app.Reconcile(nil, low, nil, nil)
	identity := map[string]bool{"BotLogin": true, "AppID": true, "CheckButtons": true}
	va, vp := reflect.ValueOf(ra), reflect.ValueOf(rp)
	for i := 0; i < va.NumField(); i++ {
		name := va.Type().Field(i).Name
		fa, fp := va.Field(i), vp.Field(i)
		switch {
		case identity[name]:
		case fa.Kind() == reflect.Func:
			if fa.IsNil() != fp.IsNil() {
				t.Errorf("%s set in one mode only: Action %v, App %v", name, !fa.IsNil(), !fp.IsNil())
			}
		case !reflect.DeepEqual(fa.Interface(), fp.Interface()):
			t.Errorf("%s differs: Action %v, App %v", name, fa.Interface(), fp.Interface())
		}
	}
	if ra.ConfigPath != "ci/autopilot.yml" || ra.TriggerLabel != "robot" || string(ra.StateKey) != "k3y" ||
		ra.AnswerPermission != access.Maintain || !ra.DryRun || ra.ClaimSettle != 3*time.Second || !ra.Now().Equal(clock()) {
		t.Errorf("Action options do not carry the settings: %+v", ra)
	}
	if ra.CheckButtons || !rp.CheckButtons || ra.AppID != 0 || rp.AppID != 7 || rp.BotLogin != "autopilot[bot]" {
		t.Errorf("identity fields: Action %v/%d, App %v/%d/%s", ra.CheckButtons, ra.AppID, rp.CheckButtons, rp.AppID, rp.BotLogin)
	}
	if !ra.BudgetLow() || !rp.BudgetLow() {
		t.Errorf("BudgetLow with %d left: Action %v, App %v", BudgetFloor-1, ra.BudgetLow(), rp.BudgetLow())
	}
	if ok := budgetClient(t, BudgetFloor); BudgetLow(ok) {
		t.Errorf("BudgetLow with %d left", BudgetFloor)
	}
	_, _ = ra.TrackerFor(config.Jira{})
	_, _ = rp.TrackerFor(config.Jira{})
	if len(built) != 2 || built[0].JiraURL != "https://acme.atlassian.net" || built[0].JiraProject != "PROJ" || built[0].JiraToken != built[1].JiraToken {
		t.Errorf("trackers built from %+v", built)
	}
}

func TestNoJiraInputsMeansNoTracker(t *testing.T) {
	w, err := Load(func(string) string { return "" }, ActionPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if o := w.Reconcile(nil, nil, nil, nil); o.TrackerFor != nil || o.BudgetLow() {
		t.Errorf("TrackerFor set %v, BudgetLow without a response %v", o.TrackerFor != nil, o.BudgetLow())
	}
}

func TestKnobs(t *testing.T) {
	tests := []struct {
		gap, settle string
		want        Knobs
		bad         string
	}{
		{"", "", Knobs{MutationGap: 0, ClaimSettle: 2 * time.Second}, ""},
		{"0s", "0s", Knobs{MutationGap: -1, ClaimSettle: 0}, ""},
		{" 1500ms ", "5s", Knobs{MutationGap: 1500 * time.Millisecond, ClaimSettle: 5 * time.Second}, ""},
		{"-1s", "", Knobs{}, "AUTOPILOT_MUTATION_GAP"},
		{"fast", "", Knobs{}, "AUTOPILOT_MUTATION_GAP"},
		{"", "later", Knobs{}, "AUTOPILOT_CLAIM_SETTLE"},
	}
	for _, tt := range tests {
		env := map[string]string{"AUTOPILOT_MUTATION_GAP": tt.gap, "AUTOPILOT_CLAIM_SETTLE": tt.settle}
		got, err := LoadKnobs(func(k string) string { return env[k] })
		if tt.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tt.bad) {
				t.Errorf("gap %q settle %q: err %v, want one naming %s", tt.gap, tt.settle, err, tt.bad)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("gap %q settle %q: %+v, %v; want %+v", tt.gap, tt.settle, got, err, tt.want)
		}
	}
}
