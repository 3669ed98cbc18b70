// Package action is autopilot's GitHub Action entry point: it reads the
// inputs and environment the runner provides (through internal/wiring, as
// the App does), decodes the event file, runs the shared reconcile, and
// writes outputs, the step summary, annotations and telemetry. It decides
// nothing itself.
package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/autopilot-dev/autopilot/internal/engine/dashissue"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	gh "github.com/autopilot-dev/autopilot/internal/github"
	"github.com/autopilot-dev/autopilot/internal/github/transport"
	"github.com/autopilot-dev/autopilot/internal/reconcile"
	"github.com/autopilot-dev/autopilot/internal/reconcile/repofiles"
	"github.com/autopilot-dev/autopilot/internal/reconcile/route"
	"github.com/autopilot-dev/autopilot/internal/wiring"
)

// Exit codes (PRODUCT §3).
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// Env is what the runner gives the process.
type Env struct {
	Getenv func(string) string
	Stdout io.Writer
	Stderr io.Writer
	Now    func() time.Time
}

// Result is what one run did (for outputs, summary and telemetry).
type Result struct {
	Event    string
	Outcomes []route.Outcome
	Calls    int
	Err      error
}

// Run is the whole Action: it returns the process exit code.
func Run(ctx context.Context, env Env) int {
	if env.Now == nil {
		env.Now = time.Now
	}
	start := env.Now()
	log := slog.New(slog.NewTextHandler(prefixed{env.Stderr}, &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: dropTime}))
	w, err := wiring.Load(env.Getenv, wiring.ActionPrefix)
	if err != nil {
		return fail(env, ExitUsage, err)
	}
	w.Now = env.Now
	repo, ev, payload, code, err := readEvent(env)
	if err != nil {
		return fail(env, code, err)
	}
	res := Result{Event: eventName(ev.Name, ev.Action)}
	if !ev.Handled {
		return nothingToDo(env, w.Inputs, res)
	}
	if w.Inputs.GitHubToken == "" {
		return fail(env, ExitUsage, &wiring.InputError{Field: "github_token", Msg: "empty: pass ${{ github.token }} or set GITHUB_TOKEN"})
	}
	o := w.GitHub(repo)
	o.Token, o.BaseURL, o.Logger = w.Inputs.GitHubToken, env.Getenv("GITHUB_API_URL"), log
	client, err := gh.New(o)
	if err != nil {
		return fail(env, ExitUsage, err)
	}
	// A run on a PR head (or a merge queue's commit) is checked first: the
	// job's own check run lands there (jobcheck.go).
	if gated := gatedCommit(ev.Name, payload); gated != "" {
		if err := guardJobCheck(ctx, client, w.Inputs.ConfigPath, env.Getenv("GITHUB_JOB"), gated); err != nil {
			return failRun(env, err)
		}
	}
	rec, err := reconcile.New(w.Reconcile(client, client, log, func(s string) { fmt.Fprintln(env.Stdout, s) }))
	if err != nil {
		return fail(env, ExitUsage, err)
	}
	res.Outcomes, res.Err = rec.Handle(ctx, ev)
	st := client.Stats()
	res.Calls = st.Total - st.ConditionalHits
	code = ExitOK
	if res.Err != nil {
		// The error first: what the run left is reported after it, worded
		// as what the failure left, never as a finished step.
		code = failRun(env, res.Err)
	}
	if res.Err == nil && (ev.Name == "schedule" || ev.Name == "workflow_dispatch") {
		note, warning, err := keepDashboard(ctx, client, w.Inputs.ConfigPath, dashissue.Bot{Login: w.BotLogin, AppID: w.AppID}, res.Outcomes)
		switch {
		case err != nil:
			fmt.Fprintf(env.Stdout, "::warning::dashboard issue not kept: %s\n", escapeAnnotation(err.Error()))
		case note != "":
			fmt.Fprintf(env.Stdout, "autopilot: %s\n", note)
		}
		if warning != "" {
			fmt.Fprintf(env.Stdout, "::warning::%s\n", escapeAnnotation(warning))
		}
		st = client.Stats()
		res.Calls = st.Total - st.ConditionalHits
	}
	report(env, res, st)
	writeOutputs(env, w.Inputs, res)
	writeSummary(env, res, st, w.Inputs.StateKey != "")
	if err := writeTelemetry(env, w.Inputs, res, start); err != nil {
		fmt.Fprintf(env.Stdout, "::warning::telemetry: %s\n", escapeAnnotation(err.Error()))
	}
	return code
}

// prefixed writes each log line with the prefix every line of the
// Action's own output carries ("autopilot: "); slog's handlers write one
// record per Write.
type prefixed struct{ w io.Writer }

