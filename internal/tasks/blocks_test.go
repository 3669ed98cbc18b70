package tasks

import (
	"reflect"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/idem"
	"github.com/autopilot-dev/autopilot/internal/state"
)

const ticks = "```"

func TestParseCommentReadsEpicsAndTasksInOrder(t *testing.T) {
	body := "Plan done. Epics:\n\n" +
		ticks + "autopilot-epics\n" +
		"- title: Authentication\n" +
		"  description: Everything about logging in.\n" +
		"- title: Billing\n" +
		ticks + "\n\nAnd the first tasks:\n\n" +
		"~~~~ autopilot-tasks\n" +
		"- title: Login form\n" +
		"  epic: Authentication\n" +
		"  points: 3\n" +
		"  description: |\n" +
		"    Email and password.\n" +
		"    Rate limited.\n" +
		"- title: Invoice PDF\n" +
		"  epic: \"02\"\n" +
		"  depends_on: [\"03\", Login form]\n" +
		"  points: 0.5\n" +
		"- title: 2026 roadmap\n" +
		"  depends_on: 03\n" +
		"~~~~\n"
	got, err := ParseComment(body, Options{Start: 1, Step: "plan", Repo: "octo/repo", Issue: 9})
	if err != nil {
		t.Fatal(err)
	}
	want := []state.Task{
		{ID: "01", Kind: state.KindEpic, Title: "Authentication", Description: "Everything about logging in."},
		{ID: "02", Kind: state.KindEpic, Title: "Billing"},
		{ID: "03", Kind: state.KindTask, Title: "Login form", Epic: "Authentication", Points: 3, Description: "Email and password.\nRate limited."},
		{ID: "04", Kind: state.KindTask, Title: "Invoice PDF", Epic: "02", DependsOn: []string{"03", "Login form"}, Points: 0.5},
		{ID: "05", Kind: state.KindTask, Title: "2026 roadmap", DependsOn: []string{"03"}},
	}
	for i := range want {
		want[i].Step, want[i].Sync = "plan", state.SyncPending
		want[i].IdemKey = idem.Key("octo/repo", 9, want[i].ID)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseCommentNumbersFromStartAndIgnoresOtherText(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		start   int
		wantIDs []string
	}{
		{"no blocks", "Just a report.\n```go\nfmt.Println(1)\n```\n", 1, nil},
		{"empty block", ticks + "autopilot-tasks\n" + ticks + "\n", 1, nil},
		{"null block", ticks + "autopilot-tasks\n~\n" + ticks + "\n", 1, nil},
		{"continues numbering", ticks + "autopilot-tasks\n- title: a\n- title: b\n" + ticks, 7, []string{"07", "08"}},
		{"past 99", ticks + "autopilot-tasks\n- title: a\n- title: b\n" + ticks, 99, []string{"99", "100"}},
		{"start below one", ticks + "autopilot-tasks\n- title: a\n" + ticks, 0, []string{"01"}},
		{"example inside a longer ticks is skipped", "````md\n" + ticks + "autopilot-tasks\n- title: nope\n" + ticks + "\n````\n", 1, nil},
		{"quoted block is skipped", "> " + ticks + "autopilot-tasks\n> - title: nope\n> " + ticks + "\n", 1, nil},
		{"indented ticks is dedented", "   " + ticks + "autopilot-tasks\n   - title: a\n   " + ticks + "\n", 1, []string{"01"}},
		{"CRLF line ends", ticks + "autopilot-tasks\r\n- title: a\r\n" + ticks + "\r\n", 1, []string{"01"}},
		{"info string with extra words", ticks + "autopilot-tasks yaml\n- title: a\n" + ticks, 1, []string{"01"}},
		{"other info string is not ours", ticks + "autopilot-tasksx\n- title: a\n" + ticks, 1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseComment(tc.body, Options{Start: tc.start})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, tk := range got {
				ids = append(ids, tk.ID)
			}
			if !reflect.DeepEqual(ids, tc.wantIDs) {
				t.Fatalf("ids %v, want %v", ids, tc.wantIDs)
			}
		})
	}
}

