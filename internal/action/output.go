package action

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	gh "github.com/autopilot-dev/autopilot/internal/github"
	"github.com/autopilot-dev/autopilot/internal/reconcile"
)

// MaxSummary is GitHub's step summary limit.
const MaxSummary = 1 << 20

// primary picks the outcome the outputs describe.
func primary(res Result) reconcile.Outcome {
	for _, o := range res.Outcomes {
		if o.Decision != "" {
			return o
		}
	}
	if len(res.Outcomes) > 0 {
		return res.Outcomes[0]
	}
	return reconcile.Outcome{}
}

// writeOutputs appends the outputs to $GITHUB_OUTPUT.
func writeOutputs(env Env, in Inputs, res Result) {
	path := env.Getenv("GITHUB_OUTPUT")
	if path == "" {
		return
	}
	o := primary(res)
	issue := ""
	if o.Issue > 0 {
		issue = fmt.Sprint(o.Issue)
	}
	vals := map[string]string{"issue": issue, "flow": o.Flow, "step": o.Step, "status": o.Status, "decision": o.Decision}
	var b strings.Builder
	for _, k := range OutputNames {
		v := vals[k]
		if strings.ContainsAny(v, "\r\n") {
			d := "ghadelim_" + randHex()
			fmt.Fprintf(&b, "%s<<%s\n%s\n%s\n", k, d, v, d)
			continue
		}
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	appendFile(env, path, b.String())
}

// writeSummary appends a Markdown run summary (≤ 1 MiB).
func writeSummary(env Env, res Result, st gh.Stats) {
	path := env.Getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### autopilot — `%s`\n\n", res.Event)
	if len(res.Outcomes) == 0 {
		b.WriteString("Nothing to do for this event.\n")
	} else {
		b.WriteString("| Issue | Flow | Step | Status | Decision | State version | Stop |\n|---|---|---|---|---|---|---|\n")
		for _, o := range res.Outcomes {
			fmt.Fprintf(&b, "| #%d | %s | %s | %s | %s | %d | %s |\n", o.Issue, o.Flow, o.Step, o.Status, dash(o.Decision), o.Version, dash(o.Stop))
		}
	}
	fmt.Fprintf(&b, "\nAPI calls: %d (%d conditional hits, rate limit remaining %d)\n", st.Total, st.ConditionalHits, st.RateRemaining)
	if res.Err != nil {
		fmt.Fprintf(&b, "\n**Error:** %s\n", strings.ReplaceAll(res.Err.Error(), "\n", " "))
	}
	s := b.String()
	if len(s) > MaxSummary {
		s = s[:MaxSummary-64] + "\n\n… (truncated)\n"
	}
	appendFile(env, path, s)
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// telemetryRecord is one JSONL line per run (schema_version 1).
type telemetryRecord struct {
	SchemaVersion int       `json:"schema_version"`
	RunID         string    `json:"run_id"`
	At            time.Time `json:"at"`
	Event         string    `json:"event"`
	Issue         int       `json:"issue,omitempty"`
	Flow          string    `json:"flow,omitempty"`
	StepAfter     string    `json:"step_after,omitempty"`
	Status        string    `json:"status,omitempty"`
	Decision      string    `json:"decision,omitempty"`
	KillSwitch    string    `json:"kill_switch,omitempty"`
	APICalls      int       `json:"api_calls"`
	DurationMS    int64     `json:"duration_ms"`
	Error         string    `json:"error,omitempty"`
}

// writeTelemetry appends one record atomically (temp file + rename).
func writeTelemetry(env Env, in Inputs, res Result, start time.Time) error {
	if in.TelemetryPath == "" {
		return nil
	}
	o := primary(res)
	rec := telemetryRecord{SchemaVersion: 1, RunID: or(env.Getenv("GITHUB_RUN_ID"), randHex()), At: start.UTC(), Event: res.Event,
		Issue: o.Issue, Flow: o.Flow, StepAfter: o.Step, Status: o.Status, Decision: o.Decision, KillSwitch: o.Stop,
		APICalls: res.Calls, DurationMS: env.Now().Sub(start).Milliseconds()}
	if res.Err != nil {
		rec.Error = res.Err.Error()
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	old, err := os.ReadFile(in.TelemetryPath)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if len(old) > 0 && old[len(old)-1] != '\n' {
		old = append(old, '\n')
	}
	dir := filepath.Dir(in.TelemetryPath)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".autopilot-telemetry-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(append(old, line...), '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), in.TelemetryPath)
}

func appendFile(env Env, path, s string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintf(env.Stdout, "::warning::cannot write %s: %s\n", path, escapeAnnotation(err.Error()))
		return
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		fmt.Fprintf(env.Stdout, "::warning::cannot write %s: %s\n", path, escapeAnnotation(err.Error()))
	}
}

func randHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
