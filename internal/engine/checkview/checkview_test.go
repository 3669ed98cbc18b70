package checkview

import (
	"strings"
	"testing"

	"github.com/autopilot-dev/autopilot/internal/access"
	"github.com/autopilot-dev/autopilot/internal/config"
	"github.com/autopilot-dev/autopilot/internal/flow"
	"github.com/autopilot-dev/autopilot/internal/state"
)

const head = "1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

func testConfig() *config.Config {
	return &config.Config{All: flow.Set{
		"feature": {Name: "feature", Steps: []flow.Step{
			{Slug: "plan", Name: "Plan"},
			{Slug: "implement", Name: "Implement", Implements: true},
			{Slug: "review", Name: "Review", Evidence: "review"},
			{Slug: "test", Name: "Test", Evidence: "checks"},
		}},
		"review-loop": {Name: "review-loop", ReviewLoop: true, Steps: []flow.Step{{Slug: "loop", Name: "Loop"}}},
	}}
}

func baseState() *state.State {
	return &state.State{
		Issue: 12, Flow: "feature", Step: 3, Name: "Review", Status: state.InProgress, Run: state.RunInProgress, Cycle: 1,
		PRChecks: []state.PRCheck{
			{PR: 5, Head: head, Trusted: true},
			{PR: 6, Head: "2222222", Trusted: false},
			{PR: 7, Head: "", Trusted: true},
		},
	}
}

func gate(n int) *state.Gate {
	g := &state.Gate{ID: "g3-decide-something", Title: "DECISION REQUIRED: pick one"}
	for i := 0; i < n; i++ {
		l := string(rune('A' + i))
		g.Options = append(g.Options, state.Option{Letter: l, Text: "option " + l + " with a rather long text"})
	}
	return g
}

// passGate records the merge gate step ("review": the step after the last
// implementation step) as completed in the current cycle on gateHead.
func passGate(s *state.State, gateHead string) {
	s.Completed = append(s.Completed, state.CompletedStep{Step: 3, Slug: "review", Cycle: s.Cycle})
	s.PRChecks[0].GateHead = gateHead
}

func TestDesiredChecksOnlyTrustedWithHead(t *testing.T) {
	cs := DesiredChecks(testConfig(), access.Write, baseState(), CheckOptions{})
	if len(cs) != 1 || cs[0].PR != 5 || cs[0].HeadSHA != head {
		t.Fatalf("checks = %+v, want one on PR 5's head", cs)
	}
	c := cs[0]
	if c.Name != config.DefaultCheckName || c.ExternalID != "autopilot#12" {
		t.Errorf("name %q external id %q", c.Name, c.ExternalID)
	}
	if DesiredChecks(testConfig(), access.Write, nil, CheckOptions{}) != nil {
		t.Error("a nil state wants checks")
	}
	cfg := testConfig()
	cfg.CheckName = "gatekeeper"
	if got := DesiredChecks(cfg, access.Write, baseState(), CheckOptions{})[0].Name; got != "gatekeeper" {
		t.Errorf("configured check name: %q", got)
	}
}

