// Command bot is autopilot: a GitHub Action and GitHub App that runs a
// multi-step development workflow on an issue. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/autopilot-dev/autopilot/internal/action"
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/demo"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// Set by the linker: -ldflags "-X main.version=v1.2.3 -X main.commit=abc".
var (
	version = "dev"
	commit  = ""
)

const usage = `usage: bot <command> [flags]

commands:
  demo [--flow NAME] [--jira] [--tracker jira|github|local] [--json] [--quiet]
                     run a complete scenario on the embedded sandbox (no network)
  action             GitHub Action entry point (default when GITHUB_ACTIONS=true)
  serve              GitHub App webhook server (see docs/app.md)
  validate [path]    check a .github/autopilot.yml (default .github/autopilot.yml)
  deploy-gate --environment ENV --issue N [--session TOKEN]
                     the deploy workflow's gate job (see docs/deploy-gate.md)
  version            print version, commit and Go version
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// run dispatches a command and returns the exit code: 0 success or no-op,
// 1 a real failure, 2 usage or configuration error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := ""
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	if cmd == "" && getenv("GITHUB_ACTIONS") == "true" {
		cmd = "action"
	}
	switch cmd {
	case "demo":
		return runDemo(ctx, args, stdout, stderr)
	case "action":
		if code, done := parseNone("action", actionUsage, args, stdout, stderr); done {
			return code
		}
		return action.Run(ctx, action.Env{Getenv: getenv, Stdout: stdout, Stderr: stderr})
	case "serve":
		return runServe(ctx, args, stdout, stderr, getenv)
	case "validate":
		return runValidate(args, stdout, stderr)
	case "deploy-gate":
		return runDeployGate(ctx, args, stdout, stderr, getenv)
	case "version", "--version", "-v":
		if code, done := parseNone("version", versionUsage, args, stdout, stderr); done {
			return code
		}
		bi, _ := debug.ReadBuildInfo()
		v, rev := buildVersion(version, commit, bi)
		fmt.Fprintf(stdout, "autopilot %s (commit %s, %s %s/%s)\n", v, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "":
		fmt.Fprint(stderr, usage)
		return 2
	default:
		fmt.Fprintf(stderr, "bot: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
}

const (
	demoUsage = `usage: bot demo [--flow NAME] [--jira] [--tracker jira|github|local] [--json] [--quiet]

Runs a complete autopilot scenario on the embedded sandbox forge and sandbox
Jira (no network, no token, fixed clock). Exit 0 when the run ends done.

flags:
`
	validateUsage = `usage: bot validate [path]

Checks a .github/autopilot.yml (default .github/autopilot.yml); errors name
the line and field. Exit 0 when valid, 2 otherwise.
`
	actionUsage = `usage: bot action

GitHub Action entry point (the default command when GITHUB_ACTIONS=true). It
takes no flags: the inputs come from INPUT_<NAME> variables (github_token,
config_path, trigger_label, bot_login, state_key, answer_permission,
jira_url, jira_user, jira_token, jira_project, dry_run, telemetry_path) and
the event from GITHUB_EVENT_NAME, GITHUB_EVENT_PATH and GITHUB_REPOSITORY.
See docs/action.md.
`
	deployGateUsage = `usage: bot deploy-gate --environment ENV --issue N [--session TOKEN]

The deploy workflow's gate job (docs/deploy-gate.md): exit 0 when the
issue's flow passed every gate on GITHUB_SHA and its deploy question for ENV
was answered approve (or nothing autopilot gates is at stake), 1 otherwise.
It reads GITHUB_TOKEN (or INPUT_GITHUB_TOKEN), INPUT_STATE_KEY,
INPUT_CONFIG_PATH, INPUT_BOT_LOGIN, GITHUB_REPOSITORY, GITHUB_SHA,
GITHUB_REF and GITHUB_RUN_ID, and writes nothing.

flags:
`
	versionUsage = `usage: bot version

