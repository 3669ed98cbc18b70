package tasks

import (
	"reflect"
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/state"
)

func TestParseFilesReadsTaskFilesInNumberOrder(t *testing.T) {
	files := map[string]string{
		"_docs/02_tasks/10_invoice_pdf.md": "# Invoice PDF\n\n**Epic:** Billing\n**Depends on**: 02, Login form\n- Points: 2.5\n\nRender invoices.\n",
		"_docs/02_tasks/02_login_form.md":  "# Login form\n\nEpic: 01\nJira: pending\n\nEmail + password.\n\n```\nPoints: 99\n```\n",
		"_docs/02_tasks/01_auth.md":        "# Authentication #\nKind: epic\nJira: PROJ-7\n",
		"_docs/02_tasks/README.md":         "# Not a task\n",
		"_docs/02_tasks/notes_01.md":       "# Not a task either\n",
	}
	got, err := ParseFiles(files, Options{Start: 4, Step: "decompose"})
	if err != nil {
		t.Fatal(err)
	}
	want := []state.Task{
		{ID: "04", Kind: state.KindEpic, Title: "Authentication", Sync: state.SyncCreated, Key: "PROJ-7"},
		{ID: "05", Kind: state.KindTask, Title: "Login form", Epic: "01", Sync: state.SyncPending,
			Description: "Email + password.\n\n```\nPoints: 99\n```"},
		{ID: "06", Kind: state.KindTask, Title: "Invoice PDF", Epic: "Billing", DependsOn: []string{"02", "Login form"},
			Points: 2.5, Sync: state.SyncPending, Description: "Render invoices."},
	}
	for i := range want {
		want[i].Step = "decompose"
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseFilesErrorsNameFileLineAndField(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{"no heading", "Just text\nEpic: x\n", `_docs/03_x.md: missing the "# Title" heading`},
		{"heading inside a fence only", "```\n# Title\n```\n", `_docs/03_x.md: missing the "# Title" heading`},
		{"points not a number", "# T\n\nPoints: lots\n", `_docs/03_x.md line 3: field "Points": want a number`},
		{"negative points", "# T\nPoints: -2\n", `_docs/03_x.md line 2: field "Points": want a number from 0 to 1000`},
		{"bad kind", "# T\nType: saga\n", `_docs/03_x.md line 2: field "Type": want "epic" or "task"`},
		{"bad jira", "# T\nJira: soon\n", `_docs/03_x.md line 2: field "Jira": want "pending" or an issue key such as PROJ-12`},
		{"twice", "# T\nEpic: a\nepic: b\n", `_docs/03_x.md line 3: field "epic": given twice (first on line 2)`},
		{"empty dependency", "# T\nDepends on: 01,,02\n", `_docs/03_x.md line 2: field "Depends on": empty entry in the list`},
		{"epic in an epic", "# T\nKind: epic\nEpic: other\n", `_docs/03_x.md line 3: field "Epic": an epic cannot belong to an epic`},
		{"title too long", "# " + strings.Repeat("y", 300) + "\n", `_docs/03_x.md line 1: field "title": longer than 255 characters`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"_docs/01_ok.md": "# Fine\n", "_docs/03_x.md": tc.content}
			got, err := ParseFiles(files, Options{})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v\nwant   %s", err, tc.want)
			}
			if got != nil {
				t.Fatalf("half-parsed: %+v", got)
			}
		})
	}
}

func TestParseFilesDependsOnNone(t *testing.T) {
	for _, v := range []string{"none", "None", "-", ""} {
		got, err := ParseFiles(map[string]string{"01_a.md": "# A\nDepends on: " + v + "\n"}, Options{})
		if err != nil || len(got) != 1 || got[0].DependsOn != nil {
			t.Fatalf("%q: %+v, %v", v, got, err)
		}
	}
}
