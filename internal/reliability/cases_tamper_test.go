package reliability

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/autopilot-dev/autopilot/internal/fake/fakegithub"
	"github.com/autopilot-dev/autopilot/internal/state"
	"github.com/autopilot-dev/autopilot/internal/state/codec"
)

const dataPrefix = "<!-- autopilot:data "

// rewriteMachineBlock decodes a state comment's machine block (not
// gzipped), lets f change the state JSON, and re-encodes it, keeping the
// old signature: what a collaborator with write access can do by hand.
func rewriteMachineBlock(t *testing.T, body string, f func(st map[string]any)) string {
	t.Helper()
	i := strings.Index(body, "\n"+dataPrefix)
	if i < 0 {
		t.Fatal("no machine block")
	}
	line, rest, _ := strings.Cut(body[i+1:], "\n")
	payload := strings.TrimSuffix(strings.TrimPrefix(line, dataPrefix), " -->")
	raw, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		t.Fatalf("machine block: %v (gzipped?)", err)
	}
	var env map[string]any
	must(t, json.Unmarshal(raw, &env))
	f(env["state"].(map[string]any))
	out, err := json.Marshal(env)
	must(t, err)
	return body[:i+1] + dataPrefix + base64.StdEncoding.EncodeToString(out) + " -->" + rest
}

// case16: a collaborator edits the bot's state comment, e.g. flipping the
// gate to "decided: A" and adding a task. The edit is detected and not
// acted on; the last good state is restored or the issue paused, with a
// notice. Measure: I4 (no Jira or label effects from the tampered
// content), I5.
func case16(t *testing.T) {
	tamper := func(t *testing.T, edit func(w *World, sc fakegithub.Comment) string, paused bool) {
		w, n := started(t, Options{Jira: true, SearchLag: 90 * time.Second})
		w.toGate(n)
		s0, sc := w.stateComment(n)
		labels0 := w.GH.Labels(Repo, n)
		jira0 := len(w.Jira.Issues())
		w.Clock.Advance(time.Minute)
		edited, err := w.GH.EditComment(sc.ID, Maria, edit(w, sc))
		must(t, err)
		w.MustRun(w.CommentDelivery(edited, "edited", Maria))
		w.MustSweep()
		if got := len(w.Jira.Issues()); got != jira0 {
			t.Errorf("Jira went from %d to %d issues: the tampered content was acted on", jira0, got)
		}
		s := w.State(n)
		switch {
		case paused:
			if k := w.markers(n)["<!-- autopilot:notice state-lost -->"]; k != 1 {
				t.Errorf("%d 'paused' notices, want 1", k)
			}
			if got := w.GH.Labels(Repo, n); strings.Join(got, ",") != strings.Join(labels0, ",") {
				t.Errorf("labels changed from %v to %v after the tampering", labels0, got)
			}
		case s == nil:
			t.Fatal("no valid state after the edit")
		default:
			if len(s.Decisions) != 0 || s.Gate == nil || s.Version < s0.Version || len(s.Tasks) != len(s0.Tasks) {
				t.Errorf("state after the edit: v%d gate %v decisions %s tasks %d; want v≥%d, the gate open, no decision, %d tasks",
					s.Version, s.Gate, decisions(s), len(s.Tasks), s0.Version, len(s0.Tasks))
			}
			notices := 0
			for m := range w.markers(n) {
				if strings.HasPrefix(m, "<!-- autopilot:notice tamper-") {
					notices++
				}
			}
			if notices != 1 {
				t.Errorf("%d tamper notices, want 1", notices)
			}
			checkOnly(t, w.CheckConvergence(n, nil))
		}
		checkOnly(t, w.CheckAuthorised(n))
		checkOnly(t, w.CheckMonotonic(n))
	}
	t.Run("human_part_edited", func(t *testing.T) {
		tamper(t, func(w *World, sc fakegithub.Comment) string {
			return strings.Replace(sc.Body, "## Autopilot State", "## Autopilot State\n\n**Decided: A** (by maria)", 1)
		}, false)
	})
	t.Run("machine_block_edited", func(t *testing.T) {
		tamper(t, func(w *World, sc fakegithub.Comment) string {
			return rewriteMachineBlock(t, sc.Body, func(st map[string]any) {
				delete(st, "gate")
				st["run"] = "in-progress"
				st["tasks"] = append(st["tasks"].([]any), map[string]any{"id": "99", "kind": "task", "title": "Evil", "idem_key": "autopilot-0000000099", "jira": "pending"})
				st["decisions"] = []any{map[string]any{"gate": "g5-session-boundary", "option": "A", "by": "maria", "comment_id": 1}}
			})
		}, true)
	})
	t.Run("older_body_replayed_into_the_comment", func(t *testing.T) {
		w, n := started(t, Options{})
		w.toGate(n)
		w.post(n, Maria, "A") // a decision: v(n)
		_, sc := w.stateComment(n)
		old := sc.Edits[1].After // an early, validly signed body
		v0 := w.mustState(n).Version
		w.Clock.Advance(time.Minute)
		edited, err := w.GH.EditComment(sc.ID, Maria, old)
		must(t, err)
		w.MustRun(w.CommentDelivery(edited, "edited", Maria))
		w.MustSweep()
		s := w.State(n)
		if s == nil || s.Version < v0 || len(s.Decisions) != 1 {
			if s == nil {
				t.Fatal("no valid state")
			}
			t.Errorf("after the replay: v%d (was v%d), decisions %s", s.Version, v0, decisions(s))
		}
		checkOnly(t, w.CheckMonotonic(n))
	})
}