Prints the version, commit and Go version.
`
)

// parseNone handles the arguments of a command that takes no flags:
// -h/--help prints its usage (exit 0); anything else is a usage error
// (exit 2). done is false when there were no arguments.
func parseNone(name, help string, args []string, stdout, stderr io.Writer) (code int, done bool) {
	if len(args) == 0 {
		return 0, false
	}
	if isHelp(args[0]) {
		fmt.Fprint(stdout, help)
		return 0, true
	}
	fmt.Fprintf(stderr, "%s: unexpected argument %q\n\n%s", name, args[0], help)
	return 2, true
}

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// buildVersion returns the version and commit to report: those the
// release build stamped with -ldflags, else what the Go toolchain recorded
// in the binary (the module version of "go install module@v1.2.3", or the
// pseudo-version of a build in a checkout; vcs.revision of a build in a
// checkout), else "dev" and "unknown". bi is nil when the binary has no
// build information.
func buildVersion(stampedVersion, stampedCommit string, bi *debug.BuildInfo) (ver, rev string) {
	ver, rev = stampedVersion, stampedCommit
	if bi != nil {
		if (ver == "" || ver == "dev") && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			ver = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && rev == "" {
				rev = s.Value
			}
		}
	}
	if ver == "" {
		ver = "dev"
	}
	if rev == "" {
		rev = "unknown"
	}
	return ver, rev
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), demoUsage)
		fs.PrintDefaults()
	}
	var o demo.Options
	fs.StringVar(&o.Flow, "flow", "greenfield", "flow to run: greenfield, existing-code, meta-repo, review-loop")
	fs.BoolVar(&o.Jira, "jira", false, "send the tasks to the sandbox Jira (as --tracker jira): its first authentication fails, the renewed token works, tasks get Jira keys")
	fs.StringVar(&o.Tracker, "tracker", "", "where tasks go: jira (as --jira), github (sub-issues of the issue on the sandbox forge) or local (kept in the issue; the default); with --jira only jira agrees")
	fs.BoolVar(&o.JSON, "json", false, "print a machine-readable transcript")
	fs.BoolVar(&o.Quiet, "quiet", false, "print only the summary")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "demo: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	tr, err := demo.Run(ctx, o, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		var ue *demo.UsageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	if tr.Summary.Status != string(state.RunDone) {
		fmt.Fprintf(stderr, "demo: the %s scenario ended %s, not done\n", o.Flow, tr.Summary.Status)
		return 1
	}
	return 0
}

func runValidate(args []string, stdout, stderr io.Writer) int {
	path := config.DefaultPath
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(stdout, validateUsage)
		return 0
	}
	if len(args) > 1 || len(args) == 1 && strings.HasPrefix(args[0], "-") && args[0] != "-" {
		fmt.Fprintf(stderr, "validate: unexpected arguments %q\n\n%s", args, validateUsage)
		return 2
	}
	if len(args) == 1 {
		path = args[0]
	}
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "validate: %v\n", err)
		return 2
	}
	c, err := config.Parse(data)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", path, err)
		return 2
	}
	fmt.Fprintf(stdout, "%s: ok — flows %v, default flow %q, limits: max_sessions=%d max_hours=%g confidence_threshold=%g\n",
		path, c.All.Names(), or(c.DefaultFlow, "(detected)"), c.Limits.MaxSessions, c.Limits.MaxHours, c.Limits.ConfidenceThreshold)
	for _, n := range c.TeamNotes() {
		fmt.Fprintf(stdout, "note: %s\n", n)
	}
	return 0
}

func or(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// runDeployGate parses the gate job's flags and runs it.
func runDeployGate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("deploy-gate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ga action.GateArgs
	fs.StringVar(&ga.Environment, "environment", "", "the environment the deploy job targets")
	fs.IntVar(&ga.Issue, "issue", 0, "the autopilot issue the deploy is for")
	fs.StringVar(&ga.Session, "session", "", "the session token the workflow was dispatched with")
	fs.Usage = func() {
		fmt.Fprint(stderr, deployGateUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "deploy-gate: unexpected argument %q\n\n%s", fs.Arg(0), deployGateUsage)
		return 2
	}
	return action.RunDeployGate(ctx, action.Env{Getenv: getenv, Stdout: stdout, Stderr: stderr}, ga)
}
