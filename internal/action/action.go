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

	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/forge"
	"github.com/autopilot-dev/autopilot/internal/ghevent"
	gh "github.com/autopilot-dev/autopilot/internal/github"
	"github.com/autopilot-dev/autopilot/internal/reconcile"
	"github.com/autopilot-dev/autopilot/internal/tracker"
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
	// NewTracker builds the Jira tracker from the inputs and the
	// repository's jira: settings.
	NewTracker func(Inputs, config.Jira) (tracker.Tracker, error)
}

// Result is what one run did (for outputs, summary and telemetry).
type Result struct {
	Event    string
	Outcomes []reconcile.Outcome
	Calls    int
	Err      error
}

// Run is the whole Action: it returns the process exit code.

func Run(ctx context.Context, env Env) int {
	if env.Now == nil {
		env.Now = time.Now
	}
	start := env.Now()
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	in, err := LoadInputs(env.Getenv, "")
	if err != nil {
		return fail(env, ExitUsage, err)
	}
	name := env.Getenv("GITHUB_EVENT_NAME")
	if name == "" {
		return fail(env, ExitUsage, errors.New("GITHUB_EVENT_NAME is not set: run this inside GitHub Actions (or set it with GITHUB_EVENT_PATH)"))
	}
	// Checked before the event, so a missing repository is a usage error
	// (exit 2) whatever the event is.
	repo := env.Getenv("GITHUB_REPOSITORY")
	if repo == "" {
		return fail(env, ExitUsage, errors.New("GITHUB_REPOSITORY is not set (want owner/name, as the Actions runner sets it)"))
	}
	if o, n, ok := strings.Cut(repo, "/"); !ok || o == "" || n == "" || strings.Contains(n, "/") {
		return fail(env, ExitUsage, fmt.Errorf("GITHUB_REPOSITORY %q: want owner/name", repo))
	}
	var payload []byte
	if p := env.Getenv("GITHUB_EVENT_PATH"); p != "" {
		payload, err = readCapped(p, ghevent.MaxPayloadBytes)
		if err != nil {
			return fail(env, ExitFailure, fmt.Errorf("read event file: %w", err))
		}
	} else if name != "schedule" && name != "workflow_dispatch" {
		return fail(env, ExitUsage, errors.New("GITHUB_EVENT_PATH is not set"))
	} else {
		payload = []byte("{}")
	}
	ev, err := ghevent.Decode(name, payload)
	if err != nil {
		return fail(env, ExitFailure, fmt.Errorf("event file: %w", err))
	}
	res := Result{Event: eventName(name, ev.Action)}
	if !ev.Handled {
		fmt.Fprintf(env.Stdout, "autopilot: %s is not an event autopilot acts on; nothing to do\n", res.Event)
		writeOutputs(env, in, res)
		return ExitOK
	}
	if in.GitHubToken == "" {
		return fail(env, ExitUsage, &InputError{"github_token", "empty: pass ${{ github.token }} or set GITHUB_TOKEN"})
	}
	gap := time.Duration(0)
	if v := env.Getenv("AUTOPILOT_MUTATION_GAP"); v != "" {
		// Advanced/test knob: GitHub asks for ≥ 1 s between mutations (the default).
		if gap, err = time.ParseDuration(v); err != nil {
			return fail(env, ExitUsage, fmt.Errorf("AUTOPILOT_MUTATION_GAP: %w", err))
		}
		if gap == 0 {
			gap = -1
		}
	}
	// Advanced/test knob: how long a run waits before sending Jira creates,
	// so an overlapping run cannot create them too.
	settle, err := reconcile.ParseClaimSettle(env.Getenv("AUTOPILOT_CLAIM_SETTLE"))
	if err != nil {
		return fail(env, ExitUsage, err)
	}
	client, err := gh.New(gh.Options{Repo: repo, Token: in.GitHubToken, BaseURL: env.Getenv("GITHUB_API_URL"), Logger: log, DryRun: in.DryRun, BotLogin: in.BotLogin, Now: env.Now, MinMutationGap: gap})
	if err != nil {
		return fail(env, ExitUsage, err)
	}
	var trackerFor func(config.Jira) (tracker.Tracker, error)
	if in.JiraEnabled() && env.NewTracker != nil {
		trackerFor = func(j config.Jira) (tracker.Tracker, error) { return env.NewTracker(in, j) }
	}
	rec, err := reconcile.New(reconcile.Options{
		Forge: client, TrackerFor: trackerFor, ConfigPath: in.ConfigPath, AnswerPermission: in.AnswerPermission,
		TriggerLabel: in.TriggerLabel, BotLogin: in.BotLogin, StateKey: []byte(in.StateKey), Now: env.Now, ClaimSettle: settle,
		Logger: log, DryRun: in.DryRun, Print: func(s string) { fmt.Fprintln(env.Stdout, s) },
		BudgetLow: func() bool { st := client.Stats(); return st.RateRemaining >= 0 && st.RateRemaining < 50 },
	})
	if err != nil {
		return fail(env, ExitUsage, err)
	}
	res.Outcomes, res.Err = rec.Handle(ctx, ev)
	st := client.Stats()
	res.Calls = st.Total - st.ConditionalHits
	for _, o := range res.Outcomes {
		fmt.Fprintf(env.Stdout, "autopilot: #%d %s step=%s status=%s decision=%s version=%d\n", o.Issue, o.Flow, o.Step, o.Status, o.Decision, o.Version)
		for _, n := range o.Notes {
			fmt.Fprintf(env.Stdout, "::warning::#%d: %s\n", o.Issue, escapeAnnotation(n))
		}
	}
	fmt.Fprintf(env.Stdout, "autopilot: %d API calls (%d answered 304 from cache)\n", st.Total, st.ConditionalHits)
	writeOutputs(env, in, res)
	writeSummary(env, res, st)
	if err := writeTelemetry(env, in, res, start); err != nil {
		fmt.Fprintf(env.Stdout, "::warning::telemetry: %s\n", escapeAnnotation(err.Error()))
	}
	if res.Err != nil {
		var ce *reconcile.ConfigError
		if errors.As(res.Err, &ce) {
			return fail(env, ExitUsage, res.Err)
		}
		var rl *forge.RateLimitError
		if errors.As(res.Err, &rl) {
			return fail(env, ExitFailure, fmt.Errorf("deferred: GitHub rate limit until %s; nothing was half-written, the next run (or the scheduled sweep) continues: %w", rl.Until.UTC().Format(time.RFC3339), res.Err))
		}
		return fail(env, ExitFailure, res.Err)
	}
	return ExitOK
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
