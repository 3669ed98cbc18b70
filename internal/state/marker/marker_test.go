package marker

import (
	"strings"
	"testing"
)

func TestBuild(t *testing.T) {
	for _, tc := range []struct {
		kind string
		args []string
		want string
	}{
		{State, nil, "<!-- autopilot:state -->"},
		{Reply, []string{"42"}, "<!-- autopilot:reply 42 -->"},
		{Gate, []string{"g3-approval"}, "<!-- autopilot:gate g3-approval -->"},
		{"done", []string{"12-7"}, "<!-- autopilot:done 12-7 -->"},
		{Task, []string{"autopilot-12-01", "parent=12", "kind=task"}, "<!-- autopilot:task autopilot-12-01 parent=12 kind=task -->"},
	} {
		if got := Build(tc.kind, tc.args...); got != tc.want {
			t.Errorf("Build(%q, %q) = %q, want %q", tc.kind, tc.args, got, tc.want)
		}
	}
	if Start(Notice) != "<!-- autopilot:notice " {
		t.Errorf("Start(notice) = %q", Start(Notice))
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		line, kind, args string
		ok               bool
	}{
		{"<!-- autopilot:state -->", "state", "", true},
		{"<!-- autopilot:reply 42 -->", "reply", "42", true},
		{"<!-- autopilot:decisions 1-50 -->", "decisions", "1-50", true},
		{"<!-- autopilot:task k parent=3 kind=epic -->", "task", "k parent=3 kind=epic", true},
		{"<!-- autopilot:state", "", "", false},
		{"<!-- autopilot: -->", "", "", false},
		{"<!-- autopilot:State -->", "", "", false},
		{"<!-- autopilot:reply 4 --> -->", "", "", false},
		{"<!-- autopilot:reply 4\n -->", "", "", false},
		{" <!-- autopilot:state -->", "", "", false},
		{"<!-- autopilotstate -->", "", "", false},
		{"plain text", "", "", false},
	} {
		kind, args, ok := Parse(tc.line)
		if kind != tc.kind || args != tc.args || ok != tc.ok {
			t.Errorf("Parse(%q) = %q, %q, %v; want %q, %q, %v", tc.line, kind, args, ok, tc.kind, tc.args, tc.ok)
		}
	}
	if a, ok := Args("<!-- autopilot:reply 42 -->", Reply); !ok || a != "42" {
		t.Errorf("Args(reply) = %q, %v", a, ok)
	}
	if _, ok := Args("<!-- autopilot:notice 42 -->", Reply); ok {
		t.Error("Args took a notice for a reply")
	}
}

// FuzzParse: whatever Parse accepts, Build gives back unchanged, and the
// kind is never empty.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"<!-- autopilot:state -->", "<!-- autopilot:reply 42 -->", "<!-- autopilot:gate g1-a -->", "<!-- autopilot: -->", "<!-- autopilot:x  -->", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		kind, args, ok := Parse(line)
		if !ok {
			return
		}
		if kind == "" || strings.Contains(args, "-->") || strings.ContainsAny(args, "\r\n") {
			t.Fatalf("Parse(%q) = %q, %q", line, kind, args)
		}
		var back string
		if args == "" && !strings.HasSuffix(line, " "+Suffix) {
			back = Build(kind)
		} else {
			back = Build(kind, args)
		}
		if back != line {
			t.Fatalf("Build(Parse(%q)) = %q", line, back)
		}
	})
}
