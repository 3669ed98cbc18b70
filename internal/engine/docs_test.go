package engine

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/doctable"
	"github.com/autopilot-dev/autopilot/internal/engine/events"
	"github.com/autopilot-dev/autopilot/internal/engine/labels"
	"github.com/autopilot-dev/autopilot/internal/state"
)

// TestDocsLabelTableIsLabelColor: every row of the labels.Labels table in
// docs/action.md gives the colour and description labels.LabelColor gives, and
// every kind of label labels.Labels can derive has a row.
func TestDocsLabelTableIsLabelColor(t *testing.T) {
	md, err := doctable.Read("docs/action.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := doctable.Rows(doctable.Section(md, "Labels"))
	seen := map[string]bool{}
	for _, r := range rows {
		name, color := doctable.Code(r[0]), doctable.Code(r[1])
		if len(name) != 1 || len(color) != 1 || len(r) < 3 {
			t.Fatalf("Labels row %q: want | `label` | `#colour` | description |", r)
		}
		// Placeholders become a sample value on both sides.
		label := strings.NewReplacer("<slug>", "plan", "<name>", "greenfield").Replace(name[0])
		desc := strings.NewReplacer("`<slug>`", "plan", "`<name>`", "greenfield").Replace(r[2])
		c, d := labels.LabelColor(label)
		if "#"+c != color[0] || d != desc {
			t.Errorf("docs: %s is %s %q; code: #%s %q", name[0], color[0], desc, c, d)
		}
		seen[label] = true
	}
	for _, l := range []string{"autopilot/status:in-progress", "autopilot/status:awaiting-decision", "autopilot/status:failed",
		"autopilot/status:done", "autopilot/status:stopped", "autopilot/step:plan", "autopilot/flow:greenfield", "autopilot/jira:pending"} {
		if !seen[l] {
			t.Errorf("the labels.Labels table of docs/action.md has no row for %s", l)
		}
	}
}

// blockAfter returns the lines of the first fenced block after marker in md.
func blockAfter(t *testing.T, md, marker string) string {
	t.Helper()
	i := strings.Index(md, marker)
	if i < 0 {
		t.Fatalf("the docs lack %q", marker)
	}
	rest := md[i:]
	start := strings.Index(rest, "```")
	if start < 0 {
		t.Fatalf("no code block after %q", marker)
	}
	rest = rest[start:]
	rest = rest[strings.Index(rest, "\n")+1:]
	return strings.TrimSuffix(rest[:strings.Index(rest, "```")], "\n")
}

// fenced is the part of a posted Choose block inside its ```text fence.
func fenced(body string) string {
	_, in, _ := strings.Cut(body, "```text\n")
	in, _, _ = strings.Cut(in, "```")
	return strings.TrimSuffix(in, "\n")
}

// TestDocsShowTheChooseBlocksAsPosted: the Choose blocks the docs show are
// the ones the engine posts, line for line (wrapping included).
func TestDocsShowTheChooseBlocksAsPosted(t *testing.T) {
	jira, err := doctable.Read("docs/jira.md")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, "")
	h.set.TrackerConfigured = true
	toPlan(t, h)
	res := h.apply(events.TrackerAuth{OK: false, Detail: "Jira authentication failed (HTTP 401): Client must be authenticated to access this resource."})
	if got, doc := fenced(gateBody(t, res.Effects, res.State.Gate)), blockAfter(t, jira, "**Authentication is checked first.**"); got != doc {
		t.Errorf("docs/jira.md shows\n%s\nthe engine posts\n%s", doc, got)
	}

	guide, err := doctable.Read("docs/user-guide.md")
	if err != nil {
		t.Fatal(err)
	}
	h = newHarness(t, "")
	h.runTo("greenfield", "decompose")
	c := h.comment("maria", "write", "/autopilot done tasks")
	for i, title := range []string{"Writer", "Endpoint", "Button", "Escaping", "Docs"} {
		c.Declared = append(c.Declared, state.Task{Kind: state.KindTask, Title: title, Points: []float64{3, 2, 2, 2, 2}[i]})
	}
	res = h.apply(c)
	if got, doc := fenced(gateBody(t, res.Effects, res.State.Gate)), blockAfter(t, guide, "## Answering a Choose block"); got != doc {
		t.Errorf("docs/user-guide.md shows\n%s\nthe engine posts\n%s", doc, got)
	}
}
