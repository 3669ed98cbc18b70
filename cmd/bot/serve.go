package main

import (
	"context"
	"fmt"
	"io"
)

// runServe starts the GitHub App webhook server.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fmt.Fprintln(stderr, "serve: the App server is not wired into the binary in this build (see docs/app.md)")
	return 2
}
