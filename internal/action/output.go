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
	"unicode/utf8"

	"github.com/autopilot-dev/autopilot/internal/engine/stops"
	"github.com/autopilot-dev/autopilot/internal/github/transport"
	"github.com/autopilot-dev/autopilot/internal/reconcile/route"
	"github.com/autopilot-dev/autopilot/internal/wiring"
)

// OutputNames lists every output the code writes.
var OutputNames = []string{"issue", "flow", "step", "status", "decision"}

// MaxSummary is GitHub's step summary limit.
const MaxSummary = 1 << 20

// primary picks the outcome the outputs describe: the one that applied a
// decision, else the first about an issue (a sweep's budget note is about
// none).
func primary(res Result) route.Outcome {
	for _, o := range res.Outcomes {
		if o.Decision != "" {
			return o
		}
	}
	for _, o := range res.Outcomes {
		if o.Issue > 0 {
			return o
		}
	}
	return route.Outcome{}
}

// writeOutputs appends the outputs to $GITHUB_OUTPUT.
func writeOutputs(env Env, in wiring.Inputs, res Result) {
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

// writeSummary appends the Markdown run summary (≤ 1 MiB): a row per issue
// reconciled, a line per stopped run with its kill-switch and recovery hint,
// the run's notes (a sweep that stopped early says so here) and the API
// calls, and, once, that the state is unsigned when the run has no
// state_key. writeTelemetry adds the run's facts line (run id, duration).
func writeSummary(env Env, res Result, st transport.Stats, signed bool) {
	path := env.Getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### autopilot — `%s`\n\n", res.Event)
	issues := 0
	for _, o := range res.Outcomes {
		if o.Issue > 0 {
			issues++
		}
	}
	if issues == 0 {
		b.WriteString("Nothing to do for this event.\n")
	} else {
		b.WriteString("| Issue | Flow | Step | Status | Decision | Kill-switch | State version |\n|---|---|---|---|---|---|---|\n")
		for _, o := range res.Outcomes {
			if o.Issue > 0 {
				fmt.Fprintf(&b, "| #%d | %s | %s | %s | %s | %s | %d |\n", o.Issue, cell(o.Flow), stepCell(o), cell(o.Status), cell(o.Decision), cell(string(o.Stop)), o.Version)
			}
		}
	}
	for _, o := range res.Outcomes {
		if o.Stop != "" && o.Issue > 0 {
			fmt.Fprintf(&b, "\n**#%d stopped — kill-switch `%s`.** Recovery: %s\n", o.Issue, o.Stop, stops.RecoveryHint(o.Stop))
		}
	}
	var notes []string
	for _, o := range res.Outcomes {
		for _, n := range o.Notes {
			if o.Issue > 0 {
				n = fmt.Sprintf("#%d: %s", o.Issue, n)
			}
			notes = append(notes, "- "+oneLine(n))
		}
	}
	if len(notes) > 0 {
		b.WriteString("\n**Notes**\n\n" + strings.Join(notes, "\n") + "\n")
	}
	if !signed {
		b.WriteString("\n" + unsignedNote + "\n")
	}
	if st.RateRemaining >= 0 {
		fmt.Fprintf(&b, "\nAPI calls: %d (%d conditional hits, rate limit remaining %d)\n", st.Total, st.ConditionalHits, st.RateRemaining)
	} else { // no answer carried the budget: say nothing rather than -1
		fmt.Fprintf(&b, "\nAPI calls: %d (%d conditional hits)\n", st.Total, st.ConditionalHits)
	}
	if res.Err != nil {
		fmt.Fprintf(&b, "\n**Error:** %s\n", oneLine(res.Err.Error()))
	}
	appendFile(env, path, capSummary(b.String()))
}

// unsignedNote is the job summary's paragraph for a run without
// state_key: what an unsigned state lets others do, and the fix.
const unsignedNote = "**The state is unsigned.** `state_key` is not set, so autopilot trusts any state comment " +
	"posted as `bot_login`: any workflow in this repository that posts with `GITHUB_TOKEN` (third-party actions " +
	"included) can write a state autopilot acts on, moving a step, recording a decision or an approval. " +
	"Set a `state_key` secret: autopilot then signs its state and refuses any it did not sign: " +
	"[The state_key secret](https://github.com/autopilot-dev/autopilot/blob/main/docs/action.md#the-state_key-secret)."

// capSummary keeps a summary (and the facts line written after it) within
// GitHub's 1 MiB, cut at a rune boundary.
func capSummary(s string) string {
	const room = 4096 // for the facts line and the truncation note
	if len(s) <= MaxSummary-room {
		return s
	}
	cut := MaxSummary - room
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "\n\n… (truncated)\n"
}

// stepCell shows the step a run moved through ("plan → execute"), or the
// step it stayed at.
func stepCell(o route.Outcome) string {
	if o.StepBefore == "" || o.StepBefore == o.Step {
		return cell(o.Step)
	}
	return cell(o.StepBefore + " → " + o.Step)
}

// cell renders a table cell: "—" when empty, pipes escaped.
func cell(s string) string {
	if s == "" {
		return "—"
	}
	return strings.ReplaceAll(oneLine(s), "|", "\\|")
}

// oneLine folds a text onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// telemetryRecord is one JSONL line per run (schema_version 1).
type telemetryRecord struct {
	SchemaVersion int       `json:"schema_version"`
	RunID         string    `json:"run_id"`
	At            time.Time `json:"at"`
	Event         string    `json:"event"`
	Issue         int       `json:"issue,omitempty"`
	// Issues is how many issues the run reconciled (a sweep: several).
	Issues     int    `json:"issues"`
	Flow       string `json:"flow,omitempty"`
	StepBefore string `json:"step_before,omitempty"`
	StepAfter  string `json:"step_after,omitempty"`
	Status     string `json:"status,omitempty"`
	Decision   string `json:"decision,omitempty"`
	KillSwitch string `json:"kill_switch,omitempty"`
	Hint       string `json:"hint,omitempty"`
	APICalls   int    `json:"api_calls"`
	DurationMS int64  `json:"duration_ms"`
	Error      string `json:"error,omitempty"`
}

// newTelemetry builds the run's record from its primary outcome.
func newTelemetry(env Env, res Result, start time.Time) telemetryRecord {
	o := primary(res)
	rec := telemetryRecord{SchemaVersion: 1, RunID: runID(env), At: start.UTC(), Event: res.Event,
		Issue: o.Issue, Flow: o.Flow, StepBefore: o.StepBefore, StepAfter: o.Step, Status: o.Status, Decision: o.Decision, KillSwitch: string(o.Stop),
		APICalls: res.Calls, DurationMS: env.Now().Sub(start).Milliseconds()}
	for _, x := range res.Outcomes {
		if x.Issue > 0 {
			rec.Issues++
		}
	}
	if o.Stop != "" {
		rec.Hint = stops.RecoveryHint(o.Stop)
	}
	if res.Err != nil {
		rec.Error = res.Err.Error()
	}
	return rec
}

// factsLine renders a telemetry record for the run summary, so both show
// the same facts.
func factsLine(rec telemetryRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nRun `%s`", rec.RunID)
	if rec.Issue > 0 {
		fmt.Fprintf(&b, " · issue #%d · flow %s · step %s → %s · status %s", rec.Issue, cell(rec.Flow), cell(rec.StepBefore), cell(rec.StepAfter), cell(rec.Status))
		fmt.Fprintf(&b, " · decision %s · kill-switch %s", cell(rec.Decision), cell(rec.KillSwitch))
	}
	fmt.Fprintf(&b, " · %d API calls · %d ms\n", rec.APICalls, rec.DurationMS)
	return b.String()
}

// writeTelemetry records the run's facts: a line in the run summary and,
// when telemetry_path is set, one JSONL record appended atomically (the
// file is rewritten to a temp file beside it, then renamed over it, so a
// reader never sees half a line).
func writeTelemetry(env Env, in wiring.Inputs, res Result, start time.Time) error {
	rec := newTelemetry(env, res, start)
	if path := env.Getenv("GITHUB_STEP_SUMMARY"); path != "" {
		appendFile(env, path, factsLine(rec))
	}
	if in.TelemetryPath == "" {
		return nil
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

// runID is the workflow run's id, or a random one outside Actions.
func runID(env Env) string {
	if id := env.Getenv("GITHUB_RUN_ID"); id != "" {
		return id
	}
	return randHex()
}
