package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/appmode/apptest"
)

// jsonLines fails the test unless every line of out is a JSON object with
// a level and a message, and returns the lines' msg and err fields.
func jsonLines(t *testing.T, out string) string {
	t.Helper()
	var texts []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Errorf("not a JSON line: %s", l)
			continue
		}
		if rec["level"] == nil || rec["msg"] == nil {
			t.Errorf("JSON line without level or msg: %s", l)
		}
		texts = append(texts, fmtField(rec["msg"])+" "+fmtField(rec["err"]))
	}
	return strings.Join(texts, "\n")
}

func fmtField(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestServeLogsOnlyJSONLines: `bot serve` writes nothing but JSON log
// lines, the Redis client's own log lines included (a REDIS_URL nobody
// answers makes go-redis log its failed dials), and a settings error is a
// JSON line too.
func TestServeLogsOnlyJSONLines(t *testing.T) {
	g := apptest.New(t)
	env := map[string]string{
		"WEBHOOK_SECRET": "s", "APP_ID": strconv.Itoa(apptest.AppID), "PRIVATE_KEY": string(g.KeyPEM),
		"GITHUB_API_URL": g.URL, "HOST": "127.0.0.1", "PORT": strconv.Itoa(freePort(t)),
		"ADMIN_ADDR": "127.0.0.1:" + strconv.Itoa(freePort(t)), "SWEEP_INTERVAL": "0", "REDELIVERY_INTERVAL": "0",
		"REDIS_URL": "redis://127.0.0.1:" + strconv.Itoa(freePort(t)) + "/0", "SHUTDOWN_TIMEOUT": "2s",
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errs lockedBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve"}, &out, &errs, func(k string) string { return env[k] }) }()
	deadline := time.After(60 * time.Second)
wait:
	for !strings.Contains(errs.String(), "failed to dial") {
		select {
		case <-done:
			break wait
		case <-deadline:
			t.Fatalf("no Redis client log line within 60s:\n%s", errs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not return after cancel")
	}
	text := jsonLines(t, errs.String())
	if !strings.Contains(text, "failed to dial") {
		t.Errorf("the Redis client's log line is not among the JSON lines:\n%s", errs.String())
	}

	errs = lockedBuffer{}
	delete(env, "WEBHOOK_SECRET")
	if code := run(context.Background(), []string{"serve"}, &out, &errs, func(k string) string { return env[k] }); code != 2 {
		t.Fatalf("without WEBHOOK_SECRET: exit %d, want 2", code)
	}
	if text := jsonLines(t, errs.String()); !strings.Contains(text, "WEBHOOK_SECRET") {
		t.Errorf("the settings error does not name WEBHOOK_SECRET:\n%s", errs.String())
	}
}
