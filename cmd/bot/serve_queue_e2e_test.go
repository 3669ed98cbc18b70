package main

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

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
		e["WORKERS"] = strconv.Itoa(n)
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
