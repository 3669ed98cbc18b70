package tasksync

import (
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// times is n request times at t.
func times(n int, t time.Time) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = t
	}
	return out
}

func TestThePaceSpendsTheBudgetOfTheMinuteTheHourAndTheRun(t *testing.T) {
	p := GitHubPace
	for _, tc := range []struct {
		name        string
		sent, spent []time.Time
		left        int
		next        time.Time
	}{
		{"nothing spent: the run's cap", nil, nil, 40, time.Time{}},
		{"earlier runs' minute counts", times(30, t0.Add(-30*time.Second)), nil, 30, time.Time{}},
		{"an hour-old request no more", times(70, t0.Add(-time.Hour)), nil, 40, time.Time{}},
		{"the run's cap spent: a minute on", nil, times(40, t0), 0, t0.Add(time.Minute)},
		{"the minute full: when its oldest turns a minute", times(60, t0.Add(-20*time.Second)), nil, 0, t0.Add(40 * time.Second)},
		{"the hour full: when its oldest turns an hour", append(times(390, t0.Add(-50*time.Minute)), times(10, t0.Add(-2*time.Minute))...), nil, 0, t0.Add(10 * time.Minute)},
		{"the hour nearly full: what it leaves", times(390, t0.Add(-50*time.Minute)), nil, 10, time.Time{}},
	} {
		left, next := p.Budget(t0, tc.sent, tc.spent)
		if left != tc.left || !next.Equal(tc.next) {
			t.Errorf("%s: left %d, next %v; want %d, %v", tc.name, left, next, tc.left, tc.next)
		}
	}
}

func TestAnItemOverTheBudgetWaitsForIt(t *testing.T) {
	p := GitHubPace
	for _, tc := range []struct {
		name        string
		need        int
		sent, spent []time.Time
		wait        time.Duration
		ok          bool
	}{
		{"room", 3, nil, nil, 0, true},
		{"exactly the room", 40, nil, nil, 0, true},
		{"short of room, budget left: a minute", 3, nil, times(38, t0), time.Minute, false},
		{"the minute full: until it frees", 2, times(60, t0.Add(-20*time.Second)), nil, 40 * time.Second, false},
	} {
		wait, ok := p.Room(t0, tc.need, tc.sent, tc.spent)
		if ok != tc.ok || wait != tc.wait {
			t.Errorf("%s: wait %v, ok %v; want %v, %v", tc.name, wait, ok, tc.wait, tc.ok)
		}
	}
}

func TestEarlierRunsSpentTheirTasksCreatesLinksAndDependencies(t *testing.T) {
	ts := []state.Task{
		{ID: "01", SentAt: t0},
		{ID: "02", SentAt: t0.Add(time.Second), DependsOn: []string{"01", "03"}},
		{ID: "03"}, // never sent
	}
	got := Spent(ts)
	if len(got) != 2+4 {
		t.Fatalf("%d requests, want 6", len(got))
	}
}

func TestWhereAChildGoes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		real  int
		batch bool
		depth int
		want  Placement
	}{
		{"room under the parent", 0, false, 1, PlaceHere},
		{"the 99th child", 98, false, 1, PlaceHere},
		{"full, with a batch parent: into it", 99, true, 1, PlaceInBatch},
		{"full, no batch parent: a new one", 99, false, 1, PlaceNewBatch},
		{"full at the deepest batch: refused", 99, false, MaxBatches, PlaceFull},
		{"full at the deepest batch, a batch exists: into it", 99, true, MaxBatches, PlaceInBatch},
	} {
		if got := Place(tc.real, tc.batch, tc.depth, 100); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if msg := FullMessage(7, 100); !strings.Contains(msg, "#7 and its batch parents are full (594 tasks)") {
		t.Errorf("full message %q", msg)
	}
}

func TestOnlyOurOwnBotsIssuesAreTrusted(t *testing.T) {
	for _, tc := range []struct {
		name string
		is   Author
		me   Owner
		want bool
	}{
		{"a person", Author{Login: "maria"}, Owner{}, false},
		{"any bot without an owner (tests, sandbox)", Author{Login: "x[bot]", Bot: true}, Owner{}, true},
		{"our bot", Author{Login: "Autopilot[bot]", Bot: true}, Owner{Login: "autopilot[bot]"}, true},
		{"another bot", Author{Login: "github-actions[bot]", Bot: true}, Owner{Login: "autopilot[bot]"}, false},
		{"our App", Author{Login: "autopilot[bot]", Bot: true, App: 7}, Owner{Login: "autopilot[bot]", App: 7}, true},
		{"another App under our login", Author{Login: "autopilot[bot]", Bot: true, App: 8}, Owner{Login: "autopilot[bot]", App: 7}, false},
		{"no App named", Author{Login: "autopilot[bot]", Bot: true}, Owner{Login: "autopilot[bot]", App: 7}, true},
	} {
		if got := tc.me.Wrote(tc.is); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestWhatBecomesOfATasksIssueAfterItsLinkIsAnswered(t *testing.T) {
	for _, tc := range []struct {
		name               string
		r                  *Refusal
		underRoot, adopted bool
		want               LinkVerdict
	}{
		{"linked", nil, false, false, LinkStands},
		{"an epic gone: under the autopilot issue instead", &Refusal{Class: Gone}, false, false, LinkToRoot},
		{"the autopilot issue gone: final", &Refusal{Class: Gone}, true, false, LinkRefused},
		{"an issue adopted whose parent is gone: stays where it is", &Refusal{Class: Gone}, false, true, LinkRefused},
		{"refused for good (422)", &Refusal{Class: Rejected}, false, false, LinkRefused},
		{"refused for good when adopted", &Refusal{Class: Rejected}, false, true, LinkRefused},
		{"a limit: unknown, found and linked by the next lookup", &Refusal{Class: RateLimited}, false, false, LinkUnknown},
		{"an outage: unknown", &Refusal{Class: Transient}, true, false, LinkUnknown},
		{"auth: unknown", &Refusal{Class: Auth}, false, true, LinkUnknown},
	} {
		if got := OnLink(tc.r, tc.underRoot, tc.adopted); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := RefusedLinkRemark(2, 9, "parent full"); got != "#9 is not a sub-issue of #2: GitHub refused the link for good (parent full); it stays where it is and the link is not sent again" {
		t.Errorf("remark %q", got)
	}
	if got := RootRemark(1, 2, "deleted"); got != "filed under #1: its parent #2 is deleted" {
		t.Errorf("remark %q", got)
	}
}
