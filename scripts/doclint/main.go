// Command doclint checks the GitHub Actions workflow snippets of the
// Markdown docs (README.md, docs/*.md) with actionlint and shellcheck:
// fragments are wrapped into a workflow first, and every finding names the
// doc and line it came from. .ci/run runs it:
//
//	go run ./scripts/doclint -actionlint PATH -shellcheck PATH
//
// It exits 1 on a finding, 2 when it cannot run.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/autopilot-dev/autopilot/internal/doclint"
)

func main() {
	actionlint := flag.String("actionlint", "actionlint", "path of the actionlint binary")
	shellcheck := flag.String("shellcheck", "shellcheck", "path of the shellcheck binary (actionlint runs it on every run:)")
	root := flag.String("root", ".", "repository root")
	list := flag.Bool("list", false, "print every snippet found and what it is")
	flag.Parse()

	ws, err := doclint.Collect(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "doclint:", err)
		os.Exit(2)
	}
	excerpts := 0
	for _, w := range ws {
		if w.Kind == doclint.Excerpt {
			excerpts++
		}
		if *list {
			of := ""
			if w.Of != "" {
				of = " of " + w.Of
			}
			fmt.Printf("%s:%d: %s%s\n", w.Doc, w.Line, w.Kind, of)
		}
	}
	dir, err := os.MkdirTemp("", "doclint-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "doclint:", err)
		os.Exit(2)
	}
	defer os.RemoveAll(dir)
	found, err := doclint.Lint(ws, dir, *actionlint, *shellcheck)
	if err != nil {
		fmt.Fprintln(os.Stderr, "doclint:", err)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	for _, f := range found {
		fmt.Println(f)
	}
	fmt.Printf("doclint: %d workflow snippets in the docs (%d excerpts of linted workflow files), %d findings\n", len(ws), excerpts, len(found))
	if len(found) > 0 {
		os.RemoveAll(dir)
		os.Exit(1)
	}
}