// case17: a person deletes the state comment. Recovery as in case 14;
// Jira tasks are never re-created, even when the run is started over and
// declares the same tasks. Measure: I2 (Jira creates = 0), I3 after
// recovery.
func case17(t *testing.T) {
	w, n := stateDeletedAtRest(t)
	_, jiraPosts := w.posts()
	// Start over: remove and re-add the label, then run to decompose again.
	w.Unlabel(n, "autopilot")
	w.MustRun(w.LabelDelivery(n, "unlabeled", "autopilot", Maria))
	w.Clock.Advance(time.Minute)
	w.Label(n, "autopilot")
	w.MustRun(w.LabelDelivery(n, "labeled", "autopilot", Maria))
	w.post(n, Devin, "/autopilot done problem")
	w.post(n, Devin, "/autopilot done research")
	w.post(n, Devin, epics)
	w.post(n, Devin, decompose)
	w.Clock.Advance(3 * time.Minute)
	w.MustSweep()
	if _, jp := w.posts(); jp != jiraPosts {
		t.Errorf("%d Jira creates after starting over, want 0 (the tasks exist under the same keys)", jp-jiraPosts)
	}
	s := w.mustState(n)
	for _, tk := range s.Tasks {
		if tk.Sync != state.SyncCreated {
			t.Errorf("task %s is %s, want found by its key", tk.ID, tk.Sync)
		}
	}
	checkOnly(t, w.CheckEffects(n))
	checkOnly(t, w.CheckJiraOrphans())
	checkOnly(t, w.CheckConvergence(n, nil))
}

// case18: forged state comments: (a) a person posts a copy of an old
// valid state; (b) in Action mode another workflow (the same
// github-actions[bot]) posts an old valid state, one with a higher version
// but no valid signature, and the valid state of another issue. Only the
// configured bot is read, the HMAC binds repo, issue and version, and the
// highest valid version wins. Measure: I4, I5.
func case18(t *testing.T) {
	w, n := started(t, Options{})
	w.toGate(n)
	_, sc := w.stateComment(n)
	old := sc.Edits[0].After
	other := w.NewIssue("Another", "Other work.")
	w.Label(other, "autopilot")
	w.MustRun(w.LabelDelivery(other, "labeled", "autopilot", Maria))
	_, osc := w.stateComment(other)
	higher := rewriteMachineBlock(t, sc.Body, func(st map[string]any) {
		st["version"] = 99
		delete(st, "gate")
		st["run"] = "done"
		st["slug"] = "done"
		st["step"] = 0
	})
	foreign := strings.Replace(osc.Body, fmt.Sprintf("#%d", other), fmt.Sprintf("#%d", n), -1)
	v0 := w.mustState(n).Version
	w.Say(n, Maria, old)           // (a) a person replays an old state
	w.Say(n, ActionsBot, old)      // (b) another workflow replays one
	w.Say(n, ActionsBot, higher)   // (b) a higher version, bad signature
	w.Say(n, ActionsBot, foreign)  // (b) another issue's valid state
	w.Say(n, ActionsBot, osc.Body) // (b) verbatim
	a := w.post(n, Maria, "A")
	s := w.mustState(n)
	if s.Version != v0+1 || len(s.Decisions) != 1 || s.Decisions[0].CommentID != a.ID {
		t.Errorf("state v%d decisions %s: want v%d with maria's A on top of the real state", s.Version, decisions(s), v0+1)
	}
	w.MustSweep()
	checkOnly(t, w.CheckAuthorised(n))
	checkOnly(t, w.CheckMonotonic(n))
	checkOnly(t, w.CheckLedger(n, nil, nil))
	checkOnly(t, w.CheckConvergence(n, nil))
}

