package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
	"github.com/autopilot-dev/autopilot/internal/server/servertest"
)

// redisEnv points a replica at the test Redis under a prefix of this
// test's own, so tests sharing the Redis never read each other's queue.
func redisEnv(t *testing.T, env map[string]string, prefix string) {
	t.Helper()
	env["REDIS_URL"] = servertest.RedisURL(t)
	env["REDIS_PREFIX"] = prefix
}

// TestServeKilledReplicaLosesNoAcknowledgedDelivery: a replica holding N
// acknowledged deliveries (all running, on a GitHub too slow to finish
// them) is killed with SIGKILL; another replica, started after the crash,
// claims every one once QUEUE_CLAIM_IDLE has passed and applies each
// exactly once (one state comment per issue, one job per delivery).
func TestServeKilledReplicaLosesNoAcknowledgedDelivery(t *testing.T) {
	g := apptest.New(t)
	prefix := fmt.Sprintf("autopilot-e2e-kill-%d:", time.Now().UnixNano())
	const n = 10
	const claimIdle, lockTTL = 2 * time.Second, 2 * time.Second
	env := func() map[string]string {
		e := baseEnv(t, g)
		redisEnv(t, e, prefix)
		e["QUEUE_CLAIM_IDLE"] = claimIdle.String()
		e["LOCK_TTL"] = lockTTL.String()
		// Twice n: a replica runs at most half its workers' jobs for one
		// installation (workq.SetWorkers), and all n must be running.
		e["WORKERS"] = strconv.Itoa(2 * n)
		return e
	}
	a := startReplica(t, "doomed", env())
	issues := make([]int, n)
	labels := make([]apptest.Delivery, n)
	for i := range issues {
		issues[i] = g.Issue(apptest.Repo, fmt.Sprintf("Crash %d", i))
		labels[i] = g.Labeled(apptest.Repo, issues[i], apptest.Maintainer, "autopilot")
	}
	g.SetLatency(time.Hour) // every job stalls on its first GitHub call
	for _, d := range labels {
		a.mustAccept(d)
	}
	waitFor(t, "every delivery running on the doomed replica", func() bool {
		return a.metric("autopilot_jobs_in_flight") == n && a.metric("autopilot_queue_pending") == n
	})
	if err := a.cmd.Process.Kill(); err != nil { // SIGKILL: no drain, no hand-back
		t.Fatal(err)
	}
	<-a.exited
	killed := time.Now()
	g.SetLatency(0)
	for _, is := range issues {
		if st := g.State(apptest.Repo, is); st != nil {
			t.Fatalf("#%d has a state before the crash was recovered: the slow GitHub let a job through", is)
		}
	}

	b := startReplica(t, "survivor", env())
	ready := time.Since(killed)
	for _, is := range issues {
		waitStep(t, g, is, "problem")
	}
	recovered := time.Since(killed)
	t.Logf("recovery: all %d deliveries applied %s after SIGKILL (survivor ready after %s; QUEUE_CLAIM_IDLE %s, LOCK_TTL %s)",
		n, recovered.Round(time.Millisecond), ready.Round(time.Millisecond), claimIdle, lockTTL)
	if limit := ready + max(claimIdle, lockTTL) + 10*time.Second; recovered > limit {
		t.Errorf("recovered after %s, over claim idle + lease + processing (%s)", recovered, limit)
	}
	b.idle()
	for _, is := range issues {
		if k := len(g.States(apptest.Repo, is)); k != 1 {
			t.Errorf("#%d: %d state comments, want 1", is, k)
		}
	}
	for series, want := range map[string]float64{
		`autopilot_jobs_total{event="issues",outcome="ok"}`: n,
		`autopilot_queue_claims_total`:                      n,
		`autopilot_queue_acked_total`:                       n,
		`autopilot_queue_stream_length`:                     0,
		`autopilot_queue_pending`:                           0,
	} {
		if got := b.metric(series); got != want {
			t.Errorf("survivor %s = %v, want %v", series, got, want)
		}
	}
	if code := b.terminate(); code != 0 {
		t.Errorf("survivor exit %d after SIGTERM", code)
	}
}