func TestParseCommentErrorsNameLineAndField(t *testing.T) {
	tasks := func(lines ...string) string {
		return "Report\n" + ticks + "autopilot-tasks\n" + strings.Join(lines, "\n") + "\n" + ticks + "\n"
	}
	tests := []struct {
		name string
		body string
		want string
	}{
		{"points not a number", tasks("- title: a", "  epic: E", "- title: b", "  points: three"),
			`autopilot-tasks line 4: field "points": want a number`},
		{"points quoted", tasks(`- title: a`, `  points: "3"`), `autopilot-tasks line 2: field "points": want a number`},
		{"negative points", tasks("- title: a", "  points: -1"), `autopilot-tasks line 2: field "points": want a number from 0 to 1000`},
		{"unknown field", tasks("- title: a", "  priority: high"),
			`autopilot-tasks line 2: unknown field "priority" (known: title, description, epic, depends_on, points)`},
		{"missing title", tasks("- title: a", "- description: no title"), `autopilot-tasks line 2: field "title": required`},
		{"empty title", tasks("- title: \"  \""), `autopilot-tasks line 1: field "title": required`},
		{"title too long", tasks("- title: " + strings.Repeat("x", 256)), `autopilot-tasks line 1: field "title": longer than 255 characters`},
		{"title not text", tasks("- title: [a, b]"), `autopilot-tasks line 1: field "title": want text`},
		{"multi-line title", tasks("- title: |", "    two", "    lines"), `autopilot-tasks line 1: field "title": must be one line`},
		{"duplicate field", tasks("- title: a", "  title: b"), `autopilot-tasks line 2: field "title": given twice`},
		{"not a list", tasks("title: a"), `autopilot-tasks line 1: want a YAML list of items ("- title: ...")`},
		{"item not a mapping", tasks("- just text"), `autopilot-tasks line 1: item 1: want a mapping with at least a title`},
		{"depends_on not a list of names", tasks("- title: a", "  depends_on: {x: 1}"), `autopilot-tasks line 2: field "depends_on": want a list of task titles or ids`},
		{"alias", tasks("- title: &t a", "- title: *t"), `autopilot-tasks line 1: YAML anchors and aliases are not allowed`},
		{"yaml syntax", tasks("- title: a", "  points: b: c"), `autopilot-tasks line 2: mapping values are not allowed in this context`},
		{"two documents", tasks("- title: a", "---", "- title: b"), `autopilot-tasks line 2: want one YAML list per block (found a second document)`},
		{"epic inside an epic", ticks + "autopilot-epics\n- title: E\n  epic: F\n" + ticks,
			`autopilot-epics line 2: field "epic": an epic cannot belong to an epic`},
		{"duplicate epic", ticks + "autopilot-epics\n- title: Auth\n" + ticks + "\n" + ticks + "autopilot-epics\n- title: auth\n" + ticks,
			`autopilot-epics (block 2) line 1: field "title": epic "auth" is already declared (autopilot-epics line 1)`},
		{"task depends on its own epic", ticks + "autopilot-epics\n- title: Auth\n" + ticks + "\n" + tasks("- title: login", "  epic: Auth", "  depends_on: [auth]"),
			`autopilot-tasks line 1: field "depends_on": task "login" depends on its own epic "Auth"; an epic is done when its tasks are, so the task could never start: depend on tasks, not on their epic`},
		{"task depends on its own epic by id", ticks + "autopilot-epics\n- title: Auth\n" + ticks + "\n" + tasks("- title: login", "  epic: \"01\"", "  depends_on: [Auth]"),
			`autopilot-tasks line 1: field "depends_on": task "login" depends on its own epic "01"; an epic is done when its tasks are, so the task could never start: depend on tasks, not on their epic`},
		{"unclosed block", "x\n" + ticks + "autopilot-tasks\n- title: a\n", `autopilot-tasks: block is not closed (its opening fence is on comment line 2)`},
		{"second block names its number", tasks("- title: a") + tasks("- title: b", "  points: x"),
			`autopilot-tasks (block 2) line 2: field "points": want a number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseComment(tc.body, Options{Start: 1})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v\nwant   %s", err, tc.want)
			}
			if got != nil {
				t.Fatalf("half-parsed tasks returned: %+v", got)
			}
		})
	}
}

func TestParseCommentRefusesTooManyItems(t *testing.T) {
	var b strings.Builder
	b.WriteString(ticks + "autopilot-tasks\n")
	for range MaxItems + 1 {
		b.WriteString("- title: t\n")
	}
	b.WriteString(ticks + "\n")
	if _, err := ParseComment(b.String(), Options{}); err == nil || !strings.Contains(err.Error(), "more than 500") {
		t.Fatalf("err = %v", err)
	}
}
