package reliability

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Casey writes the pull requests (write access; never a reviewer of them).
const Casey = "casey"

// vocabulary pairs comment bodies with their meaning by PRODUCT.md §7, so
// the oracle never parses a body (TestVocabularyAgreesWithTheGrammar checks
// the pairs against the reply parser).
var (
	chatter = []string{"Looks good to me.", "> A\nAgreed with the quoted answer.", "Thanks, I will check tomorrow.",
		"```\nA\n```\nthat is what the tool printed", "I think A is right, but let's wait for Maria."}
	attempts = []string{"\u0410", "\u0391", "A\u200b", "**A**", "A B", "`A`", "\u202eA", "/autopilotish is not a command"}
	// answerForms renders a letter as a canonical answer.
	answerForms = []func(string) string{
		func(l string) string { return l },
		func(l string) string { return strings.ToLower(l) },
		func(l string) string { return l + ") sounds right" },
		func(l string) string { return "/autopilot choose " + l },
		func(l string) string { return string(rune(0xFF21 + rune(l[0]-'A'))) }, // fullwidth, NFKC → letter
		func(l string) string { return l + ". go" },
	}
)

// gen builds a scenario phase by phase, looking at the oracle's model of
// where the run is (what people would see on the issue).
type gen struct {
	rnd      *rand.Rand
	flow     string
	jira     bool
	prOpen   bool
	labelOff bool
	outage   bool
	fails    map[int]int
	progress map[int]int
	cycles   int
	phases   int
	// maxPhases ends the scenario (a seed's choice, 8 to 12).
	maxPhases int
}

func (g *gen) pick(xs []string) string { return xs[g.rnd.IntN(len(xs))] }

func (g *gen) chance(p float64) bool { return g.rnd.Float64() < p }

func say(who, body string, mean Meaning) Act {
	return Act{Kind: ActSay, Who: who, Body: body, Mean: mean}
}

// noise is a comment that changes nothing whatever its position.
func (g *gen) noise() Act {
	switch g.rnd.IntN(6) {
	case 0:
		return say(g.pick([]string{Maria, Devin, Reader, Stranger}), g.pick(chatter), MeanChatter)
	case 1:
		return say(Maria, g.pick([]string{"/autopilot status", "/autopilot help"}), MeanStatus)
	case 2:
		a := say(g.pick([]string{Reader, Stranger, Tess}), g.pick([]string{"/autopilot done sneaky", "A", "/autopilot stop", "/autopilot skip no"}), MeanDone)
		a.Mean = meaningOf(a.Body)
		return a
	case 3:
		return say(LintBot, g.pick([]string{"A", "/autopilot done from a bot", "/autopilot stop"}), MeanChatter)
	case 4:
		return say(g.pick([]string{Maria, Devin}), g.pick(attempts), MeanAttempt)
	default:
		return say(Reader, g.pick(chatter), MeanChatter)
	}
}

// meaningOf names the meaning of the few command bodies noise reuses.
func meaningOf(body string) Meaning {
	switch {
	case body == "A":
		return MeanAnswer
	case strings.HasPrefix(body, "/autopilot done"):
		return MeanDone
	case strings.HasPrefix(body, "/autopilot stop"):
		return MeanStop
	case strings.HasPrefix(body, "/autopilot skip"):
		return MeanSkip
	}
	return MeanChatter
}

func (g *gen) answer(who, letter string) Act {
	a := say(who, answerForms[g.rnd.IntN(len(answerForms))](letter), MeanAnswer)
	a.Letter = letter
	return a
}

func (g *gen) done(m *model, who string) Act {
	st := m.cur()
	a := say(who, "", MeanDone)
	a.Text = "finished " + st.slug
	if st.interview && g.chance(0.3) {
		a.Text = ""
	}
	a.Body = strings.TrimSpace("/autopilot done " + a.Text)
	if st.declares != "" && g.chance(0.8) {
		a.Tasks = 1 + g.rnd.IntN(3)
		a.TaskPrefix = fmt.Sprintf("P%d-%s", g.phases, st.slug)
		block := "autopilot-tasks"
		if st.declares == "epics" {
			block = "autopilot-epics"
		}
		var items []string
		for i := range a.Tasks {
			items = append(items, "- title: "+TaskTitle(a.TaskPrefix, i))
		}
		a.Body += "\n\n```" + block + "\n" + strings.Join(items, "\n") + "\n```"
	}
	return a
}

