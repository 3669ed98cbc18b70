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
	"syscall"

	"github.com/autopilot-dev/autopilot/internal/action"
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/demo"
)

// Set by the linker: -ldflags "-X main.version=v1.2.3 -X main.commit=abc".
var (
	version = "dev"
	commit  = ""
)

const usage = `usage: bot <command> [flags]

commands:
  demo [--flow NAME] [--jira] [--json] [--quiet]
                     run a complete scenario on the embedded sandbox (no network)
  action             GitHub Action entry point (default when GITHUB_ACTIONS=true)
  serve              GitHub App webhook server (see docs/app.md)
  validate [path]    check a .github/autopilot.yml (default .github/autopilot.yml)
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
		return action.Run(ctx, action.Env{Getenv: getenv, Stdout: stdout, Stderr: stderr, NewTracker: newTracker})
	case "serve":
		return runServe(ctx, args, stdout, stderr, getenv)
	case "validate":
		return runValidate(args, stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintf(stdout, "autopilot %s (commit %s, %s %s/%s)\n", version, revision(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
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

func revision() string {
	if commit != "" {
		return commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o demo.Options
	fs.StringVar(&o.Flow, "flow", "greenfield", "flow to run: greenfield, existing-code, meta-repo, review-loop")
	fs.BoolVar(&o.Jira, "jira", false, "let the sandbox Jira accept the credentials (tasks get Jira keys)")
	fs.BoolVar(&o.JSON, "json", false, "print a machine-readable transcript")
	fs.BoolVar(&o.Quiet, "quiet", false, "print only the summary")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "demo: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if _, err := demo.Run(ctx, o, stdout); err != nil {
		fmt.Fprintf(stderr, "demo: %v\n", err)
		var ue *demo.UsageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

func runValidate(args []string, stdout, stderr io.Writer) int {
	path := config.DefaultPath
	if len(args) > 1 {
		fmt.Fprintln(stderr, "usage: bot validate [path]")
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
	return 0
}

func or(v, d string) string {
	if v == "" {
		return d
	}
	return v
}
