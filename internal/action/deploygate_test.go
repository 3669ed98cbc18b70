package action

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestDeployGateJobNamesTheMissingFlagOrVariable(t *testing.T) {
	base := map[string]string{"GITHUB_REPOSITORY": "acme/widgets", "GITHUB_SHA": "abc", "GITHUB_RUN_ID": "7", "GITHUB_TOKEN": "t"}
	cases := []struct {
		name string
		args GateArgs
		env  map[string]string
		says string
	}{
		{"no environment", GateArgs{Issue: 3}, nil, "input --environment: empty: name the environment"},
		{"no issue", GateArgs{Environment: "production"}, nil, "input --issue: want the autopilot issue's number"},
		{"no commit", GateArgs{Environment: "production", Issue: 3}, map[string]string{"GITHUB_SHA": ""}, "input GITHUB_SHA: empty"},
		{"bad run id", GateArgs{Environment: "production", Issue: 3}, map[string]string{"GITHUB_RUN_ID": "x"}, `input GITHUB_RUN_ID: "x" is not a run id`},
		{"no token", GateArgs{Environment: "production", Issue: 3}, map[string]string{"GITHUB_TOKEN": ""}, "input github_token: empty: set GITHUB_TOKEN"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			for k, v := range c.env {
				env[k] = v
			}
			var out, errb bytes.Buffer
			code := RunDeployGate(context.Background(), Env{Getenv: func(k string) string { return env[k] }, Stdout: &out, Stderr: &errb}, c.args)
			if code != ExitUsage || !strings.Contains(errb.String(), c.says) {
				t.Fatalf("exit %d, stderr %q; want %d saying %q", code, errb.String(), ExitUsage, c.says)
			}
		})
	}
}
