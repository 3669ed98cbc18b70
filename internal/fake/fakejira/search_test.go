package fakejira

import (
	"strings"
	"testing"
)

func TestParseJQL(t *testing.T) {
	tests := []struct {
		jql      string
		want     []clause
		wantDesc bool
		wantErr  string
	}{
		{jql: `project = PROJ AND labels in ("a", 'b') ORDER BY key ASC`,
			want: []clause{{"project", []string{"PROJ"}}, {"labels", []string{"a", "b"}}}},
		{jql: `key in (PROJ-1) order by created desc`, want: []clause{{"key", []string{"PROJ-1"}}}, wantDesc: true},
		{jql: `labels = "with \"quote\""`, want: []clause{{"labels", []string{`with "quote"`}}}},
		{jql: `labels = "order"`, want: []clause{{"labels", []string{"order"}}}},
		{jql: `summary ~ x`, wantErr: "Field 'summary' does not exist"},
		{jql: `labels in (a b)`, wantErr: "Expecting ',' or ')'"},
		{jql: `labels = a OR labels = b`, wantErr: "Expecting either 'OR' or 'AND'"},
		{jql: `labels =`, wantErr: "Expecting more input"},
	}
	for _, tc := range tests {
		t.Run(tc.jql, func(t *testing.T) {
			q, err := parseJQL(tc.jql)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || q.desc != tc.wantDesc || len(q.clauses) != len(tc.want) {
				t.Fatalf("parseJQL = %+v, %v", q, err)
			}
			for i, c := range q.clauses {
				if c.field != tc.want[i].field || strings.Join(c.values, "|") != strings.Join(tc.want[i].values, "|") {
					t.Fatalf("clause %d = %+v, want %+v", i, c, tc.want[i])
				}
			}
		})
	}
}

func FuzzParseJQL(f *testing.F) {
	for _, s := range []string{`project = P AND labels in ("a", "b") ORDER BY key`, `key in (P-1, P-2)`, `labels = "x\"`, `(((`, `order by`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, jql string) {
		q, err := parseJQL(jql)
		if err != nil {
			return
		}
		for _, c := range q.clauses {
			if len(c.values) == 0 {
				t.Fatalf("clause without values: %+v from %q", c, jql)
			}
			known := false
			for _, f := range jqlFields {
				known = known || f == c.field
			}
			if !known {
				t.Fatalf("unknown field %q accepted", c.field)
			}
		}
	})
}
