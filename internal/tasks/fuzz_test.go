package tasks

import (
	"errors"
	"reflect"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
)

// checkParsed holds for every successful parse: tasks are numbered from
// start, titled, of a known kind and in the outbox or already in Jira.
func checkParsed(t *testing.T, got []state.Task, err error, start int) {
	t.Helper()
	if err != nil {
		var pe *Error
		if got != nil || !errors.As(err, &pe) {
			t.Fatalf("error %v with tasks %v (or not an *Error)", err, got)
		}
		return
	}
	for i, tk := range got {
		if tk.ID != ID(max(start, 1)+i) {
			t.Fatalf("task %d has id %q", i, tk.ID)
		}
		if msg := checkTitle(tk.Title); msg != "" {
			t.Fatalf("task %s title %q: %s", tk.ID, tk.Title, msg)
		}
		if tk.Kind != state.KindEpic && tk.Kind != state.KindTask {
			t.Fatalf("task %s kind %q", tk.ID, tk.Kind)
		}
		if tk.Sync != state.SyncPending && tk.Sync != state.SyncCreated {
			t.Fatalf("task %s jira %q", tk.ID, tk.Sync)
		}
		if checkPoints(tk.Points) != "" || (tk.Kind == state.KindEpic && tk.Epic != "") {
			t.Fatalf("task %s: %+v", tk.ID, tk)
		}
	}
}

func FuzzParseComment(f *testing.F) {
	seeds := []string{
		"",
		"```autopilot-tasks\n- title: a\n  points: 3\n  epic: E\n  depends_on: [\"01\"]\n```\n",
		"```autopilot-epics\n- title: E\n  description: |\n    text\n```\n```autopilot-tasks\n- title: t\n  epic: E\n```",
		"````\n```autopilot-tasks\n- title: hidden\n```\n````\n",
		"~~~ autopilot-tasks\n- title: &a x\n- title: *a\n~~~\n",
		"```autopilot-tasks\n- title: a\n---\n- title: b\n```",
		"```autopilot-tasks\n{title: a}\n```",
		"```autopilot-tasks\n- title: a\n  points: .inf\n```",
		"```autopilot-tasks\n- title: a\n  points: 0x10\n```",
		"```autopilot-tasks\n- [title, a]\n```",
		"```autopilot-tasks\n- title: a\n",
		"> ```autopilot-tasks\n> - title: q\n> ```",
	}
	for _, s := range seeds {
		f.Add(s, 1)
	}
	f.Fuzz(func(t *testing.T, body string, start int) {
		if start < -10 || start > 10000 {
			start = 1
		}
		got, err := ParseComment(body, Options{Start: start})
		checkParsed(t, got, err, start)
		again, err2 := ParseComment(body, Options{Start: start})
		if !reflect.DeepEqual(got, again) || (err == nil) != (err2 == nil) {
			t.Fatalf("parse is not deterministic")
		}
	})
}

func FuzzParseFiles(f *testing.F) {
	f.Add("# Title\nEpic: E\nDepends on: 01, 02\nPoints: 2\n\nBody\n", "# Other\nKind: epic\nJira: PROJ-1\n")
	f.Add("no heading", "```\n# in fence\n```\n# Real\n")
	f.Add("# T\n**Points:** 1e3\n", "# U\n- Type: Task\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		got, err := ParseFiles(map[string]string{"_docs/01_a.md": a, "_docs/02_b.md": b, "_docs/x.md": a}, Options{Start: 3})
		checkParsed(t, got, err, 3)
		if err == nil && len(got) != 2 {
			t.Fatalf("%d tasks from 2 task files", len(got))
		}
	})
}
