package tasksync

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/idem"
)

func TestABulkCreateRecordsStopsOrAbortsOnEachItemsAnswer(t *testing.T) {
	r := func(c Class) *Refusal { return &Refusal{Class: c} }
	for _, tc := range []struct {
		name           string
		err            *Refusal
		first, created bool
		want           CreateVerdict
	}{
		{"created and linked: recorded, go on", nil, true, false, CreateVerdict{Record: true}},
		{"refused for good: recorded, go on", r(Rejected), false, false, CreateVerdict{Record: true}},
		{"credentials refused first: the call fails", r(Auth), true, false, CreateVerdict{Abort: true}},
		{"credentials refused later: recorded, the rest not sent", r(Auth), false, false, CreateVerdict{Record: true, Stop: StopNotSent}},
		{"credentials refused after a create: still the call's error", r(Auth), true, true, CreateVerdict{Abort: true}},
		{"rate limited: recorded, the rest limited too", r(RateLimited), false, false, CreateVerdict{Record: true, Stop: StopLimited}},
		{"created, link limited: left out, the rest limited", r(RateLimited), false, true, CreateVerdict{Stop: StopLimited}},
		{"created, link failed: left out, the rest not sent", r(Transient), false, true, CreateVerdict{Stop: StopNotSent}},
		{"created, link refused oddly: left out, the rest not sent", r(Rejected), false, true, CreateVerdict{Stop: StopNotSent}},
		{"transient: outcome unknown, left out, the rest not sent", r(Transient), true, false, CreateVerdict{Stop: StopNotSent}},
		{"gone: left out, the rest not sent", r(Gone), false, false, CreateVerdict{Stop: StopNotSent}},
		{"unclassified: left out, the rest not sent", r(Other), false, false, CreateVerdict{Stop: StopNotSent}},
	} {
		if got := OnCreate(tc.err, tc.first, tc.created); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestDependsOnIsWrittenOnlyWhenTheHostHasNoDependencyLinks(t *testing.T) {
	for _, tc := range []struct {
		name     string
		links    bool
		blockers []int
		want     string
	}{
		{"links work: none written", true, []int{3, 5}, ""},
		{"no links, no known blockers", false, nil, ""},
		{"no links, one blocker", false, []int{3}, "Depends on #3"},
		{"no links, two blockers in order", false, []int{5, 3}, "Depends on #5, #3"},
	} {
		if got := DependsOnText(tc.links, tc.blockers); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestABatchParentIsKeyedByRootParentAndNumberAndSaysWhy(t *testing.T) {
	if got, want := BatchKey(1, 2, 2), idem.Key("batch/1", 2, "2"); got != want {
		t.Errorf("BatchKey(1, 2, 2) = %q, want %q", got, want)
	}
	if BatchKey(1, 2, 2) == BatchKey(1, 2, 3) || BatchKey(1, 2, 2) == BatchKey(1, 3, 2) || BatchKey(1, 2, 2) == BatchKey(4, 2, 2) {
		t.Error("batch keys of other roots, parents or numbers collide")
	}
	for _, tc := range []struct {
		name        string
		full        bool
		title, body string
	}{
		{"under its parent", false, "Tasks of #1, batch 2", "More than 100 sub-issues: the tasks continue here."},
		{"standing alone: the parent is full", true, "Tasks of #1, batch 2", "#7 already has 100 sub-issues, GitHub's limit: its tasks continue here."},
	} {
		title, body := BatchText(1, 7, 2, tc.full, 100)
		if title != tc.title || body != tc.body {
			t.Errorf("%s: %q, %q; want %q, %q", tc.name, title, body, tc.title, tc.body)
		}
		if strings.Contains(body, "\n") {
			t.Errorf("%s: the intro spans lines: %q", tc.name, body)
		}
	}
}
