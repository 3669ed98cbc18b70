package appmode

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/server/memstore"
	"github.com/autopilot-dev/autopilot/internal/server/settings"
)

// TestDuplicateDeliveryMakesNoWrite: every delivery of a run — the label,
// a linked PR, a stranger's answer, commands, the gate's check-run clicks
// (refused and applied), a failure — sent again with the same
// X-GitHub-Delivery once its job is done is answered 200 and makes no
// call to GitHub at all; and the same event run again as a job (a
// replica that lost its dedupe memory, or a queue entry claimed twice),
// by another replica with cold caches, makes no write: only the token
// mint and reads.
func TestDuplicateDeliveryMakesNoWrite(t *testing.T) {
	r := newRig(t, nil)
	n := r.gh.Issue(repo, "Add CSV export")
	url := r.start(settings.Config{QueueSize: 16, Workers: 2, LockTTL: time.Second, DedupeTTL: settings.MinDedupeTTL,
		ShutdownTimeout: 5 * time.Second}, memstore.NewLocker())
	hook := url + settings.DefaultWebhookPath
	jobs := 0
	send := func(d apptest.Delivery) {
		t.Helper()
		if code := d.Post(t, hook, apptest.Secret); code != http.StatusAccepted {
			t.Fatalf("%s delivery answered %d", d.Event, code)
		}
		jobs++
		eventually(t, "the delivery's job", func() bool { return r.jobsDone() == jobs })
		from := len(r.gh.Requests())
		if code := d.Post(t, hook, apptest.Secret); code != http.StatusOK {
			t.Errorf("%s delivery sent again answered %d, want 200 (duplicate)", d.Event, code)
		}
		if calls := r.gh.AppRequests(from); len(calls) != 0 {
			t.Errorf("the duplicate %s delivery made %d calls:%s", d.Event, len(calls), listed(calls))
		}
		replica := newRigOn(t, r.gh, nil)
		from = len(r.gh.Requests())
		if err := replica.process(d); err != nil {
			t.Fatalf("%s run again: %v", d.Event, err)
		}
		var writes []fakegithub.Request
		for _, q := range r.gh.AppRequests(from) {
			read := q.Method == http.MethodGet || strings.HasPrefix(q.Body, `{"operationName":"`) && !strings.Contains(q.Body, "mutation")
			if !read && !strings.HasSuffix(q.Path, "/access_tokens") {
				writes = append(writes, q)
			}
		}
		if len(writes) != 0 {
			t.Errorf("the %s event run again wrote:%s", d.Event, listed(writes))
		}
	}
	const head = "1111111111111111111111111111111111111111"
	send(r.gh.Labeled(repo, n, apptest.Maintainer, "autopilot"))
	pr, opened := r.gh.OpenPR(repo, n, apptest.Writer, head)
	send(opened)
	send(r.gh.Say(repo, n, apptest.Stranger, "A"))
	for _, s := range []string{"problem", "research", "plan"} {
		send(r.gh.Say(repo, n, apptest.Writer, "/autopilot done "+s+" finished"))
	}
	send(r.gh.Say(repo, n, apptest.Writer, "/autopilot done decomposed\n\n```autopilot-tasks\n- title: Writer\n- title: Endpoint\n```"))
	c, ok := r.gh.LatestCheck(repo, head, "autopilot")
	if !ok || len(c.Actions) == 0 {
		t.Fatalf("no check offering the gate's options: %+v", c)
	}
	send(r.gh.Click(repo, pr, c, apptest.Stranger, c.Actions[0].Identifier))
	send(r.gh.Click(repo, pr, c, apptest.Maintainer, c.Actions[0].Identifier))
	send(r.gh.Say(repo, n, apptest.Writer, "/autopilot fail the tool crashed"))
	if st := r.gh.State(repo, n); st.Gate != nil && st.Gate.Kind == "session-boundary" {
		t.Fatalf("the click did not answer the gate: %+v", st.Gate)
	}
}

// jobsDone sums autopilot_jobs_total over every event and outcome.
func (r *rig) jobsDone() int {
	total := 0
	for _, l := range strings.Split(r.metric("autopilot_jobs_total{"), "\n") {
		f := strings.Fields(l)
		if len(f) == 2 {
			var k int
			for _, ch := range f[1] {
				if ch < '0' || ch > '9' {
					break
				}
				k = k*10 + int(ch-'0')
			}
			total += k
		}
	}
	return total
}

func listed(reqs []fakegithub.Request) string {
	var b strings.Builder
	for _, q := range reqs {
		b.WriteString("\n  " + q.Method + " " + q.Path)
	}
	return b.String()
}
