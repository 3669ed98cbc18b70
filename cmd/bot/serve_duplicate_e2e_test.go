package main

import (
	"net/http"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
)

// TestServeDuplicateDeliveryMakesNoCall: every delivery of a run to the
// session boundary and past it, sent again with the same X-GitHub-Delivery
// once its job is done, is answered 200 and makes no call to GitHub at all,
// no write above all (each job is waited for before the duplicate, so a
// label the first job writes late is not taken for the duplicate's).
func TestServeDuplicateDeliveryMakesNoCall(t *testing.T) {
	g := apptest.New(t)
	r := startReplica(t, "serve", baseEnv(t, g))
	n := g.Issue(apptest.Repo, "Duplicates")
	again := func(d apptest.Delivery) {
		t.Helper()
		r.idle()
		from := len(g.Requests())
		if code := r.post(d); code != http.StatusOK {
			t.Errorf("%s delivery sent again answered %d, want 200 (duplicate)", d.Event, code)
		}
		r.idle()
		if calls := g.AppRequests(from); len(calls) != 0 {
			t.Errorf("the duplicate %s delivery made %d calls: %s", d.Event, len(calls), describe(calls))
		}
	}
	send := func(_ int, d apptest.Delivery) {
		r.mustAccept(d)
		again(d)
	}
	toDecomposition(t, g, n, send)
	answer := g.Say(apptest.Repo, n, apptest.Maintainer, "A")
	r.mustAccept(answer)
	waitFor(t, "the maintainer's answer", func() bool { return g.State(apptest.Repo, n).Gate == nil })
	again(answer)
	if code := r.terminate(); code != 0 {
		t.Errorf("exit %d after SIGTERM", code)
	}
}

// describe lists requests as "METHOD path" lines.
func describe(reqs []fakegithub.Request) string {
	s := ""
	for _, q := range reqs {
		s += "\n  " + q.Method + " " + q.Path
	}
	return s
}
