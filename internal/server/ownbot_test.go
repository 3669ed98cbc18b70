package server

import (
	"net/http"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/ghevent/ghtest"
	"github.com/autopilot-dev/autopilot/internal/server/metrics"
)

// TestIntakeTakesTheRunsTheAppDispatched: a workflow the App dispatched
// (workflow_dispatch with its installation token) reports its workflow_run
// with the App's bot as sender, actor and triggering actor (GitHub's
// shape: the vendored example with those members set as GitHub sets them
// for an App-dispatched run). Intake queues it, so the dispatched step
// completes at once and not at the next sweep; whatever else the bot sends
// (its own comments) is still ignored.
func TestIntakeTakesTheRunsTheAppDispatched(t *testing.T) {
	const bot = "autopilot-test[bot]"
	botUser := map[string]any{"login": bot, "id": 41898282, "type": "Bot", "site_admin": false}
	run := ghtest.Mutate(t, ghtest.Payload(t, "workflow_run.completed.json"), map[string]any{
		"sender": botUser, "workflow_run.actor": botUser, "workflow_run.triggering_actor": botUser,
		"workflow_run.event": "workflow_dispatch", "workflow_run.display_title": "autopilot ap-7-implement-c1-a1-s4",
		"workflow_run.pull_requests": []any{},
	})
	comment := ghtest.Mutate(t, ghtest.Payload(t, "issue_comment.created.json"), map[string]any{
		"sender.login": bot, "sender.type": "Bot", "comment.user.login": bot, "comment.user.type": "Bot",
	})
	rec := newRecorder()
	s, srv := start(t, testConfig(), Deps{Processor: rec, BotLogin: bot})
	if code, msg := answer(t, delivery{event: "workflow_run", id: "own-run", body: run}, srv.url); code != http.StatusAccepted {
		t.Fatalf("the App's own dispatched run: %d %s, want 202", code, msg)
	}
	if code, msg := answer(t, delivery{event: "issue_comment", id: "own-comment", body: comment}, srv.url); code != http.StatusOK {
		t.Fatalf("the App's own comment: %d %s, want 200", code, msg)
	}
	rec.waitDone(t, 1)
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	if rec.count("own-run") != 1 || rec.count("own-comment") != 0 {
		t.Fatalf("processed: run %d, comment %d; want 1, 0", rec.count("own-run"), rec.count("own-comment"))
	}
	if got := series(t, s.metrics, "autopilot_webhook_deliveries_total", "event", "issue_comment", "outcome", "own_bot"); got != 1 {
		t.Errorf("own_bot deliveries = %v, want 1", got)
	}
}

// series is the value of the series of name whose labels include the
// given name/value pairs (0 when there is none).
func series(t *testing.T, m *metrics.Metrics, name string, labels ...string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("gathering: %v", err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue metrics
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}
