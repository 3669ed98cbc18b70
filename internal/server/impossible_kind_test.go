package server

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
)

// A text longer than GitHub stores is named by what it is: the body of an
// event about a pull request is the pull request's body, whichever kind of
// event carries it.
func TestAnOverlongBodyIsNamedByWhatTheEventIsAbout(t *testing.T) {
	long := strings.Repeat("x", maxTextChars+1)
	cases := []struct {
		ev   ghevent.Event
		want string
	}{
		{ghevent.Event{Name: "issues", Body: long}, "the issue body is"},
		{ghevent.Event{Name: "pull_request", Body: long, Pull: &forge.Pull{}}, "the pull request body is"},
		{ghevent.Event{Name: "pull_request_review", Body: long, Pull: &forge.Pull{}}, "the pull request body is"},
		{ghevent.Event{Name: "issue_comment", Body: long}, "the issue body is"},
	}
	for _, c := range cases {
		if got := impossible(&c.ev); !strings.HasPrefix(got, c.want) {
			t.Errorf("impossible(%s) = %q, want it to start %q", c.ev.Name, got, c.want)
		}
	}
	if got := impossible(&ghevent.Event{Name: "issues", Body: "short"}); got != "" {
		t.Errorf("a short body is refused: %q", got)
	}
}