func TestDesiredCheckConclusion(t *testing.T) {
	cases := []struct {
		name       string
		cfg        func(c *config.Config)
		edit       func(s *state.State)
		status     string
		conclusion string
		title      string // substring
		waiting    string // substring
	}{
		{name: "active review step", status: CheckInProgress, title: "In progress: Review", waiting: "approving review of the PR's head by someone other than its author with at least write"},
		{name: "active checks step", edit: func(s *state.State) { s.Step, s.Name = 4, "Test" }, status: CheckInProgress, waiting: "green checks"},
		{name: "active plain step", edit: func(s *state.State) { s.Step, s.Name = 1, "Plan" }, status: CheckInProgress, waiting: "executor's report on Plan"},
		{name: "awaiting decision", edit: func(s *state.State) { s.Run, s.Gate = state.RunAwaitingDecision, gate(2) }, status: CheckCompleted, conclusion: CheckActionRequired, title: "DECISION REQUIRED", waiting: "an answer (A, B) from someone with at least write"},
		{name: "failed with a gate", edit: func(s *state.State) { s.Run, s.Gate = state.RunFailed, gate(1) }, status: CheckCompleted, conclusion: CheckActionRequired},
		{name: "gate open but run in progress", edit: func(s *state.State) { s.Gate = gate(1) }, status: CheckInProgress},
		{name: "failed without a gate", edit: func(s *state.State) { s.Run = state.RunFailed }, status: CheckCompleted, conclusion: CheckFailure, title: "The run failed"},
		{name: "stopped", edit: func(s *state.State) { s.Run, s.Stop = state.RunStopped, &state.Stop{Reason: "kill-switch"} }, status: CheckCompleted, conclusion: CheckFailure, title: "The run stopped: kill-switch", waiting: "/autopilot resume"},
		{name: "done without the merge gate", edit: func(s *state.State) { s.Run, s.Step = state.RunDone, 0 }, status: CheckCompleted, conclusion: CheckNeutral},
		{name: "merge gate passed on this head", edit: func(s *state.State) { passGate(s, head) }, status: CheckCompleted, conclusion: CheckSuccess, title: "Merge gate passed"},
		{name: "done after passing on this head", edit: func(s *state.State) { passGate(s, head); s.Run = state.RunDone }, status: CheckCompleted, conclusion: CheckSuccess},
		{name: "merge gate passed on an earlier head", edit: func(s *state.State) { passGate(s, "0000000old") }, status: CheckCompleted, conclusion: CheckFailure, title: "Not reviewed", waiting: "`/autopilot back review`"},
		{name: "earlier head, keep stale approvals", cfg: func(c *config.Config) { c.KeepStaleApprovals = true }, edit: func(s *state.State) { passGate(s, "0000000old") }, status: CheckCompleted, conclusion: CheckSuccess},
		{name: "merge gate passed in an earlier cycle", edit: func(s *state.State) { passGate(s, head); s.Completed[0].Cycle = 0 }, status: CheckInProgress},
		{name: "configured merge gate not yet passed", cfg: func(c *config.Config) { c.MergeGate = "test" }, edit: func(s *state.State) { passGate(s, head) }, status: CheckInProgress},
		{name: "decision beats a passed gate", edit: func(s *state.State) { passGate(s, head); s.Run, s.Gate = state.RunAwaitingDecision, gate(2) }, status: CheckCompleted, conclusion: CheckActionRequired},
		{name: "review loop clean on this head", edit: func(s *state.State) {
			s.Flow, s.Step, s.Name = "review-loop", 1, "Loop"
			s.Review = &state.ReviewLoop{ReviewVerdict: &state.Verdict{Clean: true, Evidence: review9}, QAVerdict: &state.Verdict{Skipped: true}, Handoffs: map[string]state.Handoff{"review": {Links: []string{review9}, Review: 9, HeadSHA: head}}}
		}, status: CheckCompleted, conclusion: CheckSuccess},
		{name: "review loop clean on another head", edit: func(s *state.State) {
			s.Flow, s.Step, s.Name = "review-loop", 1, "Loop"
			s.Review = &state.ReviewLoop{ReviewVerdict: &state.Verdict{Clean: true, Evidence: review9}, QAVerdict: &state.Verdict{Clean: true}, Handoffs: map[string]state.Handoff{"review": {Links: []string{review9}, Review: 9, HeadSHA: "0000000old"}}}
		}, status: CheckCompleted, conclusion: CheckFailure, waiting: "a review of this head (1111111)"},
		{name: "review loop QA not clean", edit: func(s *state.State) {
			s.Flow, s.Step, s.Name = "review-loop", 1, "Loop"
			s.Review = &state.ReviewLoop{ReviewVerdict: &state.Verdict{Clean: true, Evidence: review9}, QAVerdict: &state.Verdict{}, Handoffs: map[string]state.Handoff{"review": {Links: []string{review9}, Review: 9, HeadSHA: head}}}
		}, status: CheckInProgress},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig()
			if c.cfg != nil {
				c.cfg(cfg)
			}
			s := baseState()
			if c.edit != nil {
				c.edit(s)
			}
			cs := DesiredChecks(cfg, access.Write, s, CheckOptions{})
			if len(cs) != 1 {
				t.Fatalf("%d checks", len(cs))
			}
			got := cs[0]
			if got.Status != c.status || got.Conclusion != c.conclusion {
				t.Fatalf("status %q conclusion %q (title %q), want %q %q", got.Status, got.Conclusion, got.Title, c.status, c.conclusion)
			}
			if !strings.Contains(got.Title, c.title) {
				t.Errorf("title %q does not contain %q", got.Title, c.title)
			}
			if !strings.Contains(got.Waiting, c.waiting) {
				t.Errorf("waiting %q does not contain %q", got.Waiting, c.waiting)
			}
			if (got.Conclusion == CheckActionRequired) != (got.Gate != "") {
				t.Errorf("gate %q with conclusion %q", got.Gate, got.Conclusion)
			}
		})
	}
}

