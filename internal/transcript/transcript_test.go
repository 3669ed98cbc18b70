package transcript

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiffShowsChangedLinesWithContext(t *testing.T) {
	want := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj"
	got := "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk"
	d := Diff(want, got)
	wantDiff := "@@ -2 +2 @@\n b\n c\n-d\n+D\n e\n f\n" +
		"@@ -9 +9 @@\n i\n j\n+k\n"
	if d != wantDiff {
		t.Errorf("Diff =\n%s\nwant\n%s", d, wantDiff)
	}
}

func TestDiffOfEqualTextsIsEmpty(t *testing.T) {
	if d := Diff("x\ny", "x\ny"); d != "" {
		t.Errorf("Diff of equal texts = %q", d)
	}
}

func TestDiffAlignsMovedAndRemovedLines(t *testing.T) {
	cases := []struct{ want, got, diff string }{
		{"one", "", "@@ -1 +1 @@\n-one\n+\n"},
		{"x\ny\nz", "x\nz", "@@ -1 +1 @@\n x\n-y\n z\n"},
		{"x\nz", "x\ny\nz", "@@ -1 +1 @@\n x\n+y\n z\n"},
		{"a\nb\nc", "c\nb\na", "@@ -1 +1 @@\n-a\n-b\n c\n+b\n+a\n"},
	}
	for _, c := range cases {
		if d := Diff(c.want, c.got); d != c.diff {
			t.Errorf("Diff(%q, %q) =\n%s\nwant\n%s", c.want, c.got, d, c.diff)
		}
	}
}

// TestDiffOfLargeTextsFallsBack: past maxCells the middle is shown whole,
// still every line once.
func TestDiffOfLargeTextsFallsBack(t *testing.T) {
	var a, b []string
	for i := 0; i < 2100; i++ {
		a = append(a, "a"+strings.Repeat("x", i%7))
		b = append(b, "b"+strings.Repeat("x", i%7))
	}
	d := Diff(strings.Join(a, "\n"), strings.Join(b, "\n"))
	if n := strings.Count(d, "\n-"); n != 2100 {
		t.Errorf("%d removed lines, want 2100", n)
	}
	if n := strings.Count(d, "\n+"); n != 2100 {
		t.Errorf("%d added lines, want 2100", n)
	}
}

const sample = `# a comment

start flow=greenfield actor=maria
----
state: v1
writes: 2

# the next case has input and no output yet
comment maria perm=write
/autopilot done

with a blank line
----

tick
----
nothing
# trailing
`

func TestParseReadsCasesAndRoundTrips(t *testing.T) {
	f, err := Parse(sample)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 3 {
		t.Fatalf("%d cases, want 3", len(f.Cases))
	}
	c := f.Cases[0]
	if c.Cmd != "start" || c.Line != 3 || c.Or("flow", "") != "greenfield" || c.Or("actor", "") != "maria" || c.Want != "state: v1\nwrites: 2" {
		t.Errorf("case 0 = %+v", c)
	}
	c = f.Cases[1]
	if c.Cmd != "comment" || !c.Has("maria") || c.Input != "/autopilot done\n\nwith a blank line" || c.Want != "" {
		t.Errorf("case 1 = %+v", c)
	}
	if f.Cases[2].Want != "nothing\n# trailing" {
		t.Errorf("case 2 output = %q", f.Cases[2].Want)
	}
	if got := f.String(); got != sample {
		t.Errorf("round trip:\n%s", Diff(sample, got))
	}
}

func TestParseRefusesADirectiveWithoutSeparator(t *testing.T) {
	if _, err := Parse("tick\nstate\n"); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("err = %v, want one naming line 1", err)
	}
}

func TestCleanKeepsCasesApart(t *testing.T) {
	if got := Clean("a  \n\nb\n\n"); got != "a\n.\nb" {
		t.Errorf("Clean = %q", got)
	}
}

// TestRunUpdatesThenPasses: -update writes the outputs; a second run
// without it passes, and a changed output fails.
func TestRunUpdatesThenPasses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.txt")
	if err := os.WriteFile(path, []byte("echo x\n----\n\necho y z\n----\nstale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	echo := func(c *Case) string {
		var ws []string
		for _, a := range c.Args {
			ws = append(ws, a.Key)
		}
		return strings.Join(ws, "\n\n")
	}
	Run(t, path, true, echo)
	b, _ := os.ReadFile(path)
	if want := "echo x\n----\nx\n\necho y z\n----\ny\n.\nz\n"; string(b) != want {
		t.Fatalf("updated file:\n%s", Diff(want, string(b)))
	}
	Run(t, path, false, echo)
	var rec recorder
	Run(&rec, path, false, func(c *Case) string { return "changed" })
	if len(rec.errs) != 2 || !strings.Contains(rec.errs[0], "t.txt:1: echo") || !strings.Contains(rec.errs[0], "-x\n+changed") {
		t.Errorf("errors for changed outputs = %q", rec.errs)
	}
}

// TestDiffMergesNearbyChanges: changes at most four lines apart share a
// hunk.
func TestDiffMergesNearbyChanges(t *testing.T) {
	d := Diff("a\nb\nc\nd\ne\nf", "A\nb\nc\nd\ne\nF")
	if want := "@@ -1 +1 @@\n-a\n+A\n b\n c\n d\n e\n-f\n+F\n"; d != want {
		t.Errorf("Diff =\n%s\nwant\n%s", d, want)
	}
}

// recorder is a T that keeps the failures.
type recorder struct{ errs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(f string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(f, a...))
}
func (r *recorder) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