// TestServeQueueFullAnswers503: with QUEUE_MAX deliveries queued and not
// acknowledged, the binary answers 503 with Retry-After and /readyz fails.
func TestServeQueueFullAnswers503(t *testing.T) {
	g := apptest.New(t)
	env := baseEnv(t, g)
	redisEnv(t, env, fmt.Sprintf("autopilot-e2e-full-%d:", time.Now().UnixNano()))
	env["QUEUE_MAX"] = "2"
	r := startReplica(t, "full", env)
	var ds []apptest.Delivery
	for i := range 3 {
		ds = append(ds, g.Labeled(apptest.Repo, g.Issue(apptest.Repo, fmt.Sprint("Full ", i)), apptest.Maintainer, "autopilot"))
	}
	g.SetLatency(time.Hour) // the first two stay queued
	r.mustAccept(ds[0])
	r.mustAccept(ds[1])
	d := ds[2]
	req := d.Request(t, r.url+hookPath, apptest.Secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("delivery over QUEUE_MAX = %d Retry-After %q, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if code, body := r.get("/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with the queue full = %d %s, want 503", code, body)
	}
	if got := r.metric(`autopilot_webhook_deliveries_total{event="issues",outcome="queue_full"}`); got != 1 {
		t.Errorf("queue_full deliveries = %v, want 1", got)
	}
	g.SetLatency(0)
}

// TestServeSIGTERMHandsBackToTheOtherReplica: a replica holding two
// deliveries for one issue (the label running on a slow GitHub, the same
// event re-emitted waiting behind it) gets SIGTERM: it finishes the running one, gives the waiting
// one back to the queue at once, and exits 0; the other replica runs it
// without waiting for QUEUE_CLAIM_IDLE and without claiming anything.
func TestServeSIGTERMHandsBackToTheOtherReplica(t *testing.T) {
	g := apptest.New(t)
	prefix := fmt.Sprintf("autopilot-e2e-term-%d:", time.Now().UnixNano())
	const claimIdle = 30 * time.Second
	env := func() map[string]string {
		e := baseEnv(t, g)
		redisEnv(t, e, prefix)
		e["QUEUE_CLAIM_IDLE"] = claimIdle.String()
		e["WORKERS"] = "2"
		return e
	}
	a := startReplica(t, "stopping", env())
	n := g.Issue(apptest.Repo, "Hand back")
	label := g.Labeled(apptest.Repo, n, apptest.Maintainer, "autopilot")
	again := label // the same event re-emitted under a new delivery id
	again.ID = apptest.NewDeliveryID()
	g.SetLatency(300 * time.Millisecond)
	defer g.SetLatency(0)
	a.mustAccept(label)
	a.mustAccept(again)
	waitFor(t, "one job running and one waiting on the stopping replica", func() bool {
		return a.metric("autopilot_jobs_in_flight") == 1 && a.metric("autopilot_queue_pending") == 2
	})
	b := startReplica(t, "taking-over", env())
	signalled := time.Now()
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.exited:
	case <-time.After(60 * time.Second):
		t.Fatal("the stopping replica did not exit within 60s of SIGTERM")
	}
	if a.code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0", a.code)
	}
	waitFor(t, "the other replica to run the handed-back delivery", func() bool {
		return b.metric("autopilot_queue_acked_total") == 1
	})
	took := time.Since(signalled)
	t.Logf("handed-back delivery done %s after SIGTERM (QUEUE_CLAIM_IDLE %s)", took.Round(time.Millisecond), claimIdle)
	if took >= claimIdle {
		t.Errorf("took %s: the delivery waited for a claim instead of being handed back", took)
	}
	if got := b.metric("autopilot_queue_claims_total"); got != 0 {
		t.Errorf("the other replica claimed %v entries; want 0 (handed back, not claimed)", got)
	}
	g.SetLatency(0)
	if got := b.metric(`autopilot_jobs_total{event="issues",outcome="ok"}`); got != 1 {
		t.Errorf("the other replica ran %v issues jobs, want 1 (the handed-back delivery)", got)
	}
	waitStep(t, g, n, "problem")
	if k := len(g.States(apptest.Repo, n)); k != 1 {
		t.Errorf("%d state comments, want 1", k)
	}
	if !strings.Contains(a.logs.String(), `"msg":"server stopped"`) || strings.Contains(a.logs.String(), "left pending") {
		t.Errorf("the stopping replica did not stop cleanly with nothing left pending:\n%s", a.logs.String())
	}
	if st := b.metric("autopilot_queue_stream_length"); st != 0 {
		t.Errorf("stream length %v after the hand-over, want 0", st)
	}
}

// TestServeRefusesARedisPrefixAnotherAppUses: bot serve started on a
// REDIS_PREFIX that another App's replicas recorded as theirs exits 2,
// saying which prefix, which App, and what to do.
func TestServeRefusesARedisPrefixAnotherAppUses(t *testing.T) {
	g := apptest.New(t)
	env := baseEnv(t, g)
	prefix := fmt.Sprintf("autopilot-e2e-taken-%d:", time.Now().UnixNano())
	redisEnv(t, env, prefix)
	o, err := redis.ParseURL(env["REDIS_URL"])
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(o)
	defer rdb.Close()
	if err := rdb.Set(context.Background(), prefix+"app", "7654321", 0).Err(); err != nil {
		t.Fatal(err)
	}
	defer rdb.Del(context.Background(), prefix+"app")
	code, _, errs := runCmd(t, env, "serve")
	if code != 2 {
		t.Fatalf("exit %d, want 2\n%s", code, errs)
	}
	for _, want := range []string{"REDIS_PREFIX", prefix, "App 7654321", "autopilot:<APP_ID>:"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}
