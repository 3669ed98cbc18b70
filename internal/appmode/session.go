package appmode

import (
	"strconv"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/ghevent"
)

// SessionIssue finds the issue a workflow_run belongs to from the session
// token autopilot puts in the run's display title
// ("autopilot ap-<issue>-<step>-c<cycle>-a<attempt>-s<seq>"): the first
// field starting "ap-" whose next dash-separated part is a positive issue
// number, the same rule reconcile routes by. ok is false for any other run.
func SessionIssue(ev *ghevent.Event) (issue int, ok bool) {
	if ev == nil || ev.WorkflowRun == nil {
		return 0, false
	}
	for _, f := range strings.Fields(ev.WorkflowRun.DisplayTitle) {
		rest, found := strings.CutPrefix(f, "ap-")
		if !found {
			continue
		}
		num, _, _ := strings.Cut(rest, "-")
		n, err := strconv.Atoi(num)
		if err != nil || n <= 0 {
			continue
		}
		return n, true
	}
	return 0, false
}
