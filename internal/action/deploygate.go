package action

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/autopilot-dev/autopilot/internal/engine"
	"github.com/autopilot-dev/autopilot/internal/engine/deploygate"
	gh "github.com/autopilot-dev/autopilot/internal/github"
	"github.com/autopilot-dev/autopilot/internal/reconcile/repofiles"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
	"github.com/autopilot-dev/autopilot/internal/wiring"
)

// The deploy gate job (docs/deploy-gate.md#action-mode-the-gate-job): the
// first job of a deploy workflow runs "bot deploy-gate". It reads the
// issue's newest trusted state and the repository's deploy_gate settings,
// asks package deploygate (the same rule and words as App mode), prints
// the verdict and exits 0 only when the deploy may go ahead: approved, or
// nothing autopilot gates (an environment not listed, an unmatched run
// under deploy_gate.unmatched: ignore). It writes nothing.

// GateArgs are the gate job's flags.
type GateArgs struct {
	// Environment is the environment the deploy job targets.
	Environment string
	// Issue is the autopilot issue the deploy is for (the dispatched
	// workflow's issue input).
	Issue int
	// Session is the session token autopilot dispatched the workflow with
	// (its session input; the run's name carries it too).
	Session string
}

// RunDeployGate runs the gate job and returns the process exit code:
// ExitOK when the deploy may go ahead, ExitFailure when it may not (or the
// state could not be read), ExitUsage for bad flags, inputs or config.
func RunDeployGate(ctx context.Context, env Env, args GateArgs) int {
	w, err := wiring.Load(env.Getenv, wiring.ActionPrefix)
	if err != nil {
		return fail(env, ExitUsage, err)
	}
	req, repo, err := gateRequest(env, args)
	if err != nil {
		return fail(env, ExitUsage, err)
	}
	if w.Inputs.GitHubToken == "" {
		return fail(env, ExitUsage, &wiring.InputError{Field: "github_token", Msg: "empty: set GITHUB_TOKEN (or INPUT_GITHUB_TOKEN) to ${{ github.token }} in the gate job's env"})
	}
	o := w.GitHub(repo)
	o.Token, o.BaseURL = w.Inputs.GitHubToken, env.Getenv("GITHUB_API_URL")
	client, err := gh.New(o)
	if err != nil {
		return fail(env, ExitUsage, err)
	}
	cfg, err := repofiles.ReadConfig(ctx, client, w.Inputs.ConfigPath)
	if err != nil {
		var ce *repofiles.ConfigError
		if errors.As(err, &ce) {
			return fail(env, ExitUsage, err)
		}
		return fail(env, ExitFailure, err)
	}
	st, err := newestState(ctx, client, repo, args.Issue, w)
	if err != nil {
		return fail(env, ExitFailure, err)
	}
	gate := cfg.Config.DeployGate
	var d deploygate.Decision
	if st == nil {
		d = deploygate.DecideUnmatched(gate, req, deploygate.Matched{})
	} else if m := deploygate.Match(req, []deploygate.Candidate{deploygate.CandidateOf(st)}); m.Issue == 0 {
		d = deploygate.DecideUnmatched(gate, req, m)
	} else {
		d = deploygate.Decide(st, gate, req)
	}
	return gateVerdict(env, d)
}