func TestDesiredCheckButtons(t *testing.T) {
	s := baseState()
	s.Run, s.Gate = state.RunAwaitingDecision, gate(4)
	if c := DesiredChecks(testConfig(), access.Write, s, CheckOptions{})[0]; len(c.Actions) != 0 {
		t.Errorf("buttons without the Buttons option: %+v", c.Actions)
	}
	c := DesiredChecks(testConfig(), access.Write, s, CheckOptions{Buttons: true})[0]
	if len(c.Actions) != MaxCheckActions {
		t.Fatalf("%d actions, want %d", len(c.Actions), MaxCheckActions)
	}
	for i, a := range c.Actions {
		l := string(rune('A' + i))
		if a.Identifier != "g3."+l {
			t.Errorf("action %d identifier %q", i, a.Identifier)
		}
		if n := len([]rune(a.Label)); n > 20 || !strings.HasPrefix(a.Label, l+": ") {
			t.Errorf("action %d label %q (%d runes)", i, a.Label, n)
		}
		if len([]rune(a.Description)) > 40 || len([]rune(a.Identifier)) > 20 {
			t.Errorf("action %d too long: %+v", i, a)
		}
	}
	if !strings.Contains(c.Waiting, "A, B, C, D") {
		t.Errorf("waiting %q does not name all four letters", c.Waiting)
	}
}

func TestHash(t *testing.T) {
	s := baseState()
	s.Run, s.Gate = state.RunAwaitingDecision, gate(3)
	a := DesiredChecks(testConfig(), access.Write, s, CheckOptions{Buttons: true})[0]
	b := DesiredChecks(testConfig(), access.Write, baseStateWith(func(s *state.State) { s.Run, s.Gate = state.RunAwaitingDecision, gate(3) }), CheckOptions{Buttons: true})[0]
	if a.Hash() != b.Hash() {
		t.Fatalf("equal checks hash differently: %s %s", a.Hash(), b.Hash())
	}
	if len(a.Hash()) != 16 {
		t.Errorf("hash %q is not 16 hex digits", a.Hash())
	}
	edits := map[string]func(c *CheckRun){
		"pr":          func(c *CheckRun) { c.PR++ },
		"head":        func(c *CheckRun) { c.HeadSHA = "x" },
		"name":        func(c *CheckRun) { c.Name = "x" },
		"status":      func(c *CheckRun) { c.Status = CheckInProgress },
		"conclusion":  func(c *CheckRun) { c.Conclusion = CheckSuccess },
		"title":       func(c *CheckRun) { c.Title += "!" },
		"banner":      func(c *CheckRun) { c.Banner += "!" },
		"step":        func(c *CheckRun) { c.Step += "!" },
		"waiting":     func(c *CheckRun) { c.Waiting += "!" },
		"gate":        func(c *CheckRun) { c.Gate = "g4" },
		"external id": func(c *CheckRun) { c.ExternalID = ExternalID(13) },
		"action label": func(c *CheckRun) {
			c.Actions = append([]CheckAction(nil), c.Actions...)
			c.Actions[0].Label = "x"
		},
		"action dropped": func(c *CheckRun) { c.Actions = c.Actions[:2] },
		// field boundaries are kept: moving text from one field to the next is a change
		"shifted text": func(c *CheckRun) { c.Step, c.Waiting = c.Step+c.Waiting[:1], c.Waiting[1:] },
	}
	for name, edit := range edits {
		c := a
		edit(&c)
		if c.Hash() == a.Hash() {
			t.Errorf("%s: hash unchanged", name)
		}
	}
}

