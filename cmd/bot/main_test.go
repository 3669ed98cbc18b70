package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/doctable"
)

func runCmd(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb, func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yml")
	bad := filepath.Join(dir, "bad.yml")
	os.WriteFile(good, []byte("default_flow: existing-code\nlimits:\n  max_sessions: 500\n"), 0o644)
	os.WriteFile(bad, []byte("limits:\n  max_sessions: 3\nexecutor:\n  kind: robot\n"), 0o644)
	teams := filepath.Join(dir, "teams.yml")
	os.WriteFile(teams, []byte("approvals:\n  deploy:\n    teams: [\"@acme/sre\"]\n"), 0o644)
	cases := []struct {
		name string
		args []string
		code int
		want string // substring of stdout+stderr
	}{
		{"version", []string{"version"}, 0, "autopilot dev"},
		{"help", []string{"help"}, 0, "commands:"},
		{"no command", nil, 2, "usage: bot"},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"validate ok clamps silently", []string{"validate", good}, 0, "max_sessions=50"},
		{"validate names line and field", []string{"validate", bad}, 2, "line 4: executor.kind"},
		{"validate says what a team policy needs", []string{"validate", teams}, 0, "note: approvals.deploy.teams: membership of @acme/sre is read at each vote and needs the organization permission Members: read (the App: grant it; the Action: pass a token that has it as the members_token input, since GITHUB_TOKEN cannot read teams)"},
		{"validate missing file", []string{"validate", filepath.Join(dir, "none.yml")}, 2, "no such file"},
		{"validate too many args", []string{"validate", "a", "b"}, 2, "usage: bot validate"},
		{"demo quiet", []string{"demo", "--quiet"}, 0, "Final status           done"},
		{"demo bad flag", []string{"demo", "--nope"}, 2, "flag provided but not defined"},
		{"demo unknown flow", []string{"demo", "--flow", "nope"}, 2, `unknown flow "nope"`},
		{"demo jira contradicts tracker local", []string{"demo", "--quiet", "--jira", "--tracker", "local"}, 2, "--jira and --tracker local contradict each other"},
		{"demo jira contradicts tracker github", []string{"demo", "--quiet", "--tracker", "github", "--jira"}, 2, "--jira and --tracker github contradict each other"},
		{"demo jira agrees with tracker jira", []string{"demo", "--quiet", "--jira", "--tracker", "jira"}, 0, "Jira issues created: 6"},
		{"demo sub-issues summary", []string{"demo", "--quiet", "--tracker", "github"}, 0, "GitHub sub-issues created: 6"},
		{"action without event", []string{"action"}, 2, "GITHUB_EVENT_NAME"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCmd(t, nil, c.args...)
			if code != c.code || !strings.Contains(out+errs, c.want) {
				t.Fatalf("exit %d, want %d; output lacks %q:\n%s%s", code, c.code, c.want, out, errs)
			}
		})
	}
}

func TestActionIsDefaultInsideActions(t *testing.T) {
	code, out, _ := runCmd(t, map[string]string{"GITHUB_ACTIONS": "true"})
	if code != 2 || !strings.Contains(out, "::error::GITHUB_EVENT_NAME") {
		t.Fatalf("exit %d, out %q", code, out)
	}
}

// An event autopilot does not act on costs zero API calls and exits 0.
func TestIrrelevantEventMakesNoAPICall(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "unexpected", http.StatusTeapot)
	}))
	defer srv.Close()
	dir := t.TempDir()
	for _, c := range []struct{ name, payload string }{
		{"star", `{"action":"created","repository":{"full_name":"o/r"},"sender":{"login":"u"}}`},
		{"issue_comment", `{"action":"created","repository":{"full_name":"o/r"},"sender":{"login":"u","type":"User"},"issue":{"number":3,"title":"t","body":"","state":"open","labels":[{"name":"bug"}]},"comment":{"id":9,"body":"A","user":{"login":"u","type":"User"},"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","html_url":"x"}}`},
	} {
		p := filepath.Join(dir, c.name+".json")
		os.WriteFile(p, []byte(c.payload), 0o644)
		env := map[string]string{"GITHUB_EVENT_NAME": c.name, "GITHUB_EVENT_PATH": p, "GITHUB_REPOSITORY": "o/r", "GITHUB_API_URL": srv.URL, "INPUT_GITHUB_TOKEN": "t"}
		code, out, errs := runCmd(t, env, "action")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", c.name, code, out, errs)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("irrelevant events made %d API calls, want 0", n)
	}
}