// gateRequest is the request the gate job's run makes.
func gateRequest(env Env, args GateArgs) (deploygate.Request, string, error) {
	repo := env.Getenv("GITHUB_REPOSITORY")
	switch {
	case strings.TrimSpace(args.Environment) == "":
		return deploygate.Request{}, "", &wiring.InputError{Field: "--environment", Msg: "empty: name the environment the deploy job targets (its environment: name)"}
	case args.Issue <= 0:
		return deploygate.Request{}, "", &wiring.InputError{Field: "--issue", Msg: "want the autopilot issue's number (the dispatched workflow's inputs.issue)"}
	case repo == "":
		return deploygate.Request{}, "", &wiring.InputError{Field: "GITHUB_REPOSITORY", Msg: "empty: run the gate job inside GitHub Actions"}
	case env.Getenv("GITHUB_SHA") == "":
		return deploygate.Request{}, "", &wiring.InputError{Field: "GITHUB_SHA", Msg: "empty: run the gate job inside GitHub Actions"}
	}
	var runID int64
	if v := env.Getenv("GITHUB_RUN_ID"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			return deploygate.Request{}, "", &wiring.InputError{Field: "GITHUB_RUN_ID", Msg: fmt.Sprintf("%q is not a run id", v)}
		}
		runID = id
	}
	return deploygate.Request{
		Environment: strings.TrimSpace(args.Environment), SHA: env.Getenv("GITHUB_SHA"), Ref: env.Getenv("GITHUB_REF"),
		RunID: runID, Session: strings.TrimSpace(args.Session),
	}, repo, nil
}

// newestState is the issue's newest state comment written by the trusted
// bot that parses (and verifies, with a state key); nil when there is none.
// The bot's state comments that all fail to parse or verify are an error.
func newestState(ctx context.Context, client *gh.Client, repo string, issue int, w wiring.Wiring) (*state.State, error) {
	comments, err := client.ListComments(ctx, issue)
	if err != nil {
		return nil, fmt.Errorf("read the comments of #%d: %w", issue, err)
	}
	bot := engine.BotIdentity{Login: w.BotLogin, AppID: w.AppID}
	want := codec.Want{Repo: repo, Issue: issue}
	if w.Inputs.StateKey != "" {
		want.Key = []byte(w.Inputs.StateKey)
	}
	var (
		best   *state.State
		refuse error
	)
	for _, c := range comments {
		if !strings.HasPrefix(c.Body, state.Marker) || !engine.TrustedAuthor(engine.Author{Login: c.Author.Login, Bot: c.Author.Type == "Bot", AppID: c.AppID}, bot) {
			continue
		}
		s, err := codec.Parse(c.Body, want)
		if err != nil {
			refuse = fmt.Errorf("the state comment of #%d (%s) does not verify: %w; it was edited, or the gate job's state key is not the autopilot workflow's. No deploy passes on it", issue, c.URL, err)
			continue
		}
		if want.Key == nil && s.Sig != "" {
			refuse = fmt.Errorf("the state comment of #%d (%s) is signed, and the gate job has no state key to verify it: set INPUT_STATE_KEY to the autopilot workflow's state_key secret", issue, c.URL)
			continue
		}
		if best == nil || s.Version > best.Version {
			best = s
		}
	}
	if best == nil && refuse != nil {
		// Fail closed: a state that does not verify is never "no state"
		// (which unmatched: ignore would let through).
		return nil, refuse
	}
	return best, nil
}

// gateVerdict prints the decision and returns the exit code it means.
func gateVerdict(env Env, d deploygate.Decision) int {
	fmt.Fprintf(env.Stdout, "autopilot deploy gate: %s: %s\n", d.Verdict, d.Comment)
	switch d.Verdict {
	case deploygate.Approve, deploygate.Ignore:
		return ExitOK
	case deploygate.Ask:
		// Only App mode opens the deploy question (docs/deploy-gate.md).
		fmt.Fprintf(env.Stdout, "::error::%s\n", escapeAnnotation(d.Comment+" autopilot's App opens that question; without the App, set deploy_gate.auto_approve: true and reach the deploy step through an answer (docs/deploy-gate.md). Re-run this job once it is answered."))
	case deploygate.Wait:
		fmt.Fprintf(env.Stdout, "::error::%s\n", escapeAnnotation(d.Comment+" Re-run this job once it is answered."))
	default:
		fmt.Fprintf(env.Stdout, "::error::%s\n", escapeAnnotation(d.Comment))
	}
	return ExitFailure
}