// hostile are pieces of text that try to break out of what echoes them.
var hostile = []string{"--> <!-- autopilot-state {\"run\":\"done\"} -->", "```", "~~~", "<!--", "-->", "\n", "<!-- autopilot:state -->",
	"<!-- autopilot:data e30= -->", "@acme/core", "#1", "<img src=x>", "|", "**", "\u202e", "\u200b", "é", "😀", "\\", "\"", "'", " ", "a"}

// case19: a task title carries a marker breakout and a closing fence. It
// is escaped on render. Measure: a property test parse(render(s)) == s over
// random strings (I7); forged markers are never parsed.
func case19(t *testing.T) {
	t.Run("through_the_bot", func(t *testing.T) {
		w, n := started(t, Options{})
		for _, s := range []string{"problem", "research", "plan"} {
			w.post(n, Devin, "/autopilot done "+s)
		}
		title := `--> <!-- autopilot-state {"run":"done"} --> ` + "``` <!-- autopilot:state -->"
		body := "/autopilot done decomposed\n\n```autopilot-tasks\n- title: " + yamlQuote(title) + "\n- title: plain\n```"
		w.post(n, Devin, body)
		s := w.mustState(n)
		if len(s.Tasks) != 2 || s.Tasks[0].Title != title {
			t.Fatalf("tasks %+v, want the hostile title kept verbatim in the state", s.Tasks)
		}
		for _, c := range w.BotComments(n) {
			checkMarkers(t, c.Body)
		}
		check(t, w, CheckOptions{Issue: n})
	})
	t.Run("property_round_trip", func(t *testing.T) {
		rnd := rand.New(rand.NewPCG(19, 19))
		w, n := started(t, Options{})
		base := w.mustState(n)
		for i := range 300 {
			s := *base
			s.Title = hostileString(rnd)
			s.Blockers = []string{hostileString(rnd)}
			s.Tasks = []state.Task{{ID: "01", Kind: state.KindTask, Title: strings.ReplaceAll(hostileString(rnd), "\n", " "), IdemKey: "autopilot-0123456789", Sync: state.SyncPending}}
			s.LastSession.Notes = hostileString(rnd)
			if err := RoundTrip(&s, w.Key); err != nil {
				if strings.Contains(err.Error(), "render:") {
					continue // Valid refuses some titles (e.g. empty): nothing rendered
				}
				t.Fatalf("iteration %d: %v", i, err)
			}
			body, err := codec.Render(&s, codec.View{}, w.Key)
			must(t, err)
			checkMarkers(t, body)
		}
		_ = n
	})
}

// versionTagRE is the hidden last line of a posted bot comment naming the
// state version of its pass.
var versionTagRE = regexp.MustCompile(`^<!-- autopilot:v [0-9]+ -->$`)

// checkMarkers: a bot comment has its marker on the first line, and either,
// for a state comment, one machine block or, for any other, one version tag
// as its last line; no other "<!--" survives in it (echoed text cannot open
// a comment or forge a marker).
func checkMarkers(t *testing.T, body string) {
	t.Helper()
	lines := strings.Split(body, "\n")
	isState := strings.HasPrefix(body, state.Marker)
	for i, l := range lines {
		if !strings.Contains(l, "<!--") {
			continue
		}
		last := i == len(lines)-1 && i > 0
		if i == 0 && strings.HasPrefix(l, "<!-- autopilot:") || last && isState && strings.HasPrefix(l, dataPrefix) || last && !isState && versionTagRE.MatchString(l) {
			continue
		}
		t.Errorf("line %d of a bot comment opens an HTML comment: %q", i+1, l)
	}
}

func hostileString(rnd *rand.Rand) string {
	var b strings.Builder
	for range 1 + rnd.IntN(8) {
		b.WriteString(hostile[rnd.IntN(len(hostile))])
	}
	return b.String()
}

func yamlQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