// TestEveryCommandAnswersHelp: each command prints its usage with its flags
// on --help and exits 0, without doing its work (validate must not open a
// file named "--help", action must not run).
func TestEveryCommandAnswersHelp(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want []string
	}{
		{"demo", []string{"usage: bot demo", "-flow", "-jira", "-json", "-quiet"}},
		{"validate", []string{"usage: bot validate [path]"}},
		{"action", []string{"usage: bot action", "INPUT_<NAME>", "GITHUB_REPOSITORY"}},
		{"serve", []string{"-webhook-secret", "-app-id"}},
		{"version", []string{"usage: bot version"}},
	} {
		for _, h := range []string{"--help", "-h"} {
			code, out, errs := runCmd(t, map[string]string{"GITHUB_ACTIONS": "true"}, c.cmd, h)
			if code != 0 {
				t.Errorf("bot %s %s: exit %d, want 0\n%s%s", c.cmd, h, code, out, errs)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("bot %s %s: stdout lacks %q:\n%s", c.cmd, h, w, out)
				}
			}
			if strings.Contains(out+errs, "::error::") || strings.Contains(out, "API calls") {
				t.Errorf("bot %s %s did its work instead of printing help:\n%s%s", c.cmd, h, out, errs)
			}
		}
	}
}

// TestUsageErrorsExitTwo: an unexpected argument is a usage error.
func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{{"action", "now"}, {"version", "--short"}, {"validate", "--strict"}, {"demo", "extra"}} {
		if code, out, errs := runCmd(t, nil, args...); code != 2 {
			t.Errorf("bot %v: exit %d, want 2\n%s%s", args, code, out, errs)
		}
	}
}

// TestReadmeCommandsAreTheBinarys: the README's command table lists the
// commands `bot` has (each answers --help), and the usage text names each.
func TestReadmeCommandsAreTheBinarys(t *testing.T) {
	md, err := doctable.Read("README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := doctable.Rows(doctable.Section(md, "Commands"))
	if len(rows) == 0 {
		t.Fatal("README.md has no command table")
	}
	for _, r := range rows {
		c := doctable.Code(r[0])
		if len(c) == 0 || !strings.HasPrefix(c[0], "bot ") {
			t.Fatalf("README command row %q: want `bot <command> …`", r)
		}
		words := strings.Fields(c[0])
		name := words[1]
		if code, out, errs := runCmd(t, nil, name, "--help"); code != 0 {
			t.Errorf("README lists `bot %s`, which does not answer --help (exit %d)\n%s%s", name, code, out, errs)
		}
		if !strings.Contains(usage, "\n  "+name+" ") && !strings.Contains(usage, "\n  "+name+"\n") {
			t.Errorf("`bot %s` is in the README but not in the usage text", name)
		}
		for _, w := range words[2:] { // the flags the README shows exist
			flagName, _, _ := strings.Cut(strings.Trim(w, "[]"), " ")
			if !strings.HasPrefix(flagName, "--") {
				continue
			}
			if _, out, _ := runCmd(t, nil, name, "--help"); !strings.Contains(out, "-"+strings.TrimPrefix(flagName, "--")) {
				t.Errorf("README shows %s for `bot %s`, its --help does not", flagName, name)
			}
		}
	}
}

// TestVersionFromBuildInfo: a binary built without -ldflags (go install
// module@version, go build in a checkout) reports the module version and
// the commit the Go toolchain recorded; stamped values win.
func TestVersionFromBuildInfo(t *testing.T) {
	info := func(v string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/autopilot-dev/autopilot", Version: v}, Settings: settings}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}
	cases := []struct {
		name                   string
		stampedVer, stampedRev string
		bi                     *debug.BuildInfo
		wantVer, wantRev       string
	}{
		{"go install at a tag", "", "", info("v1.4.2"), "v1.4.2", "unknown"},
		{"go build in a checkout", "", "", info("v0.0.0-20261127101500-0123456789ab+dirty", rev), "v0.0.0-20261127101500-0123456789ab+dirty", rev.Value},
		{"go run: no module version", "", "", info("(devel)", rev), "dev", rev.Value},
		{"no build info", "", "", nil, "dev", "unknown"},
		{"stamped by the release build", "v2.0.0", "feedface", info("(devel)", rev), "v2.0.0", "feedface"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, r := buildVersion(c.stampedVer, c.stampedRev, c.bi)
			if v != c.wantVer || r != c.wantRev {
				t.Fatalf("buildVersion = %q, %q; want %q, %q", v, r, c.wantVer, c.wantRev)
			}
		})
	}
}