// next returns the next phase, or nil when the scenario is over.
func (g *gen) next(m *model) []Act {
	g.phases++
	if g.phases > g.maxPhases && !g.labelOff {
		return nil // a removed label is put back first: a scenario ends managed
	}
	var acts []Act
	switch {
	case m.run == "":
		return []Act{{Kind: ActLabel, Who: Maria, Label: "autopilot"}}
	case g.labelOff:
		g.labelOff = false
		return []Act{{Kind: ActLabel, Who: Maria, Label: "autopilot"}}
	case m.run == runDone:
		return nil
	case g.jira && m.step >= 5:
		// With Jira, completing implement measures carryover against task
		// statuses that depend on when the outage lets the sync through:
		// case 27 covers Jira end to end; the schedules stop here.
		return nil
	case !g.prOpen && (g.flow == "review-loop" || m.step >= 2 && g.chance(0.2)):
		g.prOpen = true
		return []Act{{Kind: ActOpenPR, Who: Casey}}
	case g.jira && !g.outage && m.step >= 3 && m.running && g.chance(0.5):
		g.outage = true
		return []Act{{Kind: ActJiraOutage, Outage: time.Duration(5+g.rnd.IntN(150)) * time.Minute}}
	case m.stopped:
		acts = append(acts, say(g.pick([]string{Maria, Devin}), "/autopilot resume", MeanResume))
	case m.gate != nil:
		acts = g.answers(m)
	case m.running:
		acts = g.work(m)
		if acts == nil {
			return g.next(m)
		}
		if len(acts) == 1 && acts[0].Kind != ActSay {
			return acts
		}
	default:
		return nil
	}
	// Acting comments of a phase share one conversation (issue or PR):
	// the earliest-answer rule needs both read together.
	if g.prOpen && g.chance(0.3) {
		for i := range acts {
			acts[i].OnPR = true
		}
	}
	for range g.rnd.IntN(2) + g.rnd.IntN(2) {
		at := g.rnd.IntN(len(acts) + 1)
		acts = append(acts[:at], append([]Act{g.noise()}, acts[at:]...)...)
	}
	return acts
}

// answers answers the open gate: sometimes two people race, sometimes an
// invalid letter comes first.
func (g *gen) answers(m *model) []Act {
	letters := map[string][]string{"session-boundary": {"A", "B"}, "skill-failed": {"A", "A", "B", "C"}}
	opts := letters[m.gate.kind]
	if strings.HasPrefix(m.gate.kind, "skip-") {
		opts = []string{"A", "A", "B"}
	}
	var acts []Act
	if g.chance(0.2) {
		acts = append(acts, g.answer(Devin, "D"))
	}
	first := []string{Maria, Devin}[g.rnd.IntN(2)]
	acts = append(acts, g.answer(first, g.pick(opts)))
	if g.chance(0.35) {
		other := Maria
		if first == Maria {
			other = Devin
		}
		acts = append(acts, g.answer(other, g.pick(opts)))
	}
	return acts
}

// work is what the executor and the maintainers do while a step runs.
func (g *gen) work(m *model) []Act {
	st := m.cur()
	switch {
	case g.chance(0.04):
		g.labelOff = true
		return []Act{{Kind: ActUnlabel, Who: Maria, Label: "autopilot"}}
	case g.chance(0.05):
		return []Act{say(Maria, "/autopilot stop", MeanStop)}
	case g.prOpen && g.flow == "greenfield" && g.chance(0.06):
		return []Act{{Kind: ActReview, Who: Maria, Review: "COMMENTED"}}
	}
	if g.flow == "review-loop" {
		if acts := g.reviewLoop(m, st); acts != nil {
			return acts
		}
	}
	switch {
	case st.needsReason && g.chance(0.5):
		a := say(Devin, "/autopilot skip docs-only change", MeanSkip)
		a.Text = "docs-only change"
		if g.chance(0.3) {
			a.Body, a.Text = "/autopilot skip", ""
		}
		return []Act{a}
	case st.evidence == "" && g.fails[m.step] < 3 && g.chance(0.15):
		g.fails[m.step]++
		a := say(Devin, "/autopilot fail tests are red", MeanFail)
		a.Text = "tests are red"
		return []Act{a}
	case g.chance(0.1):
		g.progress[m.step]++
		return []Act{say(Devin, fmt.Sprintf("/autopilot progress %d drafting", g.progress[m.step]), MeanProgress)}
	case st.evidence != "":
		return nil
	}
	return []Act{g.done(m, g.pick([]string{Devin, Devin, Maria}))}
}

// reviewLoop drives the consensus and evidence steps of the review loop.
func (g *gen) reviewLoop(m *model, st stepDef) []Act {
	switch {
	case st.consensus && !m.planReported:
		return []Act{g.done(m, Devin)}
	case st.consensus && m.architect == "":
		var acts []Act
		if g.chance(0.3) {
			acts = append(acts, approve(Devin, "critic")) // out of order: refused
		}
		if g.chance(0.2) {
			acts = append(acts, approve(Devin, "architect")) // not in the role: refused
		}
		return append(acts, approve(Maria, "architect"))
	case st.consensus:
		if g.chance(0.15) {
			a := say(Devin, "/autopilot reject critic missing tests", MeanReject)
			a.Role, a.Text = "critic", "missing tests"
			return []Act{a}
		}
		return []Act{approve(Devin, "critic")}
	case st.evidence == "review":
		if g.chance(0.15) {
			return []Act{say(Devin, "/autopilot done reviewed it myself", MeanDone)}
		}
		if g.cycles < 1 && g.chance(0.3) {
			g.cycles++
			return []Act{{Kind: ActReview, Who: Devin, Review: "CHANGES_REQUESTED"}}
		}
		return []Act{{Kind: ActReview, Who: Maria, Review: "APPROVED"}}
	case st.evidence == "checks" && g.chance(0.5):
		return []Act{{Kind: ActChecks, Success: true}}
	}
	return nil
}

func approve(who, role string) Act {
	a := say(who, "/autopilot approve "+role+" looks sound", MeanApprove)
	a.Role = role
	return a
}