func (p prefixed) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, "autopilot: "+string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// dropTime leaves the time out of log lines: the runner stamps each line.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// nothingToDo ends a run on an event autopilot does not act on.
func nothingToDo(env Env, in wiring.Inputs, res Result) int {
	fmt.Fprintf(env.Stdout, "autopilot: %s is not an event autopilot acts on; nothing to do\n", res.Event)
	writeOutputs(env, in, res)
	return ExitOK
}

// readEvent reads the repository and decodes the event the runner names
// (with its payload), with the exit code for an error.
func readEvent(env Env) (repo string, ev *ghevent.Event, payload []byte, code int, err error) {
	name := env.Getenv("GITHUB_EVENT_NAME")
	if name == "" {
		return "", nil, nil, ExitUsage, errors.New("GITHUB_EVENT_NAME is not set: run this inside GitHub Actions (or set it with GITHUB_EVENT_PATH)")
	}
	// Checked before the event, so a missing repository is a usage error
	// (exit 2) whatever the event is.
	repo = env.Getenv("GITHUB_REPOSITORY")
	if repo == "" {
		return "", nil, nil, ExitUsage, errors.New("GITHUB_REPOSITORY is not set (want owner/name, as the Actions runner sets it)")
	}
	if o, n, ok := strings.Cut(repo, "/"); !ok || o == "" || n == "" || strings.Contains(n, "/") {
		return "", nil, nil, ExitUsage, fmt.Errorf("GITHUB_REPOSITORY %q: want owner/name", repo)
	}
	payload = []byte("{}")
	if p := env.Getenv("GITHUB_EVENT_PATH"); p != "" {
		if payload, err = readCapped(p, ghevent.MaxPayloadBytes); err != nil {
			return "", nil, nil, ExitFailure, fmt.Errorf("read event file: %w", err)
		}
	} else if name != "schedule" && name != "workflow_dispatch" {
		return "", nil, nil, ExitUsage, errors.New("GITHUB_EVENT_PATH is not set")
	}
	ev, err = ghevent.Decode(name, payload)
	if err != nil {
		return "", nil, nil, ExitFailure, fmt.Errorf("event file: %w", err)
	}
	return repo, ev, payload, ExitOK, nil
}

// report prints each outcome, its notes as warnings, and the API calls.
// After a failed run an outcome is what the failure left, said so.
func report(env Env, res Result, st transport.Stats) {
	for _, o := range res.Outcomes {
		if res.Err != nil {
			fmt.Fprintf(env.Stdout, "autopilot: #%d left by the failed run at: %s step=%s status=%s version=%d\n", o.Issue, o.Flow, o.Step, o.Status, o.Version)
		} else {
			fmt.Fprintf(env.Stdout, "autopilot: #%d %s step=%s status=%s decision=%s version=%d\n", o.Issue, o.Flow, o.Step, o.Status, o.Decision, o.Version)
		}
		for _, n := range o.Notes {
			fmt.Fprintf(env.Stdout, "::warning::#%d: %s\n", o.Issue, escapeAnnotation(n))
		}
	}
	fmt.Fprintf(env.Stdout, "autopilot: %d API calls (%d answered 304 from cache)\n", st.Total, st.ConditionalHits)
}

// failRun maps a failed reconcile to its exit code: a bad config is a usage
// error; a rate limit is deferred work the next run continues.
func failRun(env Env, err error) int {
	var ce *repofiles.ConfigError
	var je *JobCheckError
	if errors.As(err, &ce) || errors.As(err, &je) {
		return fail(env, ExitUsage, err)
	}
	var rl *forge.RateLimitError
	if errors.As(err, &rl) {
		return fail(env, ExitFailure, fmt.Errorf("deferred: GitHub rate limit until %s; nothing was half-written, the next run (or the scheduled sweep) continues: %w", rl.Until.UTC().Format(time.RFC3339), err))
	}
	return fail(env, ExitFailure, err)
}

// fail prints the error on stderr and, inside GitHub Actions, as an
// ::error:: annotation too (outside Actions that line would only print the
// error a second time).
func fail(env Env, code int, err error) int {
	fmt.Fprintf(env.Stderr, "autopilot: %v\n", err)
	if env.Getenv("GITHUB_ACTIONS") == "true" {
		fmt.Fprintf(env.Stdout, "::error::%s\n", escapeAnnotation(err.Error()))
	}
	return code
}

// eventName is "name.action", or the name alone for events without an
// action (push, schedule).
func eventName(name, action string) string {
	if action == "" {
		return name
	}
	return name + "." + action
}

// escapeAnnotation encodes a workflow-command message.
func escapeAnnotation(s string) string {
	r := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	return r.Replace(s)
}

func readCapped(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return b, nil
}