func baseStateWith(f func(s *state.State)) *state.State {
	s := baseState()
	f(s)
	return s
}

func TestSummary(t *testing.T) {
	s := baseState()
	s.Run, s.Gate = state.RunAwaitingDecision, gate(2)
	c := DesiredChecks(testConfig(), access.Write, s, CheckOptions{Buttons: true})[0]
	links := CheckLinks{State: "https://example.test/state", Choose: "https://example.test/choose"}
	sum := c.Summary(links)
	if sum != c.Summary(links) {
		t.Fatal("summary is not stable")
	}
	for _, want := range []string{"**" + c.Title + "**", "- Current step: Review", "- Waiting for: " + c.Waiting, "- Open question: https://example.test/choose", "- State: https://example.test/state", "with a button above", "```\n"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	before := c.Hash()
	_ = c.Summary(CheckLinks{State: "https://example.test/other"})
	if c.Hash() != before {
		t.Error("rendering the summary changed the hash")
	}

	c.Actions = nil
	sum = c.Summary(CheckLinks{})
	if !strings.Contains(sum, "Answer on the issue with the option's letter") || strings.Contains(sum, "button") {
		t.Errorf("gate without buttons:\n%s", sum)
	}
	if strings.Contains(sum, "Open question") || strings.Contains(sum, "- State:") {
		t.Errorf("summary links pages it was not given:\n%s", sum)
	}

	p := DesiredChecks(testConfig(), access.Write, baseState(), CheckOptions{Buttons: true})[0]
	if sum := p.Summary(CheckLinks{}); strings.Contains(sum, "Answer") {
		t.Errorf("in-progress check asks for an answer:\n%s", sum)
	}
}

func TestExternalID(t *testing.T) {
	for _, n := range []int{1, 12, 99999} {
		got, ok := IssueOfExternalID(ExternalID(n))
		if !ok || got != n {
			t.Errorf("round trip of %d: %d %v", n, got, ok)
		}
	}
	for _, bad := range []string{"", "12", "autopilot#", "autopilot#0", "autopilot#-3", "autopilot#x", "other#12", "autopilot#12 "} {
		if n, ok := IssueOfExternalID(bad); ok {
			t.Errorf("IssueOfExternalID(%q) = %d, true", bad, n)
		}
	}
}

func TestGateToken(t *testing.T) {
	cases := map[string]string{
		"g3-decide-something":    "g3",
		"g12":                    "g12",
		"g1234567890123456789-x": "g123456789012345",
	}
	for id, want := range cases {
		if got := GateToken(id); got != want {
			t.Errorf("GateToken(%q) = %q, want %q", id, got, want)
		}
		if len(GateToken(id))+2 > 20 {
			t.Errorf("GateToken(%q) leaves no room for a letter in 20 characters", id)
		}
	}
}

func TestMergeGateStep(t *testing.T) {
	cfg := testConfig()
	if got := MergeGateStep(cfg, "feature"); got != "review" {
		t.Errorf("default merge gate %q, want the step after the last implementation step", got)
	}
	cfg.MergeGate = "test"
	if got := MergeGateStep(cfg, "feature"); got != "test" {
		t.Errorf("configured merge gate %q", got)
	}
	cfg.MergeGate = "absent"
	if got := MergeGateStep(cfg, "feature"); got != "review" {
		t.Errorf("merge gate missing from the flow: %q", got)
	}
	if got := MergeGateStep(cfg, "review-loop"); got != "" {
		t.Errorf("flow without implementation step: %q", got)
	}
	if MergeGateStep(nil, "feature") != "" || MergeGateStep(cfg, "nope") != "" {
		t.Error("nil config or unknown flow has a merge gate")
	}
}

// TestMergeGateReadsTheHandoffTheVerdictRestsOn: with more than one
// handoff carrying a review (a custom review loop with two review steps,
// or an older approval), the review loop's gate is judged on the head of
// the approval the review verdict cites, whatever the map's order.
func TestMergeGateReadsTheHandoffTheVerdictRestsOn(t *testing.T) {
	const old, cur = "0000000old", "1111111new"
	s := baseState()
	s.Flow, s.Run = "review-loop", state.RunDone
	s.PRChecks = []state.PRCheck{{PR: 5, Head: cur, Trusted: true}}
	s.Review = &state.ReviewLoop{
		ReviewVerdict: &state.Verdict{Clean: true, Evidence: "https://example.test/pull/5#pullrequestreview-2"},
		QAVerdict:     &state.Verdict{Clean: true, Evidence: "https://example.test/pull/5/checks"},
		Handoffs: map[string]state.Handoff{
			"a-review": {Links: []string{"https://example.test/pull/5#pullrequestreview-1"}, PR: 5, HeadSHA: old, Review: 1},
			"b-review": {Links: []string{"https://example.test/pull/5#pullrequestreview-2"}, PR: 5, HeadSHA: cur, Review: 2},
			"c-review": {Links: []string{"https://example.test/pull/5#pullrequestreview-3"}, PR: 5, HeadSHA: old, Review: 3},
			"qa":       {Links: []string{"https://example.test/pull/5/checks"}, PR: 5, HeadSHA: cur, Checks: []int64{9}},
		},
	}
	for i := 0; i < 64; i++ {
		if c := DesiredChecks(testConfig(), access.Write, s, CheckOptions{}); c[0].Conclusion != CheckSuccess {
			t.Fatalf("try %d: conclusion %s (%q), want success: the verdict rests on review 2 at %s", i, c[0].Conclusion, c[0].Title, cur)
		}
	}
	s.Review.ReviewVerdict.Evidence = "https://example.test/pull/5#pullrequestreview-1"
	if c := DesiredChecks(testConfig(), access.Write, s, CheckOptions{}); c[0].Conclusion != CheckFailure {
		t.Errorf("conclusion %s, want failure: the verdict rests on review 1 at %s", c[0].Conclusion, old)
	}
}

// review9 is the link of the approving review 9 a review verdict cites.
const review9 = "https://github.com/acme/widgets/pull/5#pullrequestreview-9"

// TestOwnExternalID: the external_ids the bot gives its check runs, and
// nothing else, are its own; a queue check's names no issue.
func TestOwnExternalID(t *testing.T) {
	for s, want := range map[string]bool{
		ExternalID(12): true, QueueExternalID(40): true,
		"": false, "autopilot#": false, "autopilot#0": false, "autopilot-queue#x": false, "0000040f-0000-4000-8000-00000000040f": false,
	} {
		if got := OwnExternalID(s); got != want {
			t.Errorf("OwnExternalID(%q) = %v, want %v", s, got, want)
		}
	}
	if _, ok := IssueOfExternalID(QueueExternalID(40)); ok {
		t.Error("a merge queue check's external_id names an issue")
	}
}
